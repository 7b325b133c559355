"""Audio -> inferred state: the first stage of the two-stage ``T+S_hat`` condition.

A :class:`Perceiver` turns the current user audio (plus the words of the turn
and the dialogue context) into one sentence of inferred state and the
acoustic evidence it cites: the paper's card P6c output, with citations as in
evidence-grounded emotion reasoning. The env's ``T+S_hat`` channel shows only
the sentence; raw audio never reaches the decision stage.

:class:`FeaturePerceiver` is the CPU implementation: a multinomial logistic
regression over the vocal delivery only (card P6c): final pitch
movement, the energy contour, and pitch level, range and slope, speech rate
and spectral tilt relative to the voice's neutral baseline. The words are not read (no lexical cues), and the
pauses and overall level, though measured (``FEATURES`` is also the layout
of the ``A+T`` acoustic observation), get weight 0: the renderers draw them
the same for every delivery. Trained by ``python -m
hear2act_env.speech.train_perceiver`` and shipped as
``data/perceiver-hibari.json`` (plain numbers; no pickle) with the voice's
neutral baseline it was trained with. An audio LLM (Qwen2.5-Omni) can take
its place by implementing the same protocol.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..dialogue.engine import STATES, collapsed
from ..protocol import format_perception
from .features import AcousticFeatures, Evidence, extract

WEIGHTS = Path(__file__).resolve().parent.parent / "data" / "perceiver-hibari.json"
ACOUSTIC = ("f0_range", "f0_slope", "f0_final", "speech_rate", "lead_pause", "pause_total", "tilt")
# Speaker-relative level cues: mean F0 (semitones) and intensity (dB) relative to the voice's
# neutral baseline, measured by enrollment on unlabeled neutral speech of that voice.
RELATIVE = ("f0_rel", "rms_rel")
CONTOUR = ("energy_fade",)
# Tilt, speech rate, pitch range and declination relative to the voice's own neutral (voices differ in all four).
VOICE_RELATIVE = ("tilt_rel", "rate_rel", "f0_range_rel", "f0_slope_rel")
FEATURES = (*ACOUSTIC, *RELATIVE, *CONTOUR, *VOICE_RELATIVE)
# The columns the models weigh: prosody only, speaker-relative. Pauses and level are the same for every
# delivery; raw tilt, rate, range and slope are the voice's as much as the delivery's (their relative
# forms are weighed).
DELIVERY_ONLY = ("f0_final", "f0_rel", "energy_fade", "tilt_rel", "rate_rel", "f0_range_rel", "f0_slope_rel")
MASK = np.array([n in DELIVERY_ONLY for n in FEATURES])


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
    """A voice's neutral level: median F0 (Hz), intensity (dB), tilt (dB) and rate (syll/s) of neutral renders."""

    f0: float
    rms: float
    tilt: float = 0.0
    rate: float = 4.5
    f0_range: float = 6.0
    f0_slope: float = 0.0

    def relative(self, features: AcousticFeatures) -> tuple[float, float]:
        """(mean F0 in semitones, intensity in dB) relative to this baseline; F0 0 when unvoiced."""
        f0_rel = 12 * np.log2(features.f0_mean / self.f0) if features.f0_mean > 0 else 0.0
        return float(f0_rel), features.rms - self.rms

    def voice_relative(self, features: AcousticFeatures) -> tuple[float, float, float, float]:
        """Tilt (dB), speech rate (log2 ratio), pitch range (st) and slope (st/s) relative to this voice's neutral."""
        rate_rel = np.log2(features.speech_rate / self.rate) if features.speech_rate > 0 and self.rate > 0 else 0.0
        return (features.tilt - self.tilt, float(rate_rel), features.f0_range - self.f0_range,
                features.f0_slope - self.f0_slope)

    @classmethod
    def measure(cls, features: list[AcousticFeatures]) -> Baseline:
        voiced = [f.f0_mean for f in features if f.f0_mean > 0]
        return cls(float(np.median(voiced)), float(np.median([f.rms for f in features])),
                   float(np.median([f.tilt for f in features])), float(np.median([f.speech_rate for f in features])),
                   float(np.median([f.f0_range for f in features])), float(np.median([f.f0_slope for f in features])))

    def to_dict(self) -> dict[str, float]:
        return {k: round(float(getattr(self, k)), 4) for k in ("f0", "rms", "tilt", "rate", "f0_range", "f0_slope")}


def design_row(features: AcousticFeatures, baseline: Baseline) -> np.ndarray:
    """One clip's ``FEATURES`` (acoustic only: the words never enter)."""
    relative = np.array(baseline.relative(features))
    voice = np.array(baseline.voice_relative(features))
    return np.concatenate([features.vector(ACOUSTIC), relative, features.vector(CONTOUR), voice])


@dataclass(frozen=True)
class LogisticModel:
    """Standardise, then softmax(W x + b)."""

    classes: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    W: np.ndarray
    b: np.ndarray

    def proba(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - self.mean) / self.std
        logits = z @ self.W.T + self.b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), "mean": self.mean.round(8).tolist(),
                "std": self.std.round(8).tolist(), "W": self.W.round(8).tolist(), "b": self.b.round(8).tolist()}

    @classmethod
    def from_dict(cls, d: dict, where: str) -> LogisticModel:
        try:
            model = cls(tuple(d["classes"]), np.array(d["mean"], dtype=float), np.array(d["std"], dtype=float),
                        np.array(d["W"], dtype=float), np.array(d["b"], dtype=float))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: unreadable model ({exc})") from None
        k, dim = len(model.classes), len(FEATURES)
        if model.W.shape != (k, dim) or model.b.shape != (k,) or model.mean.shape != (dim,):
            raise ValueError(f"{where}: array shapes do not match {k} classes x {dim} features")
        return model


