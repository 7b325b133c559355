"""Default renderer: hibari-tts ("heart" voice, in the wheel, offline) with edited prosody.

hibari's network predicts, per 12.5 ms frame, a spectral envelope and an F0
track; its DSP stage turns them into a waveform. We edit between the two:
the F0 track gets the delivery's level, range and final contour; the
harmonic envelope gets the spectral tilt; the speaking rate is the model's
own ``speed`` input. Then :func:`~hear2act_env.speech.mastering.finish`
applies the energy contour and does what is the same for every delivery
(pauses, room noise, loudness). The words spoken are exactly ``text``. The
noise component is drawn from a generator seeded with ``seed``, so output is
bit-identical for identical inputs.
"""

from __future__ import annotations

import numpy as np

from ..delivery import DELIVERY_VERSION, draw_targets
from ..deps import require
from ..mastering import finish
from ..prosody import NAT_TO_DB, edit_f0, tilt_db
from .versions import stack_version

FRAME_S = 0.0125  # hibari frame hop (300 samples at 24 kHz)


def _tilt_envelope(n_bins: int, sample_rate: int, db_per_octave: float) -> np.ndarray:
    """Natural-log magnitude offsets per STFT bin (hibari's envelopes are natural-log)."""
    freqs = np.linspace(0, sample_rate / 2, n_bins)
    return (tilt_db(freqs, db_per_octave) / NAT_TO_DB).astype(np.float32)[:, None]


class HibariRenderer:
    """hibari-tts with the delivery model applied; 24 kHz output."""

    name = "hibari"
    sample_rate = 24_000

    def __init__(self, threads: int = 1) -> None:
        hibari = require("hibari")
        self._dsp = require("hibari.dsp")
        self._tts = hibari.Hibari(threads=threads)
        self.voices = ("heart",)
        # Every package whose numerics reach the samples (see versions.py), then the delivery model.
        self.version = f"hibari-{hibari.__version__}+{stack_version('hibari')}+delivery-{DELIVERY_VERSION}"

    def render(self, text: str, label: str, voice: str | None = None, seed: int = 0) -> np.ndarray:
        if voice not in (None, *self.voices):
            raise ValueError(f"voice {voice!r} is not bundled; hibari renderer voices: {self.voices}")
        t = draw_targets(label, seed)
        rng = np.random.default_rng(seed)
        parts = []
        for ps in self._tts.phonemize(text):
            ids = np.asarray([self._tts.ids(ps)], np.int64)
            out = self._tts.sess.run(None, {"ids": ids, "speed": np.asarray([t.tempo], np.float32)})
            lh, th, ln, lr, phi, f0 = (o[0] for o in out)
            tilt = _tilt_envelope(lh.shape[0], self.sample_rate, t.tilt)
            wave = self._dsp.synth(lh + tilt, th, ln + tilt, lr + tilt, phi, edit_f0(f0, t, FRAME_S), rng)
            parts.append(wave)
        return finish(parts, self.sample_rate, seed, t.tempo, t.fade)
