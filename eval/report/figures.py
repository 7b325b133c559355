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


def _stacked_bars(labels: Sequence[str], series: Sequence[tuple[str, str, Sequence[float]]], xlabel: str,
                  title: str) -> tuple[Any, Any]:
    """Horizontal stacked bars on a 0-100 axis, one bar per label; ``series`` = (name, color, values). NaN -> 0."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(labels) + 1.3))
    left = [0.0] * len(labels)
    for name, color, values in series:
        shares = [0.0 if v != v else v for v in values]
        ax.barh(labels, shares, left=left, color=color, label=name, edgecolor="white", linewidth=0.5)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.legend(ncol=len(series), fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.12 - 0.6 / max(len(labels), 1)), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def action_composition(groups: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], title: str) -> bytes:
    """Stacked horizontal bars of action shares per group, success rate written at the right."""
    series = [(kind, color, [stats.pooled_value(rs, f"share_{kind}") for _, rs in groups])
              for kind, color in ACTION_COLORS.items()]
    fig, ax = _stacked_bars([g for g, _ in groups], series, "share of agent actions (%)", title)
    for i, (_, rs) in enumerate(groups):
        ax.text(101, i, f"Success {stats.pooled_value(rs, 'success'):.1f}%", va="center", fontsize=8)
    return _png(fig)


def disclosure(groups: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], title: str) -> bytes:
    """Stacked bars: share of rollouts that revealed 0, 1, 2 or 3 hidden needs, per group."""
    dists = [disclosure_distribution([r["outcome"] for r in rs if not r.get("failed") and r.get("outcome")])
             for _, rs in groups]
    series = [(f"{k} needs", DISCLOSED_COLORS[k], [d[k] for d in dists]) for k in range(4)]
    fig, _ = _stacked_bars([g for g, _ in groups], series, "share of rollouts (%) by hidden needs disclosed", title)
    return _png(fig)
