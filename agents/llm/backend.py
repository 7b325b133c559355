"""The contract between policies and model backends.

A backend turns a batch of chat requests into one text each. It never raises
for a single bad call. Two kinds of trouble are kept apart:

* **no usable text** (``no_text`` set): the model answered, but with nothing
  to act on (``content: null``, alone or with ``reasoning_content`` or
  ``tool_calls``; content that is not text; a prompt over the context
  length). That is the model's answer: it is played as an invalid action and
  scored, exactly like ``content: ""``, so a model whose reasoning never
  finishes cannot drop its hardest episodes from the denominator.
* **infrastructure failure** (``error`` set): timeouts, connection errors,
  5xx/429 after retries. The engine marks that episode failed (never scored)
  and every table that reports a rate prints the failed count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class GenerationRequest:
    """One model call: chat messages (see :mod:`hear2act.agents.prompts`) and its seed."""

    messages: list[dict[str, Any]]
    seed: int  # per-call seed (derived from episode seed + turn) for sampled decoding
    key: str = ""  # episode/turn id, for logs and scripted replay
    stop: str = ""  # where the reply ends: "" never, "action-line" or "answer" (see hear2act.agents.llm.stopping)


@dataclass
class Generation:
    """A backend's answer to one request."""

    text: str  # raw model output ("" when failed)
    error: str = ""  # non-empty: the call failed for good (infrastructure; episode failed, never scored)
    n_tokens: int = 0
    # Non-empty: the server answered, but with no usable text (content null or not text, the prompt over the
    # context length). Played as an invalid action and scored, like any reply without an action tag.
    no_text: str = ""
    reasoning: str = ""  # server-side reasoning (vLLM's reasoning_content): recorded, never read for an action


@runtime_checkable
class Backend(Protocol):
    name: str

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]: ...


def call_seed(episode_seed: int, turn: int, stage: int = 0) -> int:
    """The seed of one model call: a stable hash of (episode seed, turn, stage), in [0, 2**31).

    ``stage`` separates the calls of one turn (0 = decision, 1 = the audio-LLM
    first stage of ``T+S_hat``), so they never share randomness.
    """
    digest = hashlib.blake2b(f"{int(episode_seed)}/{int(turn)}/{int(stage)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % 2**31


def text_only(messages: Sequence[dict[str, Any]], backend: str) -> list[dict[str, str]]:
    """The messages with str contents; a clear error when a message carries audio (a text-only backend)."""
    out = []
    for i, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, list):
            kinds = sorted({str(p.get("type")) for p in content if isinstance(p, dict)} - {"text"})
            if kinds:
                raise ValueError(
                    f"{backend} is a text-only backend but message {i} has {kinds} parts; "
                    "use omni:PATH / qwen2audio:PATH (or an audio-capable openai: server) for access A / A+T"
                )
            content = "".join(p.get("text", "") for p in content)
        if not isinstance(content, str):
            raise ValueError(f"message {i} content must be str or a list of parts, got {type(content).__name__}")
        out.append({"role": str(m.get("role", "user")), "content": content})
    return out
