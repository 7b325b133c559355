"""SmolLM2-135M-Instruct (``hf:smollm2``) on CPU: the engine with prefix caching vs raw ``model.generate``.

Needs the prepared model (``make smollm2``). Three modes:

* default: plays ``--episodes`` episodes of one scenario through the engine
  (prefix caching, batched decode, stop at the action line). Every batched
  call runs twice from the same prefix-cache state, alternating: through the
  decode loop (:mod:`hear2act.agents.llm.decode`) and through
  ``model.generate`` on the stacked cache (the engine before it; skip with
  ``--no-before``), so the CPU-s per episode of both come from one run under
  one load. Then every call is replayed through raw left-padded
  ``model.generate`` (no cache reuse; skip with ``--no-raw``). Prints the
  prefill tokens per episode with and without prefix caching, whether the
  texts agree, episodes per hour and the projected 96-episode grid;
* ``--corpus OUT.jsonl``: every raw reply of a few episodes per text access
  condition (T, T+S) and realization (Prosody, Explicit), one JSON line each
  (the fixture ``tests/data/smollm2_replies.jsonl``);
* ``--grid``: a small grid (``--scenarios`` x {T, T+S} x {Prosody, Explicit})
  with success and invalid-action rates and the seconds per episode.

    nice -n 10 python benchmarks/real_model.py --episodes 2 --max-new-tokens 48
    nice -n 10 python benchmarks/real_model.py --corpus tests/data/smollm2_replies.jsonl
    nice -n 10 python benchmarks/real_model.py --grid --scenarios 2

The load average is printed with every figure: on a shared machine it decides them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hear2act.agents import make_policy  # noqa: E402
from hear2act.agents.llm.stopping import StopOnRule, truncate  # noqa: E402
from hear2act.eval.engine import make_specs, run_episodes  # noqa: E402

ENVS = {"Prosody": "Hear2Act-Prosody-v5", "Explicit": "Hear2Act-Explicit-v5"}
SCENARIOS = ["budget-airline-tickets-01", "restaurant-reservations-01", "vacation-rental-properties-01",
             "budget-airline-tickets-02", "restaurant-reservations-02", "vacation-rental-properties-02"]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class Recorder:
    """Wraps a backend's generate: keeps every batch of requests (to replay them raw)."""

    def __init__(self, backend: Any) -> None:
        self.backend, self.batches = backend, []
        self._generate = backend.generate
        backend.generate = self.generate

    def generate(self, requests: Any) -> Any:
        self.batches.append(list(requests))
        return self._generate(requests)


def raw_generate(backend: Any, batches: list[list[Any]]) -> dict[str, Any]:
    """The same calls through plain left-padded ``model.generate``: no cache reuse, same stop rule."""
    import torch
    import transformers

    tok, model = backend.tokenizer, backend.model
    stats = {"prefill_tokens": 0, "padded_tokens": 0, "prefill_s": 0.0, "generate_s": 0.0, "new_tokens": 0}
    texts_out = []
    for requests in batches:
        texts = backend.prompt_texts(requests)
        batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        width = batch["input_ids"].shape[1]
        stats["prefill_tokens"] += int(batch["attention_mask"].sum())
        stats["padded_tokens"] += int(batch["input_ids"].numel())
        with torch.inference_mode():
            t0 = time.perf_counter()
            model(**batch, use_cache=True, logits_to_keep=1)  # the prefill alone, timed (logits as generate)
            t1 = time.perf_counter()
            config = transformers.GenerationConfig(max_new_tokens=backend.max_new_tokens, do_sample=False,
                                                   eos_token_id=model.generation_config.eos_token_id,
                                                   pad_token_id=tok.pad_token_id)
            stop = requests[0].stop
            criteria = transformers.StoppingCriteriaList([StopOnRule(tok, width, stop)] if stop else [])
            ids = model.generate(**batch, generation_config=config, stopping_criteria=criteria)
            t2 = time.perf_counter()
        stats["prefill_s"] += t1 - t0
        stats["generate_s"] += (t2 - t1) - (t1 - t0)  # decode = generate minus its own prefill
        eos = {model.generation_config.eos_token_id, tok.pad_token_id}
        for row, request in zip(ids[:, width:].tolist(), requests, strict=True):
            n = next((i for i, t in enumerate(row) if t in eos), len(row))
            stats["new_tokens"] += n
            texts_out.append(truncate(tok.decode(row[:n], skip_special_tokens=True), request.stop))
    stats["texts"] = texts_out
    return stats


