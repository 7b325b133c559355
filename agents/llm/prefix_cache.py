"""Prefix caching for the ``hf:`` backend: the KV cache of past prompts, reused by later ones.

Every decision prompt of an episode repeats the previous one (system prompt
with the options, the transcript so far) and adds a few lines; the episodes
of one scenario share the whole system prompt. :class:`PrefixStore` keeps
the per-layer keys/values of recent prompts (minus their last token) and
hands back the longest stored token prefix of a new prompt; only the rest
is run through the model (:func:`prefill_rows`, one row at a time). The
rows are then stacked, left-padded, into one cache (:func:`stack_rows`) and
``model.generate`` feeds only each prompt's last token, then decodes the
batch together. The positions come from the attention mask, so a row's
greedy tokens are those of the uncached left-padded batch (the tests check
this token for token).

The store is an LRU bounded by bytes. A new prompt that extends a stored one
(the next turn of the same episode) replaces it.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Entry:
    ids: np.ndarray  # int64 token ids of the cached prefix
    kv: list[tuple[Any, Any]]  # per layer (keys, values), each [1, heads, len(ids), head_dim]

    @property
    def nbytes(self) -> int:
        return sum(int(k.numel() * k.element_size() + v.numel() * v.element_size()) for k, v in self.kv)


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two id arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


class PrefixStore:
    """Recent prompts' KV caches, looked up by longest common token prefix (LRU, at most ``max_bytes``)."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"prefix cache size must be >= 0 bytes, got {max_bytes}")
        self.max_bytes = int(max_bytes)
        self.entries: OrderedDict[int, Entry] = OrderedDict()
        self._next = 0
        self.nbytes = 0

    def lookup(self, ids: np.ndarray) -> tuple[Entry | None, int]:
        """The entry sharing the longest prefix with ``ids`` and that length (``None, 0`` when nothing is shared)."""
        best, best_n, best_key = None, 0, None
        for key, entry in self.entries.items():
            n = common_prefix(entry.ids, ids)
            if n > best_n:
                best, best_n, best_key = entry, n, key
        if best_key is not None:
            self.entries.move_to_end(best_key)
        return best, best_n

    def add(self, entry: Entry) -> None:
        if self.max_bytes == 0:
            return
        for key in [k for k, e in self.entries.items()
                    if len(e.ids) <= len(entry.ids) and common_prefix(e.ids, entry.ids) == len(e.ids)]:
            self.nbytes -= self.entries.pop(key).nbytes  # subsumed by the new, longer prompt
        self.entries[self._next] = entry
        self._next += 1
        self.nbytes += entry.nbytes
        while self.nbytes > self.max_bytes and len(self.entries) > 1:
            self.nbytes -= self.entries.popitem(last=False)[1].nbytes

    def clear(self) -> None:
        self.entries.clear()
        self.nbytes = 0


def prefill_rows(model: Any, rows: list[np.ndarray], store: PrefixStore, torch: Any,
                 device: Any) -> tuple[list[list[tuple[Any, Any]]], int]:
    """Per row, the KV of ``row[:-1]`` (reusing the store) and the number of tokens actually run."""
    from transformers import DynamicCache

    out, computed = [], 0
    for ids in rows:
        head = ids[:-1]
        entry, n = store.lookup(head)
        kv = [(k[:, :, :n], v[:, :, :n]) for k, v in entry.kv] if entry is not None and n > 0 else []
        if n < len(head):
            cache = DynamicCache(ddp_cache_data=kv or None, config=model.config)
            chunk = torch.as_tensor(head[n:], device=device).unsqueeze(0)
            model(input_ids=chunk, use_cache=True, logits_to_keep=1, **{cache_kwarg(model): cache})
            kv = [(layer.keys, layer.values) for layer in cache.layers]
            computed += len(head) - n
        store.add(Entry(ids=head.copy(), kv=kv))
        out.append(kv)
    return out, computed


def cache_kwarg(model: Any) -> str:
    """``"cache"`` (transformers >= 5.2x) or the older ``"past_key_values"``, whichever ``forward`` takes."""
    return "cache" if "cache" in inspect.signature(type(model).forward).parameters else "past_key_values"


def stack_rows(model: Any, kvs: list[list[tuple[Any, Any]]], length: int, torch: Any) -> Any:
    """One left-padded batch cache of ``length`` positions from the rows' caches (padding is zeros, masked)."""
    from transformers import DynamicCache

    layers = []
    for layer in range(len(kvs[0])):
        keys, values = [], []
        for kv in kvs:
            k, v = kv[layer]
            pad = length - k.shape[2]
            if pad:
                k = torch.cat([k.new_zeros(*k.shape[:2], pad, k.shape[3]), k], dim=2)
                v = torch.cat([v.new_zeros(*v.shape[:2], pad, v.shape[3]), v], dim=2)
            keys.append(k)
            values.append(v)
        layers.append((torch.cat(keys, dim=0), torch.cat(values, dim=0)))
    return DynamicCache(ddp_cache_data=layers, config=model.config)
