"""Pure metrics over outcome rows (PROTOCOL.md "Metrics"). No I/O, no plotting.

A row is ``info["outcome"]`` of one rollout. Success%, full disclosure,
premature closure and turns are per rollout; Accept% and FullFit% are per
agent recommendation turn, pooled over rollouts (the paper's definition);
action shares are pooled over all agent actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ACTION_KINDS = ("recommend", "ask", "clarify", "confirm", "invalid")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def success_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of rollouts whose final selection is the gold."""
    return _mean([float(r["success"]) for r in rows])


def accept_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of agent recommendation turns meeting the request, L1 and L2."""
    n = sum(r["recommendations"] for r in rows)
    return sum(r["accepts"] for r in rows) / n if n else float("nan")


def fullfit_rate(rows: Sequence[Mapping[str, Any]]) -> float:
    """Share of agent recommendation turns meeting the request and L1-L3."""
    n = sum(r["recommendations"] for r in rows)
    return sum(r["fullfits"] for r in rows) / n if n else float("nan")


def action_shares(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    totals = dict.fromkeys(ACTION_KINDS, 0)
    for r in rows:
        for k, v in r["action_counts"].items():
            totals[k] = totals.get(k, 0) + v
    n = sum(totals.values())
    return {k: (v / n if n else float("nan")) for k, v in totals.items()}


def disclosure_distribution(rows: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Share of rollouts (in %) that disclosed 0, 1, 2 and 3 hidden needs (the paper's Figure 5)."""
    counts = dict.fromkeys(range(4), 0)
    for r in rows:
        counts[int(r["n_disclosed"])] += 1
    return {k: (100 * v / len(rows) if rows else float("nan")) for k, v in counts.items()}


def asks_per_dialogue(rows: Sequence[Mapping[str, Any]]) -> float:
    """Mean number of ASK and CLARIFY actions per rollout (paper §5.3: 1.8 -> 4.3 with state access)."""
    return _mean([float(r["action_counts"].get("ask", 0) + r["action_counts"].get("clarify", 0)) for r in rows])


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The paper's headline figures for one condition, in percent where it says %."""
    shares = action_shares(rows)
    return {
        "n": float(len(rows)),
        "success": 100 * success_rate(rows),
        "accept": 100 * accept_rate(rows),
        "fullfit": 100 * fullfit_rate(rows),
        "full_disclosure": 100 * _mean([float(r["full_disclosure"]) for r in rows]),
        "disclosed": _mean([float(r["n_disclosed"]) for r in rows]),
        "premature_closure": 100 * _mean([float(r["premature_closure"]) for r in rows]),
        "turns": _mean([float(r["turns"]) for r in rows]),
        "asks": asks_per_dialogue(rows),
        **{f"share_{k}": 100 * v for k, v in shares.items()},
    }


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
