"""Models, scenario-grouped cross-validation, scoring, and the twin diagnostic.

Every model is fit with 5-fold ``GroupKFold`` by scenario, so a scenario's candidates are never split
between training and test. Scores: top-1 (share of scenarios whose highest-scored candidate is the
gold; exact score ties are broken by a per-scenario seeded draw) and ROC AUC over all candidate rows.
"""
from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from probe_features import FeatureTable
from sklearn.base import ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

N_SPLITS = 5


def make_logreg() -> ClassifierMixin:
    """Standardised features, L2 logistic regression (C=0.3)."""
    return make_pipeline(StandardScaler(), LogisticRegression(C=0.3, max_iter=2000))


def make_hgb() -> ClassifierMixin:
    """Histogram gradient boosting, small trees, fixed seed."""
    return HistGradientBoostingClassifier(
        max_iter=250, learning_rate=0.04, max_leaf_nodes=15, min_samples_leaf=25, l2_regularization=1.0, random_state=0
    )


MODELS: dict[str, Callable[[], ClassifierMixin]] = {"logreg": make_logreg, "hgb": make_hgb}

# HGB ablations (extras): each drops one group of features to see which carries the signal.
ABLATIONS: dict[str, Callable[[str], bool]] = {
    "no_neighbour_twin": lambda k: k.startswith(("nn_", "twin")) or k == "ham_mean",
    "no_objective_rank": lambda k: (
        k.startswith(("obj_", "nn_obj"))
        or k.endswith(("_rank", "_rank_all"))
        or k in ("nn_ahead_obj", "nn_ahead_any", "twin_best", "rare_grp_obj_best", "grp_best_cnt")
    ),
    "only_categorical_structure": lambda k: not (
        k.startswith(("cat_", "open_diff")) or k in ("nn_ham", "nn_count", "twins", "ham_mean", "cat_same_open")
    ),
}


