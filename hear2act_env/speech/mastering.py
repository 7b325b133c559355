"""What every renderer does after synthesis, the same for every delivery: pauses, room, level.

The delivery is carried by prosody only (see :mod:`.delivery`). Everything a
listener or a classifier could use *instead* is drawn here from one
distribution for every label, keyed by the render seed alone:

* the engine's own leading/trailing silence is trimmed, and the pause before
  speaking, the pause after, and the gap between sentences are drawn from the
  same log-normal distributions for every delivery (the gap scales with the
  speaking rate, as a slower speaker pauses longer: the only way duration
  depends on the delivery is through the rate);
* a room-noise floor (pink noise, level drawn per clip) lies under the
  whole clip, so there is no digital silence anywhere;
* the speech is normalised to one level, with a small seeded jitter: the
  weighted mean (``RMS_WEIGHT``) of its active-speech RMS (frames within
  40 dB of the loudest) and its peak, in dB. Normalising the RMS alone would
  leave the crest factor (which a wide, bright delivery raises) readable in
  the peak, and the peak alone would leave it in the RMS; the mix splits it,
  so neither separates the statuses. Peaks above ``LIMIT`` are softly compressed, never clipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Log-normal pauses: (median s, sigma of log, floor s, ceiling s), one set for every delivery.
LEAD = (0.30, 0.45, 0.08, 0.9)
TRAIL = (0.25, 0.40, 0.08, 0.7)
GAP = (0.22, 0.35, 0.08, 0.6)
LEVEL_DBFS, LEVEL_JITTER_DB = -13.5, 1.5  # target of the levelling mix in dBFS, per-clip spread
RMS_WEIGHT = 0.55  # levelling mix: RMS_WEIGHT x active RMS + (1 - RMS_WEIGHT) x peak, in dB
NOISE_DBFS, NOISE_JITTER_DB = -66.0, 2.0  # room-noise RMS and its per-clip spread
TRIM_DB = 50.0  # the engine's own silence: frames this far below the loudest
LIMIT = 0.89  # about -1 dBFS: a soft knee above it, so no sample reaches 1.0
ACTIVE_DB = 40.0


@dataclass(frozen=True)
class Pauses:
    lead: float
    trail: float
    gap: float  # between sentences, before the rate scaling


def _lognormal(rng: np.random.Generator, spec: tuple[float, float, float, float]) -> float:
    median, sigma, lo, hi = spec
    return float(np.clip(median * np.exp(sigma * rng.standard_normal()), lo, hi))


def draw_pauses(seed: int) -> Pauses:
    """The clip's pauses: a function of the seed only, never of the delivery label."""
    rng = np.random.default_rng([seed, 2])
    return Pauses(_lognormal(rng, LEAD), _lognormal(rng, TRAIL), _lognormal(rng, GAP))


def _frame_db(x: np.ndarray, frame: int) -> np.ndarray:
    n = len(x) // frame
    fr = x[: n * frame].reshape(n, frame) if n else x[None, :]
    return 10 * np.log10((fr.astype(np.float64) ** 2).mean(axis=1) + 1e-20)


def trim(wave: np.ndarray, sample_rate: int) -> np.ndarray:
    """The speech between the first and last 10 ms frame within ``TRIM_DB`` of the loudest."""
    frame = sample_rate // 100
    db = _frame_db(wave, frame)
    loud = np.flatnonzero(db >= db.max() - TRIM_DB)
    if len(loud) == 0:
        return wave
    return wave[loud[0] * frame: min(len(wave), (loud[-1] + 1) * frame)]


def room_noise(n: int, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of room noise at unit RMS: white noise shaped to a pink (1/f) spectrum, rolled off above 6 kHz."""
    if n == 0:
        return np.zeros(0)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / sample_rate)
    spec *= 1 / np.sqrt(np.maximum(f, 60.0)) / np.sqrt(1 + (f / 6000.0) ** 4)
    out = np.fft.irfft(spec, n)
    return out / (np.std(out) + 1e-12)


def _soft_limit(x: np.ndarray) -> np.ndarray:
    """Identity below ``LIMIT``; above it a tanh knee that approaches but never reaches 1.0."""
    a = np.abs(x)
    over = a > LIMIT
    head = 1.0 - LIMIT
    y = x.copy()
    y[over] = np.sign(x[over]) * (LIMIT + head * np.tanh((a[over] - LIMIT) / head))
    return y


def finish(sentences: list[np.ndarray], sample_rate: int, seed: int, tempo: float, fade: float = 0.0) -> np.ndarray:
    """Trimmed sentences joined by drawn pauses, levelled, over the room floor; float32 in (-1, 1).

    ``tempo`` (the delivery's rate) scales the gaps between sentences; ``fade`` (dB, the delivery's
    energy contour) is a loudness ramp over the speech, centred so the levelling does not undo it.
    """
    p = draw_pauses(seed)
    rng = np.random.default_rng([seed, 3])
    target_db = LEVEL_DBFS + LEVEL_JITTER_DB * rng.standard_normal()
    noise_db = NOISE_DBFS + NOISE_JITTER_DB * rng.standard_normal()
    gap = np.zeros(int(p.gap / tempo * sample_rate))
    parts: list[np.ndarray] = [np.zeros(int(p.lead * sample_rate))]
    for i, s in enumerate(sentences):
        if i:
            parts.append(gap)
        parts.append(trim(np.asarray(s, dtype=np.float64), sample_rate))
    body = np.concatenate(parts[1:]) if len(parts) > 1 else np.zeros(0)  # no sentences: room noise only
    body *= 10 ** (fade * (np.linspace(-0.5, 0.5, len(body)) if len(body) else 0.0) / 20)
    speech = np.concatenate([parts[0], body, np.zeros(int(p.trail * sample_rate))])
    db = _frame_db(speech, sample_rate // 100)
    active = db >= db.max() - ACTIVE_DB
    rms_db = 10 * np.log10(np.mean(10 ** (db[active] / 10)))
    peak_db = 20 * np.log10(np.abs(speech).max() + 1e-12)
    speech *= 10 ** ((target_db - RMS_WEIGHT * rms_db - (1 - RMS_WEIGHT) * peak_db) / 20)
    noise = room_noise(len(speech), sample_rate, rng) * 10 ** (noise_db / 20)
    return _soft_limit(speech + noise).astype(np.float32)
