"""What carries the state in the audio: the shortcut probe and the CPU perceiver, measured and printed.

    python benchmarks/audio_probe.py [--pairs 200] [--renderers hibari piper]

1. The independent probe (hear2act_env.speech.probe): for each non-prosodic
   feature (leading/trailing silence, duration, RMS, peak, noise floor,
   digital zeros) the AUC separating resolved from unresolved over
   same-words, same-seed pairs, and the paired win rate. Target: every AUC
   <= 0.70 (tests/test_audio_probe.py asserts it).
2. The CPU perceiver (delivery only) on the same clips: resolved vs
   unresolved accuracy. None of these words or seeds is in its training set.
   The paper's human listeners: 0.85-0.95.

The piper renderer runs at ~0.3 s per clip, so it gets a quarter of the pairs by default.
"""

from __future__ import annotations

import argparse
import os
import time


def perceiver_accuracy(renderer: str, n: int) -> tuple[float, float, float]:
    """(overall, resolved, unresolved) accuracy of the shipped perceiver on the probe's pairs."""
    import numpy as np

    from hear2act_env.speech.perceiver import FeaturePerceiver
    from hear2act_env.speech.probe import pairs
    from hear2act_env.speech.renderers import make_renderer, to_16k

    r = make_renderer(renderer)
    p = FeaturePerceiver()
    # The shipped baseline for the voice it was trained on; any other voice is enrolled on its neutral speech.
    p.adapt(r) if hasattr(p, "adapt") else p.enroll(r)
    res, unr = [], []
    for pair in pairs(n):
        for label, out in ((pair.resolved, res), (pair.unresolved, unr)):
            wave = to_16k(r.render(pair.text, label, None, pair.seed), r.sample_rate)
            out.append(p.perceive(wave, 16_000, pair.text).status)
    ok_r = float(np.mean([s == "resolved" for s in res]))
    ok_u = float(np.mean([s == "unresolved" for s in unr]))
    return (ok_r + ok_u) / 2, ok_r, ok_u


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200, help="pairs for hibari (piper gets a quarter)")
    parser.add_argument("--renderers", nargs="+", default=["hibari", "piper"])
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from hear2act_env.speech.probe import measure

    for name in args.renderers:
        n = args.pairs if name == "hibari" else max(20, args.pairs // 4)
        t = time.perf_counter()
        result = measure(name, n)
        print(result.format(), flush=True)
        worst, value = result.worst()
        print(f"  largest single-feature AUC: {worst} {value:.3f} (target <= 0.70)", flush=True)
        acc, ok_r, ok_u = perceiver_accuracy(name, n)
        print(f"  CPU perceiver on these {2 * n} clips: {acc:.3f} (resolved {ok_r:.3f}, unresolved {ok_u:.3f}; "
              f"paper's human listeners 0.85-0.95)  [{time.perf_counter() - t:.0f}s]", flush=True)


if __name__ == "__main__":
    main()
