"""The privileged API for training: what an agent never sees, and cheap copies of a live episode.

Training code (GRPO's per-state scoring, continuation rollouts, PPO
diagnostics) needs the hidden truth of an episode and independent copies of
it. These are public, stable calls on the env, so nothing outside it lists
the env's private attributes:

- :meth:`Hear2ActEnv.ground_truth` -> :class:`GroundTruth`: the scenario
  with its hidden fields, the gold option, the current recommendation and its
  true graded state, the needs disclosed so far, the last reaction's state
  and delivery, the turn.
- :meth:`Hear2ActEnv.fork` -> an independent copy of the live episode.
  Stepping the fork leaves the original untouched; the fork shares
  everything immutable (the scenario bank, the spaces, the charset, the
  speech channel and its caches, the parse memo), so it costs the size of
  one episode's state, not of the 480 scenarios.

Neither is an observation: an agent given either is no longer playing the
benchmark. Evaluation code never calls them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .dialogue.engine import assess
from .scenarios import Scenario

# The immutable parts of an env that a fork shares with its parent.
# (_action_cache is a memo of pure parses: sharing it between forks is safe and saves a deep copy.)
SHARED_ATTRS = ("scenarios", "_by_id", "_tables", "_lines_head", "_action_cache", "observation_space",
                "action_space", "_charset", "speech", "state_channel", "spec")


@dataclass(frozen=True)
class GroundTruth:
    """The hidden truth of the env's current state (see the module docstring)."""

    scenario: Scenario = field(repr=False)  # with its hidden fields
    gold: int
    current: int | None  # the option the assistant currently recommends
    current_state: str | None  # the user's true graded state for it (hear2act_env.dialogue.engine.STATES)
    disclosed: frozenset[int]  # need levels disclosed so far
    state: str  # the last reaction's graded state (info["state"])
    delivery: str  # the last reaction's delivery label (what the audio and the tag carry)
    turn: int
    done: bool  # the user has accepted (the episode terminated)


def _require_reset(env: Any, what: str) -> None:
    if env.scenario is None:
        raise RuntimeError(f"{what}: the env has not been reset")


def ground_truth(env: Any) -> GroundTruth:
    """:class:`GroundTruth` of a reset :class:`~hear2act_env.env.Hear2ActEnv`."""
    _require_reset(env, "ground_truth")
    s, engine = env.scenario, env.engine
    current = engine.current
    return GroundTruth(s, s.gold, current, None if current is None else assess(s, current).state,
                       frozenset(engine.disclosed), env._last.state, env._last.delivery, engine.turn, engine.done)


def fork(env: Any) -> Any:
    """An independent copy of a reset env; stepping it leaves ``env`` untouched."""
    _require_reset(env, "fork")
    memo: dict[int, Any] = {}
    for name in SHARED_ATTRS:
        value = env.__dict__.get(name)
        if value is not None:
            memo[id(value)] = value
    memo[id(env.scenario)] = env.scenario
    for s in env.scenarios:
        memo[id(s)] = s
    return copy.deepcopy(env, memo)


__all__ = ["SHARED_ATTRS", "GroundTruth", "fork", "ground_truth"]
