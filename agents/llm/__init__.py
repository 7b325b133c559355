"""Model backends for :func:`hear2act.agents.make_policy`: local transformers, OpenAI-compatible servers, audio LLMs.

Registered by spec prefix (``hf:PATH``, ``openai:MODEL@URL``, ``omni:PATH``,
``qwen2audio:PATH``) and imported on use, so ``import agents`` never pulls in
torch or openai.
"""

from __future__ import annotations

from typing import Any

from hear2act_env.registry import resolve

from .backend import Backend, Generation, GenerationRequest, call_seed
from .reasoning import split_reasoning

BACKENDS: dict[str, str] = {
    "hf": "hear2act.agents.llm.hf:HFBackend",
    "openai": "hear2act.agents.llm.openai_backend:OpenAIBackend",
    "omni": "hear2act.agents.llm.omni:OmniBackend",
    "qwen2audio": "hear2act.agents.llm.qwen2audio:Qwen2AudioBackend",
    "scripted": "hear2act.agents.llm.scripted:ScriptedBackend",
}


def split_spec(spec: str) -> tuple[str, str]:
    """``"hf:/models/x"`` -> ``("hf", "/models/x")``; ``("", spec)`` when there is no backend prefix."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in BACKENDS:
        return prefix, rest
    return "", spec


def make_backend(spec: str, **kwargs: Any) -> Backend:
    """Build the backend named by ``spec`` (``prefix:target``).

    The class's ``from_spec(target, **kwargs)`` is used when it has one, else ``cls(target, **kwargs)``.
    """
    prefix, target = split_spec(spec)
    if not prefix:
        raise ValueError(f"backend spec {spec!r} needs one of the prefixes {sorted(BACKENDS)} (e.g. 'hf:/path')")
    if not target:
        raise ValueError(f"backend spec {spec!r} names no model after {prefix + ':'!r}")
    cls = resolve(BACKENDS, prefix, "backend")
    factory = getattr(cls, "from_spec", cls)
    return factory(target, **kwargs)


__all__ = ["BACKENDS", "Backend", "Generation", "GenerationRequest", "call_seed", "make_backend", "split_reasoning",
           "split_spec"]
