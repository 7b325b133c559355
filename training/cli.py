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

The checks shared by the trainers live in :mod:`hear2act.training.checks` (the trainers import them; this
module imports the trainers).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

TRAINERS = {
    "ppo": "SB3 PPO on the discrete wrappers (CPU; the train extra)",
    "grpo": "GRPO with TRL: whole episodes or CESAR's per-state rewards (the train extra)",
    "sft": "SFT warm start on the built-in agents' trajectories (the train extra)",
}


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


__all__ = ["TRAINERS", "register", "run"]
