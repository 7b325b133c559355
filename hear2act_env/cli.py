"""The ``hear2act`` command line: one entry point, subcommands from a registry.

Each subcommand module exposes ``register(subparsers)``, which adds its parser
and sets ``func``; a command is one entry point of the group ``hear2act.commands`` (see :func:`commands`).

A user's mistake (a bad flag value, an unknown scenario or renderer, a
missing file) ends with one line ``hear2act: error: ...`` and exit status 2,
never a traceback (set ``HEAR2ACT_DEBUG=1`` to see one). Ctrl-C exits with
status 130 quietly; a closed pipe (``hear2act scenarios list | head``) ends
the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# name -> module providing register(subparsers), imported lazily so that `hear2act scenarios ...` never pays
# for the env or agents. The core's own command is listed here; the kit's (rollout, eval, report, train, ...)
# and any plugin's are entry points of the group "hear2act.commands" (pyproject.toml), so this ground-floor
# module names no package above it.
CORE_COMMANDS: dict[str, str] = {"scenarios": "hear2act_env.scenarios.cli"}
COMMAND_GROUP = "hear2act.commands"


def commands() -> dict[str, str]:
    """Every subcommand: the core's, then the installed ``hear2act.commands`` entry points (name -> module)."""
    from importlib.metadata import entry_points

    table = dict(CORE_COMMANDS)
    for ep in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        table.setdefault(ep.name, ep.value.split(":", 1)[0])
    return table


# Exceptions that mean "the input (or the installation) was wrong", reported as one line (exit 2);
# ImportError covers a missing extra, whose message names the pip install.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, LookupError, OSError, ImportError)


# -- argument types shared by the subcommands (argparse turns their ValueError into a usage error) --
def positive_int(text: str) -> int:
    """An integer >= 1 (``--n``, ``--rounds``)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def seed_int(text: str) -> int:
    """A seed: an integer in 0 .. 2**63 - 1 (numpy's seeding refuses negatives)."""
    value = _int(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must be an integer in 0..2**63-1, got {text}")
    return value


def port_int(text: str) -> int:
    """A TCP port: 0 (any free port) .. 65535."""
    value = _int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 0..65535, got {text}")
    return value


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def build_parser(names: Sequence[str] | None = None) -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="hear2act",
        description="Hear2Act: when should a user's prosody change what an assistant does?",
    )
    parser.add_argument("--version", action="version", version=f"hear2act {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    table = commands()
    modules = dict.fromkeys(table[name] for name in (names or table))
    for module in modules:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    try:
        parser = build_parser([first] if first in commands() else None)
        args = parser.parse_args(args_list)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except SystemExit as exc:
        if not isinstance(exc.code, str):  # argparse's usage errors (2), --help/--version (0)
            raise
        print(exc.code.splitlines()[0] if exc.code else "hear2act: error", file=sys.stderr)
        return 2  # `raise SystemExit("message")` in a command: a user mistake, reported like the rest
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python's exit flush from
        # raising again on the closed stdout.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except USER_ERRORS as exc:
        if os.environ.get("HEAR2ACT_DEBUG"):
            raise
        message = str(exc) or exc.__class__.__name__
        if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
            message = f"{exc.strerror}: {exc.filename}"
        print(f"hear2act: error: {message.splitlines()[0] if message else message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
