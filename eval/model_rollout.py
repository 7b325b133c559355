"""``hear2act rollout --agent SPEC`` for model policies (and for any agent with ``--out``): the batched engine,
data parallel when launched.

``SPEC`` is ``hf:PATH``, ``openai:MODEL@URL``, ``omni:PATH``, ``qwen2audio:PATH``
(or ``scripted:FILE.json``). Failed episodes (a call that failed for good) are
listed with their reason and left out of the summary; parse failures are
counted per model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .engine import make_specs, write_jsonl
from .parallel import process_info, run_sharded


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("model policies (hf:, openai:, omni:, qwen2audio:)")
    g.add_argument("--batch-size", type=int, default=16, help="episodes in flight per process (default 16)")
    g.add_argument("--max-new-tokens", type=int, default=None)
    g.add_argument("--temperature", type=float, default=None, help="0 = greedy (default); >0 samples, seeded")
    g.add_argument("--assistant", choices=("spoken", "text"), default="spoken",
                   help="P6a variant: spoken (RECOMMEND/ASK/CONFIRM) or text (adds CLARIFY)")
    g.add_argument("--reasoning", action="store_true", help="ask for <think>...</think><answer>...</answer>")
    g.add_argument("--concurrency", type=int, default=None, help="openai: requests in flight")
    g.add_argument("--timeout", type=float, default=None, help="openai: seconds per call")
    g.add_argument("--out", default=None, help="write trajectories (JSONL) here")
    g.add_argument("--record-prompts", action="store_true", help="store full prompts in the trajectories")
    g.add_argument("--perceiver", default=None, metavar="SPEC",
                   help="T+S_hat first stage (P6c): feature (the env's CPU perceiver, default) or an audio model "
                        "omni:PATH, qwen2audio:PATH, openai:MODEL@URL")


def backend_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    from hear2act.agents.llm import split_spec

    prefix, _ = split_spec(args.agent)
    kw: dict[str, Any] = {}
    for name in ("max_new_tokens", "temperature") + (("concurrency", "timeout") if prefix == "openai" else ()):
        value = getattr(args, name, None)
        if value is not None:
            kw[name] = value
    return kw


def rollout_models(args: argparse.Namespace, ids: list[str] | None) -> int:
    from hear2act.agents import AGENTS, make_policy
    from hear2act.agents.llm import BACKENDS, split_spec
    from hear2act_env import load_scenarios

    from .cli import COLUMNS
    from .metrics import format_table, summarize

    rule = args.agent in AGENTS  # a registered agent with --out: the same engine, the same trajectory lines
    if not rule and not split_spec(args.agent)[0]:
        raise SystemExit(f"hear2act rollout: unknown agent {args.agent!r}; choose a registered agent "
                         f"{sorted(AGENTS)} or a model spec PREFIX:TARGET with PREFIX in {sorted(BACKENDS)}")
    scenario_ids = ids if ids is not None else [s.id for s in load_scenarios()]
    from hear2act.agents.llm.perceiver_llm import perceiver_env_kwargs

    try:  # built in every process of a launch, each on its own device
        env_kwargs = perceiver_env_kwargs(getattr(args, "perceiver", None), args.access, seed=args.seed)
    except ValueError as e:
        raise SystemExit(f"hear2act rollout: {e}") from None
    specs = make_specs(args.env, scenario_ids, seed=args.seed, access=args.access, intervention=args.intervention,
                       env_kwargs=env_kwargs)

    def make() -> Any:
        if rule:
            return make_policy(args.agent, access=args.access)
        return make_policy(args.agent, access=args.access, assistant=args.assistant, reasoning=args.reasoning,
                           **backend_kwargs(args))

    info = process_info()
    # Each process streams finished episodes to OUT.part<rank> as they end, so a crash loses nothing
    # already played; the parts are removed once rank 0 has written the merged file.
    part = Path(f"{args.out}.part{info.rank}") if args.out else None
    from hear2act.agents.base import close_policy

    try:
        with _Stream(part) as stream:
            trajectories = run_sharded(specs, make, batch_size=args.batch_size, record_prompts=args.record_prompts,
                                       on_done=stream.write, info=info)
            if trajectories is not None and args.out:
                print(f"wrote {write_jsonl(trajectories, args.out)}")
    finally:
        close_policy(env_kwargs.get("perceiver"))  # an audio-LLM perceiver holds its backend
    if trajectories is None:  # not the main process
        return 0
    rows = []
    for t in trajectories:
        if t["failed"]:
            print(f"{t['scenario_id']:<42} FAILED: {t['failed']}")
            continue
        row = dict(t["outcome"])
        rows.append(row)
        if not args.quiet:
            print(f"{row['scenario_id']:<42} success={int(row['success'])} final={row['final_option']:>2} "
                  f"turns={row['turns']:>2} disclosed={row['n_disclosed']} "
                  f"premature={int(row['premature_closure'])}" + ("" if rule else
                                                                   f" parse_failures={t['parse_failures']}"))
    turns = sum(len(t["turns"]) for t in trajectories)
    bad = sum(t["parse_failures"] for t in trajectories)
    failed = sum(bool(t["failed"]) for t in trajectories)
    print(f"episodes {len(trajectories)} (failed {failed}, on {info.world_size} process(es)); "
          f"parse failures {bad}/{turns} turns ({100 * bad / max(turns, 1):.1f}%)")
    if rows:
        label = f"{args.agent} {args.env} {args.access} (n={len(rows)}, failed {failed})"
        print(format_table({label: summarize(rows)}, COLUMNS))
    return 0 if failed < len(trajectories) else 1


class _Stream:
    """Appends each finished trajectory to a part file (flushed per line); deletes it on a clean exit."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: Any = None

    def __enter__(self) -> _Stream:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8", errors="backslashreplace")  # lone surrogates: escaped
        return self

    def write(self, trajectory: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(trajectory, ensure_ascii=False) + "\n")
            self._file.flush()

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if self._file is not None:
            self._file.close()
            if exc_type is None and self.path is not None:
                self.path.unlink()
