"""An audio LLM as the env's :class:`~hear2act_env.speech.perceiver.Perceiver`: the first stage of ``T+S_hat``.

The paper's two-stage condition (cards P6c, P6d): an audio LLM hears the
current user turn in its dialogue context and writes one short sentence
about whether the current recommendation is resolved; the decision stage
sees only that sentence (``AUDIO-INFERRED STATE: ...``) with the transcript.
Plugging the audio LLM in as the env's ``perceiver=`` keeps the two-stage
condition the env's own: the same observation key, the same place in the
step, whichever policy decides.

    env = gym.make("Hear2Act-Prosody-v5", access="T+S_hat",
                   perceiver=make_perceiver("omni:/models/Qwen2.5-Omni-7B"))

``hear2act rollout --agent hf:... --access T+S_hat --perceiver omni:PATH``
does the same from the command line.
"""

from __future__ import annotations

import hashlib
import re
import string
import unicodedata
from typing import Any

import numpy as np

from hear2act_env.access import get, name_with
from hear2act_env.speech.perceiver import Perception

from .backend import Backend, GenerationRequest
from .reasoning import split_reasoning

MAX_SENTENCE = 400  # characters of the reading kept for the decision stage
_PRINTABLE = frozenset(string.printable) - frozenset("\x0b\x0c\r\n\t")
_UNRESOLVED = re.compile(r"\b(unresolved|not (?:yet |fully )?resolved|remains? open)\b", re.I)
_RESOLVED = re.compile(r"\bresolved\b", re.I)
_GRADED = re.compile(r"\b(reluctant|concern|rejection)\b", re.I)


class PerceptionError(RuntimeError):
    """The audio LLM's call failed for good; the episode cannot show an inferred state."""


class LLMPerceiver:
    """P6c through any audio-capable backend (``omni:``, ``qwen2audio:``, an audio ``openai:`` server).

    ``seed`` is mixed with a hash of the clip and its context into each
    call's seed, so sampled readings are reproducible and the same turn
    always gets the same reading.
    """

    def __init__(self, backend: Backend, *, seed: int = 0, name: str | None = None) -> None:
        if getattr(backend, "accepts_audio", True) is False:
            raise ValueError(f"backend {backend.name!r} is text-only; the perceiver needs an audio model "
                             "(omni:PATH, qwen2audio:PATH or an audio-capable openai: server)")
        self.backend = backend
        self.seed = int(seed)
        self.name = name or f"llm-perceiver[{backend.name}]"

    def close(self) -> None:
        """Release the backend (threads, connections) where it offers ``close``."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()

    def messages(self, audio: np.ndarray, sr: int, context: str) -> list[dict[str, Any]]:
        from hear2act.agents.prompts import build_infer_messages

        return build_infer_messages(context, audio, sr)

    def call_seed(self, audio: np.ndarray, context: str) -> int:
        h = hashlib.blake2b(digest_size=8)
        h.update(str(self.seed).encode())
        h.update(np.ascontiguousarray(audio, dtype=np.float32).tobytes())
        h.update(context.encode())
        return int.from_bytes(h.digest(), "big") % 2**31

    def perceive(self, audio: np.ndarray, sr: int = 16_000, words: str = "", context: str = "") -> Perception:
        """One P6c call on the current user turn (``context``: the dialogue so far, this turn included)."""
        audio = np.asarray(audio, dtype=np.float32)
        request = GenerationRequest(self.messages(audio, sr, context), seed=self.call_seed(audio, context),
                                    key=f"{self.name}/{len(context.splitlines())}")
        (gen,) = self.backend.generate([request])
        if gen.error:
            raise PerceptionError(f"{self.name}: {gen.error}")
        sentence = reading(gen.text)
        return Perception(sentence, graded_state(sentence), status_of(sentence), float("nan"), ())


def reading(text: str) -> str:
    """The model's answer as one line of printable text (reasoning dropped, at most MAX_SENTENCE characters)."""
    _, answer = split_reasoning(text)
    answer = unicodedata.normalize("NFKD", answer).encode("ascii", "ignore").decode()
    answer = " ".join(answer.split())
    return "".join(c if c in _PRINTABLE else "?" for c in answer)[:MAX_SENTENCE]


def status_of(sentence: str) -> str:
    """``resolved`` / ``unresolved`` as the sentence states it, else ``unknown`` (not scored, only recorded)."""
    if _UNRESOLVED.search(sentence):
        return "unresolved"
    return "resolved" if _RESOLVED.search(sentence) else "unknown"


def graded_state(sentence: str) -> str:
    m = _GRADED.search(sentence)
    if m:
        return m.group(1).lower()
    return "resolved" if status_of(sentence) == "resolved" else "unknown"


DEFAULT_PERCEIVER = "feature"  # the env's own CPU perceiver, enrolled on the voice
PERCEIVER_MAX_NEW_TOKENS = 64  # P6c asks for one short sentence


def make_perceiver(spec: str, *, seed: int = 0, **backend_kwargs: Any) -> LLMPerceiver:
    """An :class:`LLMPerceiver` on the audio backend named by ``spec`` (``omni:PATH``, ``qwen2audio:PATH``, ...)."""
    from . import make_backend, split_spec

    if not split_spec(spec)[0]:
        raise ValueError(f"unknown perceiver {spec!r}: use {DEFAULT_PERCEIVER!r} (the env's CPU perceiver) or an "
                         "audio backend spec (omni:PATH, qwen2audio:PATH, openai:MODEL@URL)")
    backend_kwargs.setdefault("max_new_tokens", PERCEIVER_MAX_NEW_TOKENS)
    return LLMPerceiver(make_backend(spec, **backend_kwargs), seed=seed)


def perceiver_env_kwargs(spec: str | None, access: str, *, seed: int = 0, **backend_kwargs: Any) -> dict[str, Any]:
    """Env keyword arguments for ``--perceiver SPEC``: ``{}`` for the default, ``{"perceiver": ...}`` otherwise."""
    if spec is None:
        return {}
    if get(access).state_tag != "inferred":
        inferred = name_with(state_tag="inferred")
        raise ValueError(f"--perceiver is the first stage of access {inferred}; access {access!r} shows no inferred "
                         "state")
    if spec == DEFAULT_PERCEIVER:
        return {}
    return {"perceiver": make_perceiver(spec, seed=seed, **backend_kwargs)}


__all__ = ["DEFAULT_PERCEIVER", "LLMPerceiver", "PerceptionError", "make_perceiver", "perceiver_env_kwargs",
           "reading", "status_of"]
