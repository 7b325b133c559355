"""``hf:PATH``: a local transformers causal LM with its chat template.

Requests are rendered with the tokenizer's chat template, left-padded into
one batch (split into ``micro_batch`` rows when set) and decoded together.
Greedy by default; with ``temperature > 0`` every row samples from its own
``torch.Generator`` seeded by the request's seed, so a row's tokens do not
depend on which other requests share its batch.

Prefix caching (on by default, ``prefix_cache=False`` turns it off): the KV
cache of earlier prompts is reused for the shared start of later ones (the
previous turns of an episode, the system prompt of a scenario), so only the
new lines are prefilled; see :mod:`hear2act.agents.llm.prefix_cache`. Only for models whose every
layer caches full attention: a sliding-window layer's cache keeps the last window of a prefix, and the
reused cache gave other replies (a windowed tiny LM confirmed on 19 of 32 prompts with it, 0 without),
so such a model runs uncached, with a warning. Such a batch
is then decoded over preallocated KV buffers, each row leaving the batch when
its reply ends (:mod:`hear2act.agents.llm.decode`; ``decode_loop=False`` keeps
``model.generate``). Greedy outputs are the same with and without either. A request's ``stop`` rule
(:mod:`hear2act.agents.llm.stopping`) ends its row at the end of the action line or
``</answer>``. On CPU ``threads`` sets ``torch.set_num_threads`` (0, the
default: one less than the CPUs this process may use, at least 1, unless
``OMP_NUM_THREADS`` is set). On a 2-core machine shared with other jobs,
two threads spin against each other: SmolLM2 decoded at ~2 s/token with
2 threads and ~0.26 s/token with 1 (load average 8). ``stats`` counts prompt / prefilled / generated
tokens and the seconds spent.

``constrain_tag=True`` (OPT-IN, never the paper's setting) forces every
reply to open with a well-formed action tag; see :mod:`hear2act.agents.llm.constrain`.

``hf:smollm2`` names the packaged SmolLM2-135M-Instruct folder built by
``hear2act models prepare smollm2`` (:mod:`hear2act.agents.llm.prepare`).

Under ``accelerate launch`` / ``torchrun`` each process puts the model on
``cuda:$LOCAL_RANK`` (see :mod:`hear2act.eval.parallel` for splitting episodes).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hear2act_env.extras import missing_extra

from .backend import Generation, GenerationRequest, text_only
from .constrain import TagConstraint
from .decode import buffer_cache, decode, shrink_is_exact, supports_buffers
from .prefix_cache import PrefixStore, cache_kwarg, prefill_rows, stack_rows
from .prepare import resolve_model
from .stopping import StopOnRule, truncate
from .window import clip_prompt, model_field


def _torch_transformers() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError(missing_extra("the hf: backend", "llm", e)) from e
    return torch, transformers


def default_device() -> str:
    torch, _ = _torch_transformers()
    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    return "cpu"


class SeededSampler:
    """A logits processor that samples each row with its own generator, then forces that token.

    Used with greedy search (``do_sample=False``): the forced token is the
    argmax. Temperature and nucleus (top-p) / top-k filtering per row.
    """

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float = 1.0, top_k: int = 0,
                 device: Any = "cpu") -> None:
        torch, _ = _torch_transformers()
        self.generators = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.top_k = int(top_k)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch, _ = _torch_transformers()
        logits = scores.float() / self.temperature
        if self.top_k > 0:
            kth = torch.topk(logits, min(self.top_k, logits.shape[-1]), dim=-1).values[..., -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if self.top_p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
            cumulative = sorted_logits.softmax(-1).cumsum(-1)
            drop = cumulative - sorted_logits.softmax(-1) >= self.top_p  # keep the first token past top_p
            logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
        probs = logits.softmax(-1)
        forced = torch.full_like(scores, float("-inf"))
        for row, gen in enumerate(self.generators):
            token = torch.multinomial(probs[row], 1, generator=gen)
            forced[row, token] = 0.0
        return forced

    def keep_rows(self, rows: Sequence[int]) -> None:
        """Only these rows remain in the batch (:func:`hear2act.agents.llm.decode.decode` dropped the others)."""
        self.generators = [self.generators[r] for r in rows]


class HFBackend:
    """A causal LM loaded with ``AutoModelForCausalLM`` from a local directory (or hub id already cached)."""

    accepts_audio = False

    def __init__(self, path: str | Path, *, device: str | None = None, dtype: str = "auto",
                 max_new_tokens: int = 128, temperature: float = 0.0, top_p: float = 1.0, top_k: int = 0,
                 micro_batch: int = 0, name: str | None = None, model: Any = None, tokenizer: Any = None,
                 prefix_cache: bool = True, prefix_cache_mb: int = 2048, threads: int = 0,
                 constrain_tag: bool = False, decode_loop: bool = True) -> None:
        torch, transformers = _torch_transformers()
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.name = name or f"hf:{path}"
        self.path = resolve_model(str(path)) if model is None else str(path)
        self.device = device or default_device()
        if self.device == "cpu" and not os.environ.get("OMP_NUM_THREADS"):
            torch.set_num_threads(threads or max(1, len(os.sched_getaffinity(0)) - 1))
        elif threads:
            torch.set_num_threads(threads)
        local = Path(self.path)
        if tokenizer is None and (local.is_absolute() or self.path.startswith((".", "~"))) and not local.is_dir():
            raise FileNotFoundError(f"hf:{self.path}: no such checkpoint directory (a local folder with config.json, "
                                    "tokenizer files and weights; nothing is downloaded at run time)")
        if tokenizer is None:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path)
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError(f"tokenizer at {self.path} has no chat template (tokenizer_config.json 'chat_template')")
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer = tokenizer
        if model is None:
            torch_dtype = _dtype(torch, dtype, self.device)
            model = transformers.AutoModelForCausalLM.from_pretrained(self.path, dtype=torch_dtype)
        self.model = model.to(self.device).eval()
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.top_k = int(top_k)
        self.micro_batch = int(micro_batch)
        self.constrain_tag = bool(constrain_tag)  # OPT-IN, not the paper's setting (hear2act.agents.llm.constrain)
        if prefix_cache and not supports_buffers(self.model):
            warnings.warn(f"{self.name}: prefix caching is off for this model: a layer of it does not cache full "
                          "attention (a sliding window or a state), and a reused prefix cache would change its "
                          "replies. Pass prefix_cache=False to silence this.", stacklevel=2)
            prefix_cache = False
        self.prefix_store = PrefixStore(int(prefix_cache_mb) * 2**20) if prefix_cache else None
        # A model windowed on every layer sees only the prompt's last `field` tokens: the rest is cut before the
        # forward (hear2act.agents.llm.window; same answer up to float rounding, ~10x fewer tokens for the tiny LM).
        self.field = model_field(self.model)
        # Prefix-cached batches decode in hear2act.agents.llm.decode when the model's layers allow it (_buffers,
        # checked on first use); False keeps model.generate on the stacked cache (the engine before: a benchmark).
        self.decode_loop = bool(decode_loop)
        self._buffers: bool | None = None
        self._shrink: dict[int, bool] = {}  # per torch thread count: may ended rows leave the batch exactly
        self.stats = {"calls": 0, "rows": 0, "prompt_tokens": 0, "prefill_tokens": 0, "new_tokens": 0,
                      "prefill_s": 0.0, "generate_s": 0.0}

    @classmethod
    def from_spec(cls, target: str, **kwargs: Any) -> HFBackend:
        return cls(target, **kwargs)

    def prompt_texts(self, requests: Sequence[GenerationRequest]) -> list[str]:
        return [
            self.tokenizer.apply_chat_template(text_only(r.messages, self.name), tokenize=False,
                                               add_generation_prompt=True)
            for r in requests
        ]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        if not requests:
            return []
        size = self.micro_batch or len(requests)
        out: list[Generation] = []
        for start in range(0, len(requests), size):
            out.extend(self._generate(requests[start:start + size]))
        return out

    def _generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        torch, transformers = _torch_transformers()
        texts = self.prompt_texts(requests)
        rows = [np.asarray(clip_prompt(ids, self.field), dtype=np.int64) for ids in
                self.tokenizer(texts, add_special_tokens=False)["input_ids"]]
        pad = self.tokenizer.pad_token_id
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            input_ids[i, width - len(r):] = torch.as_tensor(r)
            mask[i, width - len(r):] = 1
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        eos = self.model.generation_config.eos_token_id or self.tokenizer.eos_token_id
        config = transformers.GenerationConfig(
            max_new_tokens=self.max_new_tokens, do_sample=False, eos_token_id=eos, pad_token_id=pad,
        )
        processors = transformers.LogitsProcessorList()
        if self.constrain_tag:
            processors.append(TagConstraint(self.tokenizer, width))
        if self.temperature > 0:
            processors.append(SeededSampler([r.seed for r in requests], self.temperature, self.top_p, self.top_k,
                                            device=self.device))
        rule = requests[0].stop
        criteria = transformers.StoppingCriteriaList([StopOnRule(self.tokenizer, width, rule)] if rule else [])
        stops = set(eos if isinstance(eos, list) else [eos]) | {pad}
        started = time.perf_counter()
        extra: dict[str, Any] = {}
        cache = None  # the decode loop's KV buffers, when the prompts were prefix-cached
        with torch.inference_mode():
            if self.prefix_store is not None and min(len(r) for r in rows) >= 2:
                kvs, computed = prefill_rows(self.model, rows, self.prefix_store, torch, self.device)
                self.stats["prefill_tokens"] += computed + len(rows)  # the decode runs each last prompt token
                if self._buffers is None:
                    self._buffers = supports_buffers(self.model)
                if self.decode_loop and self._buffers:
                    cache = buffer_cache(self.model, kvs, width - 1, self.max_new_tokens, torch)
                else:  # a sliding-window or stateful layer: model.generate on the stacked cache
                    extra[cache_kwarg(self.model)] = stack_rows(self.model, kvs, width - 1, torch)
            else:
                self.stats["prefill_tokens"] += sum(len(r) for r in rows)
            prefilled = time.perf_counter()
            if cache is None:
                ids = self.model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config,
                                          logits_processor=processors, stopping_criteria=criteria, **extra)
                new_rows = [row[:next((i for i, t in enumerate(row) if t in stops), len(row))]
                            for row in ids[:, width:].tolist()]
            else:
                new_rows = decode(self.model, self.tokenizer, cache, input_ids, mask,
                                  max_new_tokens=self.max_new_tokens, stops=stops, rule=rule,
                                  processors=processors, kwarg=cache_kwarg(self.model), torch=torch,
                                  shrink=self._shrinks(torch))
        out = []
        for row, request in zip(new_rows, requests, strict=True):
            text = truncate(self.tokenizer.decode(row, skip_special_tokens=True), request.stop)
            out.append(Generation(text, n_tokens=len(row)))
        self.stats["calls"] += 1
        self.stats["rows"] += len(rows)
        self.stats["prompt_tokens"] += sum(len(r) for r in rows)
        self.stats["new_tokens"] += sum(g.n_tokens for g in out)
        self.stats["prefill_s"] += prefilled - started
        self.stats["generate_s"] += time.perf_counter() - prefilled
        return out

    def _shrinks(self, torch: Any) -> bool:
        threads = torch.get_num_threads()
        if threads not in self._shrink:
            self._shrink[threads] = shrink_is_exact(self.model, torch)
        return self._shrink[threads]


def _dtype(torch: Any, dtype: str, device: str) -> Any:
    if dtype == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    try:
        return getattr(torch, dtype)
    except AttributeError:
        raise ValueError(f"unknown dtype {dtype!r} (e.g. 'float32', 'bfloat16', 'auto')") from None
