"""Training kit: discrete wrappers for SB3-style agents (:mod:`hear2act.training.wrappers`), PPO
(:mod:`hear2act.training.ppo`).

Nothing here imports torch or stable-baselines3 at import time; :mod:`hear2act.training.ppo` does, lazily.
"""

from __future__ import annotations

from .wrappers import DiscreteDialogue, make_env

__all__ = ["DiscreteDialogue", "make_env"]
