"""The ``hf:`` backend's decode loop: a preallocated KV cache, finished rows dropped, one stop check per new token.

``model.generate`` on a prefix-cached batch spent its time on work whose
result is thrown away or recomputed (SmolLM2-135M, CPU, one thread, 8
episodes a call): ``DynamicCache`` grows every layer's keys and values
with ``torch.cat`` (a copy of the whole cache per token: ~16% of a call),
and every row keeps decoding until the slowest row of the batch ends,
though a reply stops at its action line after ~18 tokens on average while
the batch runs to the 48-token limit. :func:`decode` instead

* writes each step's keys/values in place into buffers sized for the whole
  reply (:class:`BufferLayer`; attention reads a view of the filled part,
  the same values in the same order as the concatenated cache);
* drops a row from the batch once it has ended (its reply is final), but
  never below :data:`MIN_ROWS` rows. Attention, norms and rotary are per
  row; only the GEMMs see the batch size, and on one CPU thread MKL uses
  another kernel for 1-3 rows, whose sums round differently (measured: an
  output row of 4+ rows equals that row of any larger batch bit for bit; on
  2 threads sizes such as 5-7 and 9-11 differ too). So rows leave the batch
  only on a CPU with one torch thread, and only after
  :func:`shrink_is_exact` has checked this on the model's own weights; the
  rows still decoding then get exactly the floats of the full batch (and of
  raw ``model.generate``: the tests compare them token for token). A batch
  that starts with 3 or fewer rows is never shrunk;
* checks the stop rule (:mod:`hear2act.agents.llm.stopping`) only for rows
  still running.

Greedy argmax and the logits processors are those of ``model.generate``
(``logits[:, -1]`` in float32); positions come from the attention mask as
there (``cumsum - 1``). A processor that keeps per-row state (the seeded
sampler) is told which rows remain through its ``keep_rows`` method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .stopping import stop_index

# Smallest batch that a shrinking batch keeps: below 4 rows the CPU GEMM switches kernels (see the module doc).
MIN_ROWS = 4


def _layer_base() -> type:
    from transformers.cache_utils import DynamicLayer

    return DynamicLayer


class BufferLayer(_layer_base()):  # type: ignore[misc]
    """A full-attention layer cache in a preallocated ``[batch, heads, capacity, head_dim]`` buffer, filled in place."""

    def __init__(self, keys: Any, values: Any, length: int) -> None:
        super().__init__()
        self.k_buf, self.v_buf, self.length = keys, values, int(length)
        self.device = keys.device
        self.is_initialized = True
        self._view()

    def _view(self) -> None:
        self.keys = self.k_buf[:, :, :self.length]
        self.values = self.v_buf[:, :, :self.length]

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        n = key_states.shape[-2]
        if self.length + n > self.k_buf.shape[2]:
            raise RuntimeError(f"KV buffer full ({self.k_buf.shape[2]} positions)")
        self.k_buf[:, :, self.length:self.length + n].copy_(key_states)
        self.v_buf[:, :, self.length:self.length + n].copy_(value_states)
        self.length += n
        self._view()
        return self.keys, self.values

    def batch_select_indices(self, indices: Any) -> None:
        self.k_buf, self.v_buf = self.k_buf[indices], self.v_buf[indices]
        self._view()


def supports_buffers(model: Any) -> bool:
    """Whether every layer of ``model`` caches full attention (plain ``DynamicLayer``): no sliding window, no state."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    layers = DynamicCache(config=model.config).layers
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


def shrink_is_exact(model: Any, torch: Any, largest: int = 16) -> bool:
    """Whether dropping rows leaves the other rows' floats unchanged: CPU, one thread, every linear's shape checked.

    Each distinct ``nn.Linear`` weight of ``model`` multiplies random rows as
    one batch of ``largest`` and as batches of ``MIN_ROWS``..``largest - 1``
    (other rows dropped); they must agree bit for bit (~0.2 s for SmolLM2).
    """
    if torch.get_num_threads() != 1:
        return False
    weights = {tuple(m.weight.shape): m.weight for m in model.modules() if isinstance(m, torch.nn.Linear)}
    if not weights or next(iter(weights.values())).device.type != "cpu":
        return False
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for weight in weights.values():
            x = torch.randn(largest, 1, weight.shape[1], generator=gen, dtype=weight.dtype)
            full = torch.nn.functional.linear(x, weight)
            for m in range(MIN_ROWS, largest):
                rows = torch.randperm(largest, generator=gen)[:m].sort().values
                if not torch.equal(torch.nn.functional.linear(x[rows], weight), full[rows]):
                    return False
    return True