def top1(score: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    """Share of scenarios whose top-scored candidate is the gold (ties: seeded by the scenario index)."""
    hits = 0
    scenario_ids = np.unique(groups)
    for s in scenario_ids:
        idx = np.where(groups == s)[0]
        jitter = 1e-9 * np.random.RandomState(s).rand(len(idx))
        hits += y[idx[np.argmax(score[idx] + jitter)]]
    return float(hits / len(scenario_ids))


def target_encoding(meta: list[dict[str, Any]], y: np.ndarray, train: np.ndarray, alpha: float = 5.0) -> np.ndarray:
    """Four columns per row from the gold rate of its (domain, value)s among ``train`` rows (smoothed by ``alpha``).

    max, mean and min of the encoded values, and the sum of log(encoded / prior), z-scored within the scenario.
    """
    gold_count: Counter = Counter()
    seen: Counter = Counter()
    prior = y[train].mean()
    for k in np.where(train)[0]:
        for x in meta[k]["vals"]:
            key = (meta[k]["domain"], x)
            seen[key] += 1
            gold_count[key] += y[k]
    F = np.zeros((len(meta), 4))
    for k, m in enumerate(meta):
        te = [(gold_count[(m["domain"], x)] + alpha * prior) / (seen[(m["domain"], x)] + alpha) for x in m["vals"]]
        te = te or [prior]
        F[k] = [np.max(te), np.mean(te), np.min(te), np.sum(np.log(np.array(te) / prior))]
    sid = np.array([m["sid"] for m in meta])
    for s in np.unique(sid):
        rows = sid == s
        v = F[rows, 3]
        F[rows, 3] = (v - v.mean()) / (v.std() + 1e-9)
    return F


def _nested_target_encoding(table: FeatureTable, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Out-of-fold target encoding: test rows from all training rows, training rows from 4 inner folds."""
    y, groups = table.y, table.groups
    T = np.zeros((len(y), 4))
    mask = np.zeros(len(y), bool)
    mask[train] = True
    T[test] = target_encoding(table.meta, y, mask)[test]
    for inner_train, inner_test in GroupKFold(n_splits=4).split(train, groups=groups[train]):
        inner = np.zeros(len(y), bool)
        inner[train[inner_train]] = True
        T[train[inner_test]] = target_encoding(table.meta, y, inner)[train[inner_test]]
    return np.hstack([table.X, T])


def cross_validated_scores(
    table: FeatureTable,
    make_model: Callable[[], ClassifierMixin],
    columns: list[int] | None = None,
    domain_te: bool = False,
) -> np.ndarray:
    """Out-of-fold P(gold) for every row (5-fold GroupKFold by scenario)."""
    X, y, groups = table.X, table.y, table.groups
    if columns is not None:
        X = X[:, columns]
    score = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=N_SPLITS).split(X, y, groups):
        Xa = _nested_target_encoding(table, train, test) if domain_te else X
        model = make_model()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(Xa[train], y[train])
        score[test] = model.predict_proba(Xa[test])[:, 1]
    return score


def evaluate(table: FeatureTable, score: np.ndarray) -> dict[str, float]:
    """top-1 and AUC of out-of-fold scores."""
    return {"top1": top1(score, table.y, table.groups), "auc": float(roc_auc_score(table.y, score))}


def twin_diagnostic(table: FeatureTable) -> dict[str, int]:
    """Exact categorical twins: candidates with identical values in every categorical column.

    ``scenarios_with_twin_pair``: scenarios where some candidate has a twin; ``gold_has_twin``: those where
    the gold is one of a twin pair; ``gold_is_twin_winner``: those where the gold is also at least as good
    on the request's objective as each of its twins.
    """
    col = {k: j for j, k in enumerate(table.names)}
    twins, twin_best = table.X[:, col["twins"]], table.X[:, col["twin_best"]]
    gold = table.y == 1
    with_pair = {int(s) for s in np.unique(table.groups[twins > 0])}
    gold_has = {int(s) for s in table.groups[gold & (twins > 0)]}
    gold_wins = {int(s) for s in table.groups[gold & (twin_best == 1)]}
    return {
        "scenarios_with_twin_pair": len(with_pair),
        "gold_has_twin": len(gold_has),
        "gold_is_twin_winner": len(gold_wins),
    }


DIAGNOSTIC_FEATURES = (
    "nn_ham", "nn_ahead_obj", "twins", "twin_best", "obj_ordinal", "cat_same_open", "pareto_front", "grp_best_cnt",
)  # fmt: skip


def value_counts(table: FeatureTable, features: tuple[str, ...] = DIAGNOSTIC_FEATURES) -> dict[str, dict[str, list]]:
    """Feature -> {value rounded to 2 places: [gold rows, all rows]} for its 10 smallest values."""
    col = {k: j for j, k in enumerate(table.names)}
    out = {}
    for name in features:
        x = np.round(table.X[:, col[name]], 2)
        gold, every = Counter(x[table.y == 1].tolist()), Counter(x.tolist())
        out[name] = {f"{v:g}": [gold[v], every[v]] for v in sorted(every)[:10]}
    return out


def extras(table: FeatureTable) -> dict[str, Any]:
    """The auditor's further figures: models with domain target encoding, HGB ablations, single features."""
    out: dict[str, Any] = {}
    out["models_domain_te"] = {
        f"{name}+domainTE": evaluate(table, cross_validated_scores(table, make, domain_te=True))
        for name, make in MODELS.items()
    }
    ablations = {}
    for name, drop in ABLATIONS.items():
        cols = [j for j, k in enumerate(table.names) if not drop(k)]
        ablations[name] = {"n_features": len(cols), **evaluate(table, cross_validated_scores(table, make_hgb, cols))}
    out["hgb_ablations"] = ablations
    single = []
    for j, name in enumerate(table.names):
        x = table.X[:, j]
        if np.std(x) == 0:
            continue
        auc = float(roc_auc_score(table.y, x))
        sign = 1 if auc >= 0.5 else -1
        single.append({
            "feature": name, "auc": auc, "auc_dir": max(auc, 1 - auc),
            "direction": "higher" if sign > 0 else "lower", "top1": top1(sign * x, table.y, table.groups),
        })  # fmt: skip
    single.sort(key=lambda d: -d["auc_dir"])  # top-1 ties below keep this order
    out["single_features_by_auc"] = single[:12]
    out["single_features_by_top1"] = sorted(single, key=lambda d: -d["top1"])[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coef = make_logreg().fit(table.X, table.y)[-1].coef_[0]
    out["logreg_top_coefs"] = [(table.names[j], float(coef[j])) for j in np.argsort(-np.abs(coef))[:10]]
    return out
