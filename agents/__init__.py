"""Agents that play the assistant: baselines and model-backed policies.

Every agent implements :class:`hear2act.agents.base.Agent` (observation -> action text)
and is registered by name in :data:`hear2act.agents.registry.AGENTS`. Every agent and every
model (``hf:``, ``openai:``, ``omni:``, ``qwen2audio:``) is a
:class:`hear2act.agents.base.Policy` through :func:`make_policy`.
"""

from __future__ import annotations

from .base import Agent, Policy, PolicyInput, PolicyOutput
from .factory import make_policy
from .registry import AGENTS, make_agent

__all__ = ["AGENTS", "Agent", "Policy", "PolicyInput", "PolicyOutput", "make_agent", "make_policy"]
