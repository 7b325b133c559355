"""``make_policy``: a batched :class:`~hear2act.agents.base.Policy` from an agent name or a model spec.

The top of ``agents``: it imports the registry, the rule-agent adapter and the
model policy; none of them imports it.
"""

from __future__ import annotations

from typing import Any

from .base import Policy
from .registry import AGENTS

# Keyword arguments of make_policy that configure the policy, not the backend.
POLICY_KWARGS = ("assistant", "reasoning", "name", "record_prompts", "stop")


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
