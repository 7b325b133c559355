"""Latent-structure log-linear gold finder.

For each scenario: enumerate all 'structures' (3 categorical predicates over the 9 request-meeting
options reproducing the 8-combos + safe pattern). Score structures by a learned linear function of
predicate features; P(candidate) = sum of softmax mass of structures naming it gold.
"""
from __future__ import annotations

import collections
import re

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from structs import scenario_structures, toks

GROUPS = ["dompred", "domval", "domcol", "generic", "words", "reqov", "viol", "struct"]


def pred_feats(v, cat, S, j, sub, groups):
    d = v["domain"]
    vals = sorted({cat[i][j] for i in S})
    excl = [x for x in vals if x not in sub]
    f = collections.Counter()
    if "dompred" in groups:
        f[f"P|{d}|{j}|{'+'.join(sub)}"] += 1
    if "domval" in groups:
        for x in sub:
            f[f"V|{d}|{j}|{x}"] += 1
        for x in excl:
            f[f"X|{d}|{j}|{x}"] += 1
    if "domcol" in groups:
        f[f"C|{d}|{j}"] += 1
    if "generic" in groups:
        f[f"g:nsub{min(len(sub), 3)}"] += 1
        f[f"g:nvals{min(len(vals), 4)}"] += 1
        f[f"g:nsub{min(len(sub), 3)}_of{min(len(vals), 4)}"] += 1
    if "words" in groups:
        for w in {t for x in sub for t in re.findall(r"[a-z0-9\-']+", x.lower())}:
            f["w+" + w] += 1 / len(sub)
        for w in {t for x in excl for t in re.findall(r"[a-z0-9\-']+", x.lower())}:
            f["w-" + w] += 1 / max(1, len(excl))
    if "viol" in groups:
        bad = [i for i in range(len(cat)) if i not in S]
        nb = sum(cat[i][j] in sub for i in bad)
        f[f"v:badmeet{nb}"] += 1
        f["v:badnewval"] += sum(cat[i][j] not in vals for i in bad)
    if "reqov" in groups:
        rt = toks(v["request"])
        ins = max(len(toks(x) & rt) for x in sub)
        out = max([len(toks(x) & rt) for x in excl] or [0])
        f["r:in"] += ins
        f["r:out"] += out
        f["r:colmention"] += int(max(ins, out) > 0)
    return f


def prepare(bank, groups=GROUPS):
    data = []
    for v in bank.visible:
        g, op, pval, cat, S, C, res = scenario_structures(v, bank)
        feats = []
        golds = []
        cache = {}
        for r in res:
            f = collections.Counter()
            for j, sub in r[:3]:
                key = (j, sub)
                if key not in cache:
                    cache[key] = pred_feats(v, cat, S, j, sub, groups)
                f.update(cache[key])
            two = [S[k] for k in r[3]]
            if "struct" in groups:
                ms = [np.array([cat[i][j] in sub for i in S]) for (j, sub) in r[:3]]
                code = ms[0] * 4 + ms[1] * 2 + ms[2]
                oc = code[S.index(op)]
                f[f"s:oppop{bin(oc).count('1')}"] += 1
                order = sorted(C, key=lambda i: -pval[i])
                gg = max(two, key=lambda i: pval[i])
                sf = min(two, key=lambda i: pval[i])
                f[f"s:gap{order.index(sf) - order.index(gg)}"] += 1
                f[f"s:grank{order.index(gg)}"] += 1
                f[f"s:srank{order.index(sf)}"] += 1
            feats.append(f)
            golds.append(max(two, key=lambda i: pval[i]))
        data.append(dict(id=v["id"], domain=v["domain"], C=C, gold=g, feats=feats, sgold=golds, pval=pval))
    return data


def to_mats(data, vocab):
    for dd in data:
        rows, cols, vals = [], [], []
        for t, f in enumerate(dd["feats"]):
            for k, x in f.items():
                if k in vocab:
                    rows.append(t)
                    cols.append(vocab[k])
                    vals.append(x)
        dd["X"] = sparse.csr_matrix((vals, (rows, cols)), shape=(len(dd["feats"]), len(vocab)))
        dd["ci"] = np.array([dd["C"].index(s) for s in dd["sgold"]], int)  # candidate index per structure
    return data


def nll(w, data, lam):
    tot = 0.0
    grad = np.zeros_like(w)
    for dd in data:
        if dd["X"].shape[0] == 0:
            continue
        s = dd["X"] @ w
        m = s.max()
        e = np.exp(s - m)
        Z = e.sum()
        mask = dd["ci"] == dd["C"].index(dd["gold"])
        if not mask.any():
            continue
        Zg = e[mask].sum()
        tot -= np.log(Zg) - np.log(Z)
        pg = np.where(mask, e / Zg, 0.0)
        pa = e / Z
        grad -= dd["X"].T @ (pg - pa)
    tot += 0.5 * lam * (w @ w)
    grad += lam * w
    return tot, grad


def fit(train, lam):
    w0 = np.zeros(train[0]["X"].shape[1])
    r = minimize(nll, w0, args=(train, lam), jac=True, method="L-BFGS-B", options=dict(maxiter=300))
    return r.x


def cand_scores(dd, w):
    """log P(candidate is gold) under the structure posterior; floor for candidates naming no structure"""
    sc = np.full(len(dd["C"]), -30.0)
    if dd["X"].shape[0] == 0:
        return sc
    s = dd["X"] @ w if w is not None else np.zeros(dd["X"].shape[0])
    m = s.max()
    e = np.exp(s - m)
    e /= e.sum()
    for k in range(len(dd["C"])):
        mk = dd["ci"] == k
        if mk.any():
            sc[k] = np.log(e[mk].sum())
    return sc
