"""Per scenario, the predicates of every structure (the 'rotation' hypothesis: needs recur across a domain)."""
from __future__ import annotations

from structs import scenario_structures


def prepare_preds(bank):
    data = []
    for v in bank.visible:
        g, _, pval, _, S, C, res = scenario_structures(v, bank)
        preds = []
        golds = []
        for r in res:
            ps = []
            for j, sub in r[:3]:
                ps += [f"P{j}|{'+'.join(sub)}", f"C{j}", *[f"V{j}|{x}" for x in sub]]
            preds.append(ps)
            two = [S[k] for k in r[3]]
            golds.append(max(two, key=lambda i: pval[i]))
        data.append(dict(id=v["id"], domain=v["domain"], C=C, gold=g, preds=preds, sgold=golds, pval=pval))
    return data
