"""Adapters to RL-environment stacks: ``verifiers`` and OpenEnv.

Each lives in its own module and imports its stack only when that module is
imported (``import hear2act_env.integrations`` imports neither):

* :mod:`hear2act_env.integrations.verifiers` -- ``load_environment(access=...,
  realization=...)`` returns a verifiers multi-turn environment
  (``pip install "hear2act[verifiers]"``);
* :mod:`hear2act_env.integrations.openenv` -- an OpenEnv server/client pair
  (``pip install "hear2act[openenv]"``).

Both play the same episodes as ``hear2act rollout``: the P6 prompts of
:mod:`hear2act.agents.prompts`, the ``[ACTION: ...]`` grammar of
:mod:`hear2act_env.dialogue.actions`, the env's outcome as the reward.
"""

from __future__ import annotations

__all__: list[str] = []
