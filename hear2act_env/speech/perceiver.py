"""Audio -> inferred state: the first stage of the two-stage ``T+S_hat`` condition.

A :class:`Perceiver` turns the current user audio (plus the words of the turn
and the dialogue context) into one sentence of inferred state and the
acoustic evidence it cites: the paper's card P6c output, with citations as in
evidence-grounded emotion reasoning. The env's ``T+S_hat`` channel shows only
the sentence; raw audio never reaches the decision stage.

:class:`FeaturePerceiver` is the CPU implementation: a multinomial logistic
regression over speaker-robust acoustic features (pitch range, slope and
final movement, speech rate, pauses, spectral tilt) and three lexical cues,
trained by ``python -m hear2act_env.speech.train_perceiver`` and shipped as
``data/perceiver-hibari.json`` (plain numbers; no pickle). An audio LLM
(Qwen2.5-Omni) can take its place by implementing the same protocol.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..dialogue.engine import STATES, collapsed
from .features import AcousticFeatures, Evidence, extract

WEIGHTS = Path(__file__).resolve().parent.parent / "data" / "perceiver-hibari.json"
ACOUSTIC = ("f0_range", "f0_slope", "f0_final", "speech_rate", "lead_pause", "pause_total", "tilt")
# Speaker-relative level cues: mean F0 (semitones) and intensity (dB) relative to the voice's
# neutral baseline, measured by enrollment on unlabeled neutral speech of that voice.
RELATIVE = ("f0_rel", "rms_rel")
LEXICAL = ("negation", "contrast", "n_words")
_NEG = re.compile(r"\b(no|not|won't|can't|cannot|don't|isn't|wouldn't)\b", re.I)
_CONTRAST = re.compile(r"\b(but|though|however|although)\b", re.I)
DESCRIPTORS = {
    "resolved": "bright and settled",
    "reluctant": "flat and half-hearted",
    "concern": "uneasy",
    "rejection": "firmly negative",
}


def lexical_cues(words: str) -> np.ndarray:
    return np.array([
        float(bool(_NEG.search(words))),
        float(bool(_CONTRAST.search(words))),
        np.log1p(len(words.split())),
    ])


@dataclass(frozen=True)
class Perception:
    """A perceiver's reading of one user turn."""

    sentence: str  # what the decision stage sees
    state: str  # graded state guess
    status: str  # resolved / unresolved
    confidence: float
    evidence: tuple[Evidence, ...]  # cited measurements (feature, value, span)


@runtime_checkable
class Perceiver(Protocol):
    name: str

    def perceive(self, audio: np.ndarray, sr: int, words: str = "", context: str = "") -> Perception: ...


@dataclass(frozen=True)
class Baseline:
    """A voice's neutral level: median F0 (Hz) and intensity (dB) of neutral renders."""

    f0: float
    rms: float

    @classmethod
    def measure(cls, features: list[AcousticFeatures]) -> Baseline:
        voiced = [f.f0_mean for f in features if f.f0_mean > 0]
        return cls(float(np.median(voiced)), float(np.median([f.rms for f in features])))


def design_row(features: AcousticFeatures, words: str, baseline: Baseline) -> np.ndarray:
    f0_rel = 12 * np.log2(features.f0_mean / baseline.f0) if features.f0_mean > 0 else 0.0
    relative = np.array([f0_rel, features.rms - baseline.rms])
    return np.concatenate([features.vector(ACOUSTIC), relative, lexical_cues(words)])


FEATURES = (*ACOUSTIC, *RELATIVE, *LEXICAL)


@dataclass(frozen=True)
class LogisticModel:
    """Standardise, then softmax(W x + b). Serialised as JSON numbers."""

    classes: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    W: np.ndarray
    b: np.ndarray
    meta: dict

    def proba(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - self.mean) / self.std
        logits = z @ self.W.T + self.b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def to_json(self) -> str:
        return json.dumps({
            "classes": list(self.classes), "features": list(FEATURES),
            "mean": self.mean.round(8).tolist(), "std": self.std.round(8).tolist(),
            "W": self.W.round(8).tolist(), "b": self.b.round(8).tolist(), "meta": self.meta,
        }, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "perceiver weights") -> LogisticModel:
        try:
            d = json.loads(text)
            if d["features"] != list(FEATURES):
                raise ValueError(f"features {d['features']} do not match this code's {list(FEATURES)}")
            model = cls(tuple(d["classes"]), np.array(d["mean"]), np.array(d["std"]), np.array(d["W"]),
                        np.array(d["b"]), d.get("meta", {}))
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where}: unreadable or inconsistent ({exc})") from None
        k, dim = len(model.classes), len(FEATURES)
        if model.W.shape != (k, dim) or model.b.shape != (k,) or model.mean.shape != (dim,):
            raise ValueError(f"{where}: array shapes do not match {k} classes x {dim} features")
        return model


def fit_logistic(x: np.ndarray, y: np.ndarray, classes: tuple[str, ...], l2: float = 1e-3,
                 steps: int = 3000, lr: float = 0.5, meta: dict | None = None) -> LogisticModel:
    """Full-batch gradient descent on the softmax cross-entropy (deterministic)."""
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-8
    z = (x - mean) / std
    k, d = len(classes), x.shape[1]
    onehot = np.eye(k)[y]
    W, b = np.zeros((k, d)), np.zeros(k)
    for _ in range(steps):
        logits = z @ W.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(z)
        W -= lr * (g.T @ z + l2 * W)
        b -= lr * g.sum(axis=0)
    return LogisticModel(classes, mean, std, W, b, meta or {})


class FeaturePerceiver:
    """The CPU perceiver: acoustic features + lexical cues -> graded state, with citations."""

    name = "feature-perceiver"

    def __init__(self, weights: str | Path = WEIGHTS, baseline: Baseline | None = None) -> None:
        path = Path(weights)
        self.model = LogisticModel.from_json(path.read_text(encoding="utf-8"), path.name)
        if tuple(self.model.classes) != STATES:
            raise ValueError(f"{path.name}: classes {self.model.classes} must be {STATES}")
        trained = self.model.meta.get("baseline")
        if baseline is None and trained is None:
            raise ValueError(f"{path.name}: no enrolled baseline; pass one or call enroll()")
        self.baseline = baseline or Baseline(float(trained["f0"]), float(trained["rms"]))

    def enroll(self, renderer, voice: str | None = None) -> Baseline:
        """Measure a voice's neutral baseline from unlabeled neutral speech (no state labels)."""
        from .enrollment import neutral_baseline

        self.baseline = neutral_baseline(renderer, voice)
        return self.baseline

    def perceive(self, audio: np.ndarray, sr: int = 16_000, words: str = "", context: str = "") -> Perception:
        feats = extract(audio, sr)
        p = self.model.proba(design_row(feats, words, self.baseline))[0]
        state = self.model.classes[int(np.argmax(p))]
        status = collapsed(state)
        p_status = p[0] if status == "resolved" else 1 - p[0]
        cited = {e.feature: e for e in feats.evidence()}
        chosen = tuple(cited[n] for n in ("f0_range", "f0_final", "lead_pause", "speech_rate"))
        sentence = (
            f"The user's delivery sounds {DESCRIPTORS[state]} (pitch range {feats.f0_range:.1f} st, "
            f"final pitch movement {feats.f0_final:+.1f} st, {feats.lead_pause:.2f} s before speaking, "
            f"{feats.speech_rate:.1f} syllables/s), so the current recommendation seems {status}."
        )
        return Perception(sentence, state, status, float(p_status), chosen)
