"""Per-utterance acoustic evidence, each value citable with the time span it was measured on.

Measured with Praat (through parselmouth) on the 16 kHz observation audio:

| feature | unit | how |
| --- | --- | --- |
| ``f0_mean`` | Hz | mean F0 over voiced frames (two-pass tracking, see :func:`pitch_track`) |
| ``f0_range`` | semitones | 90th minus 10th percentile of voiced F0 |
| ``f0_slope`` | semitones/s | least-squares slope of voiced F0 over the utterance |
| ``f0_final`` | semitones | mean F0 of the last 0.1 s of voicing minus that of 0.35-0.25 s before its end |
| ``rms`` | dB | mean intensity over speech (non-pause) frames |
| ``energy_fade`` | dB | intensity change over the speech (least-squares slope x speech span) |
| ``speech_rate`` | syllables/s | voiced intensity peaks (>= 2 dB dips between) per second of speech |
| ``lead_pause`` | s | silence before the first speech |
| ``pause_total`` | s | all silences of >= 0.15 s inside or before the speech |
| ``tilt`` | dB | alpha ratio: energy 1-5 kHz minus energy 50 Hz-1 kHz over speech |

Spans are in seconds from the start of the clip. Silence = intensity more
than 25 dB below the clip's maximum.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .deps import require

SILENCE_DB = 25.0
MIN_PAUSE = 0.15
FINAL_WINDOW = (0.35, 0.1)
STEP = 0.01
NAMES = ("f0_mean", "f0_range", "f0_slope", "f0_final", "rms", "energy_fade", "speech_rate", "lead_pause",
         "pause_total", "tilt")
UNITS = {"f0_mean": "Hz", "f0_range": "st", "f0_slope": "st/s", "f0_final": "st", "rms": "dB", "energy_fade": "dB",
         "speech_rate": "syll/s", "lead_pause": "s", "pause_total": "s", "tilt": "dB"}


@dataclass(frozen=True)
class Evidence:
    """One citable acoustic measurement."""

    feature: str
    value: float
    unit: str
    span: tuple[float, float]
    source: str = "praat"


@dataclass(frozen=True)
class AcousticFeatures:
    duration: float
    f0_mean: float
    f0_range: float
    f0_slope: float
    f0_final: float
    rms: float
    energy_fade: float
    speech_rate: float
    lead_pause: float
    pause_total: float
    tilt: float
    speech_span: tuple[float, float]
    final_span: tuple[float, float]
    pauses: tuple[tuple[float, float], ...]

    def vector(self, names: tuple[str, ...] = NAMES) -> np.ndarray:
        return np.array([getattr(self, n) for n in names], dtype=np.float64)

    def evidence(self) -> list[Evidence]:
        """Every value with the span it was measured on."""
        spans = {n: self.speech_span for n in NAMES}
        spans["f0_final"] = self.final_span
        spans["lead_pause"] = (0.0, self.lead_pause)
        spans["pause_total"] = (0.0, self.duration)
        out = [Evidence(n, float(getattr(self, n)), UNITS[n], _r(spans[n])) for n in NAMES]
        out += [Evidence("pause", round(b - a, 3), "s", _r((a, b))) for a, b in self.pauses]
        return out

    def to_dict(self) -> dict:
        return asdict(self)


def _r(span: tuple[float, float]) -> tuple[float, float]:
    return (round(float(span[0]), 3), round(float(span[1]), 3))


def _sound(audio: np.ndarray, sr: int):
    parselmouth = require("parselmouth")
    return parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=sr)


def pitch_track(audio: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """(times, F0 Hz with 0 = unvoiced), two-pass Praat tracking.

    Pass 1 tracks 60-700 Hz; pass 2 uses floor 0.75 x q25 and ceiling 1.5 x q75
    of pass 1 (De Looze & Hirst), which avoids octave jumps for any voice.
    """
    snd = _sound(audio, sr)
    first = snd.to_pitch(time_step=STEP, pitch_floor=60.0, pitch_ceiling=700.0)
    f = first.selected_array["frequency"]
    voiced = f[f > 0]
    if len(voiced) >= 5:
        q25, q75 = np.percentile(voiced, [25, 75])
        floor, ceiling = max(40.0, 0.75 * q25), min(1000.0, 1.5 * q75)
        if ceiling > floor + 20:
            second = snd.to_pitch(time_step=STEP, pitch_floor=floor, pitch_ceiling=ceiling)
            return second.xs(), second.selected_array["frequency"]
    return first.xs(), f


def intensity_track(audio: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    snd = _sound(audio, sr)
    if snd.duration < 0.07:
        return np.zeros(0), np.zeros(0)
    it = snd.to_intensity(minimum_pitch=100.0, time_step=STEP)
    return it.xs(), it.values[0]


def silences(times: np.ndarray, db: np.ndarray, duration: float) -> list[tuple[float, float]]:
    """Silent runs of at least MIN_PAUSE seconds (intensity SILENCE_DB below the maximum)."""
    if len(db) == 0:
        return [(0.0, duration)] if duration >= MIN_PAUSE else []
    quiet = db < db.max() - SILENCE_DB
    # The intensity analysis starts half a window in: treat the unanalysed edges as their neighbours.
    runs, start = [], None
    for i, q in enumerate(quiet):
        t = times[i]
        if q and start is None:
            start = 0.0 if i == 0 else t - STEP / 2
        if not q and start is not None:
            runs.append((start, t - STEP / 2))
            start = None
    if start is not None:
        runs.append((start, duration))
    return [(a, b) for a, b in runs if b - a >= MIN_PAUSE]


def _semitones(hz: np.ndarray) -> np.ndarray:
    return 12 * np.log2(hz / 100.0)


def alpha_ratio(audio: np.ndarray, sr: int) -> float:
    spec = np.abs(np.fft.rfft(audio * np.hanning(len(audio)))) ** 2 if len(audio) else np.zeros(1)
    freqs = np.fft.rfftfreq(len(audio), 1 / sr) if len(audio) else np.zeros(1)
    low = spec[(freqs >= 50) & (freqs < 1000)].sum()
    high = spec[(freqs >= 1000) & (freqs < 5000)].sum()
    return float(10 * np.log10((high + 1e-12) / (low + 1e-12)))


def syllable_count(times: np.ndarray, db: np.ndarray, voiced_at) -> int:
    """Intensity peaks in voiced speech separated by dips of at least 2 dB (de Jong & Wempe style)."""
    if len(db) < 3:
        return 0
    threshold = np.median(db)
    count, last_peak, valley = 0, None, np.inf
    for i in range(1, len(db) - 1):
        valley = min(valley, db[i])
        if db[i] >= db[i - 1] and db[i] > db[i + 1] and db[i] > threshold and voiced_at(times[i]):
            if last_peak is None or (min(last_peak, db[i]) - valley) >= 2.0:
                count += 1
                last_peak, valley = db[i], np.inf
            else:
                last_peak = max(last_peak, db[i])
    return count


def extract(audio: np.ndarray, sr: int = 16_000) -> AcousticFeatures:
    """All features of one utterance."""
    audio = np.asarray(audio, dtype=np.float64)
    duration = len(audio) / sr
    it_t, it_db = intensity_track(audio, sr)
    pauses = silences(it_t, it_db, duration)
    lead = pauses[0][1] if pauses and pauses[0][0] <= STEP else 0.0
    trail = pauses[-1][0] if pauses and pauses[-1][1] >= duration - STEP else duration
    speech_span = (lead, max(lead, trail))
    pause_total = sum(b - a for a, b in pauses if b <= trail + 1e-9)
    speech_time = max(1e-6, speech_span[1] - speech_span[0] - sum(
        b - a for a, b in pauses if a > lead + 1e-9 and b < trail - 1e-9))

    p_t, f0 = pitch_track(audio, sr)
    voiced = f0 > 0
    vt, vf = p_t[voiced], f0[voiced]
    if len(vf) >= 3:
        st = _semitones(vf)
        f0_mean = float(vf.mean())
        f0_range = float(np.percentile(st, 90) - np.percentile(st, 10))
        f0_slope = float(np.polyfit(vt, st, 1)[0])
        end = vt[-1]
        late = st[vt >= end - FINAL_WINDOW[1]]
        early = st[(vt >= end - FINAL_WINDOW[0]) & (vt < end - FINAL_WINDOW[0] + FINAL_WINDOW[1])]
        f0_final = float(late.mean() - early.mean()) if len(early) and len(late) else 0.0
        final_span = (max(0.0, end - FINAL_WINDOW[0]), float(end))
    else:
        f0_mean = f0_range = f0_slope = f0_final = 0.0
        final_span = speech_span

    speech_mask = np.ones(len(it_db), dtype=bool)
    for a, b in pauses:
        speech_mask &= ~((it_t >= a) & (it_t <= b))
    levels = it_db[speech_mask] if speech_mask.any() else it_db
    rms = float(levels.mean()) if len(levels) else 0.0
    inside = speech_mask & (it_t >= speech_span[0]) & (it_t <= speech_span[1])
    span = speech_span[1] - speech_span[0]
    energy_fade = float(np.polyfit(it_t[inside], it_db[inside], 1)[0] * span) if inside.sum() >= 3 else 0.0

    def voiced_at(t: float) -> bool:
        j = int(np.searchsorted(p_t, t))
        return any(0 <= k < len(f0) and f0[k] > 0 for k in (j - 1, j))

    rate = syllable_count(it_t, it_db, voiced_at) / speech_time
    a, b = (int(speech_span[0] * sr), int(speech_span[1] * sr))
    tilt = alpha_ratio(audio[a:b] if b > a else audio, sr)
    return AcousticFeatures(
        duration=round(duration, 4), f0_mean=f0_mean, f0_range=f0_range, f0_slope=f0_slope,
        f0_final=f0_final, rms=rms, energy_fade=energy_fade, speech_rate=float(rate), lead_pause=float(lead),
        pause_total=float(pause_total), tilt=tilt, speech_span=_r(speech_span), final_span=_r(final_span),
        pauses=tuple(_r(p) for p in pauses),
    )
