"""Single parameter-free rules (no training)."""
from __future__ import annotations

import collections

import numpy as np


def rule_scores(data, key):
    bydom = collections.defaultdict(list)
    for dd in data:
        bydom[dd["domain"]].append(dd)
    out = []
    for dd in data:
        sib = [o for o in bydom[dd["domain"]] if o is not dd]
        sc = np.full(len(dd["C"]), -1e9)
        for t, ps in enumerate(dd["preds"]):
            P = [q for q in ps if q[0] == "P"]
            sibc = sum(o["A"].get(q, 0) for o in sib for q in P)
            inc = sum(dd["A"][q] for q in P)
            s = {"sib": -sibc, "sib+in": -sibc - inc, "in": -inc}[key]
            k = dd["C"].index(dd["sgold"][t])
            sc[k] = max(sc[k], s)
        out.append(sc)
    return out
