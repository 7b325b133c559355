"""Paired scenario-level bootstrap for contrasts between conditions (paper §4.3, Table 9).

A contrast compares condition B with condition A (B - A) on one metric. Rollouts
are paired by scenario: for every model, both conditions ran the same scenarios
(the grid gives matched rollouts the same episode seed). A bootstrap resample
draws scenarios with replacement (2,000 resamples, percentile 95 % interval,
seeded) and recomputes, for every model, the metric of each condition on the
drawn scenarios -- a ratio of sums, so per-rollout metrics (Success%) and
per-recommendation-turn metrics (Accept%, FullFit%) are both handled -- then
averages the per-model differences: pooled results weight models equally, and
the same scenarios are drawn for every model, since the models share them.

The label-fidelity ladder (none -> always-resolved -> shuffled -> always-unresolved
-> correct) is a sequence of such contrasts between successive rungs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from .metrics import TABLE

N_RESAMPLES = 2000
CONFIDENCE = 0.95
LADDER = ("none", "always_resolved", "shuffled", "always_unresolved", "correct")


# metric -> outcome -> (numerator, denominator): the one table of :mod:`hear2act.eval.metrics`; a condition's value is
# scale * sum(num) / sum(den) (scale 100 for percentages, 1 for the means "disclosed", "turns" and "asks").
METRICS: dict[str, Callable[[Mapping[str, Any]], tuple[float, float]]] = {k: m.ratio for k, m in TABLE.items()}
NOT_PERCENT = frozenset(k for k, m in TABLE.items() if m.scale == 1.0)


def scale(metric: str) -> float:
    return TABLE[metric].scale


@dataclass(frozen=True)
class Contrast:
    """B - A on one metric, pooled over models with equal weight."""

    metric: str
    a: float  # pooled value of condition A
    b: float
    diff: float  # b - a
    low: float  # percentile CI of diff
    high: float
    n_scenarios: int
    n_models: int
    n_resamples: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _matrix(rows: Sequence[Mapping[str, Any]], metric: str, models: Sequence[str],
            scenarios: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per (model, scenario): summed numerator and denominator over repeats (failed rollouts left out)."""
    fn = METRICS[metric]
    mi = {m: i for i, m in enumerate(models)}
    si = {s: i for i, s in enumerate(scenarios)}
    num = np.zeros((len(models), len(scenarios)))
    den = np.zeros_like(num)
    for r in rows:
        if r.get("failed") or r.get("outcome") is None:
            continue
        m, s = mi.get(_model(r)), si.get(r["scenario_id"])
        if m is None or s is None:
            continue
        n, d = fn(r["outcome"])
        num[m, s] += n
        den[m, s] += d
    return num, den


def _model(row: Mapping[str, Any]) -> str:
    return row["cell"]["agent"] if "cell" in row else row.get("agent", "")


