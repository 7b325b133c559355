"""The trainers' argument checks, shared by ``hear2act train`` and ``python -m hear2act.training.X``.

Each raises a ValueError (or ImportError for a missing extra) whose one line names the flag and the value;
the CLI prints it without a traceback and exits 2. Checked before anything is built or loaded.
:func:`module_main` is what ``python -m hear2act.training.X`` runs (here, below the trainers, so that the
trainers' ``__main__`` blocks do not import :mod:`hear2act.training.cli`, which imports them).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from hear2act_env.access import names
from hear2act_env.extras import extra_install

# What rendering speech needs (the speech extra), checked before any model is loaded.
SPEECH_MODULES = ("hibari", "parselmouth", "scipy")
# Access conditions whose observation is computed from rendered speech.
SPEECH_ACCESS = frozenset(names(lambda a: a.needs_speech))


def check_access(access: str, allowed: Sequence[str], flag: str = "--access") -> str:
    """``access`` if it is one of ``allowed``; else a ValueError naming the flag, the value and the choices."""
    if access not in allowed:
        raise ValueError(f"{flag} must be one of {', '.join(allowed)}; got {access!r}")
    return access


def check_split(test_domains: int, test_per_domain: int, seed: int) -> None:
    """The held-out split's numbers are usable on the bundled bank (the split itself is computed where needed)."""
    from hear2act_env import load_scenarios

    if seed < 0:
        raise ValueError(f"--split-seed must be >= 0, got {seed}")
    bank = load_scenarios()
    domains: dict[str, int] = {}
    for s in bank:
        domains[s.domain] = domains.get(s.domain, 0) + 1
    if not 0 <= test_domains < len(domains):
        raise ValueError(f"--test-domains must be in 0..{len(domains) - 1} (whole domains held out), "
                         f"got {test_domains}")
    smallest = min(domains.values())
    if not 0 <= test_per_domain < smallest:
        raise ValueError(f"--test-per-domain must be in 0..{smallest - 1} (each domain keeps a training "
                         f"scenario), got {test_per_domain}")


def check_model(path: str, flag: str = "--model") -> Path:
    """A local checkpoint directory (its ``config.json``); a ValueError naming the flag otherwise."""
    if not path:
        raise ValueError(f"{flag} is required (a checkpoint directory with config.json)")
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise ValueError(f"{flag} {path}: not a checkpoint directory (no config.json there)")
    return folder


def require_speech(what: str) -> None:
    """Raise ImportError naming the speech extra when a module rendering speech needs is missing."""
    for module in SPEECH_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            raise ImportError(f"{what} renders speech, which needs the speech extra ({module} is not installed): "
                              f"{extra_install('speech')}") from None


@contextlib.contextmanager
def quiet_defaults(argv: Sequence[str]) -> Iterator[None]:
    """Silence transformers' FutureWarning about a renamed TrainingArguments field that the parser's *defaults*
    set (``gradient_checkpointing``), so an error stays one line; a flag the user gave still warns."""
    with warnings.catch_warnings():
        given = {a.split("=")[0].lstrip("-").replace("-", "_") for a in argv if a.startswith("--")}
        for name in ("gradient_checkpointing",):
            if name not in given:
                warnings.filterwarnings("ignore", message=f".*`{name}` is deprecated", category=FutureWarning)
        yield


def module_main(trainer: str) -> int:
    """``python -m hear2act.training.TRAINER ...``: the same as ``hear2act train TRAINER ...``."""
    import sys

    from hear2act_env.cli import main

    return main(["train", trainer, *sys.argv[1:]])
