"""Agents that play the assistant: baselines and model-backed policies.

Every agent implements :class:`agents.base.Agent` (observation -> action text)
and is registered by name in :data:`agents.base.AGENTS`.
"""

from __future__ import annotations

from .base import AGENTS, Agent, make_agent

__all__ = ["AGENTS", "Agent", "make_agent"]
