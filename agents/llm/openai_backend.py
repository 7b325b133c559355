"""``openai:MODEL@URL``: any OpenAI-compatible chat server (vLLM, SGLang, a hosted API).

Requests of one batch run concurrently (at most ``concurrency`` at a time)
on an ``AsyncOpenAI`` client that lives on a private event loop thread, so
``generate`` works from plain scripts and from inside notebooks alike. Every
call has a total timeout; timeouts, connection errors, 5xx, 429 and
malformed replies (not JSON, no choices) are retried with exponential
backoff, or after the server's ``Retry-After`` (seconds or an HTTP date,
capped at ``retry_after_max``) when it is longer; every wait gets up to 25 %
jitter drawn from a generator seeded by the request key and attempt (no
global RNG; waits never touch a trajectory). A call that still fails returns a
:class:`~hear2act.agents.llm.backend.Generation` whose ``error`` names the last
failure; the engine marks that episode failed (never scored). Other 4xx
(bad request, auth) are not retried.

A reply with no usable text is the model's answer, not a fault: ``content:
null`` (alone, with ``reasoning_content`` or with ``tool_calls``), content
holding no text parts, and a 400 "maximum context length" come back at once
(never resent: a greedy model would send the same null again) as a
``Generation`` with ``no_text`` set, which the policy plays as an invalid
action. Content sent as a list of parts is read as the join of its text
parts.

The backend (and :class:`~hear2act.agents.llm.policy.ModelPolicy`) is a context
manager; ``close()`` stops the loop thread, its executor and the HTTP client,
leaving no thread or file descriptor behind.

The API key is read from ``OPENAI_API_KEY`` (a local vLLM server accepts any;
``"EMPTY"`` is sent when it is unset). Audio parts go out as ``input_audio``
content parts holding base64 WAV, which servers serving audio models accept
(vLLM with Qwen2.5-Omni); a text-only server rejects them with a 4xx.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import io
import json
import os
import random
import threading
import time
from collections.abc import Coroutine, Sequence
from typing import Any

import numpy as np

from .backend import Generation, GenerationRequest

INSTALL_HINT = 'the openai: backend needs the openai package: pip install "hear2act[llm]"'
RETRY_STATUS = frozenset({408, 409, 425, 429})
# Phrases of a "prompt too long" 400 (vLLM, OpenAI, SGLang): the model cannot answer, which is an invalid action.
CONTEXT_PHRASES = ("maximum context length", "context_length_exceeded", "context length", "too many tokens",
                   "prompt is too long")
JITTER = 0.25
_sleep = asyncio.sleep  # tests replace it to record the waits


class MalformedReply(Exception):
    """The server answered 2xx but not with a chat completion holding text."""


def parse_target(target: str) -> tuple[str, str]:
    """``"MODEL@URL"`` -> (model, url); the URL may be omitted when ``OPENAI_BASE_URL`` is set."""
    model, sep, url = target.rpartition("@")
    if not sep or not url.startswith(("http://", "https://")):
        model, url = target, os.environ.get("OPENAI_BASE_URL", "")
        if not url:
            raise ValueError(f"openai spec {target!r} must be MODEL@URL (e.g. 'Qwen/Qwen2.5-7B-Instruct@"
                             "http://localhost:8000/v1') or OPENAI_BASE_URL must be set")
    if not model:
        raise ValueError(f"openai spec {target!r} names no model before '@'")
    return model, url


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server, concurrent with retries."""

    accepts_audio = True

    def __init__(self, model: str, base_url: str, *, api_key: str | None = None, concurrency: int = 8,
                 timeout: float = 60.0, max_retries: int = 4, backoff: float = 0.5, backoff_max: float = 8.0,
                 max_new_tokens: int = 256, temperature: float = 0.0, top_p: float = 1.0, send_seed: bool = True,
                 extra_body: dict[str, Any] | None = None, name: str | None = None,
                 retry_after_max: float = 30.0) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - exercised only without the extra
            raise ImportError(f"{INSTALL_HINT} ({e})") from e
        for field, value, low in (("concurrency", concurrency, 1), ("max_retries", max_retries, 0),
                                  ("max_new_tokens", max_new_tokens, 1)):
            if value < low:
                raise ValueError(f"{field} must be >= {low}, got {value}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if not retry_after_max >= 0:
            raise ValueError(f"retry_after_max must be >= 0 seconds, got {retry_after_max}")
        self.retry_after_max = float(retry_after_max)
        self._openai = openai
        self.model = model
        self.base_url = base_url
        self.name = name or f"openai:{model}"
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.backoff_max = float(backoff_max)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.send_seed = send_seed
        self.extra_body = dict(extra_body or {})
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, target: str, **kwargs: Any) -> OpenAIBackend:
        model, url = parse_target(target)
        return cls(model, url, **kwargs)

    # -- public ----------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        if not requests:
            return []
        payloads = [to_openai_messages(r.messages) for r in requests]
        return self._run(self._all(requests, payloads))

    def close(self) -> None:
        """Close the HTTP client, the loop's executor and the loop, and join its thread (idempotent)."""
        with self._lock:
            loop, self._loop = self._loop, None
            thread, self._thread = self._thread, None
        if loop is None:
            return
        client, self._client = self._client, None
        try:
            if client is not None:
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=10)
            asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result(timeout=10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=10)
            if not loop.is_running():
                loop.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, list[Generation]]) -> list[Generation]:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="openai-backend", daemon=True)
                self._thread.start()
                self._loop = loop
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    async def _all(self, requests: Sequence[GenerationRequest], payloads: list[list[dict[str, Any]]]
                   ) -> list[Generation]:
        if self._client is None:
            self._client = self._openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                                    timeout=self.timeout)
        gate = asyncio.Semaphore(self.concurrency)
        return list(await asyncio.gather(*(self._one(r, p, gate) for r, p in zip(requests, payloads, strict=True))))

    async def _one(self, request: GenerationRequest, messages: list[dict[str, Any]],
                   gate: asyncio.Semaphore) -> Generation:
        last = ""
        wait = 0.0
        for attempt in range(self.max_retries + 1):
            if attempt:
                await _sleep(self._wait(request, attempt, wait))
            async with gate:
                try:
                    reply = await asyncio.wait_for(self._create(request, messages), timeout=self.timeout)
                    text, no_text, reasoning = read_completion(reply)
                    return Generation(text, n_tokens=_completion_tokens(reply), no_text=no_text, reasoning=reasoning)
                except Exception as e:  # classified below: retry, no text, or give up
                    verdict, last = self._classify(e)
                    if verdict == "no_text":
                        return Generation("", no_text=last)
                    if verdict == "fail":
                        return Generation("", error=f"{self.name} {request.key}: {last}")
                    wait = _retry_after(e)
        return Generation("", error=f"{self.name} {request.key}: failed after {self.max_retries + 1} attempts: {last}")

    def _wait(self, request: GenerationRequest, attempt: int, retry_after: float) -> float:
        """Seconds before ``attempt``: the longer of the backoff and the server's Retry-After (capped), + jitter."""
        base = max(min(self.backoff_max, self.backoff * 2 ** (attempt - 1)), min(retry_after, self.retry_after_max))
        jitter = random.Random(f"{request.key}/{request.seed}/{attempt}").random()  # seeded: no global RNG
        return base * (1.0 + JITTER * jitter)

    async def _create(self, request: GenerationRequest, messages: list[dict[str, Any]]) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": self.max_new_tokens,
                                  "temperature": self.temperature, "top_p": self.top_p}
        if self.send_seed:
            kwargs["seed"] = int(request.seed)
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        return await self._client.chat.completions.create(**kwargs)

    def _classify(self, e: Exception) -> tuple[str, str]:
        """(``"retry"`` | ``"fail"`` | ``"no_text"``, description) of a failed call."""
        o = self._openai
        if isinstance(e, asyncio.TimeoutError | o.APITimeoutError):
            return "retry", f"timeout after {self.timeout:g}s"
        if isinstance(e, o.APIConnectionError):
            return "retry", f"connection error: {e}"
        if isinstance(e, o.APIStatusError):
            status = e.status_code
            detail = f"HTTP {status}: {str(e)[:200]}"
            if status == 400 and any(p in str(e).lower() for p in CONTEXT_PHRASES):
                return "no_text", f"prompt over the model's context length ({detail})"
            return ("retry" if status >= 500 or status in RETRY_STATUS else "fail"), detail
        if isinstance(e, MalformedReply | o.APIResponseValidationError | json.JSONDecodeError | UnicodeDecodeError):
            return "retry", f"malformed reply: {str(e)[:200]}"
        raise e  # a bug, not a server fault


