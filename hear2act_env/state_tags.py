"""The state-tag channel of access ``T+S`` and its fidelity interventions.

``correct``: ``CONCERN STATE: <delivery> (resolved|unresolved)`` for the
current recommendation (paper card P6b; the format is
:func:`hear2act_env.protocol.format_tag`). ``none``: no tag (empty string).
``always_resolved`` / ``always_unresolved``: a tag of that status with a
delivery label drawn uniformly from the matching Table 12 labels.
``shuffled``: the paper breaks the alignment between tag and turn while
keeping the label distribution; online, each tag is drawn independently of
the true state from the distribution of true tags over the benchmark's
episodes. That distribution is a fixed table shipped in
``data/state-tag-distribution.json`` (regenerate with ``python -m
hear2act.eval.tag_table``; how it was measured is recorded inside the file).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from .dialogue.engine import DELIVERY, RESOLVED, Draws, Reaction
from .protocol import LABEL_STATUS, format_tag

INTERVENTIONS = ("correct", "none", "always_resolved", "always_unresolved", "shuffled")  # state_intervention=
TAG_TABLE = Path(__file__).resolve().parent / "data" / "state-tag-distribution.json"
UNRESOLVED_LABELS = tuple(label for state, ls in DELIVERY.items() if state != RESOLVED for label in ls)


@lru_cache(maxsize=1)
def tag_distribution() -> tuple[tuple[str, ...], tuple[float, ...]]:
    """(labels, cumulative probabilities) of the shipped true-tag table."""
    counts: dict[str, int] = json.loads(TAG_TABLE.read_text(encoding="utf-8"))["counts"]
    unknown = set(counts) - set(LABEL_STATUS)
    if unknown:
        raise ValueError(f"{TAG_TABLE.name}: unknown delivery labels {sorted(unknown)}")
    total = sum(counts.values())
    labels = tuple(sorted(counts))
    cumulative, acc = [], 0.0
    for label in labels:
        acc += counts[label] / total
        cumulative.append(acc)
    return labels, tuple(cumulative)


class StateChannel:
    """Turns the engine's reaction into the observed tag under an intervention."""

    def __init__(self, intervention: str) -> None:
        self.intervention = intervention
        if intervention == "shuffled":
            tag_distribution()  # fail at construction, not mid-episode

    def tag(self, reaction: Reaction, draws: Draws, turn: int) -> str:
        kind = self.intervention
        if kind == "correct":
            return format_tag(reaction.rec_delivery)
        if kind == "none":
            return ""
        if kind == "always_resolved":
            labels = DELIVERY[RESOLVED]
            return format_tag(labels[draws.pick(len(labels), "tag", turn)])
        if kind == "always_unresolved":
            return format_tag(UNRESOLVED_LABELS[draws.pick(len(UNRESOLVED_LABELS), "tag", turn)])
        labels, cumulative = tag_distribution()
        u = draws.pick(2**31, "tag", turn) / 2**31
        return format_tag(next((lab for lab, c in zip(labels, cumulative, strict=True) if u < c), labels[-1]))
