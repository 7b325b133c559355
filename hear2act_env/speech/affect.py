"""Generic affect labels for the ``T+affect`` condition: happy / sad / angry / neutral.

The paper's generic-affect baselines pass a speech-emotion recogniser's label
(HuBERT-SUPERB-ER, SpeechBrain wav2vec2-IEMOCAP) verbatim to the decision
stage. :class:`~hear2act_env.speech.affect_hf.TransformersAffect` loads such a
checkpoint from a local path. So that ``T+affect`` runs out of the box on
CPU, :class:`RuleAffect` maps acoustic features to the same four classes by
the textbook arousal/valence reading of prosody, with round-number
thresholds fixed in advance and never fitted to this benchmark's states:

* arousal = (F0 level above the voice's baseline in semitones) / 2
  + (intensity above baseline in dB) / 3 + (speech rate - 4.5 syll/s);
* arousal > 1: *angry* when loud (>= +2 dB) with a falling end (<= -2 st),
  otherwise *happy*;
* arousal < -1: *sad*;
* otherwise *neutral*.

It must stay a generic affect reading: a test checks that its output is not
simply the benchmark's resolved/unresolved status.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..protocol import AFFECT_LABELS  # noqa: F401 -- re-exported: the labels RuleAffect returns
from .features import extract
from .perceiver import Baseline


@runtime_checkable
class AffectClassifier(Protocol):
    name: str

    def classify(self, audio: np.ndarray, sr: int = 16_000) -> str: ...


def arousal(f0_rel: float, rms_rel: float, rate: float) -> float:
    return f0_rel / 2 + rms_rel / 3 + (rate - 4.5)


class RuleAffect:
    """The documented CPU fallback (see module docstring)."""

    name = "rule-affect"

    def __init__(self, baseline: Baseline) -> None:
        self.baseline = baseline

    def classify(self, audio: np.ndarray, sr: int = 16_000) -> str:
        f = extract(audio, sr)
        f0_rel, rms_rel = self.baseline.relative(f)
        a = arousal(f0_rel, rms_rel, f.speech_rate)
        if a > 1:
            return "angry" if rms_rel >= 2 and f.f0_final <= -2 else "happy"
        if a < -1:
            return "sad"
        return "neutral"
