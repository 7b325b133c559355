"""A backend that replays given texts: for tests, demos and debugging the engine without a model.

It is a real :class:`~hear2act.agents.llm.backend.Backend`: texts are looked up by the
request's episode key (the part of ``key`` before the last ``/``), popped in
order, then the ``default`` text repeats. ``fail`` maps episode keys to an
error, to exercise failed episodes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .backend import Generation, GenerationRequest


class ScriptedBackend:
    accepts_audio = True

    def __init__(
        self,
        script: Mapping[str, Sequence[str]] | Sequence[str] | Callable[[GenerationRequest], str] = (),
        default: str = "[ACTION: CONFIRM] Let's go with it.",
        fail: Mapping[str, str] | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.default = default
        self.fail = dict(fail or {})
        self._fn = script if callable(script) else None
        if isinstance(script, Mapping):
            self._per_episode = {k: list(v) for k, v in script.items()}
            self._shared: list[str] | None = None
        else:
            self._per_episode = {}
            self._shared = [] if callable(script) else list(script)
        self._pos: dict[str, int] = {}
        self.calls: list[list[GenerationRequest]] = []

    @classmethod
    def from_spec(cls, target: str, **kwargs: object) -> ScriptedBackend:
        """``scripted:FILE.json``: a list of texts (every episode replays it) or {episode_key: [texts]}."""
        path = Path(target)
        if not path.is_file():
            raise ValueError(f"scripted backend: no such file {target!r}")
        script = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(script, list | dict):
            raise ValueError(f"scripted backend: {target} must hold a JSON list of texts or an object of lists")
        return cls(script, name=f"scripted:{path.name}", **kwargs)  # type: ignore[arg-type]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.calls.append(list(requests))
        return [self._one(r) for r in requests]

    def _one(self, request: GenerationRequest) -> Generation:
        episode = request.key.rpartition("/")[0] or request.key
        if episode in self.fail:
            return Generation("", error=self.fail[episode])
        if self._fn is not None:
            return Generation(self._fn(request))
        texts = self._per_episode.get(episode, self._shared or [])
        i = self._pos.get(episode, 0)
        self._pos[episode] = i + 1
        return Generation(texts[i] if i < len(texts) else self.default)
