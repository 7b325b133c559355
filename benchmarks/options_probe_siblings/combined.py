"""Combined latent-structure model.

Structure score = w . [generic/viol/struct predicate features (latent.py)
                       + within-scenario predicate commonness
                       + label-free sibling commonness (same-domain scenarios, no labels)
                       + (optional) sibling label usage: was the predicate in gold-consistent structures of
                         labelled training scenarios of the same domain (fold-aware)]
Candidate score = log posterior mass of structures naming it gold.
"""
from __future__ import annotations

import collections

import numpy as np
from latent import cand_scores, fit, prepare, to_mats
from rot import prepare_preds
from run_latent import report
from sklearn.model_selection import GroupKFold


def setup(bank, base_groups=("generic", "viol", "struct")):
    data = prepare(bank, list(base_groups))
    pp = prepare_preds(bank)
    for dd, p in zip(data, pp, strict=True):
        assert dd["sgold"] == p["sgold"]
        dd["preds"] = p["preds"]
        A = collections.Counter()
        for ps in dd["preds"]:
            for q in set(ps):
                A[q] += 1 / len(dd["preds"])
        dd["A"] = A
        gm = np.array([c == dd["gold"] for c in dd["sgold"]])
        U = collections.Counter()
        for t, ps in enumerate(dd["preds"]):
            if gm[t]:
                for q in set(ps):
                    U[q] += 1 / gm.sum()
        dd["use"] = {k: U[k] - A[k] for k in set(U) | set(A)}
    return data


def add_sibling_feats(data, train_idx, use_unsup, use_sup):
    bydom = collections.defaultdict(list)
    for i, dd in enumerate(data):
        bydom[dd["domain"]].append(i)
    trset = set(train_idx)
    for i, dd in enumerate(data):
        sib = [k for k in bydom[dd["domain"]] if k != i]
        labsib = [k for k in sib if k in trset]
        for t, ps in enumerate(dd["preds"]):
            f = dd["feats"][t]
            for k in list(f):
                if k.startswith(("in:", "sib:", "lab:")):
                    del f[k]
            for lvl in "PCV":
                qs = [q for q in ps if q[0] == lvl]
                f["in:" + lvl] = sum(dd["A"][q] for q in qs)
                if use_unsup:
                    f["sib:" + lvl] = sum(data[k]["A"].get(q, 0) for k in sib for q in qs) / 3
                if use_sup:
                    f["lab:" + lvl] = sum(data[k]["use"].get(q, 0) for k in labsib for q in qs)


def run(data, gk, lam, use_unsup, use_sup, tag):
    """5-fold GroupKFold by ``gk``; print and return (scores, per-fold weights, figures)."""
    ids = np.array([dd[gk] for dd in data])
    allsc = [None] * len(data)
    W = []
    for tr, te in GroupKFold(5).split(ids, groups=ids):
        add_sibling_feats(data, tr, use_unsup, use_sup)
        vocab = {}
        for i in tr:
            for f in data[i]["feats"]:
                for k in f:
                    vocab.setdefault(k, len(vocab))
        to_mats(data, vocab)
        w = fit([data[i] for i in tr], lam)
        W.append({k: w[j] for k, j in vocab.items()})
        for i in te:
            allsc[i] = cand_scores(data[i], w)
    figures = report(data, allsc, tag)
    return allsc, W, figures
