"""The Agent protocol and the name -> agent registry."""

from __future__ import annotations

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


# name -> "module:Class"; imported on use so that heavy agents cost nothing until asked for.
AGENTS: dict[str, str] = {
    "random": "agents.baselines:RandomAgent",
    "confirm": "agents.baselines:ConfirmImmediatelyAgent",
    "transcript-rule": "agents.rule:TranscriptRuleAgent",
    "state-rule": "agents.rule:StateAwareRuleAgent",
    "oracle": "agents.oracle:OracleAgent",
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Instantiate a registered agent by name."""
    return resolve(AGENTS, name, "agent")(**kwargs)
