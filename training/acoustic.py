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


class AcousticReader:
    """Audio -> 9 standardised, clipped features; memoised on the audio bytes (episodes replay turns)."""

    size = len(NAMES)

    def __init__(self, renderer: str = "hibari", voice: str | None = None, memo: int = 50_000) -> None:
        self.renderer, self.voice, self.memo = renderer, voice, memo
        self._memo: OrderedDict[bytes, np.ndarray] = OrderedDict()

    def __call__(self, audio: np.ndarray | None) -> np.ndarray:
        if audio is None or len(audio) == 0:
            return np.zeros(self.size, dtype=np.float32)
        key = hashlib.blake2b(np.ascontiguousarray(audio).tobytes(), digest_size=16).digest()
        hit = self._memo.get(key)
        if hit is not None:
            self._memo.move_to_end(key)
            return hit
        from hear2act_env.speech.features import extract
        from hear2act_env.speech.perceiver import ACOUSTIC

        baseline, mean, std = _normaliser(self.renderer, self.voice)
        feats = extract(audio, 16_000)
        row = np.concatenate([feats.vector(ACOUSTIC), baseline.relative(feats)])  # type: ignore[attr-defined]
        out = np.clip((row - mean) / std, -CLIP, CLIP).astype(np.float32)
        self._memo[key] = out
        if len(self._memo) > self.memo:
            self._memo.popitem(last=False)
        return out

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_memo": OrderedDict()}
