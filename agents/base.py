"""The Agent and Policy protocols and the registries behind ``make_agent`` / ``make_policy``.

An :class:`Agent` plays one episode at a time (observation -> action text).
A :class:`Policy` acts for many episodes at once (``act_batch``), which is
what the batched rollout engine (:mod:`hear2act.eval.engine`) drives; every agent is
also a policy through :class:`hear2act.agents.adapter.RuleAgentPolicy`, and any model
is one through :class:`hear2act.agents.llm.policy.ModelPolicy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hear2act_env.registry import resolve


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


# name -> "module:Class"; imported on use so that heavy agents cost nothing until asked for.
AGENTS: dict[str, str] = {
    "random": "hear2act.agents.baselines:RandomAgent",
    "confirm": "hear2act.agents.baselines:ConfirmImmediatelyAgent",
    "options-value": "hear2act.agents.baselines:OptionsValueAgent",
    "transcript-rule": "hear2act.agents.rule:TranscriptRuleAgent",
    "state-rule": "hear2act.agents.rule:StateAwareRuleAgent",
    "oracle": "hear2act.agents.oracle:OracleAgent",
}
# Keyword arguments of make_policy that configure the policy, not the backend.
POLICY_KWARGS = ("assistant", "reasoning", "name", "record_prompts", "stop")


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Instantiate a registered agent by name."""
    return resolve(AGENTS, name, "agent")(**kwargs)


def make_policy(spec: str, *, access: str, **kwargs: Any) -> Policy:
    """A policy from a registered agent name (``state-rule``, ...) or a model spec.

    Model specs: ``hf:PATH``, ``openai:MODEL@URL``, ``omni:PATH``,
    ``qwen2audio:PATH`` (``scripted:FILE.json`` replays texts, for tests).
    Keyword arguments: ``assistant`` (``"spoken"``/``"text"``), ``reasoning``,
    ``name`` and ``record_prompts`` go to the policy, the rest to the agent or
    backend (e.g. ``max_new_tokens``, ``temperature``, ``concurrency``).
    """
    from .llm import BACKENDS, make_backend, split_spec

    if spec in AGENTS:
        from .adapter import RuleAgentPolicy

        return RuleAgentPolicy(spec, access=access, **kwargs)
    prefix, _ = split_spec(spec)
    if not prefix:
        raise ValueError(
            f"unknown agent {spec!r}; choose a registered agent {sorted(AGENTS)} "
            f"or a model spec PREFIX:TARGET with PREFIX in {sorted(BACKENDS)}"
        )
    from .llm.policy import ModelPolicy

    policy_kw = {k: kwargs.pop(k) for k in POLICY_KWARGS if k in kwargs}
    backend = make_backend(spec, **kwargs)
    policy_kw.setdefault("name", spec)
    return ModelPolicy(backend, access=access, **policy_kw)
