"""``hear2act rollout``, ``hear2act play`` and ``hear2act demo``."""

from __future__ import annotations

import argparse
from pathlib import Path

from hear2act_env import ENV_IDS, load_scenarios
from hear2act_env.access import ACCESS
from hear2act_env.cli import positive_int, seed_int
from hear2act_env.env import INTERVENTIONS


def register(subparsers: argparse._SubParsersAction) -> None:
    from hear2act.agents import AGENTS

    r = subparsers.add_parser("rollout", help="run an agent over scenarios and summarise")
    r.add_argument("--agent", required=True, metavar="SPEC",
                   help=f"a registered agent ({', '.join(sorted(AGENTS))}) or a model: hf:PATH, "
                        "openai:MODEL@URL, omni:PATH, qwen2audio:PATH")
    r.add_argument("--env", default="Hear2Act-Prosody-v5", choices=sorted(ENV_IDS))
    r.add_argument("--access", default="T", choices=list(ACCESS))
    r.add_argument("--intervention", default="correct", choices=INTERVENTIONS,
                   help="state-tag intervention (access T+S only)")
    r.add_argument("--n", type=positive_int, default=None, help="first N scenarios (default: all 480)")
    r.add_argument("--seed", type=seed_int, default=0,
                   help="grid seed: the episodes `hear2act eval` plays for this cell under that seed (default 0)")
    r.add_argument("--quiet", action="store_true", help="summary only")
    from .model_rollout import add_model_arguments

    add_model_arguments(r)
    r.set_defaults(func=_rollout)

    d = subparsers.add_parser(
        "demo", help="the quick grid (built-in agents, CPU conditions) end to end, then its report",
        description="Runs eval/grids/quick.toml into --out (resumable) and writes report.md and report.html there.")
    d.add_argument("--out", type=Path, default=None,
                   help="run directory (default runs/demo, with the options in its name: runs/demo-n4-text)")
    d.add_argument("--n", type=positive_int, default=None, help="cut every scenario subset to its first N")
    d.add_argument("--seed", type=seed_int, default=0, help="run seed (default 0)")
    d.add_argument("--text-only", action="store_true",
                   help="leave out the spoken block (needs no extra: without matplotlib the report skips its figures)")
    d.add_argument("--no-report", action="store_true", help="run the grid only")
    d.set_defaults(func=_demo)


def _ids(n: int | None) -> list[str] | None:
    if n is None:
        return None
    return [s.id for s in load_scenarios()[:n]]


def _rollout(args: argparse.Namespace) -> int:
    from .model_rollout import rollout_command

    return rollout_command(args, _ids(args.n))


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args.out, n=args.n, seed=args.seed, text_only=args.text_only, report=not args.no_report)
