"""Prosody edits shared by renderers: F0 level/range/final contour and spectral tilt."""

from __future__ import annotations

import numpy as np

from .delivery import ProsodyTargets

FINAL_S = 0.35  # span of the final contour
NAT_TO_DB = 20 / np.log(10)


def edit_f0(f0: np.ndarray, t: ProsodyTargets, frame_s: float) -> np.ndarray:
    """Apply level, range and final movement (semitones) to a frame-level F0 track.

    ``f0`` in Hz with 0 (or < 40 Hz) for unvoiced frames; ``frame_s`` is the
    frame hop in seconds. Unvoiced frames stay unvoiced.
    """
    f0 = np.asarray(f0, dtype=np.float64).copy()
    voiced = f0 > 40.0
    if voiced.sum() < 2:
        return f0.astype(np.float32)
    st = 12 * np.log2(f0[voiced] / 100.0)
    mean = st.mean()
    st = mean + t.f0_shift + t.f0_range * (st - mean)
    idx = np.flatnonzero(voiced)
    n_final = max(2, int(FINAL_S / frame_s))
    tail = idx >= idx[-1] - n_final
    ramp = np.clip((idx[tail] - (idx[-1] - n_final)) / n_final, 0.0, 1.0)
    st[tail] += t.final * ramp
    f0[voiced] = 100.0 * 2 ** (st / 12)
    return f0.astype(np.float32)


def tilt_db(freqs: np.ndarray, db_per_octave: float) -> np.ndarray:
    """Gain in dB per frequency for a spectral tilt pivoting at 1 kHz (flat below 125 Hz)."""
    return db_per_octave * np.log2(np.maximum(freqs, 125.0) / 1000.0)
