"""hear2act_env: the Hear2Act benchmark as a Gymnasium environment.

``import hear2act_env`` registers ``Hear2Act-Prosody-v1`` and
``Hear2Act-Explicit-v1`` (``-v0``, whose results differ, is gone: Gymnasium
raises ``DeprecatedEnv`` naming ``-v1``); the scenario bank is :func:`load_scenarios`.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from .scenarios import Scenario, ScenarioError, load_scenarios, validate

__version__ = "0.1.0"

ENV_IDS = {"Hear2Act-Prosody-v1": "prosody", "Hear2Act-Explicit-v1": "explicit"}

for _env_id, _realization in ENV_IDS.items():
    if _env_id not in registry:
        # Turn limits are the protocol's (20 assistant turns, opening included),
        # enforced inside the env, so no TimeLimit wrapper is added.
        register(
            id=_env_id,
            entry_point="hear2act_env.env:Hear2ActEnv",
            kwargs={"realization": _realization},
            disable_env_checker=False,
        )

__all__ = ["ENV_IDS", "Scenario", "ScenarioError", "__version__", "load_scenarios", "validate"]
