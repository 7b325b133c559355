"""A model as a :class:`~hear2act.agents.base.Policy`: prompts in, one backend batch call, actions out.

For each pending decision the policy builds the P6a-family messages from the
observation (:mod:`hear2act.agents.prompts`), asks the backend for all of them in one
call, splits CESAR-style reasoning from the answer, and returns the answer
as the action. The env's parser reads the action; a reply it cannot parse,
or one with no text at all (``Generation.no_text``), is an invalid action
(counted and scored), while a call that failed for good returns ``error``
and the engine marks the episode failed. A policy is a context manager;
``close()`` releases its backend.

``stop`` (default ``"auto"``: ``"answer"`` with reasoning, else
``"action-line"``; ``""`` never) says where a reply ends; backends that can
stop early do, and every reply is cut there (:mod:`hear2act.agents.llm.stopping`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import PolicyInput, PolicyOutput
from ..prompts import AUDIO_ACCESS, PROMPT_VERSION, build_messages, domain_from_scenario_id
from .backend import Backend, GenerationRequest, call_seed
from .reasoning import split_reasoning
from .stopping import STOP_RULES, truncate


def decision_messages(item: PolicyInput, access: str, *, assistant: str, reasoning: bool) -> list[dict[str, Any]]:
    """The P6-family prompt of one pending decision: its observation and public scenario id only.

    The one prompt builder of every model policy (evaluation and GRPO's on-policy episodes).
    """
    domain = domain_from_scenario_id(str(item.info_reset.get("scenario_id", "")))
    return build_messages(item.observation, access, assistant=assistant, domain=domain, reasoning=reasoning)


class ModelPolicy:
    """Any :class:`~hear2act.agents.llm.backend.Backend` playing the assistant under one access condition."""

    def __init__(self, backend: Backend, *, access: str, assistant: str = "spoken", reasoning: bool = False,
                 name: str | None = None, record_prompts: bool = True, stop: str = "auto") -> None:
        if access in AUDIO_ACCESS and getattr(backend, "accepts_audio", True) is False:
            raise ValueError(f"backend {backend.name!r} is text-only; access {access!r} needs an audio model "
                             "(omni:PATH, qwen2audio:PATH or an audio-capable openai: server)")
        self.backend = backend
        self.access = access
        self.assistant = assistant
        self.reasoning = reasoning
        self.name = name or backend.name
        self.record_prompts = record_prompts
        self.prompt_version = PROMPT_VERSION
        if stop == "auto":
            stop = "answer" if reasoning else "action-line"
        if stop not in STOP_RULES:
            raise ValueError(f"stop must be 'auto' or one of {STOP_RULES}, got {stop!r}")
        self.stop = stop

    def messages(self, item: PolicyInput) -> list[dict[str, Any]]:
        """The prompt for one decision (observation + public scenario id only)."""
        return decision_messages(item, self.access, assistant=self.assistant, reasoning=self.reasoning)

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        if not items:
            return []
        prompts = [self.messages(item) for item in items]
        requests = [GenerationRequest(messages=m, seed=call_seed(item.episode_seed, item.turn),
                                      key=f"{item.key}/{item.turn}", stop=self.stop)
                    for m, item in zip(prompts, items, strict=True)]
        generations = self.backend.generate(requests)
        if len(generations) != len(requests):
            raise RuntimeError(f"backend {self.backend.name!r} returned {len(generations)} generations "
                               f"for {len(requests)} requests")
        out = []
        for messages, gen in zip(prompts, generations, strict=True):
            record = jsonable_messages(messages)
            text = truncate(gen.text, self.stop)
            reasoning, answer = split_reasoning(text) if not gen.error else ("", "")
            if gen.reasoning and not reasoning:
                reasoning = gen.reasoning  # the server's reasoning channel: recorded, never acted on
            out.append(PolicyOutput(
                action=answer, raw=text, reasoning=reasoning,
                prompt=record if self.record_prompts else None, prompt_hash=prompt_hash(record),
                error=gen.error, n_tokens=gen.n_tokens, extra={"no_text": gen.no_text} if gen.no_text else {},
            ))
        return out

    def close(self) -> None:
        """Release the backend (its threads, connections, model memory where it offers ``close``)."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> ModelPolicy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def jsonable_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with every audio array replaced by its SHA-256, its length and sampling rate.

    The audio itself is rebuilt from the trajectory (words, delivery, audio seed), so the record stays small.
    """
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [_jsonable_part(p) for p in content]
        out.append({**m, "content": content})
    return out


def _jsonable_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") != "audio":
        return dict(part)
    audio = np.ascontiguousarray(part["audio"], dtype=np.float32)
    return {"type": "audio", "sha256": hashlib.sha256(audio.tobytes()).hexdigest(), "samples": int(audio.size),
            "sampling_rate": int(part.get("sampling_rate", 16_000))}


def prompt_hash(record: Sequence[dict[str, Any]]) -> str:
    """SHA-256 (first 16 hex digits) of the canonical JSON of a recorded prompt."""
    blob = json.dumps(list(record), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "backslashreplace")).hexdigest()[:16]
