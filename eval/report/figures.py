"""The report's figures as PNG bytes: action composition (the paper's Figures 3/4) and disclosure (Figure 5).

matplotlib (the ``report`` extra) is imported here only, with the Agg backend, so the report can be built
on a machine without a display.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from .. import stats
from ..metrics import disclosure_distribution

ACTION_COLORS = {"recommend": "#4C78A8", "ask": "#59A14F", "clarify": "#B6D7A8", "confirm": "#E15759",
                 "invalid": "#BAB0AC"}
DISCLOSED_COLORS = ("#D9D9D9", "#9ECAE1", "#4292C6", "#08519C")


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError('the report figures need matplotlib: pip install "hear2act[report]"') from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def action_composition(groups: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], title: str) -> bytes:
    """Stacked horizontal bars of action shares per group, success rate written at the right."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(groups) + 1.3))
    labels = [g for g, _ in groups]
    left = [0.0] * len(groups)
    for kind, color in ACTION_COLORS.items():
        shares = [stats.pooled_value(rs, f"share_{kind}") for _, rs in groups]
        shares = [0.0 if s != s else s for s in shares]
        ax.barh(labels, shares, left=left, color=color, label=kind, edgecolor="white", linewidth=0.5)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    for i, (_, rs) in enumerate(groups):
        ax.text(101, i, f"Success {stats.pooled_value(rs, 'success'):.1f}%", va="center", fontsize=8)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel("share of agent actions (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(ncol=5, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.6 / max(len(groups), 1)),
              frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def disclosure(groups: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], title: str) -> bytes:
    """Stacked bars: share of rollouts that revealed 0, 1, 2 or 3 hidden needs, per group."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(groups) + 1.3))
    labels = [g for g, _ in groups]
    left = [0.0] * len(groups)
    dists = [disclosure_distribution([r["outcome"] for r in rs if not r.get("failed") and r.get("outcome")])
             for _, rs in groups]
    for k in range(4):
        shares = [0.0 if d[k] != d[k] else d[k] for d in dists]
        ax.barh(labels, shares, left=left, color=DISCLOSED_COLORS[k], label=f"{k} needs", edgecolor="white",
                linewidth=0.5)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel("share of rollouts (%) by hidden needs disclosed")
    ax.set_title(title, fontsize=10)
    ax.legend(ncol=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.6 / max(len(groups), 1)),
              frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)
