"""Scoring of per-candidate scores: top-1 (ties broken by the priority value), pooled and mean per-scenario AUC."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score


def report(data, allsc, tag):
    """Print one table line for the scores ``allsc`` (one array per scenario) and return its figures."""
    top = []
    ys = []
    ss = []
    aucs = []
    for dd, sc in zip(data, allsc, strict=True):
        y = np.array([c == dd["gold"] for c in dd["C"]], int)
        # tie-break by tiny random-free rule: priority value (higher better) * 1e-6
        sc2 = sc + 1e-9 * np.array([dd["pval"][c] for c in dd["C"]])
        top.append(y[np.argmax(sc2)])
        ys += list(y)
        ss += list(sc2)
        aucs.append(roc_auc_score(y, sc2))
    t1 = np.mean(top)
    auc = roc_auc_score(ys, ss)
    print(f"{tag:<40} top1={t1:.3f}  pooledAUC={auc:.3f}  meanScenarioAUC={np.mean(aucs):.3f}", flush=True)
    return {"top1": float(t1), "pooled_auc": float(auc), "mean_scenario_auc": float(np.mean(aucs))}
