"""The ``hear2act`` command line: one entry point, subcommands from a registry.

Each subcommand module exposes ``register(subparsers)``, which adds its parser
and sets ``func``; adding a command is one line in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name -> module providing register(subparsers). Imported lazily so that
# `hear2act scenarios ...` never pays for the env or agents.
COMMANDS: dict[str, str] = {
    "scenarios": "hear2act_env.scenarios.cli",
    "rollout": "eval.cli",
    "demo": "eval.cli",
    "play": "eval.play",
    "perception": "eval.perception",
    "render": "eval.render",
    "listen": "eval.listening.cli",
    "eval": "eval.runner",
    "report": "eval.report.cli",
}


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hear2act",
        description="Hear2Act: when should a user's prosody change what an assistant does?",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = dict.fromkeys(COMMANDS[name] for name in (commands or COMMANDS))
    for module in modules:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser([first] if first in COMMANDS else None)
    args = parser.parse_args(args_list)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
