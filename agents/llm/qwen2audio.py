"""``qwen2audio:PATH``: ``Qwen2AudioForConditionalGeneration`` (e.g. Qwen2-Audio-7B-Instruct) as a backend.

Same inputs as ``omni:`` (:mod:`hear2act.agents.llm.audio_inputs`). Qwen2-Audio's
encoder takes the extractor's full 30 s window (3000 mel frames), which the
``max_length`` padding provides. Checkpoints without a chat template get the
one ``Qwen2AudioProcessor`` falls back to.
"""

from __future__ import annotations

from typing import ClassVar

from .audio_backend import AudioLLMBackend

# Qwen2AudioProcessor.default_chat_template (transformers 5.x), verbatim.
QWEN2_AUDIO_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}"
    "{{ message['content'] }}<|im_end|>\n"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if 'audio' in content or 'audio_url' in content or message['type'] == 'audio' or content['type'] == 'audio' %}"
    "{% set audio_count.value = audio_count.value + 1 %}"
    "Audio {{ audio_count.value }}: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif 'text' in content %}"
    "{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}"
    "<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}"
    "<|im_start|>assistant\n"
    "{% endif %}"
)


class Qwen2AudioBackend(AudioLLMBackend):
    prefix: ClassVar[str] = "qwen2audio"
    model_class: ClassVar[str] = "Qwen2AudioForConditionalGeneration"
    default_template: ClassVar[str | None] = QWEN2_AUDIO_TEMPLATE


__all__ = ["QWEN2_AUDIO_TEMPLATE", "Qwen2AudioBackend"]
