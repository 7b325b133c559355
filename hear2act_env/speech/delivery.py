"""The delivery model: each delivery label (paper Table 12) -> prosodic targets.

A renderer realises a label by moving the neutral rendering of the words
along seven cues. Each label has a mean target per cue; every utterance
draws its own targets around those means (keyed by the seed), so labels
overlap on any single cue and only the combination tells them apart — as in
speech, where a hesitant and a bored "okay" can share a pitch level.

| cue | unit | meaning |
| --- | --- | --- |
| ``f0_shift`` | semitones | mean pitch relative to the voice's own |
| ``f0_range`` | factor | pitch excursion around the mean (1 = as synthesised) |
| ``final`` | semitones | pitch movement over the last 0.35 s (+ rise, - fall) |
| ``tempo`` | factor | speaking rate (1 = as synthesised) |
| ``energy`` | dB | loudness |
| ``tilt`` | dB/octave | spectral tilt (- darker/softer, + brighter/tenser) |
| ``pause`` | seconds | silence before speaking (hesitation) |
| ``filler`` | probability | an "Um," before the words (audio only: the transcript keeps the words) |
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# Bump whenever a table value or the drawing changes: renderers put it in their version,
# so the audio cache never serves renders of an older delivery model.
DELIVERY_VERSION = 2
CUES = ("f0_shift", "f0_range", "final", "tempo", "energy", "tilt", "pause")


@dataclass(frozen=True)
class ProsodyTargets:
    f0_shift: float = 0.0
    f0_range: float = 1.0
    final: float = -1.0
    tempo: float = 1.0
    energy: float = 0.0
    tilt: float = 0.0
    pause: float = 0.0
    filler: float = 0.0  # probability in the table; 0/1 once drawn


# label: (f0_shift, f0_range, final, tempo, energy, tilt, pause, filler)
TABLE: dict[str, tuple[float, ...]] = {
    "neutral": (0.0, 1.0, -1.0, 1.0, 0.0, 0.0, 0.05, 0.0),
    # resolved: genuine acceptance
    "satisfied": (1.0, 1.25, -2.5, 1.03, 1.5, 1.0, 0.05, 0.0),
    "warm": (0.5, 1.15, -1.5, 0.96, 1.0, -0.5, 0.05, 0.0),
    "enthusiastic": (2.5, 1.5, 0.5, 1.1, 3.0, 1.5, 0.0, 0.0),
    "relieved": (1.5, 1.3, -3.0, 0.97, 1.0, 0.5, 0.1, 0.0),
    # unresolved: reluctant acceptance
    "underwhelmed": (-1.0, 0.65, -1.0, 0.92, -2.0, -1.5, 0.2, 0.2),
    "lukewarm": (-1.0, 0.65, 0.5, 0.93, -2.0, -1.0, 0.25, 0.3),
    "hesitant": (-0.5, 0.85, 1.5, 0.86, -2.0, -1.0, 0.4, 0.6),
    "flat": (-1.5, 0.5, 0.0, 0.93, -2.5, -1.5, 0.15, 0.1),
    # unresolved: voiced concern
    "concerned": (-0.5, 0.9, 2.0, 0.88, -1.5, -1.0, 0.35, 0.4),
    # unresolved: rejection
    "frustrated": (1.0, 1.3, -3.0, 1.08, 3.0, 2.0, 0.05, 0.0),
    "disappointed": (-2.0, 0.7, -3.0, 0.88, -3.0, -2.0, 0.25, 0.1),
    "impatient": (1.0, 1.1, -2.0, 1.2, 2.0, 1.5, 0.0, 0.0),
    "firm": (-1.0, 0.9, -4.0, 0.95, 2.0, 1.0, 0.05, 0.0),
}
LABELS = tuple(TABLE)
# Per-utterance spread (standard deviation) of each cue around the label's mean.
SPREAD = ProsodyTargets(f0_shift=1.0, f0_range=0.15, final=1.2, tempo=0.04, energy=1.0, tilt=0.7, pause=0.08)
LIMITS = {"f0_range": (0.3, 2.0), "tempo": (0.7, 1.35), "pause": (0.0, 0.8)}


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
    filler = 1.0 if rng.random() < mean.filler else 0.0
    return replace(mean, filler=filler, **values)
