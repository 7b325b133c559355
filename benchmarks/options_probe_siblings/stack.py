"""Second stage: logistic regression / gradient boosting over candidate-level features."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.preprocessing import StandardScaler


def evaluate(df, feats, model, gk, tag):
    """5-fold GroupKFold by ``gk``; print and return (out-of-fold scores, figures)."""
    s = np.zeros(len(df))
    for tr, te in GroupKFold(5).split(df, groups=df[gk]):
        m = model()
        Xtr = df.iloc[tr][feats].fillna(0).values
        Xte = df.iloc[te][feats].fillna(0).values
        sc = StandardScaler().fit(Xtr)
        m.fit(sc.transform(Xtr), df.y.values[tr])
        s[te] = m.predict_proba(sc.transform(Xte))[:, 1]
    d = df.assign(s=s + 1e-9 * df.pz)
    top = d.loc[d.groupby("id").s.idxmax()].y.mean()
    auc = roc_auc_score(d.y, d.s)
    print(f"{tag:<55} top1={top:.3f} pooledAUC={auc:.3f}", flush=True)
    return s, {"top1": float(top), "pooled_auc": float(auc)}