def _retry_after(e: Exception) -> float:
    """The seconds a 429/503 asks to wait (``Retry-After``: seconds or an HTTP date); 0 when absent or unreadable."""
    response = getattr(e, "response", None)
    if getattr(e, "status_code", None) not in (429, 503) or response is None:
        return 0.0
    value = str(response.headers.get("retry-after", "")).strip()[:64]
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return 0.0
        if when is None:
            return 0.0
        seconds = when.timestamp() - time.time()
    return seconds if 0.0 < seconds < float("inf") else 0.0


def completion_text(reply: Any) -> str:
    """The first choice's text ("" when it holds none); :class:`MalformedReply` when not a chat completion."""
    return read_completion(reply)[0]


def read_completion(reply: Any) -> tuple[str, str, str]:
    """(text, why there is no text or "", server-side reasoning) of the first choice.

    :class:`MalformedReply` (retried) when the reply is not a chat completion at all.
    """
    if isinstance(reply, str | bytes):
        raise MalformedReply(f"server replied with non-JSON text: {reply[:80]!r}")
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("reply has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedReply("choice 0 has no message")
    get = message.get if isinstance(message, dict) else lambda k: getattr(message, k, None)
    content, reasoning = get("content"), get("reasoning_content") or get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    if isinstance(content, str):
        return content, "", reasoning
    if isinstance(content, list):
        texts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in content]
        texts = [t for t in texts if isinstance(t, str)]
        if texts:
            return "".join(texts), "", reasoning
        return "", f"content is a list of {len(content)} part(s) with no text", reasoning
    extras = [k for k in ("reasoning_content", "tool_calls") if get(k)]
    why = f"content is {'null' if content is None else type(content).__name__}"
    return "", why + (f" (with {' and '.join(extras)})" if extras else ""), reasoning


def _completion_tokens(reply: Any) -> int:
    usage = getattr(reply, "usage", None)
    value = getattr(usage, "completion_tokens", 0) if usage is not None else 0
    return int(value) if isinstance(value, int) else 0


def to_openai_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages in the OpenAI wire format: audio parts become base64 WAV ``input_audio`` parts."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [_wire_part(p) for p in content]
        out.append({"role": m.get("role", "user"), "content": content})
    return out


def _wire_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") != "audio":
        return dict(part)
    return {"type": "input_audio",
            "input_audio": {"data": wav_base64(part["audio"], int(part.get("sampling_rate", 16_000))),
                            "format": "wav"}}


def wav_base64(audio: Any, sampling_rate: int) -> str:
    """16-bit PCM mono WAV of a float waveform, base64-encoded."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0), sampling_rate, format="WAV",
             subtype="PCM_16")
    return base64.b64encode(buf.getvalue()).decode("ascii")
