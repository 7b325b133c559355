"""Content-addressed audio cache for rendered user turns.

Key = sha256 of (renderer name, renderer version, voice, text, delivery
label, seed); value = the 16 kHz float32 observation waveform. Each file is
``H2A1`` + sample rate + sample count + sha256 of the payload + payload,
written to a temporary file and renamed into place (atomic on POSIX), so a
reader never sees half a file. A file whose header, length or checksum does
not match is treated as missing: it is re-rendered and replaced, never
served. ``stats`` counts hits, misses and repairs.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .renderers import Renderer, to_16k

MAGIC = b"H2A1"
HEADER = struct.Struct("<4sIQ32s")  # magic, sample rate, n samples, sha256(payload)
OBS_RATE = 16_000


def default_cache_dir() -> Path:
    """``$HEAR2ACT_CACHE`` or ``~/.cache/hear2act/audio``."""
    env = os.environ.get("HEAR2ACT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "hear2act" / "audio"


def cache_key(renderer: str, version: str, voice: str | None, text: str, label: str, seed: int) -> str:
    blob = json.dumps([renderer, version, voice or "", text, label, int(seed)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def encode(wave: np.ndarray, rate: int = OBS_RATE) -> bytes:
    payload = np.ascontiguousarray(wave, dtype="<f4").tobytes()
    return HEADER.pack(MAGIC, rate, len(payload) // 4, hashlib.sha256(payload).digest()) + payload


def decode(blob: bytes) -> np.ndarray | None:
    """The waveform, or ``None`` when the bytes are not a complete, intact cache entry."""
    if len(blob) < HEADER.size:
        return None
    magic, rate, n, digest = HEADER.unpack_from(blob)
    payload = blob[HEADER.size:]
    if magic != MAGIC or rate != OBS_RATE or len(payload) != 4 * n:
        return None
    if hashlib.sha256(payload).digest() != digest:
        return None
    return np.frombuffer(payload, dtype="<f4").astype(np.float32)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    repaired: int = 0  # corrupted or truncated files detected and re-rendered


@dataclass
class AudioCache:
    """Renders through ``renderer`` once per distinct key; serves from disk (and memory) after."""

    renderer: Renderer
    root: Path = field(default_factory=default_cache_dir)
    voice: str | None = None
    memory_items: int = 256
    stats: CacheStats = field(default_factory=CacheStats)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()

    def key(self, text: str, label: str, seed: int) -> str:
        r = self.renderer
        return cache_key(r.name, r.version, self.voice, text, label, seed)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.h2a"

    def get(self, text: str, label: str, seed: int) -> np.ndarray:
        """The 16 kHz waveform for this utterance (rendered on a miss)."""
        key = self.key(text, label, seed)
        wave = self._memory.get(key)
        if wave is not None:
            self._memory.move_to_end(key)
            self.stats.hits += 1
            return wave
        path = self.path(key)
        try:
            wave = decode(path.read_bytes())
            if wave is None:
                self.stats.repaired += 1
        except FileNotFoundError:
            wave = None
        if wave is None:
            self.stats.misses += 1
            wave = to_16k(self.renderer.render(text, label, self.voice, seed), self.renderer.sample_rate)
            self._write(path, wave)
        else:
            self.stats.hits += 1
        wave.setflags(write=False)
        self._memory[key] = wave
        if len(self._memory) > self.memory_items:
            self._memory.popitem(last=False)
        return wave

    def _write(self, path: Path, wave: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".h2a")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(encode(wave))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
