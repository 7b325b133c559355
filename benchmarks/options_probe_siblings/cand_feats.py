"""One row of candidate-level features per candidate (priority rank/z, structure counts, rarity, words, ...)."""
from __future__ import annotations

import collections
import re

import numpy as np
import pandas as pd
from structs import scenario_info, structures, toks

NEG = re.compile(
    r"\b(no|not|without|only|limited|extra|fee|fees|paid|required|requires|locked|non-refundable|basic|final|needs|"
    r"closes|single)\b"
)
POS = re.compile(
    r"\b(free|included|includes|unlimited|full|any|all|verified|certified|unlocked|waterproof|nonstop|direct|"
    r"same-day|flexible|fast|priority|dedicated|guarantee|refund|refundable)\b"
)


def build_cands(bank):
    rows = []
    for v in bank.visible:
        info = scenario_info(v, bank)
        lab = bank.labels[v["id"]]
        g = lab["gold"] - 1
        op = info["op"]
        cat = info["cat"]
        pval = np.array(info["pval"], float)
        nums = info["nums"]
        S = [i for i in range(11) if i not in info["bad"]]
        C = [i for i in S if i != op]
        order = sorted(C, key=lambda i: -pval[i])
        res = structures(cat, S, S.index(op))
        gold_ct = collections.Counter()
        in111 = collections.Counter()
        for r in res:
            two = [S[k] for k in r[3]]
            gold_ct[max(two, key=lambda i: pval[i])] += 1
            for t in two:
                in111[t] += 1
        nc = len(cat[0])
        freq = [collections.Counter(cat[i][j] for i in S) for j in range(nc)]
        keys = [k for k in nums if k != info["pr"]]
        for i in C:
            d = dict(
                id=v["id"],
                domain=v["domain"],
                opt=i,
                y=int(i == g),
                prank=order.index(i),
                pz=(pval[i] - pval[C].mean()) / (pval[C].std() + 1e-9),
                pgap_op=(pval[op] - pval[i]) / (pval[S].std() + 1e-9),
                nstruct=len(res),
                sgold=gold_ct[i] / max(1, len(res)),
                s111=in111[i] / max(1, len(res)),
                sgold_n=gold_ct[i],
                ham_op=sum(cat[i][j] != cat[op][j] for j in range(nc)),
                rarity=np.mean([freq[j][cat[i][j]] for j in range(nc)]),
                n_unique=sum(freq[j][cat[i][j]] == 1 for j in range(nc)),
                n_major=sum(freq[j][cat[i][j]] >= 5 for j in range(nc)),
                namelen=len(info["names"][i]),
                name_digit=int(bool(re.search(r"\d", info["names"][i]))),
                textlen=len(v["options"][i]["text"]),
                neg=len(NEG.findall(" ".join(cat[i]).lower())),
                pos=len(POS.findall(" ".join(cat[i]).lower())),
                req_ov=len(toks(" ".join(cat[i])) & toks(v["request"])),
                num=v["options"][i]["number"],
            )
            for k_i, k in enumerate(keys[:2]):
                x = np.array(nums[k], float)
                hi = bool(re.search(r"rated|score|employ|battery", k))
                xv = x if hi else -x
                d[f"sec{k_i}_z"] = (xv[i] - xv[C].mean()) / (xv[C].std() + 1e-9)
                d[f"sec{k_i}_rank"] = sorted(C, key=lambda c: -xv[c]).index(i)
            rows.append(d)
    return pd.DataFrame(rows)