class SideBySide:
    """Every batched call run twice from the same prefix-cache state: the decode loop and ``model.generate``.

    The two alternate call by call (which goes first alternates too), so a
    shared machine's load weighs on both alike; each one's CPU seconds are
    summed per call. The engine plays on the decode loop's replies.
    """

    def __init__(self, backend: Any, before: bool) -> None:
        self.backend, self.before, self.calls = backend, before, 0
        self.cpu = {"decode loop": 0.0, "model.generate": 0.0}
        self.wall = dict(self.cpu)
        self.same, self.total = 0, 0
        self._generate = backend.generate
        backend.generate = self.generate

    def _timed(self, name: str, requests: Any) -> Any:
        self.backend.decode_loop = name == "decode loop"
        t0, c0 = time.perf_counter(), time.process_time()
        out = self._generate(requests)
        self.wall[name] += time.perf_counter() - t0
        self.cpu[name] += time.process_time() - c0
        return out

    def generate(self, requests: Any) -> Any:
        self.calls += 1
        if not self.before:
            return self._timed("decode loop", requests)
        store = self.backend.prefix_store
        snapshot = (store.entries.copy(), store.nbytes, store._next)  # entries' tensors are never written
        order = ["decode loop", "model.generate"][::1 if self.calls % 2 else -1]
        outs = {}
        for i, name in enumerate(order):
            if i:
                store.entries, store.nbytes, store._next = snapshot[0].copy(), snapshot[1], snapshot[2]
            outs[name] = self._timed(name, requests)
        self.same += sum(a.text == b.text for a, b in zip(outs["decode loop"], outs["model.generate"], strict=True))
        self.total += len(requests)
        return outs["decode loop"]


def bench(args: argparse.Namespace) -> None:
    policy = make_policy("hf:smollm2", access=args.access, max_new_tokens=args.max_new_tokens)
    backend = policy.backend
    specs = make_specs(ENVS[args.realization], [args.scenario] * args.episodes, seed=args.seed, access=args.access)
    n = args.episodes
    print(f"{n} episodes of {args.scenario} ({args.realization}, {args.access}) in one batch, "
          f"max_new_tokens={args.max_new_tokens}, torch threads={_threads()}; {load()}", flush=True)
    side = SideBySide(backend, before=not args.no_before)
    rec = Recorder(backend)
    t0 = time.perf_counter()
    trajs = run_episodes(specs, policy, batch_size=n)
    wall = time.perf_counter() - t0
    s, batches = dict(backend.stats), rec.batches
    turns = sum(len(t["turns"]) for t in trajs)
    print(f"engine: {wall:.1f} s wall for both, {turns} turns, {load()}", flush=True)
    for name, cpu in side.cpu.items():
        if cpu:
            print(f"engine ({name}): {cpu:.1f} CPU s, {side.wall[name]:.1f} s wall in its calls "
                  f"({cpu / n:.1f} CPU-s per episode)")
    if side.total:
        before, now = side.cpu["model.generate"], side.cpu["decode loop"]
        print(f"replies identical decode loop vs model.generate engine: {side.same}/{side.total}")
        print(f"CPU-s per episode: {before / n:.1f} before (model.generate) -> {now / n:.1f} now (decode loop), "
              f"{before / now:.2f}x")
    if side.total:  # the stats then hold both engines' calls: halve the counts
        s = {k: v / 2 for k, v in s.items()}
        s["prefill_s"] = s["generate_s"] = float("nan")
    engine_texts = [turn["raw"] for b in _by_call(trajs, batches) for turn in b]
    print(f"prompt tokens per episode (what every turn re-prefilled before): {s['prompt_tokens'] / n:.0f}")
    print(f"prefill tokens per episode with prefix caching: {s['prefill_tokens'] / n:.0f} "
          f"({100 * s['prefill_tokens'] / s['prompt_tokens']:.1f}% of before)")
    if not side.total:
        print(f"engine prefill: {s['prefill_tokens'] / s['prefill_s']:.0f} computed tok/s "
              f"({s['prompt_tokens'] / s['prefill_s']:.0f} prompt tok/s); "
              f"decode {s['new_tokens'] / s['generate_s']:.1f} tok/s ({s['new_tokens']} new tokens)")
    texts = [g for b in batches for g in b]
    if not args.no_raw:
        raw = raw_generate(backend, batches)
        print(f"raw generate prefill: {raw['prefill_tokens'] / raw['prefill_s']:.0f} tok/s "
              f"({raw['padded_tokens']} padded positions for {raw['prefill_tokens']} tokens); "
              f"decode {raw['new_tokens'] / max(raw['generate_s'], 1e-9):.1f} tok/s ({raw['new_tokens']} new tokens)")
        print(f"model seconds (wall) per episode: engine (decode loop) {side.wall['decode loop'] / n:.1f} s, "
              f"raw {(raw['prefill_s'] + raw['generate_s']) / n:.1f} s")
        same = sum(a == b for a, b in zip(engine_texts, raw["texts"], strict=True))
        print(f"replies identical engine vs raw generate: {same}/{len(texts)}")
    for name, cpu in side.cpu.items():
        if cpu:
            print(f"episodes per hour ({name}, this load, its calls' wall time): {3600 * n / side.wall[name]:.1f}; "
                  f"from CPU time, one thread per episode batch on each of 2 idle cores: {2 * 3600 * n / cpu:.0f}; "
                  f"96-episode grid on 2 idle cores: {96 * cpu / n / 2 / 60:.0f} min; {load()}")


