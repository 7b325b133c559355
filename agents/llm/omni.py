"""``omni:PATH``: the Qwen2.5-Omni thinker (text out) with the user's 16 kHz audio in the messages.

For access ``A``, ``A+T`` and the first stage of ``T+S_hat``
(:class:`hear2act.agents.llm.perceiver_llm.LLMPerceiver`). PATH is a checkpoint
directory, e.g. a local copy of ``Qwen/Qwen2.5-Omni-7B``: the full model's
directory loads as its thinker (the talker and vocoder weights are skipped),
with the tokenizer, ``preprocessor_config.json`` and the chat template; no
``Qwen2_5OmniProcessor`` (torchvision) is needed. See ``docs/models.md``.
"""

from __future__ import annotations

from typing import ClassVar

from .audio_backend import AudioLLMBackend


class OmniBackend(AudioLLMBackend):
    prefix: ClassVar[str] = "omni"
    model_class: ClassVar[str] = "Qwen2_5OmniThinkerForConditionalGeneration"


__all__ = ["OmniBackend"]
