"""Generic-affect baseline from a Hugging Face speech-emotion checkpoint on disk.

:class:`TransformersAffect` implements the
:class:`~hear2act_env.speech.affect.AffectClassifier` protocol for the paper's
``T+affect`` condition: it runs an audio-classification model (e.g.
HuBERT-SUPERB-ER, ``superb/hubert-large-superb-er``, labels ``neu/hap/ang/sad``)
and passes its top label, mapped onto :data:`~hear2act_env.speech.affect.AFFECT_LABELS`,
verbatim to the decision stage.

Nothing is downloaded at run time. Fetch the checkpoint once, on a machine
that can reach the hub, into a directory of its own, then point the class at
that directory::

    huggingface-cli download superb/hubert-large-superb-er --local-dir /models/hubert-large-superb-er

    from hear2act_env.speech.affect_hf import TransformersAffect
    affect = TransformersAffect("/models/hubert-large-superb-er")
    affect.classify(audio, sr=16_000)  # -> "happy" | "sad" | "angry" | "neutral"

The directory must be in ``transformers`` format: ``config.json`` (with the
model's ``id2label``), ``preprocessor_config.json`` (the feature extractor)
and the weights (``model.safetensors`` or ``pytorch_model.bin``). A
SpeechBrain checkpoint (``hyperparams.yaml`` + ``*.ckpt``, as published for
wav2vec2-IEMOCAP) is not that format; use a ``transformers`` export of the
same model. Loading uses ``local_files_only=True``, so a hub id such as
``"superb/hubert-large-superb-er"`` that is not a local directory is refused
with an error rather than fetched.

Label mapping. The model's ``id2label`` names are lower-cased and looked up in
:data:`DEFAULT_LABEL_MAP`::

    neu, neutral                          -> neutral
    hap, happy, happiness, joy, exc,
    excited, excitement                   -> happy   (IEMOCAP merges excited into happy)
    ang, angry, anger                     -> angry
    sad, sadness                          -> sad

A ``label_map`` argument is consulted first (its keys are matched
case-insensitively, its values must be among ``AFFECT_LABELS``), so it can both
override the defaults and cover labels they leave out (e.g.
``{"fru": "angry", "LABEL_0": "neutral"}``). Every label of the model must map:
an unknown one raises :class:`ValueError` naming it when the classifier is
built, not when it first meets that class.

Inference is deterministic: the model runs in eval mode under
``torch.inference_mode`` on ``device`` (default ``"cpu"``), and the label is
the argmax of the logits (the lowest class id wins a tie). Audio at another
rate is resampled to the feature extractor's ``sampling_rate`` with
``scipy.signal.resample_poly``.

``torch`` and ``transformers`` are imported lazily; when missing, a
:class:`~hear2act_env.speech.deps.SpeechDependencyError` names the
``pip install`` that provides them.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import gcd
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .affect import AFFECT_LABELS
from .deps import require

__all__ = ["DEFAULT_LABEL_MAP", "TransformersAffect", "map_labels"]

#: model label (lower case) -> one of AFFECT_LABELS; see the module docstring.
DEFAULT_LABEL_MAP: dict[str, str] = {
    "neu": "neutral",
    "neutral": "neutral",
    "hap": "happy",
    "happy": "happy",
    "happiness": "happy",
    "joy": "happy",
    "exc": "happy",
    "excited": "happy",
    "excitement": "happy",
    "ang": "angry",
    "angry": "angry",
    "anger": "angry",
    "sad": "sad",
    "sadness": "sad",
}

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def map_labels(id2label: Mapping[Any, str], label_map: Mapping[str, str] | None = None) -> dict[int, str]:
    """Map a model's ``id2label`` onto ``AFFECT_LABELS``.

    ``label_map`` (case-insensitive keys) takes precedence over
    :data:`DEFAULT_LABEL_MAP`. Raises :class:`ValueError` naming the first
    label that maps nowhere, or a ``label_map`` value outside ``AFFECT_LABELS``.
    """
    overrides: dict[str, str] = {}
    for key, value in (label_map or {}).items():
        if value not in AFFECT_LABELS:
            raise ValueError(
                f"label_map[{key!r}] = {value!r} is not one of the affect labels {AFFECT_LABELS}"
            )
        overrides[str(key).lower()] = value
    out: dict[int, str] = {}
    for idx, label in id2label.items():
        key = str(label).lower()
        if key in overrides:
            out[int(idx)] = overrides[key]
        elif key in DEFAULT_LABEL_MAP:
            out[int(idx)] = DEFAULT_LABEL_MAP[key]
        else:
            raise ValueError(
                f"the model's label {label!r} (id {idx}) has no affect mapping; pass "
                f"label_map={{{label!r}: <one of {AFFECT_LABELS}>}} to TransformersAffect"
            )
    if not out:
        raise ValueError("the model's config has an empty id2label")
    return out


def _check_model_dir(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(
            f"no speech-emotion model at {str(path)!r}: TransformersAffect loads only from a local "
            "directory and never downloads; fetch the checkpoint first, e.g. "
            "`huggingface-cli download superb/hubert-large-superb-er --local-dir <dir>`"
        )
    if not path.is_dir():
        raise ValueError(f"{str(path)!r} is a file, not a model directory (expected config.json etc. in it)")
    if (path / "hyperparams.yaml").exists() and not (path / "config.json").exists():
        raise ValueError(
            f"{str(path)!r} looks like a SpeechBrain checkpoint (hyperparams.yaml); TransformersAffect needs "
            "a transformers-format directory with config.json, preprocessor_config.json and the weights"
        )
    missing = [name for name in ("config.json", "preprocessor_config.json") if not (path / name).is_file()]
    if not any((path / name).is_file() for name in _WEIGHT_FILES):
        missing.append("model.safetensors or pytorch_model.bin")
    if missing:
        raise ValueError(
            f"{str(path)!r} is not a transformers audio-classification model directory: "
            f"missing {', '.join(missing)}"
        )


class TransformersAffect:
    """Speech-emotion recogniser loaded from a local ``transformers`` checkpoint.

    Parameters
    ----------
    model_dir:
        Local directory holding ``config.json``, ``preprocessor_config.json``
        and the weights (see the module docstring). Never a hub id.
    label_map:
        Extra or overriding ``{model label: affect label}`` entries,
        case-insensitive keys; values must be among ``AFFECT_LABELS``.
    device:
        Torch device to run on, ``"cpu"`` by default.
    name:
        The classifier's name in logs and results; defaults to
        ``"hf-affect:<directory name>"``.
    """

    def __init__(
        self,
        model_dir: str | PathLike[str],
        label_map: Mapping[str, str] | None = None,
        device: str = "cpu",
        name: str | None = None,
    ) -> None:
        self._torch = require("torch", extra="llm")
        transformers = require("transformers", extra="llm")
        path = Path(model_dir).expanduser()
        _check_model_dir(path)
        try:
            self.feature_extractor = transformers.AutoFeatureExtractor.from_pretrained(
                str(path), local_files_only=True
            )
            model = transformers.AutoModelForAudioClassification.from_pretrained(
                str(path), local_files_only=True
            )
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(
                f"could not load an audio-classification model from {str(path)!r}: {exc}"
            ) from exc
        self.model_dir = path
        self.device = device
        self.model = model.to(device).eval()
        self.sampling_rate = int(getattr(self.feature_extractor, "sampling_rate", 16_000))
        self.id2label: dict[int, str] = {int(k): str(v) for k, v in model.config.id2label.items()}
        self.label_of: dict[int, str] = map_labels(self.id2label, label_map)
        self.name = name or f"hf-affect:{path.resolve().name}"

    def _resample(self, audio: np.ndarray, sr: int) -> np.ndarray:
        if sr == self.sampling_rate:
            return audio
        signal = require("scipy.signal")
        g = gcd(int(sr), self.sampling_rate)
        return signal.resample_poly(audio, self.sampling_rate // g, int(sr) // g).astype(np.float32)

    def logits(self, audio: np.ndarray, sr: int = 16_000) -> np.ndarray:
        """The model's raw class logits (indexed by ``id2label`` ids) for mono ``audio``."""
        if sr <= 0:
            raise ValueError(f"sample rate must be positive, got {sr}")
        x = np.asarray(audio, dtype=np.float32)
        if x.ndim != 1:
            x = np.squeeze(x)
        if x.ndim != 1:
            raise ValueError(f"expected mono audio (1-D), got shape {np.shape(audio)}")
        if x.size == 0:
            raise ValueError("empty audio")
        x = self._resample(x, sr)
        inputs = self.feature_extractor(x, sampling_rate=self.sampling_rate, return_tensors="pt")
        torch = self._torch
        with torch.inference_mode():
            batch = {k: v.to(self.device) for k, v in inputs.items()}
            out = self.model(**batch).logits[0]
        return out.float().cpu().numpy()

    def classify(self, audio: np.ndarray, sr: int = 16_000) -> str:
        """One of ``AFFECT_LABELS``: the mapped top class of the model."""
        return self.label_of[int(np.argmax(self.logits(audio, sr)))]

    def __repr__(self) -> str:
        return f"TransformersAffect({str(self.model_dir)!r}, device={self.device!r})"
