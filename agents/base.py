"""The Agent and Policy protocols and the records a policy reads and writes.

An :class:`Agent` plays one episode at a time (observation -> action text).
A :class:`Policy` acts for many episodes at once (``act_batch``), which is
what the batched rollout engine (:mod:`hear2act.eval.engine`) drives; every agent is
also a policy through :class:`hear2act.agents.adapter.RuleAgentPolicy`, and any model
is one through :class:`hear2act.agents.llm.policy.ModelPolicy`. The agent names live in
:mod:`hear2act.agents.registry` (``make_agent``), the policy factory in :mod:`hear2act.agents.factory`
(``make_policy``); this module imports neither, so both may import it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """Plays the assistant: sees an observation, returns one action in text form.

    ``reset`` receives the first observation and the reset ``info``; only agents
    that are explicitly privileged (the oracle) may read anything from ``info``
    beyond ``scenario_id``.
    """

    name: str

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None: ...

    def act(self, observation: dict[str, str]) -> str: ...


@dataclass
class PolicyInput:
    """What a policy sees for one pending decision of one episode."""

    observation: dict[str, Any]
    info_reset: dict[str, Any]  # {"scenario_id": ...} only; nothing private
    episode_seed: int
    turn: int  # agent turn index, 0 for the first decision after the opening
    key: str  # the episode's rollout id


@dataclass
class PolicyOutput:
    """A policy's decision: the text given to ``env.step`` and what produced it."""

    action: str  # text given to env.step (the answer part of a reasoning output)
    raw: str  # the model's raw output
    reasoning: str = ""  # the <think> part, if any
    prompt: list[dict[str, Any]] | None = None  # JSON-able messages (audio replaced by its hash)
    prompt_hash: str = ""
    error: str = ""  # non-empty => the episode fails with this reason (never scored)
    n_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    """Acts for many episodes at once: one output per input, in order.

    Optional: ``release(keys)`` (the engine calls it with the keys of finished
    episodes, so per-episode state can be dropped), ``prompt_version``
    (recorded in trajectories) and ``close()`` with ``__enter__``/``__exit__``
    (every entry point closes the policies it makes, :func:`close_policy`).
    """

    name: str

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]: ...


def close_policy(policy: object) -> None:
    """Close a policy that offers ``close()`` (model policies hold threads, connections, model memory)."""
    close = getattr(policy, "close", None)
    if callable(close):
        close()