def buffer_cache(model: Any, kvs: Sequence[Sequence[tuple[Any, Any]]], length: int, extra: int, torch: Any) -> Any:
    """One left-padded batch cache of ``length`` filled positions and room for ``extra`` more (padding is zeros)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    layers = []
    for layer in range(len(kvs[0])):
        k0 = kvs[0][layer][0]
        shape = (len(kvs), k0.shape[1], length + extra, k0.shape[3])
        keys = k0.new_zeros(shape)
        values = k0.new_zeros(shape)
        for row, kv in enumerate(kvs):
            k, v = kv[layer]
            keys[row, :, length - k.shape[2]:length] = k[0]
            values[row, :, length - v.shape[2]:length] = v[0]
        layers.append(BufferLayer(keys, values, length))
    cache.layers = layers
    return cache


def decode(model: Any, tokenizer: Any, cache: Any, input_ids: Any, mask: Any, *, max_new_tokens: int,
           stops: set[int], rule: str, processors: Any, kwarg: str, torch: Any, shrink: bool) -> list[list[int]]:
    """Each row's new tokens, up to (not including) its first token in ``stops``, or through the end of ``rule``.

    ``input_ids``/``mask`` are the left-padded prompts ``[batch, width]``;
    ``cache`` holds the first ``width - 1`` positions. ``processors`` is a
    ``LogitsProcessorList`` called as in ``model.generate``. ``shrink``: ended
    rows may leave the batch (:func:`shrink_is_exact`).
    """
    batch, width = input_ids.shape
    full_mask = torch.ones((batch, width + max_new_tokens), dtype=mask.dtype, device=mask.device)
    full_mask[:, :width] = mask
    ids = torch.empty((batch, width + max_new_tokens), dtype=input_ids.dtype, device=input_ids.device)
    ids[:, :width] = input_ids
    position = mask.long().sum(-1) - 1  # the last prompt token's position: generate's cumsum(mask) - 1
    rows = list(range(batch))  # original row of each batch row still in the cache
    out: list[list[int]] = [[] for _ in range(batch)]
    live = [True] * batch
    step_ids = input_ids[:, -1:]
    for step in range(max_new_tokens):
        length = width + step
        logits = model(input_ids=step_ids, attention_mask=full_mask[:, :length], position_ids=position[:, None],
                       use_cache=True, logits_to_keep=1, **{kwarg: cache}).logits
        scores = processors(ids[:, :length], logits[:, -1].to(copy=True, dtype=torch.float32))
        tokens = torch.argmax(scores, dim=-1)
        ids[:, length] = tokens
        for b, token in enumerate(tokens.tolist()):
            row = rows[b]
            if not live[row]:
                continue
            if token in stops:
                live[row] = False
                continue
            out[row].append(token)
            if rule and stop_index(tokenizer.decode(out[row], skip_special_tokens=True), rule) is not None:
                live[row] = False
        keep = [b for b, row in enumerate(rows) if live[row]]
        if not keep:
            break
        if shrink and len(keep) < len(rows) and len(rows) > MIN_ROWS:
            # Keep ended rows as ballast up to MIN_ROWS so the GEMMs stay on the same kernel (module doc).
            ended = [b for b, row in enumerate(rows) if not live[row]]
            keep = sorted(keep + ended[:max(0, MIN_ROWS - len(keep))])
            if len(keep) < len(rows):
                index = torch.tensor(keep, device=input_ids.device)
                for layer in cache.layers:
                    layer.batch_select_indices(index)
                full_mask, ids, position = full_mask[index], ids[index], position[index]
                tokens = tokens[index]
                rows = [rows[b] for b in keep]
                for p in processors:
                    if hasattr(p, "keep_rows"):
                        p.keep_rows(keep)
        step_ids = tokens[:, None]
        position = position + 1
    return out
