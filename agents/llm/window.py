"""How much of a prompt a sliding-window model can see, and cutting prompts to it.

A causal LM whose **every** layer attends through a sliding window of ``W``
positions (``kv > q - W``, transformers' ``sliding_window_overlay``: the
position itself and ``W - 1`` before it) passes information at most ``W - 1``
positions forward per layer. After ``L`` such layers the next token's logits
depend on the last ``L * (W - 1) + 1`` prompt tokens and on nothing before
them: the rest of a 1,300-token P6 prompt is computed, at every turn of every
episode and again in every GRPO forward, and thrown away. The windowed tiny
LM of ``benchmarks/grpo_learning.py`` (2 layers, 64-token window) needs the
last 127 tokens of each prompt.

:func:`clip_prompt` keeps those tokens. The answer is the same function of
the same tokens; the positions of the kept tokens start at 0 instead of
~1,200, which rotary embeddings (Qwen2's, Llama's) turn into the same
attention scores up to float rounding (``tests/test_window_clip.py`` measures
the logits against the full prompt). Models with a full-attention layer, or
none configured, get ``None`` from :func:`receptive_field` and are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def receptive_field(config: Any) -> int | None:
    """The number of trailing prompt tokens that can reach the next token, or ``None`` (all of them).

    ``config`` is a transformers config (a multimodal one's text config is read). Only a model whose every layer
    is ``"sliding_attention"`` has a bound; one full-attention layer sees the whole prompt.

    >>> from types import SimpleNamespace as C
    >>> receptive_field(C(layer_types=["sliding_attention"] * 2, sliding_window=64))
    127
    >>> receptive_field(C(layer_types=["sliding_attention", "full_attention"], sliding_window=64)) is None
    True
    >>> receptive_field(C(layer_types=None, sliding_window=None)) is None
    True
    """
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    types = getattr(text, "layer_types", None)
    window = getattr(text, "sliding_window", None)
    if not types or not window or any(t != "sliding_attention" for t in types):
        return None
    return len(types) * (int(window) - 1) + 1


def clip_prompt(ids: Sequence[T], field: int | None) -> list[T]:
    """The last ``field`` tokens of ``ids`` (all of them when ``field`` is ``None`` or the prompt is shorter).

    >>> clip_prompt(list(range(10)), 3), clip_prompt([1, 2], 3), clip_prompt([1, 2], None)
    ([7, 8, 9], [1, 2], [1, 2])
    """
    ids = list(ids)
    return ids if field is None or len(ids) <= field else ids[len(ids) - field:]


def model_field(model: Any) -> int | None:
    """:func:`receptive_field` of a loaded model (``None`` when it has no config)."""
    config = getattr(model, "config", None)
    return None if config is None else receptive_field(config)


__all__ = ["clip_prompt", "model_field", "receptive_field"]
