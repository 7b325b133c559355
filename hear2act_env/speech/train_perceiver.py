"""Train the CPU perceiver: ``python -m hear2act_env.speech.train_perceiver``.

Renders every delivery label on training sentences that never occur in the
benchmark (disjoint from the realizer's phrase pools and every scenario text;
a test checks this) with seeds from a range the env never uses, extracts the
acoustic features, and fits the logistic model on the delivery columns only
(``DELIVERY_ONLY``: no words, no pauses, no level). The rendering is
deterministic, so the shipped weights regenerate exactly (on the pinned
versions; see renderers/versions.py). Then it scores the new weights on
held-out clips: the audio probe's same-words, same-seed pairs (assent words
and seeds the training never sees).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from ..dialogue.engine import DELIVERY, STATES
from .enrollment import ENROLL_TEXTS, neutral_baseline
from .features import extract
from .perceiver import MASK, WEIGHTS, FeaturePerceiver, PerceiverWeights, design_row, fit_logistic
from .probe import pairs
from .renderers import make_renderer, to_16k

# Sentences of the kinds users say, none of them in the benchmark.
TRAIN_ASSENT = (
    "Alright, let me go with it.", "Yes, I suppose so.", "Hmm, that seems reasonable.",
    "Okay, I'll take that one.", "That sounds about right.", "Sure, I can live with it.",
    "Well, that might do.", "Fine by me, I think.", "Yes, let's try that.", "Oh, that one looks nice.",
    "I could go for that.", "That's the one, probably.", "Okay, noted.", "It seems alright to me.",
    "I think so, yes.", "Right, that one it is.",
)
TRAIN_REJECT = (
    "No, I really can't do that one.", "That isn't what I asked for.", "No, that won't do at all.",
    "I don't want that, sorry.", "Not that one, please.", "That's not going to happen.",
    "No, it doesn't fit what I told you.", "I can't accept that option.",
)
TRAIN_SEED_BASE = 7_000_000  # the env's audio seeds are 31-bit hashes; these are a reserved block


def training_set(renderer_name: str = "hibari", per_text: int = 12) -> tuple[np.ndarray, np.ndarray, dict]:
    """Feature rows and state indices: ``per_text`` renders per (state, text), labels in rotation."""
    renderer = make_renderer(renderer_name)
    baseline = neutral_baseline(renderer)
    rows, labels = [], []
    seed = TRAIN_SEED_BASE
    for y, state in enumerate(STATES):
        # Rejections are always worded in the benchmark (PROTOCOL.md), so they train on refusals.
        texts = TRAIN_REJECT if state == "rejection" else TRAIN_ASSENT
        for text in texts:
            for k in range(per_text):
                label = DELIVERY[state][k % len(DELIVERY[state])]
                wave = to_16k(renderer.render(text, label, None, seed), renderer.sample_rate)
                rows.append(design_row(extract(wave), baseline))
                labels.append(y)
                seed += 1
    meta = {
        "renderer": renderer.name, "renderer_version": renderer.version, "clips": len(rows),
        "seeds": [TRAIN_SEED_BASE, seed - 1], "texts": len(TRAIN_ASSENT) + len(TRAIN_REJECT),
        "baseline": {**baseline.to_dict(), "texts": len(ENROLL_TEXTS)},
    }
    return np.array(rows), np.array(labels), meta


def held_out_accuracy(weights: Path, renderer_name: str = "hibari", n: int = 100) -> tuple[float, float, float]:
    """(overall, resolved, unresolved) status accuracy on ``n`` held-out same-words pairs (2n clips)."""
    renderer = make_renderer(renderer_name)
    perceiver = FeaturePerceiver(weights)
    perceiver.adapt(renderer)
    hits = {"resolved": [], "unresolved": []}
    for p in pairs(n):
        for label, status in ((p.resolved, "resolved"), (p.unresolved, "unresolved")):
            wave = to_16k(renderer.render(p.text, label, None, p.seed), renderer.sample_rate)
            hits[status].append(perceiver.perceive(wave, 16_000).status == status)
    ok_r, ok_u = float(np.mean(hits["resolved"])), float(np.mean(hits["unresolved"]))
    return (ok_r + ok_u) / 2, ok_r, ok_u


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renderer", default="hibari")
    parser.add_argument("--per-text", type=int, default=16,
                        help="renders per (state, text), labels in rotation")
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument("--held-out", type=int, default=100, help="held-out same-words pairs to score (0: skip)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    x, y, meta = training_set(args.renderer, args.per_text)
    state = fit_logistic(x, y, STATES, mask=MASK)
    unresolved = (y != STATES.index("resolved")).astype(int)
    status = fit_logistic(x, unresolved, ("resolved", "unresolved"), mask=MASK)
    acc = float((state.proba(x).argmax(axis=1) == y).mean())
    binary = float((status.proba(x).argmax(axis=1) == unresolved).mean())
    meta.update(train_accuracy=round(acc, 4), train_binary_accuracy=round(binary, 4))
    args.out.write_text(PerceiverWeights(status, state, meta).to_json(), encoding="utf-8")
    print(f"{len(y)} clips, train accuracy {acc:.3f} (4-way), {binary:.3f} (resolved vs unresolved), "
          f"{time.perf_counter() - t0:.1f}s -> {args.out}")
    if args.held_out:
        acc, ok_r, ok_u = held_out_accuracy(args.out, args.renderer, args.held_out)
        print(f"held out: {acc:.3f} resolved vs unresolved on {2 * args.held_out} same-words clips "
              f"(resolved {ok_r:.3f}, unresolved {ok_u:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
