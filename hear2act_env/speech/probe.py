"""An independent shortcut probe: can a non-prosodic feature tell resolved from unresolved audio?

The benchmark's contrast is *same words, different delivery*. This probe
renders same-words, same-seed pairs (one resolved delivery, one unresolved
delivery of the same assent sentence with the same render seed, as matched
rollouts hear them) through a renderer's public ``render`` only, and measures
from the waveform alone a handful of features that are *not* prosody:

| feature | how (10 ms frames of the 16 kHz observation) |
| --- | --- |
| ``lead`` | s before the first frame within ``TOP_DB`` dB of the loudest frame |
| ``trail`` | s after the last such frame |
| ``duration`` | s, whole clip |
| ``rms`` | dB, RMS of the whole clip |
| ``peak`` | dB, largest absolute sample |
| ``floor`` | dB, 10th percentile of frame levels (the background) |
| ``zeros`` | fraction of samples that are exactly 0.0 (digital silence) |

For each feature it reports the AUC separating the statuses over all clips
(folded: 0.5 = no information, 1.0 = perfect; either direction counts) and
the paired win rate (the share of pairs in which the unresolved clip has the
larger value, also folded). Nothing here reads the renderer's internals or
the delivery targets: only words, label, seed in and samples out.

    python benchmarks/audio_probe.py      # prints the table for both renderers
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dialogue.engine import CONCERN, DELIVERY, RELUCTANT, RESOLVED
from ..protocol import GRAMMAR
from .renderers import make_renderer, to_16k

SR = 16_000
FRAME = 160  # 10 ms
TOP_DB = 30.0
PROBE_SEED_BASE = 11_000_000  # a block apart from the training (7e6) and enrollment (9e6) seeds
FEATURES = ("lead", "trail", "duration", "rms", "peak", "floor", "zeros")


def _db(x: np.ndarray | float) -> np.ndarray:
    return 20 * np.log10(np.maximum(x, 1e-10))


def waveform_features(wave: np.ndarray, sr: int = SR) -> dict[str, float]:
    """The non-prosodic features of one clip, from its samples only."""
    x = np.asarray(wave, dtype=np.float64)
    n = len(x) // FRAME
    frames = x[: n * FRAME].reshape(n, FRAME) if n else x[None, :]
    level = _db(np.sqrt((frames**2).mean(axis=1)))
    loud = np.flatnonzero(level >= level.max() - TOP_DB)
    hop = FRAME / sr
    return {
        "lead": float(loud[0] * hop),
        "trail": float((len(level) - 1 - loud[-1]) * hop),
        "duration": len(x) / sr,
        "rms": float(_db(np.sqrt((x**2).mean()))),
        "peak": float(_db(np.abs(x).max())),
        "floor": float(np.percentile(level, 10)),
        "zeros": float((x == 0.0).mean()),
    }


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(pos > neg) + P(tie) / 2 (Mann-Whitney), unfolded."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    diff = pos[:, None] - neg[None, :]
    return float((diff > 0).mean() + 0.5 * (diff == 0).mean())


def folded(a: float) -> float:
    return max(a, 1 - a)


@dataclass(frozen=True)
class Pair:
    text: str
    seed: int
    resolved: str  # delivery label
    unresolved: str
    unresolved_state: str


def pairs(n: int, seed: int = 0) -> list[Pair]:
    """``n`` same-words, same-seed pairs: assent words, a resolved and an unresolved delivery (seeded)."""
    rng = np.random.default_rng([seed, 17])
    assent = GRAMMAR.pool("ASSENT")
    out = []
    for i in range(n):
        state = (RELUCTANT, CONCERN)[int(rng.integers(2))]
        out.append(Pair(
            text=assent[int(rng.integers(len(assent)))], seed=PROBE_SEED_BASE + 1000 * seed + i,
            resolved=DELIVERY[RESOLVED][int(rng.integers(len(DELIVERY[RESOLVED])))],
            unresolved=DELIVERY[state][int(rng.integers(len(DELIVERY[state])))], unresolved_state=state,
        ))
    return out


@dataclass(frozen=True)
class ProbeResult:
    renderer: str
    version: str
    n_pairs: int
    auc: dict[str, float]  # folded, over all clips
    paired: dict[str, float]  # folded share of pairs where the unresolved clip is larger
    resolved: dict[str, float]  # mean per feature
    unresolved: dict[str, float]

    def worst(self) -> tuple[str, float]:
        name = max(self.auc, key=lambda k: self.auc[k])
        return name, self.auc[name]

    def format(self) -> str:
        lines = [f"renderer {self.renderer} ({self.version}), {self.n_pairs} same-words same-seed pairs",
                 f"  {'feature':<9} {'AUC':>6} {'paired':>7} {'resolved':>10} {'unresolved':>11}"]
        for k in FEATURES:
            lines.append(f"  {k:<9} {self.auc[k]:6.3f} {self.paired[k]:7.3f} "
                         f"{self.resolved[k]:10.3f} {self.unresolved[k]:11.3f}")
        return "\n".join(lines)


def measure(renderer: str = "hibari", n: int = 100, seed: int = 0, renderer_obj=None) -> ProbeResult:
    """Render ``n`` pairs with the named renderer and score every feature."""
    r = renderer_obj if renderer_obj is not None else make_renderer(renderer)
    res, unr = [], []
    for p in pairs(n, seed):
        res.append(waveform_features(to_16k(r.render(p.text, p.resolved, None, p.seed), r.sample_rate)))
        unr.append(waveform_features(to_16k(r.render(p.text, p.unresolved, None, p.seed), r.sample_rate)))
    a = {k: folded(auc(np.array([f[k] for f in unr]), np.array([f[k] for f in res]))) for k in FEATURES}
    paired = {}
    for k in FEATURES:
        d = np.array([u[k] - q[k] for u, q in zip(unr, res, strict=True)])
        paired[k] = folded(float((d > 0).mean() + 0.5 * (d == 0).mean()))
    mean = {k: float(np.mean([f[k] for f in res])) for k in FEATURES}
    mean_u = {k: float(np.mean([f[k] for f in unr])) for k in FEATURES}
    return ProbeResult(r.name, r.version, n, a, paired, mean, mean_u)