@dataclass(frozen=True)
class PerceiverWeights:
    """The shipped file: a binary status model, a 4-way state model, training metadata."""

    status: LogisticModel  # resolved vs unresolved: the decision-relevant reading
    state: LogisticModel  # the four graded states: the wording of the sentence
    meta: dict

    def to_json(self) -> str:
        return json.dumps({"features": list(FEATURES), "weighted": list(DELIVERY_ONLY), "status": self.status.to_dict(),
                           "state": self.state.to_dict(), "meta": self.meta}, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "perceiver weights") -> PerceiverWeights:
        try:
            d = json.loads(text)
            if d["features"] != list(FEATURES):
                raise ValueError(f"features {d['features']} do not match this code's {list(FEATURES)}")
            status = LogisticModel.from_dict(d["status"], f"{where} (status)")
            state = LogisticModel.from_dict(d["state"], f"{where} (state)")
            meta = dict(d.get("meta", {}))
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where}: unreadable or inconsistent ({exc})") from None
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if status.classes != ("resolved", "unresolved") or state.classes != STATES:
            raise ValueError(f"{where}: classes must be ('resolved', 'unresolved') and {STATES}")
        return cls(status, state, meta)


def fit_logistic(x: np.ndarray, y: np.ndarray, classes: tuple[str, ...], l2: float = 1e-3,
                 steps: int = 3000, lr: float = 0.5, mask: np.ndarray | None = None) -> LogisticModel:
    """Full-batch gradient descent on the softmax cross-entropy (deterministic).

    Columns where ``mask`` is False are standardised but keep weight 0.
    """
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-8
    keep = np.ones(x.shape[1], dtype=float) if mask is None else np.asarray(mask, dtype=float)
    z = (x - mean) / std * keep
    k, d = len(classes), x.shape[1]
    onehot = np.eye(k)[y]
    W, b = np.zeros((k, d)), np.zeros(k)
    for _ in range(steps):
        logits = z @ W.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(z)
        W -= lr * (g.T @ z + l2 * W) * keep
        b -= lr * g.sum(axis=0)
    return LogisticModel(classes, mean, std, W, b)


class FeaturePerceiver:
    """The CPU perceiver: vocal delivery -> graded state, with citations (the words are not read)."""

    name = "feature-perceiver"

    def __init__(self, weights: str | Path = WEIGHTS, baseline: Baseline | None = None) -> None:
        path = Path(weights)
        self.weights = PerceiverWeights.from_json(path.read_text(encoding="utf-8"), path.name)
        trained = self.weights.meta.get("baseline")
        if baseline is None and trained is None:
            raise ValueError(f"{path.name}: no enrolled baseline; pass one or call enroll()")
        self.baseline = baseline or Baseline(**{k: float(v) for k, v in trained.items() if k != "texts"})

    def enroll(self, renderer, voice: str | None = None) -> Baseline:
        """Measure a voice's neutral baseline from unlabeled neutral speech (no state labels)."""
        from .neutral_speech import neutral_features

        self.baseline = Baseline.measure(neutral_features(renderer, voice))
        return self.baseline

    def adapt(self, renderer, voice: str | None = None) -> Baseline:
        """The baseline for ``renderer``: the shipped one for the voice it was trained on, else enrolled.

        The shipped baseline keeps the readings (and the spoken figures) independent of this
        machine's numerics; a renderer version other than the training one is warned about.
        """
        meta = self.weights.meta
        if renderer.name != meta.get("renderer") or voice not in (None, meta.get("voice")):
            return self.enroll(renderer, voice)
        if renderer.version != meta.get("renderer_version"):
            warnings.warn(
                f"perceiver weights were trained on {meta.get('renderer_version')}, this renderer is "
                f"{renderer.version}; using the shipped baseline, but readings may differ from the published "
                "ones (retrain: python -m hear2act_env.speech.train_perceiver)", RuntimeWarning, stacklevel=2)
        return self.baseline

    def perceive(self, audio: np.ndarray, sr: int = 16_000, words: str = "", context: str = "") -> Perception:
        feats = extract(audio, sr)
        row = design_row(feats, self.baseline)
        p_resolved = float(self.weights.status.proba(row)[0][0])
        status = "resolved" if p_resolved >= 0.5 else "unresolved"
        p_state = self.weights.state.proba(row)[0]
        # The graded state only words the sentence; it must agree with the status reading.
        allowed = [i for i, s in enumerate(STATES) if collapsed(s) == status]
        state = STATES[max(allowed, key=lambda i: p_state[i])]
        p_status = p_resolved if status == "resolved" else 1 - p_resolved
        cited = {e.feature: e for e in feats.evidence()}
        chosen = tuple(cited[n] for n in ("f0_range", "f0_final", "speech_rate", "energy_fade"))
        sentence = format_perception(state, status, feats.f0_range, feats.f0_final, feats.speech_rate,
                                     feats.energy_fade)
        return Perception(sentence, state, status, float(p_status), chosen)
