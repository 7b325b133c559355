"""The Renderer protocol, the registry, and resampling to the observation rate."""

from __future__ import annotations

from functools import cache
from math import gcd
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ...plugins import PluginRegistry, spec_value
from ...registry import resolve
from ..deps import require

OBS_RATE = 16_000


@runtime_checkable
class Renderer(Protocol):
    """Speech for one user turn.

    ``render`` must be a pure function of its arguments: same text, label,
    voice and seed give bit-identical samples (tests check this).
    """

    name: str
    version: str  # changes whenever the output for the same inputs would change
    sample_rate: int
    voices: tuple[str, ...]

    def render(self, text: str, label: str, voice: str | None, seed: int) -> np.ndarray: ...


# name -> "module:Class", imported on use; plus the "hear2act.renderers" entry points (hear2act_env.plugins).
RENDERERS: PluginRegistry[str] = PluginRegistry("renderer", {
    "hibari": "hear2act_env.speech.renderers.hibari:HibariRenderer",
    "piper": "hear2act_env.speech.renderers.piper:PiperRenderer",
}, spec_value)


@cache
def make_renderer(name: str, **kwargs: Any) -> Renderer:
    """The renderer registered as ``name`` (one instance per name and arguments)."""
    return resolve(RENDERERS, name, "renderer")(**kwargs)


def to_16k(wave: np.ndarray, sample_rate: int) -> np.ndarray:
    """Resample a mono waveform to the 16 kHz observation rate (polyphase, float32)."""
    wave = np.asarray(wave, dtype=np.float32)
    if sample_rate == OBS_RATE:
        return wave
    signal = require("scipy.signal")
    g = gcd(OBS_RATE, sample_rate)
    out = signal.resample_poly(wave, OBS_RATE // g, sample_rate // g)
    return np.clip(out, -1.0, 1.0).astype(np.float32)
