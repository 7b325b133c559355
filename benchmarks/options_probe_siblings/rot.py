"""Per scenario, the predicates of every structure (the 'rotation' hypothesis: needs recur across a domain)."""
from __future__ import annotations

from structs import scenario_info, structures


def prepare_preds(bank):
    data = []
    for v in bank.visible:
        info = scenario_info(v, bank)
        g = bank.labels[v["id"]]["gold"] - 1
        op = info["op"]
        pval = info["pval"]
        cat = info["cat"]
        S = [i for i in range(11) if i not in info["bad"]]
        res = structures(cat, S, S.index(op))
        preds = []
        golds = []
        for r in res:
            ps = []
            for j, sub in r[:3]:
                ps += [f"P{j}|{'+'.join(sub)}", f"C{j}", *[f"V{j}|{x}" for x in sub]]
            preds.append(ps)
            two = [S[k] for k in r[3]]
            golds.append(max(two, key=lambda i: pval[i]))
        C = [i for i in S if i != op]
        data.append(dict(id=v["id"], domain=v["domain"], C=C, gold=g, preds=preds, sgold=golds, pval=pval))
    return data
