"""Pure metrics over outcome rows (PROTOCOL.md "Metrics"). No I/O, no plotting.

A row is ``info["outcome"]`` of one rollout. Every metric is one entry of :data:`TABLE`: a numerator and
a denominator per rollout, and a condition's value is ``scale * sum(numerators) / sum(denominators)``
(NaN without a denominator). Success%, full disclosure, premature closure and turns are per rollout
(denominator 1); Accept% and FullFit% are per agent recommendation turn, pooled over rollouts (the paper's
definition); action shares are pooled over all agent actions. :func:`summarize` (``hear2act rollout``,
``eval`` tables, PPO and GRPO evaluation) and the bootstrap in :mod:`hear2act.eval.stats` read this one table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ACTION_KINDS = ("recommend", "ask", "clarify", "confirm", "invalid")
# The columns the command-line tables show (``hear2act rollout``, ``demo``, ``eval``'s results).
HEADLINE = ("success", "accept", "fullfit", "full_disclosure", "premature_closure", "turns")

Ratio = Callable[[Mapping[str, Any]], tuple[float, float]]


@dataclass(frozen=True)
class Metric:
    """One metric: ``ratio(outcome) -> (numerator, denominator)`` of one rollout, and its scale."""

    name: str
    ratio: Ratio
    scale: float  # 100 for a percentage, 1 for a mean
    doc: str


def _per_rollout(key: str) -> Ratio:
    return lambda o: (float(o[key]), 1.0)


def _share(kind: str) -> Ratio:
    return lambda o: (float(o["action_counts"].get(kind, 0)), float(sum(o["action_counts"].values())))


def _asks(o: Mapping[str, Any]) -> tuple[float, float]:
    return float(o["action_counts"].get("ask", 0) + o["action_counts"].get("clarify", 0)), 1.0


_METRICS = (
    Metric("success", _per_rollout("success"), 100.0, "rollouts whose final selection is the gold (%)"),
    Metric("accept", lambda o: (float(o["accepts"]), float(o["recommendations"])), 100.0,
           "recommendation turns meeting the request, L1 and L2 (%)"),
    Metric("fullfit", lambda o: (float(o["fullfits"]), float(o["recommendations"])), 100.0,
           "recommendation turns meeting the request and L1-L3 (%)"),
    Metric("full_disclosure", _per_rollout("full_disclosure"), 100.0, "rollouts that disclosed all three needs (%)"),
    Metric("disclosed", _per_rollout("n_disclosed"), 1.0, "hidden needs disclosed per rollout (mean)"),
    Metric("premature_closure", _per_rollout("premature_closure"), 100.0,
           "rollouts confirmed on an option that misses a need (%)"),
    Metric("turns", _per_rollout("turns"), 1.0, "agent turns per rollout (mean)"),
    Metric("asks", _asks, 1.0, "ASK and CLARIFY actions per rollout (mean; paper §5.3)"),
    *(Metric(f"share_{k}", _share(k), 100.0, f"{k} actions among all agent actions (%)") for k in ACTION_KINDS),
)
TABLE: dict[str, Metric] = {m.name: m for m in _METRICS}


def ratio(rows: Iterable[Mapping[str, Any]], metric: str) -> tuple[float, float]:
    """(sum of numerators, sum of denominators) of ``metric`` over the rows."""
    fn = TABLE[metric].ratio
    num = den = 0.0
    for r in rows:
        n, d = fn(r)
        num += n
        den += d
    return num, den


def value(rows: Sequence[Mapping[str, Any]], metric: str, scale: float | None = None) -> float:
    """``scale * sum(numerators) / sum(denominators)`` (the metric's own scale by default; NaN if no denominator)."""
    num, den = ratio(rows, metric)
    k = TABLE[metric].scale if scale is None else scale
    return k * (num / den) if den else float("nan")


def success_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of rollouts whose final selection is the gold."""
    return value(rows, "success", 1.0)


def accept_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of agent recommendation turns meeting the request, L1 and L2."""
    return value(rows, "accept", 1.0)


def fullfit_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of agent recommendation turns meeting the request and L1-L3."""
    return value(rows, "fullfit", 1.0)


def action_shares(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    return {k: value(rows, f"share_{k}", 1.0) for k in ACTION_KINDS}


def disclosure_distribution(rows: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Share of rollouts (in %) that disclosed 0, 1, 2 and 3 hidden needs (the paper's Figure 5)."""
    counts = dict.fromkeys(range(4), 0)
    for r in rows:
        counts[int(r["n_disclosed"])] += 1
    return {k: (100 * v / len(rows) if rows else float("nan")) for k, v in counts.items()}


def asks_per_dialogue(rows: Sequence[Mapping[str, Any]]) -> float:
    """Mean number of ASK and CLARIFY actions per rollout (paper §5.3: 1.8 -> 4.3 with state access)."""
    return value(rows, "asks")


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The paper's headline figures for one condition (every metric of :data:`TABLE`), in percent where it says %."""
    rows = list(rows)
    return {"n": float(len(rows)), **{name: value(rows, name) for name in TABLE}}


def format_table(summaries: Mapping[str, Mapping[str, float]], columns: Sequence[str]) -> str:
    """A fixed-width text table: one row per condition label."""
    width = max(len(k) for k in summaries) if summaries else 10
    head = f"{'condition':<{width}}  " + "  ".join(f"{c:>9}" for c in columns)
    lines = [head, "-" * len(head)]
    for label, s in summaries.items():
        # nan: the metric has no denominator (e.g. Accept% of an agent that never recommends).
        cells = (f"{'-':>9}" if s[c] != s[c] else f"{s[c]:>9.1f}" for c in columns)
        lines.append(f"{label:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
