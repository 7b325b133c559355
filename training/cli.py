"""``hear2act train ppo|grpo|sft``: the three trainers behind the ``hear2act`` command's one-line errors.

    hear2act train ppo --access T+S --total-timesteps 20000 --out runs/ppo-ts-0
    hear2act train sft --model runs/tiny-lm --output-dir runs/sft
    hear2act train grpo --model runs/sft --access T+S --output-dir runs/grpo
    hear2act train TRAINER --help          # that trainer's flags

One flag style: every flag is ``--dashed-name`` and its ``--underscored_name`` alias is accepted too (PPO's
dataclass parser and TRL's ``HfArgumentParser`` both take either). ``python -m hear2act.training.ppo`` (and
``.grpo``, ``.sft``) run the same path. A wrong flag value (``--access``, the held-out split, a missing or
non-checkpoint ``--model``) or a missing extra (speech for audio access; stable-baselines3 / trl / torch, whose
CPU build comes from PyTorch's CPU index, see :mod:`hear2act_env.extras`) ends with one line
``hear2act: error: ...`` naming the flag or the exact ``pip install``, exit status 2, and no traceback.

The checks shared by the trainers live here (:func:`check_access`, :func:`check_split`, :func:`check_model`,
:func:`require_speech`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from hear2act_env.extras import extra_install

TRAINERS = {
    "ppo": "SB3 PPO on the discrete wrappers (CPU; the train extra)",
    "grpo": "GRPO with TRL: whole episodes or CESAR's per-state rewards (the train extra)",
    "sft": "SFT warm start on the built-in agents' trajectories (the train extra)",
}
# What rendering speech needs (the speech extra), checked before any model is loaded.
SPEECH_MODULES = ("hibari", "parselmouth", "scipy")
# Access conditions whose observation is computed from rendered speech.
SPEECH_ACCESS = frozenset({"A", "A+T", "T+S_hat", "T+affect"})


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


def run(trainer: str, argv: Sequence[str]) -> int:
    """Run ``trainer`` with its own flags (``argv``); exceptions propagate to the CLI's one-line handler."""
    prog = f"hear2act train {trainer}"
    if trainer == "ppo":
        from . import ppo

        ppo.main(list(argv), prog=prog)
    elif trainer == "grpo":
        from . import grpo

        grpo.main(list(argv), prog=prog)
    elif trainer == "sft":
        from . import sft

        sft.main(list(argv), prog=prog)
    else:
        raise ValueError(f"unknown trainer {trainer!r}; choose from {', '.join(TRAINERS)}")
    return 0


def module_main(trainer: str) -> int:
    """``python -m hear2act.training.TRAINER ...``: the same as ``hear2act train TRAINER ...``."""
    from hear2act_env.cli import main

    return main(["train", trainer, *sys.argv[1:]])


def _run(args: argparse.Namespace) -> int:
    return run(args.trainer, args.argv)


def register(sub: argparse._SubParsersAction) -> None:
    epilog = "\n".join(f"  {name:5} {text}" for name, text in TRAINERS.items())
    p = sub.add_parser("train", help="train a policy: ppo, grpo or sft (hear2act train TRAINER --help)",
                       description="Train a policy on Hear2Act: PPO (SB3), GRPO or SFT (TRL).",
                       epilog=f"trainers:\n{epilog}\n\nFlags: --dashed-names (--underscored_names also accepted).",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trainer", choices=list(TRAINERS), help="which trainer")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="...",
                   help="the trainer's flags (see hear2act train TRAINER --help)")
    p.set_defaults(func=_run)


__all__ = ["SPEECH_ACCESS", "TRAINERS", "check_access", "check_model", "check_split", "module_main", "quiet_defaults",
           "register", "require_speech", "run"]
