"""Content-addressed audio cache for rendered user turns.

Key = sha256 of (renderer name, renderer version, voice, text, delivery
label, seed); value = the 16 kHz float32 observation waveform. Each file is
``H2A2`` + sample rate + sample count + metadata length + sha256 of
(metadata + payload), then the metadata (JSON: the entry's own key,
renderer, version, voice) and the payload. Files are written to a temporary
file and renamed into place (atomic on POSIX), so a reader never sees half a
file. On read, a file whose header, length or checksum does not match, or
whose metadata names another key (say, a valid entry copied over this
entry's path), is treated as missing: it is re-rendered and replaced, never
served. ``stats`` counts hits, misses and repairs.

A cache that cannot be read or written (read-only folder, full disk,
``$HEAR2ACT_CACHE`` pointing at a file, a folder where an entry should be)
never stops an episode: the audio is rendered without caching and a warning
is issued once per cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import tempfile
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .renderers import Renderer, to_16k

MAGIC = b"H2A2"
HEADER = struct.Struct("<4sIQI32s")  # magic, sample rate, n samples, metadata bytes, sha256(metadata + payload)
OBS_RATE = 16_000


def cache_root() -> Path:
    """The one meaning of ``$HEAR2ACT_CACHE``: the root of every hear2act cache (default ``~/.cache/hear2act``).

    Under it: ``audio/`` (rendered speech, this module) and ``models/`` (the semantic matcher's extracted
    checkpoint, :mod:`hear2act_env.dialogue.semantic`).
    """
    env = os.environ.get("HEAR2ACT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "hear2act"


def partial_dir(target: Path) -> Path:
    """This process's scratch folder for building ``target`` (renamed into place by :func:`publish_dir`)."""
    return target.with_name(f"{target.name}.partial-{os.getpid()}")


def publish_dir(partial: Path, target: Path) -> Path:
    """Move a finished ``partial`` folder to ``target`` in one rename; if another process published it first,
    keep that copy and drop ours. Returns ``target``."""
    try:
        partial.rename(target)
    except OSError:  # another process finished first: keep its copy
        shutil.rmtree(partial, ignore_errors=True)
    return target


def default_cache_dir() -> Path:
    """The audio cache: ``$HEAR2ACT_CACHE/audio`` (default ``~/.cache/hear2act/audio``)."""
    return cache_root() / "audio"


def cache_key(renderer: str, version: str, voice: str | None, text: str, label: str, seed: int) -> str:
    blob = json.dumps([renderer, version, voice or "", text, label, int(seed)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "backslashreplace")).hexdigest()


def encode(wave: np.ndarray, rate: int = OBS_RATE, meta: dict[str, Any] | None = None) -> bytes:
    """One cache file: header, metadata (``meta`` as JSON; the entry's key and renderer) and payload."""
    payload = np.ascontiguousarray(wave, dtype="<f4").tobytes()
    info = json.dumps(meta or {}, ensure_ascii=False, sort_keys=True).encode("utf-8", "backslashreplace")
    digest = hashlib.sha256(info + payload).digest()
    return HEADER.pack(MAGIC, rate, len(payload) // 4, len(info), digest) + info + payload


def decode(blob: bytes, key: str | None = None) -> np.ndarray | None:
    """The waveform, or ``None`` when the bytes are not a complete, intact entry (for ``key``, if given)."""
    if len(blob) < HEADER.size:
        return None
    magic, rate, n, n_info, digest = HEADER.unpack_from(blob)
    body = blob[HEADER.size:]
    if magic != MAGIC or rate != OBS_RATE or len(body) != n_info + 4 * n:
        return None
    if hashlib.sha256(body).digest() != digest:
        return None
    if key is not None:
        try:
            meta = json.loads(body[:n_info].decode("utf-8"))
        except ValueError:
            return None
        if not isinstance(meta, dict) or meta.get("key") != key:
            return None
    return np.frombuffer(body, dtype="<f4", offset=n_info).astype(np.float32)


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
        self._memory: OrderedDict[tuple[str, str, int], np.ndarray] = OrderedDict()
        self._warned = False

    def key(self, text: str, label: str, seed: int) -> str:
        r = self.renderer
        return cache_key(r.name, r.version, self.voice, text, label, seed)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.h2a"

    def get(self, text: str, label: str, seed: int) -> np.ndarray:
        """The 16 kHz waveform for this utterance (rendered on a miss); a read-only array."""
        # The memory tier is keyed by the utterance itself (renderer and voice are fixed per
        # cache), so a warm hit costs one dict lookup, not a sha256.
        utterance = (text, label, seed)
        wave = self._memory.get(utterance)
        if wave is not None:
            self._memory.move_to_end(utterance)
            self.stats.hits += 1
            return wave
        key = self.key(text, label, seed)
        path = self.path(key)
        wave = None
        try:
            wave = decode(path.read_bytes(), key)
            if wave is None:
                self.stats.repaired += 1
        except FileNotFoundError:
            pass
        except OSError as exc:  # a folder in the way, no permission, root is a file, ...
            self._unusable(exc)
        if wave is None:
            self.stats.misses += 1
            wave = to_16k(self.renderer.render(text, label, self.voice, seed), self.renderer.sample_rate)
            self._write(path, wave, key)
        else:
            self.stats.hits += 1
        wave.setflags(write=False)
        self._memory[utterance] = wave
        if len(self._memory) > self.memory_items:
            self._memory.popitem(last=False)
        return wave

    def _meta(self, key: str) -> dict[str, Any]:
        r = self.renderer
        return {"key": key, "renderer": r.name, "version": r.version, "voice": self.voice or ""}

    def _write(self, path: Path, wave: np.ndarray, key: str) -> None:
        """Store one entry atomically; on failure keep going without the disk cache (warned once)."""
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".h2a")
            with os.fdopen(fd, "wb") as fh:
                fh.write(encode(wave, OBS_RATE, self._meta(key)))
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            self._unusable(exc)
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)

    def _unusable(self, exc: OSError) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"audio cache {self.root} is not usable ({exc.__class__.__name__}: {exc}); "
                "rendering without caching (set HEAR2ACT_CACHE to a writable folder)",
                RuntimeWarning, stacklevel=4,
            )
