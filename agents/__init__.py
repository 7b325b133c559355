"""Agents that play the assistant: baselines and model-backed policies.

Every agent implements :class:`hear2act.agents.base.Agent` (observation -> action text)
and is registered by name in :data:`hear2act.agents.base.AGENTS`. Every agent and every
model (``hf:``, ``openai:``, ``omni:``, ``qwen2audio:``) is a
:class:`hear2act.agents.base.Policy` through :func:`make_policy`.
"""

from __future__ import annotations

from .base import AGENTS, Agent, Policy, PolicyInput, PolicyOutput, make_agent, make_policy

__all__ = ["AGENTS", "Agent", "Policy", "PolicyInput", "PolicyOutput", "make_agent", "make_policy"]
