"""The delivery model: each delivery label (paper Table 12) -> prosodic targets.

A renderer realises a label by moving the neutral rendering of the words
along six prosodic cues. Each label has a mean target per cue; every
utterance draws its own targets around those means (keyed by the seed), so
labels overlap on any single cue and only the combination tells them apart —
as in speech, where a hesitant and a bored "okay" can share a pitch level.

| cue | unit | meaning |
| --- | --- | --- |
| ``f0_shift`` | semitones | mean pitch relative to the voice's own |
| ``f0_range`` | factor | pitch excursion around the mean (1 = as synthesised) |
| ``final`` | semitones | pitch movement over the last 0.35 s (+ rise, - fall) |
| ``tempo`` | factor | speaking rate (1 = as synthesised) |
| ``fade`` | dB | energy contour: loudness change from the start to the end of the speech (- trailing off) |
| ``tilt`` | dB/octave | spectral tilt (- darker/softer, + brighter/tenser) |

Nothing else depends on the label: the words are the transcript's (no
fillers), and pauses, room noise and overall loudness are drawn by
:mod:`.mastering` from one distribution for every delivery.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# Bump whenever a table value, the drawing or the mastering changes: renderers put it in their
# version, so the audio cache never serves renders of an older delivery model.
# 3: no filler, no label-dependent pauses, room noise, loudness normalised, energy as a contour.
DELIVERY_VERSION = 3
CUES = ("f0_shift", "f0_range", "final", "tempo", "fade", "tilt")


@dataclass(frozen=True)
class ProsodyTargets:
    f0_shift: float = 0.0
    f0_range: float = 1.0
    final: float = -1.0
    tempo: float = 1.0
    fade: float = 0.0
    tilt: float = 0.0


# label: (f0_shift, f0_range, final, tempo, fade, tilt)
TABLE: dict[str, tuple[float, ...]] = {
    "neutral": (0.0, 1.0, -1.0, 1.0, -2.0, 0.0),
    # resolved: genuine acceptance
    "satisfied": (1.0, 1.25, -2.5, 1.02, -1.0, 1.0),
    "warm": (0.5, 1.15, -1.5, 0.97, -1.0, -0.5),
    "enthusiastic": (2.5, 1.5, 0.5, 1.06, 0.5, 1.5),
    "relieved": (1.5, 1.3, -3.0, 0.98, -2.0, 0.5),
    # unresolved: reluctant acceptance
    "underwhelmed": (-1.0, 0.65, -1.0, 0.95, -4.0, -1.5),
    "lukewarm": (-1.0, 0.65, 0.5, 0.96, -3.5, -1.0),
    "hesitant": (-0.5, 0.85, 1.5, 0.92, -4.5, -1.0),
    "flat": (-1.5, 0.5, 0.0, 0.96, -3.0, -1.5),
    # unresolved: voiced concern
    "concerned": (-0.5, 0.9, 2.0, 0.93, -3.5, -1.0),
    # unresolved: rejection
    "frustrated": (1.0, 1.3, -3.0, 1.06, 1.0, 2.0),
    "disappointed": (-2.0, 0.7, -3.0, 0.92, -5.0, -2.0),
    "impatient": (1.0, 1.1, -2.0, 1.12, 0.0, 1.5),
    "firm": (-1.0, 0.9, -4.0, 0.97, 0.5, 1.0),
}
LABELS = tuple(TABLE)
# Per-utterance spread (standard deviation) of each cue around the label's mean.
SPREAD = ProsodyTargets(f0_shift=1.0, f0_range=0.15, final=1.2, tempo=0.05, fade=1.5, tilt=0.7)
LIMITS = {"f0_range": (0.3, 2.0), "tempo": (0.7, 1.35)}


def mean_targets(label: str) -> ProsodyTargets:
    if label not in TABLE:
        raise ValueError(f"unknown delivery label {label!r}; known: {LABELS}")
    return ProsodyTargets(*TABLE[label])


def draw_targets(label: str, seed: int) -> ProsodyTargets:
    """The label's targets for one utterance: means plus seeded spread, clipped to sane limits."""
    mean = mean_targets(label)
    rng = np.random.default_rng(seed)
    values = {}
    for cue in CUES:
        v = getattr(mean, cue) + getattr(SPREAD, cue) * float(rng.standard_normal())
        lo, hi = LIMITS.get(cue, (-np.inf, np.inf))
        values[cue] = float(np.clip(v, lo, hi))
    return replace(mean, **values)
