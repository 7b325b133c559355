"""Acoustic features of one user turn, speaker-normalised the way the perceiver normalises them.

The ``A+T`` (and ``A``) wrappers give a learned policy the waveform's own
measurements, not a tag: the speech module's pitch / energy / rate / pause /
tilt features (:mod:`hear2act_env.speech.features`), with mean F0 and
intensity made relative to the voice's neutral baseline (enrollment on
unlabeled neutral speech, :mod:`hear2act_env.speech.enrollment`), then
standardised with the shipped perceiver's feature means and spreads so every
value is O(1). No state labels are involved at any point.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import numpy as np

NAMES = ("f0_range", "f0_slope", "f0_final", "speech_rate", "lead_pause", "pause_total", "tilt", "f0_rel",
         "rms_rel")
CLIP = 5.0


@lru_cache(maxsize=4)
def _normaliser(renderer: str, voice: str | None) -> tuple[object, np.ndarray, np.ndarray]:
    """(baseline, mean, std) for one voice: enrollment plus the perceiver's standardisation."""
    from hear2act_env.speech.enrollment import neutral_baseline
    from hear2act_env.speech.perceiver import ACOUSTIC, FEATURES, RELATIVE, WEIGHTS, PerceiverWeights
    from hear2act_env.speech.renderers import make_renderer

    assert (*ACOUSTIC, *RELATIVE) == NAMES, "perceiver feature names changed; update training/acoustic.py"
    weights = PerceiverWeights.from_json(WEIGHTS.read_text())
    idx = [FEATURES.index(n) for n in NAMES]
    baseline = neutral_baseline(make_renderer(renderer), voice)
    return baseline, weights.status.mean[idx], weights.status.std[idx]


_MEMO: OrderedDict[tuple, Any] = OrderedDict()  # shared by every reader of the process (runs replay turns)
MEMO_SIZE = 200_000


def audio_key(audio: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(audio).tobytes(), digest_size=16).digest()


class AcousticReader:
    """Audio -> 9 standardised, clipped features; memoised on the audio bytes (episodes replay turns)."""

    size = len(NAMES)

    def __init__(self, renderer: str = "hibari", voice: str | None = None) -> None:
        self.renderer, self.voice = renderer, voice

    def __call__(self, audio: np.ndarray | None) -> np.ndarray:
        if audio is None or len(audio) == 0:
            return np.zeros(self.size, dtype=np.float32)
        key = (self.renderer, self.voice, audio_key(audio))
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit
        from hear2act_env.speech.features import extract
        from hear2act_env.speech.perceiver import ACOUSTIC

        baseline, mean, std = _normaliser(self.renderer, self.voice)
        feats = extract(audio, 16_000)
        row = np.concatenate([feats.vector(ACOUSTIC), baseline.relative(feats)])  # type: ignore[attr-defined]
        out = np.clip((row - mean) / std, -CLIP, CLIP).astype(np.float32)
        _MEMO[key] = out
        if len(_MEMO) > MEMO_SIZE:
            _MEMO.popitem(last=False)
        return out


@lru_cache(maxsize=4)
def _perceiver(renderer: str, voice: str | None):
    from hear2act_env.speech.perceiver import FeaturePerceiver
    from hear2act_env.speech.renderers import make_renderer

    inner = FeaturePerceiver()
    inner.adapt(make_renderer(renderer), voice)  # as the env does: the shipped baseline for the trained voice
    return inner


class MemoPerceiver:
    """The env's default CPU perceiver (for ``T+S_hat``), memoised on (audio bytes, words).

    Passed as the env's ``perceiver=`` argument so training runs that replay the same cached turns do not
    re-measure them. The feature perceiver reads only the audio and the turn's words (not the context), so
    its readings are exactly the unmemoised ones.
    """

    name = "feature-perceiver"

    def __init__(self, renderer: str = "hibari", voice: str | None = None) -> None:
        self.renderer, self.voice = renderer, voice

    @property
    def baseline(self):
        return _perceiver(self.renderer, self.voice).baseline

    def perceive(self, audio: np.ndarray, sr: int = 16_000, words: str = "", context: str = ""):
        key = ("perceive", self.renderer, self.voice, audio_key(audio), sr, words)
        hit = _MEMO.get(key)
        if hit is None:
            hit = _MEMO[key] = _perceiver(self.renderer, self.voice).perceive(audio, sr, words, context)
            if len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
        return hit
