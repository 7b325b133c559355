"""What the env needs from the speech stack: audio per user turn, inferred state, affect label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..protocol import format_inferred
from .cache import AudioCache, default_cache_dir
from .renderers import Renderer, make_renderer


class SpeechChannel:
    """Renders (through the cache) and reads user turns for the audio access conditions.

    Heavy parts are built on first use. Pickling drops the cache (and with it
    the renderer's inference session), which is rebuilt on demand; a custom
    renderer object must itself be picklable.
    """

    def __init__(
        self,
        renderer: str | Renderer = "hibari",
        voice: str | None = None,
        cache_dir: str | Path | None = None,
        perceiver: Any = None,
        affect: Any = None,
    ) -> None:
        self.renderer_spec = renderer
        self.voice = voice
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._perceiver = perceiver
        self._affect = affect
        self._cache: AudioCache | None = None

    @property
    def renderer(self) -> Renderer:
        spec = self.renderer_spec
        return make_renderer(spec) if isinstance(spec, str) else spec

    @property
    def cache(self) -> AudioCache:
        if self._cache is None:
            self._cache = AudioCache(self.renderer, self.cache_dir, self.voice)
        return self._cache

    @property
    def perceiver(self) -> Any:
        if self._perceiver is None:
            from .perceiver import FeaturePerceiver

            self._perceiver = FeaturePerceiver()
            self._perceiver.adapt(self.renderer, self.voice)  # the shipped baseline for the trained voice
        return self._perceiver

    @property
    def affect(self) -> Any:
        if self._affect is None:
            from .affect import RuleAffect

            self._affect = RuleAffect(self.perceiver.baseline)
        return self._affect

    def audio(self, text: str, label: str, seed: int) -> np.ndarray:
        return self.cache.get(text, label, seed)

    def inferred_state(self, audio: np.ndarray, words: str, context: str) -> str:
        return format_inferred(self.perceiver.perceive(audio, 16_000, words, context).sentence)

    def affect_label(self, audio: np.ndarray) -> str:
        return self.affect.classify(audio, 16_000)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = None  # holds the renderer's inference session; rebuilt on use
        return state
