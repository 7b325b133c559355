"""The agent registry: every built-in agent by name, and ``make_agent``.

Imports nothing of ``agents`` but the :class:`~agents.base.Agent` protocol, so the
policy adapter (:mod:`agents.adapter`) and the factory (:mod:`agents.factory`)
can both use it without a circle.
"""

from __future__ import annotations

from typing import Any

from hear2act_env.registry import resolve

from .base import Agent

# name -> "module:Class"; imported on use so that heavy agents cost nothing until asked for.
AGENTS: dict[str, str] = {
    "random": "agents.baselines:RandomAgent",
    "confirm": "agents.baselines:ConfirmImmediatelyAgent",
    "options-value": "agents.baselines:OptionsValueAgent",
    "transcript-rule": "agents.rule:TranscriptRuleAgent",
    "state-rule": "agents.rule:StateAwareRuleAgent",
    "oracle": "agents.oracle:OracleAgent",
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Instantiate a registered agent by name."""
    return resolve(AGENTS, name, "agent")(**kwargs)
