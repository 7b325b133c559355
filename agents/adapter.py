"""Every registered :class:`~hear2act.agents.base.Agent` as a batched :class:`~hear2act.agents.base.Policy`.

One agent instance per episode key (agents keep per-episode state); it is
reset on the episode's first decision and dropped when the engine releases
the episode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .base import Agent, PolicyInput, PolicyOutput, make_agent


class RuleAgentPolicy:
    """Runs a registered agent for each episode in flight."""

    def __init__(self, agent_name: str, *, access: str = "T", **agent_kwargs: Any) -> None:
        make_agent(agent_name, **agent_kwargs)  # fail now on a bad name or argument
        self.name = agent_name
        self.access = access
        self.agent_kwargs = agent_kwargs
        self._agents: dict[str, Agent] = {}

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        out = []
        for item in items:
            agent = self._agents.get(item.key)
            if agent is None or item.turn == 0:
                agent = self._agents[item.key] = make_agent(self.name, **self.agent_kwargs)
                agent.reset(item.observation, dict(item.info_reset))
            text = agent.act(item.observation)
            out.append(PolicyOutput(action=text, raw=text))
        return out

    def close(self) -> None:
        """Forget every episode (nothing else to release)."""
        self._agents.clear()

    def __enter__(self) -> RuleAgentPolicy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def release(self, keys: Iterable[str]) -> None:
        """Forget finished episodes."""
        for key in keys:
            self._agents.pop(key, None)
