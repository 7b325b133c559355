"""hear2act_env: the Hear2Act benchmark as a Gymnasium environment.

``import hear2act_env`` registers ``Hear2Act-Prosody-v5`` and
``Hear2Act-Explicit-v5`` (``-v0`` to ``-v4``, whose results differ, are gone:
Gymnasium raises ``DeprecatedEnv`` naming ``-v5``), and their discrete versions for
SB3-style agents, ``Hear2Act-Prosody-Macro-v5``, ``Hear2Act-Prosody-Full-v5``,
``Hear2Act-Explicit-Macro-v5``, ``Hear2Act-Explicit-Full-v5``
(:mod:`hear2act.training.wrappers`; ``spec.max_episode_steps`` = 19); the
scenario bank is :func:`load_scenarios`.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from .scenarios import Scenario, ScenarioError, load_scenarios, validate

__version__ = "0.1.0"

ENV_IDS = {"Hear2Act-Prosody-v5": "prosody", "Hear2Act-Explicit-v5": "explicit"}
# The other way round: the env id of each realization (one home, so a version bump edits one line).
REALIZATION_ENV_IDS = {_realization: _env_id for _env_id, _realization in ENV_IDS.items()}

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

# The discrete wrappers (hear2act.training.wrappers: Discrete actions, Box observations) for SB3-style agents:
# ``gym.make("Hear2Act-Prosody-Macro-v5", access="T+S")``. An episode is at most MAX_TURNS - 1 steps (the
# opening is the first assistant turn), so the TimeLimit never cuts one short; pass ``max_episode_steps`` with a
# larger ``max_turns``.
DISCRETE_ENV_IDS = {f"{_env_id[:-3]}-{_set.capitalize()}-v5": (_env_id, _set)
                    for _env_id in ENV_IDS for _set in ("macro", "full")}
MAX_EPISODE_STEPS = 19

for _env_id, (_base, _action_set) in DISCRETE_ENV_IDS.items():
    if _env_id not in registry:
        register(
            id=_env_id,
            entry_point="hear2act.training.wrappers:make_discrete",
            kwargs={"env_id": _base, "action_set": _action_set},
            max_episode_steps=MAX_EPISODE_STEPS,
        )

__all__ = ["DISCRETE_ENV_IDS", "ENV_IDS", "REALIZATION_ENV_IDS", "Scenario", "ScenarioError", "__version__",
           "load_scenarios", "validate"]