def _by_call(trajs: list[dict[str, Any]], batches: list[list[Any]]) -> list[list[dict[str, Any]]]:
    """The trajectory turns in the order of the backend's calls (matched by request key)."""
    turns = {f"{t['key']}/{turn['turn']}": turn for t in trajs for turn in t["turns"]}
    return [[turns[r.key] for r in batch] for batch in batches]


def corpus(args: argparse.Namespace) -> None:
    out = Path(args.corpus)
    rows = []
    for realization in ("Prosody", "Explicit"):
        for access in ("T", "T+S"):
            policy = make_policy("hf:smollm2", access=access, max_new_tokens=args.max_new_tokens)
            ids = SCENARIOS[:args.scenarios]
            specs = make_specs(ENVS[realization], ids, seed=args.seed, access=access)
            t0 = time.perf_counter()
            trajs = run_episodes(specs, policy, batch_size=len(specs))
            for t in trajs:
                for turn in t["turns"]:
                    rows.append({"realization": realization, "access": access, "scenario_id": t["scenario_id"],
                                 "seed": t["seed"], "turn": turn["turn"], "raw": turn["raw"],
                                 "parsed_kind": turn["parsed_kind"], "parse_error": turn["parse_error"]})
            print(f"{realization} {access}: {len(trajs)} episodes, {sum(len(t['turns']) for t in trajs)} replies "
                  f"in {time.perf_counter() - t0:.0f} s; {load()}", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    valid = sum(r["parsed_kind"] not in (None, "invalid") for r in rows)
    print(f"{len(rows)} replies -> {out}; parsed as an action: {valid} ({100 * valid / max(len(rows), 1):.1f}%)")


def grid(args: argparse.Namespace) -> None:
    from hear2act.eval.metrics import summarize

    ids = SCENARIOS[:args.scenarios]
    for realization in ("Prosody", "Explicit"):
        for access in ("T", "T+S"):
            policy = make_policy("hf:smollm2", access=access, max_new_tokens=args.max_new_tokens)
            specs = make_specs(ENVS[realization], ids, seed=args.seed, access=access)
            t0 = time.perf_counter()
            trajs = run_episodes(specs, policy, batch_size=len(specs))
            wall = time.perf_counter() - t0
            turns = sum(len(t["turns"]) for t in trajs)
            invalid = sum(t["parse_failures"] for t in trajs)
            m = summarize([t["outcome"] for t in trajs if t["outcome"]])
            print(f"{realization:8s} {access:4s} n={len(trajs)} success={m['success']:.1f}% "
                  f"premature closure={m['premature_closure']:.1f}% "
                  f"invalid-action rate={invalid / max(turns, 1):.3f} ({invalid}/{turns} turns) "
                  f"{wall / len(trajs):.0f} s/episode; {load()}", flush=True)


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=2, help="episodes of one scenario in one batch")
    p.add_argument("--scenario", default=SCENARIOS[0])
    p.add_argument("--realization", default="Prosody", choices=sorted(ENVS))
    p.add_argument("--access", default="T", choices=["T", "T+S"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--no-before", action="store_true", help="do not also run every call through model.generate")
    p.add_argument("--no-raw", action="store_true", help="skip replaying the calls through raw model.generate")
    p.add_argument("--corpus", default="", help="write every raw reply of a few episodes per condition here")
    p.add_argument("--grid", action="store_true", help="small grid: --scenarios x {T, T+S} x {Prosody, Explicit}")
    p.add_argument("--scenarios", type=int, default=2, help="scenarios per condition for --corpus / --grid")
    args = p.parse_args()
    if args.corpus:
        corpus(args)
    elif args.grid:
        grid(args)
    else:
        bench(args)


if __name__ == "__main__":
    main()
