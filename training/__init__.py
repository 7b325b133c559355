"""Training kit: discrete wrappers for SB3-style agents (:mod:`training.wrappers`), PPO (:mod:`training.ppo`).

Nothing here imports torch or stable-baselines3 at import time; :mod:`training.ppo` does, lazily.
"""

from __future__ import annotations

from .wrappers import DiscreteDialogue, make_env

__all__ = ["DiscreteDialogue", "make_env"]
