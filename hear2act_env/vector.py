"""Vector environments: observation spaces that survive Gymnasium's shared memory, and per-env scenarios.

``gym.make_vec(id, num_envs=n, vectorization_mode="async")`` passes
observations from the worker processes through shared memory by default.
Gymnasium's shared memory for :class:`~gymnasium.spaces.Text` reads the
buffer once, when the vector env is built, and returns those (empty) strings
forever after (Gymnasium issue #1164), and it has no shared memory at all for
a custom space such as the audio observation. The env's observation spaces
are therefore :class:`ObsText` and :class:`~hear2act_env.audio_space.AudioSpace`,
for which this module registers shared-memory handlers: each sub-env's value
is stored as its length plus its code points (UTF-32) or samples, and read
back on access. So ``"async"`` (with or without ``shared_memory``) and
``"sync"`` return the same observations: tuples of ``str`` and of float32
arrays (with ``copy=False``, read-only views that follow the buffer, as for
Gymnasium's own arrays).

Per-sub-env scenarios: :func:`reset_scenarios` resets each sub-env on its own
scenario id (Gymnasium's ``reset_mask`` partial resets), for sync and async
vector envs alike.
"""

from __future__ import annotations

import copy
import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from .audio_space import AudioSpace


class ObsText(spaces.Text):
    """A :class:`~gymnasium.spaces.Text` observation that works with ``AsyncVectorEnv`` shared memory."""


class _SharedRows(Sequence[Any]):
    """One value per sub-env, decoded from the shared buffer on access; deep-copies to a plain tuple."""

    def __init__(self, lengths: np.ndarray, data: np.ndarray, decode: Any) -> None:
        self._lengths, self._data, self._decode = lengths, data, decode

    def __len__(self) -> int:
        return len(self._lengths)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        n = int(self._lengths[index])
        return self._decode(self._data[index, :n])

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[Any, ...]:
        return tuple(copy.deepcopy(value, memo) for value in self)  # waveforms are views: copy them

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))


def _decode_text(codes: np.ndarray) -> str:
    return codes.tobytes().decode("utf-32-le")


def _decode_wave(samples: np.ndarray) -> np.ndarray:
    view = samples.view()
    view.setflags(write=False)
    return view


@create_shared_memory.register(ObsText)
def _create_text(space: ObsText, n: int = 1, ctx: ModuleType = mp) -> tuple[Any, Any]:
    return ctx.Array("q", n), ctx.Array("i", n * space.max_length)


@read_from_shared_memory.register(ObsText)
def _read_text(space: ObsText, shared: tuple[Any, Any], n: int = 1) -> _SharedRows:
    lengths = np.frombuffer(shared[0].get_obj(), dtype=np.int64)
    data = np.frombuffer(shared[1].get_obj(), dtype=np.int32).reshape(n, space.max_length)
    return _SharedRows(lengths, data, _decode_text)


@write_to_shared_memory.register(ObsText)
def _write_text(space: ObsText, index: int, value: str, shared: tuple[Any, Any]) -> None:
    codes = np.frombuffer(value.encode("utf-32-le"), dtype=np.int32)
    if len(codes) > space.max_length:
        raise ValueError(f"text observation of {len(codes)} characters exceeds max_length {space.max_length}")
    data = np.frombuffer(shared[1].get_obj(), dtype=np.int32).reshape(-1, space.max_length)
    data[index, : len(codes)] = codes
    np.frombuffer(shared[0].get_obj(), dtype=np.int64)[index] = len(codes)


@create_shared_memory.register(AudioSpace)
def _create_audio(space: AudioSpace, n: int = 1, ctx: ModuleType = mp) -> tuple[Any, Any]:
    return ctx.Array("q", n), ctx.Array("f", n * space.max_samples)


@read_from_shared_memory.register(AudioSpace)
def _read_audio(space: AudioSpace, shared: tuple[Any, Any], n: int = 1) -> _SharedRows:
    lengths = np.frombuffer(shared[0].get_obj(), dtype=np.int64)
    data = np.frombuffer(shared[1].get_obj(), dtype=np.float32).reshape(n, space.max_samples)
    return _SharedRows(lengths, data, _decode_wave)


@write_to_shared_memory.register(AudioSpace)
def _write_audio(space: AudioSpace, index: int, value: np.ndarray, shared: tuple[Any, Any]) -> None:
    wave = np.asarray(value, dtype=np.float32)
    if wave.ndim != 1 or len(wave) > space.max_samples:
        raise ValueError(f"audio observation of shape {wave.shape} does not fit {space}")
    data = np.frombuffer(shared[1].get_obj(), dtype=np.float32).reshape(-1, space.max_samples)
    data[index, : len(wave)] = wave
    np.frombuffer(shared[0].get_obj(), dtype=np.int64)[index] = len(wave)


def reset_scenarios(
    envs: Any, scenario_ids: Sequence[str], seed: int | Sequence[int | None] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Reset sub-env ``i`` of a vector env on ``scenario_ids[i]``; returns (observations, infos).

    ``seed``: an int (sub-env ``i`` gets ``seed + i``, as ``VectorEnv.reset``),
    one seed per sub-env, or ``None``. Sub-env ``i > 0`` is reset alone with
    ``options={"scenario_id": ..., "reset_mask": ...}`` (Gymnasium's partial
    reset, which you can also call yourself); the infos are merged into one
    vector info dict (object arrays plus ``_key`` masks).
    """
    n = envs.num_envs
    if isinstance(scenario_ids, str) or len(scenario_ids) != n:
        raise ValueError(f"scenario_ids must list one scenario id per sub-env ({n}), got {scenario_ids!r}")
    seeds = [None if seed is None else seed + i for i in range(n)] if seed is None or isinstance(seed, int) \
        else list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be an int or one seed per sub-env ({n}), got {seed!r}")
    # A full reset first (every sub-env on the first id: a sync vector env cannot partially reset
    # before it has been reset once), then sub-envs 1..n-1 alone on their own ids.
    obs, info = envs.reset(seed=seeds, options={"scenario_id": scenario_ids[0]})
    per_env = [_info_of(info, 0)]
    for i, sid in enumerate(scenario_ids[1:], start=1):
        mask = np.zeros(n, dtype=np.bool_)
        mask[i] = True
        obs, info = envs.reset(seed=seeds, options={"scenario_id": sid, "reset_mask": mask})
        per_env.append(_info_of(info, i))
    return obs, _merge_infos(per_env)


def _info_of(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-env ``i``'s entries of a vector info dict (nested dicts, such as ``question``, recursively)."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_") or not info.get(f"_{k}", np.ones(i + 1, dtype=np.bool_))[i]:
            continue
        out[k] = _info_of(v, i) if isinstance(v, dict) else v[i]
    return out


def _merge_infos(per_env: list[dict[str, Any]]) -> dict[str, Any]:
    """Gymnasium's vector info layout (``key`` array + ``_key`` mask) from one info dict per sub-env."""
    n = len(per_env)
    merged: dict[str, Any] = {}
    for key in dict.fromkeys(k for info in per_env for k in info):
        values = [info.get(key) for info in per_env]
        array = np.empty(n, dtype=object)
        array[:] = values
        merged[key] = array
        merged[f"_{key}"] = np.array([key in info for info in per_env], dtype=np.bool_)
    return merged
