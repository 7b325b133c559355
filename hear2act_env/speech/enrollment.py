"""Speaker enrollment: a voice's neutral F0 and intensity from unlabeled neutral speech.

A listener adapts to a new voice before judging whether it sounds low or
loud; the perceiver does the same from a few neutral sentences of the voice
(no state labels involved), rendered with a reserved block of seeds
(:mod:`.neutral_speech`, shared with the perceiver).
"""

from __future__ import annotations

from .neutral_speech import ENROLL_SEED, ENROLL_TEXTS, neutral_features
from .perceiver import Baseline
from .renderers import Renderer

__all__ = ["ENROLL_SEED", "ENROLL_TEXTS", "neutral_baseline"]


def neutral_baseline(renderer: Renderer, voice: str | None = None) -> Baseline:
    return Baseline.measure(neutral_features(renderer, voice))
