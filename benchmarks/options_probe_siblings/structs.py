"""Priority column, candidate set (violators removed), and the structural triple search."""
from __future__ import annotations

import collections
import itertools
import re

import numpy as np
from parse import constraints, parse, violators

KW = [
    ("mile", r"closest|nearest|near"),
    ("day", r"soonest|earliest|fastest|quickest"),
    ("battery", r"longest|battery"),
    ("rated|score|employ", r"best|top|highest|rated|review|acclaim|score|employ"),
    ("\\$|%", r"cheap|least expensive|lowest|most affordable|cheapest"),
]


def prio_of(v, nums, op, bad=()):
    r = v["request"].lower()
    cands = []
    for k, x in nums.items():
        x = np.array(x)
        hi = bool(re.search(r"rated|score|employ|battery", k))
        pval = x if hi else -x
        better = {int(i) for i in np.where(pval > pval[op])[0]}
        kw = 0
        for ck, rk in KW:
            if re.search(ck, k) and re.search(rk, r):
                kw = 1
                break
        cands.append((len(better - set(bad)), -kw, k, better, pval))
    cands.sort(key=lambda c: (c[0] > 0, c[1], c[0]))
    c = cands[0]
    return c[2], c[3], c[4]


CODES_TARGET = sorted([*range(8), 7])


def col_preds(cat, S, j):
    vals = sorted({cat[i][j] for i in S})
    out = []
    for r in range(1, len(vals)):
        for sub in itertools.combinations(vals, r):
            m = np.array([cat[i][j] in sub for i in S])
            if m.sum() == 5:
                out.append((j, sub, m))
    return out


def structures(cat, S, op_pos):
    preds = []
    for j in range(len(cat[0])):
        preds += col_preds(cat, S, j)
    res = []
    for a, b, c in itertools.combinations(range(len(preds)), 3):
        pa, pb, pc = preds[a], preds[b], preds[c]
        if len({pa[0], pb[0], pc[0]}) < 3:
            continue
        code = pa[2] * 4 + pb[2] * 2 + pc[2]
        if sorted(code.tolist()) == CODES_TARGET:
            if code[op_pos] == 7:
                continue
            res.append(((pa[0], pa[1]), (pb[0], pb[1]), (pc[0], pc[1]), np.where(code == 7)[0]))
    return res


STOP = set(
    "the a an and or of for to with in on at by from is are be i we my our me us you your it its that this what "
    "which who one can need want under less than more no not any all up per month year night visit best top rated "
    "cheapest cheapest find show give get have has just some".split()
)


def toks(s):
    return {w.rstrip("s")[:4] for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in STOP and len(w) > 1}


def find_extra_violator(v, cat, bad, op):
    rt = toks(v["request"])
    keep = [i for i in range(11) if i not in bad]
    best = None
    for j in range(len(cat[0])):
        c = collections.Counter(cat[i][j] for i in keep)
        vals = set(c)
        rel = max(len(toks(x) & rt) for x in vals)
        for i in keep:
            if i == op or c[cat[i][j]] != 1:
                continue
            # the unique value should match request less than the majority
            own = len(toks(cat[i][j]) & rt)
            sc = (rel, rel - own)
            if best is None or sc > best[0]:
                best = (sc, i, j)
    return best


def scenario_info(v, bank):
    names, cat, nums, _cats = parse(v, bank.numcols)
    lab = bank.labels[v["id"]]
    op = lab["opening"] - 1
    cons = constraints(v, nums)
    bad = violators(v, nums, cons)
    if len(bad) > 2:
        bad = set()
    pr, better, pval = prio_of(v, nums, op, bad)
    bad = set(bad) | {int(x) for x in better}
    extra = None
    if len(bad) == 1:
        extra = find_extra_violator(v, cat, bad, op)
        if extra:
            bad.add(extra[1])
    return dict(names=names, cat=cat, nums=nums, op=op, bad=bad, pr=pr, pval=pval, cons=cons, extra=extra)


def scenario_structures(v, bank):
    """One scenario's parsed info, its gold (0-based), opening, priority values, categorical table, the
    request-meeting rows S, the candidates C (S less the opening) and its structures."""
    info = scenario_info(v, bank)
    op = info["op"]
    S = [i for i in range(11) if i not in info["bad"]]
    res = structures(info["cat"], S, S.index(op))
    C = [i for i in S if i != op]
    return bank.labels[v["id"]]["gold"] - 1, op, info["pval"], info["cat"], S, C, res

