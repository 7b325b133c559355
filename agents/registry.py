"""The agent registry: every built-in agent by name, and ``make_agent``.

Imports nothing of ``agents`` but the :class:`~hear2act.agents.base.Agent` protocol, so the
policy adapter (:mod:`hear2act.agents.adapter`) and the factory (:mod:`hear2act.agents.factory`)
can both use it without a circle.
"""

from __future__ import annotations

from typing import Any

from hear2act_env.registry import resolve

from .base import Agent

# name -> "module:Class"; imported on use so that heavy agents cost nothing until asked for.
AGENTS: dict[str, str] = {
    "random": "hear2act.agents.baselines:RandomAgent",
    "confirm": "hear2act.agents.baselines:ConfirmImmediatelyAgent",
    "options-value": "hear2act.agents.baselines:OptionsValueAgent",
    "transcript-rule": "hear2act.agents.rule:TranscriptRuleAgent",
    "state-rule": "hear2act.agents.rule:StateAwareRuleAgent",
    "oracle": "hear2act.agents.oracle:OracleAgent",
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Instantiate a registered agent by name."""
    return resolve(AGENTS, name, "agent")(**kwargs)