def _scored(rows: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in rows:
        if not r.get("failed") and r.get("outcome") is not None:
            out.setdefault(_model(r), set()).add(r["scenario_id"])
    return out


def paired_contrast(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], metric: str = "success", *,
                    n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0) -> Contrast:
    """Paired scenario-level bootstrap of B - A; models in both, scenarios every such model scored in both."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(METRICS)}")
    if not 0 < confidence < 1 or n_resamples < 1:
        raise ValueError(f"need 0 < confidence < 1 and n_resamples >= 1, got {confidence}, {n_resamples}")
    sa, sb = _scored(a), _scored(b)
    models = sorted(set(sa) & set(sb))
    if not models:
        raise ValueError("no model has scored rollouts in both conditions")
    scenarios = sorted(set.intersection(*(sa[m] & sb[m] for m in models)))
    if not scenarios:
        raise ValueError("the conditions share no scenario that every model scored in both")
    na, da = _matrix(a, metric, models, scenarios)
    nb, db = _matrix(b, metric, models, scenarios)
    # A model without a denominator in a condition (Accept% of an agent that never recommends) has no value
    # for this metric: it is left out of the pool rather than turning it into NaN.
    keep = (da.sum(1) > 0) & (db.sum(1) > 0)
    if not keep.any():
        raise ValueError(f"no model has a {metric} value in both conditions (no denominator)")
    na, da, nb, db = na[keep], da[keep], nb[keep], db[keep]
    k = scale(metric)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        # a resample without any denominator (e.g. no recommendation turn drawn) is NaN and left out
        warnings.simplefilter("ignore", RuntimeWarning)
        va = k * na.sum(1) / da.sum(1)
        vb = k * nb.sum(1) / db.sum(1)
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(scenarios), size=(n_resamples, len(scenarios)))
        ra = k * na[:, idx].sum(2) / da[:, idx].sum(2)  # (models, resamples)
        rb = k * nb[:, idx].sum(2) / db[:, idx].sum(2)
        boot = np.nanmean(rb - ra, axis=0) if np.isnan(rb - ra).any() else (rb - ra).mean(axis=0)
        alpha = (1 - confidence) / 2
        low, high = np.nanpercentile(boot, [100 * alpha, 100 * (1 - alpha)])
    return Contrast(metric, float(va.mean()), float(vb.mean()), float((vb - va).mean()), float(low), float(high),
                    len(scenarios), int(keep.sum()), n_resamples, confidence)


def paired_interval(before: Any, after: Any, *, n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
                    seed: int = 0) -> tuple[float, float, float]:
    """(mean of after - before, low, high): a paired bootstrap over scenarios, on arrays.

    ``before`` / ``after`` are per-scenario values of the same scenarios in the same order, shape ``(n,)`` or
    ``(runs, n)`` (e.g. one row per training seed, each run evaluated on the same ``n`` held-out scenarios): a
    resample draws scenarios with replacement, the same draws for every run, and averages the runs' mean
    differences -- :func:`paired_contrast` on plain arrays, for records that are not rollout rows (a checkpoint
    before and after training). Percentile interval, seeded.

    >>> d, lo, hi = paired_interval([0, 0, 1, 0] * 10, [1, 0, 1, 1] * 10)
    >>> round(d, 2), lo > 0.2, hi <= 0.75
    (0.5, True, True)
    """
    a, b = np.atleast_2d(np.asarray(before, dtype=float)), np.atleast_2d(np.asarray(after, dtype=float))
    if a.shape != b.shape or a.shape[1] == 0:
        raise ValueError(f"before and after must be the same non-empty shape, got {a.shape} and {b.shape}")
    if not 0 < confidence < 1 or n_resamples < 1:
        raise ValueError(f"need 0 < confidence < 1 and n_resamples >= 1, got {confidence}, {n_resamples}")
    diff = b - a
    idx = np.random.default_rng(seed).integers(0, diff.shape[1], size=(n_resamples, diff.shape[1]))
    boot = diff[:, idx].mean(axis=2).mean(axis=0)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
    return float(diff.mean()), float(low), float(high)


def gain_gap_interval(before: Any, after: Any, in_b: Any, *, n_resamples: int = N_RESAMPLES,
                      confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float, float]:
    """(gain in group B - gain in group A, low, high): whether a change helped one set of scenarios more.

    ``before`` / ``after`` as in :func:`paired_interval` (per-scenario values, shape ``(n,)`` or ``(runs, n)``);
    ``in_b`` marks the scenarios of group B (the rest are A), e.g. held-out scenarios of domains the policy
    trained on (B) against those of unseen domains (A). A gain is the mean of after - before over a group's
    scenarios, averaged over runs. The two groups hold different scenarios, so a resample draws with replacement
    within each group (stratified; the same draws for every run). Percentile interval, seeded.

    >>> gap, lo, hi = gain_gap_interval([0] * 40, [1, 0] * 10 + [1] * 20, [False] * 20 + [True] * 20)
    >>> round(gap, 2), lo > 0.2, hi <= 0.75
    (0.5, True, True)
    """
    a, b = np.atleast_2d(np.asarray(before, dtype=float)), np.atleast_2d(np.asarray(after, dtype=float))
    mask = np.asarray(in_b, dtype=bool)
    if a.shape != b.shape or a.shape[1] != mask.shape[0]:
        raise ValueError(f"before, after and in_b must cover the same scenarios, got {a.shape}, {b.shape} and "
                         f"{mask.shape}")
    if mask.all() or not mask.any():
        raise ValueError("in_b must mark some scenarios and leave some out (two non-empty groups)")
    if not 0 < confidence < 1 or n_resamples < 1:
        raise ValueError(f"need 0 < confidence < 1 and n_resamples >= 1, got {confidence}, {n_resamples}")
    diff = b - a
    group_a, group_b = np.flatnonzero(~mask), np.flatnonzero(mask)
    rng = np.random.default_rng(seed)
    draw_a = group_a[rng.integers(0, len(group_a), size=(n_resamples, len(group_a)))]
    draw_b = group_b[rng.integers(0, len(group_b), size=(n_resamples, len(group_b)))]
    boot = (diff[:, draw_b].mean(axis=2) - diff[:, draw_a].mean(axis=2)).mean(axis=0)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
    gap = float((diff[:, group_b].mean(axis=1) - diff[:, group_a].mean(axis=1)).mean())
    return gap, float(low), float(high)


def part_gains(parts: Sequence[str], before: Any, after: Any, a: str = "unseen_domain",
               b: str = "unseen_scenario") -> dict[str, Any]:
    """Gains of a change on two parts of a held-out set, and the gap between them.

    ``parts``: each scenario's part (e.g. :func:`hear2act.training.splits.part_of`); ``before`` / ``after``: per
    scenario values, one row per run (as :func:`paired_interval`). Returns, for parts ``a`` and ``b``, ``n``,
    the mean before and after and ``gain_ci95`` (gain, low, high; :func:`paired_interval`), and ``gap_ci95``:
    b's gain minus a's (:func:`gain_gap_interval`).

    >>> out = part_gains(["x", "y"] * 20, [[0] * 40], [[0, 1] * 20], a="x", b="y")
    >>> out["x"]["gain_ci95"][0], out["y"]["gain_ci95"][0], out["gap_ci95"][0]
    (0.0, 1.0, 1.0)
    """
    before, after = np.atleast_2d(np.asarray(before, dtype=float)), np.atleast_2d(np.asarray(after, dtype=float))
    labels = np.asarray(parts)
    out: dict[str, Any] = {}
    for part in (a, b):
        keep = labels == part
        if not keep.any():
            raise ValueError(f"no scenario of part {part!r} (parts seen: {sorted(set(labels.tolist()))})")
        out[part] = {"n": int(keep.sum()), "before": float(before[:, keep].mean()),
                     "after": float(after[:, keep].mean()),
                     "gain_ci95": list(paired_interval(before[:, keep], after[:, keep]))}
    both = (labels == a) | (labels == b)
    out["gap_ci95"] = list(gain_gap_interval(before[:, both], after[:, both], labels[both] == b))
    return out


def pooled_value(rows: Sequence[Mapping[str, Any]], metric: str = "success") -> float:
    """A condition's metric: per model (ratio of sums over scored rollouts), then the mean over models."""
    by_model: dict[str, list[float]] = {}
    fn = METRICS[metric]
    for r in rows:
        if r.get("failed") or r.get("outcome") is None:
            continue
        n, d = fn(r["outcome"])
        acc = by_model.setdefault(_model(r), [0.0, 0.0])
        acc[0] += n
        acc[1] += d
    values = [scale(metric) * n / d for n, d in by_model.values() if d]
    return float(np.mean(values)) if values else float("nan")


