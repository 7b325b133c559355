"""Rollout-engine overhead: wall time outside model calls vs raw batched generation of the same prompts.

    python benchmarks/rollout_overhead.py [--model DIR] [--episodes 16] [--batch-size 16] [--max-new-tokens 32]

Plays ``--episodes`` Prosody-mediated episodes (access ``T+S``) with an ``hf:``
policy (default: the tiny random Qwen2 model of ``agents/llm/tiny.py``,
built into a temporary folder), timing every ``generate`` call. Then replays
the exact same request batches straight through the backend. Prints:

* engine wall, time inside ``generate``, and the share outside it (env steps,
  prompt building, reasoning split, parsing, bookkeeping);
* the engine's wall time against the raw replay: ``overhead = engine / raw - 1``
  (target <= 5 %).

A tiny model makes generation cheap, so this is a worst case for the share;
with a 7B model the same absolute overhead is a far smaller fraction.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class TimedBackend:
    """Wraps a backend: records every batch of requests and the time spent generating it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.accepts_audio = getattr(inner, "accepts_audio", True)
        self.batches: list[list] = []
        self.seconds = 0.0

    def generate(self, requests: Sequence):
        t0 = time.perf_counter()
        out = self.inner.generate(requests)
        self.seconds += time.perf_counter() - t0
        self.batches.append(list(requests))
        return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="a causal LM directory (default: build the tiny model)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--access", default="T+S")
    parser.add_argument("--repeats", type=int, default=1, help="alternate engine / raw runs; report the fastest")
    args = parser.parse_args(argv)

    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.policy import ModelPolicy
    from hear2act.eval.engine import make_specs, run_episodes
    from hear2act_env import load_scenarios

    model = args.model
    if model is None:
        from hear2act.agents.llm.tiny import build_tiny_causal_lm

        model = str(build_tiny_causal_lm(Path(tempfile.mkdtemp(prefix="hear2act-bench-lm-"))))
    backend = HFBackend(model, max_new_tokens=args.max_new_tokens)
    ids = [s.id for s in load_scenarios()[:: max(1, 480 // args.episodes)]][: args.episodes]
    specs = make_specs("Hear2Act-Prosody-v5", ids, seed=0, access=args.access)

    # Warm up (first-call allocations, lazy imports) on one short episode, then measure.
    warm = TimedBackend(backend)
    run_episodes(specs[:1], ModelPolicy(warm, access=args.access), batch_size=1)
    warm.inner.generate(warm.batches[0])

    engines, raws, insides = [], [], []
    for _ in range(max(1, args.repeats)):  # alternate, so load drift on a shared machine hits both alike
        timed = TimedBackend(backend)
        t0 = time.perf_counter()
        trajectories = run_episodes(specs, ModelPolicy(timed, access=args.access), batch_size=args.batch_size)
        engines.append(time.perf_counter() - t0)
        insides.append(timed.seconds)
        t0 = time.perf_counter()
        for batch in timed.batches:
            backend.generate(batch)
        raws.append(time.perf_counter() - t0)
    best = min(range(len(engines)), key=engines.__getitem__)
    engine, raw, inside = engines[best], min(raws), insides[best]

    turns = sum(len(t["turns"]) for t in trajectories)
    outside = engine - inside
    print(f"model {model} | {len(specs)} episodes, {turns} turns, {len(timed.batches)} batched calls, "
          f"batch size {args.batch_size}, max_new_tokens {args.max_new_tokens}")
    print(f"engine wall              {engine:8.2f} s")
    print(f"  inside generate        {inside:8.2f} s")
    print(f"  outside (env, prompts, parsing) {outside:8.3f} s = {100 * outside / engine:.2f} % of wall "
          f"({1000 * outside / max(turns, 1):.2f} ms/turn)")
    print(f"raw batched generation   {raw:8.2f} s (same request batches, no env)")
    print(f"overhead vs raw          {100 * (engine / raw - 1):+.2f} %  (target <= 5 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