def ladder(rungs: Mapping[str, Sequence[Mapping[str, Any]]], metric: str = "success", *,
           order: Sequence[str] = LADDER, n_resamples: int = N_RESAMPLES, seed: int = 0) -> list[tuple[str, str,
                                                                                                       Contrast]]:
    """Successive paired steps along the label-fidelity ladder (Table 9); rungs missing from ``rungs`` are skipped."""
    present = [r for r in order if rungs.get(r)]
    return [(x, y, paired_contrast(rungs[x], rungs[y], metric, n_resamples=n_resamples, seed=seed))
            for x, y in pairwise(present)]


def cell_interval(rows: Sequence[Mapping[str, Any]], metric: str = "success", *, n_resamples: int = N_RESAMPLES,
                  confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float, float, int]:
    """(value, low, high, n_scenarios) of one condition: :func:`pooled_value` with a scenario-level bootstrap.

    Scenarios are drawn with replacement (the same draws for every model of the rows, as in
    :func:`paired_contrast`); each resample recomputes the per-model ratio of sums and their mean; the
    interval is the percentile interval. NaN everywhere when no model has a denominator.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {sorted(METRICS)}")
    scored = _scored(rows)
    models = sorted(scored)
    scenarios = sorted(set().union(*scored.values())) if scored else []
    nan = float("nan")
    if not scenarios:
        return nan, nan, nan, 0
    num, den = _matrix(rows, metric, models, scenarios)
    keep = den.sum(1) > 0
    if not keep.any():
        return nan, nan, nan, len(scenarios)
    num, den = num[keep], den[keep]
    k = scale(metric)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float((k * num.sum(1) / den.sum(1)).mean())
        idx = np.random.default_rng(seed).integers(0, len(scenarios), size=(n_resamples, len(scenarios)))
        boot = np.nanmean(k * num[:, idx].sum(2) / den[:, idx].sum(2), axis=0)
        alpha = (1 - confidence) / 2
        low, high = np.nanpercentile(boot, [100 * alpha, 100 * (1 - alpha)])
    return value, float(low), float(high), len(scenarios)
