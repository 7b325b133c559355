"""Shared generation loop of the local audio-LLM backends (``omni:PATH``, ``qwen2audio:PATH``).

A backend loads the model class it names plus the checkpoint's tokenizer and
Whisper feature extractor (:mod:`hear2act.agents.llm.audio_inputs`; no processor
class, so no torchvision), builds one left-padded batch per chunk of
requests, and decodes:

* greedy when ``temperature == 0`` (the default);
* sampled otherwise, exactly as ``hf:`` (:class:`hear2act.agents.llm.hf.SeededSampler`):
  temperature, top-k and top-p shape each row's distribution and a
  ``torch.Generator`` seeded by that request draws its token. A row's draws
  depend only on its seed, so a trajectory is the same whatever batch it
  runs in.

A request whose messages cannot be turned into inputs (bad audio, a
template without an audio slot) comes back with ``error`` set; the rest of
the batch still runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from .audio_inputs import AUDIO_TOKEN, build_audio_inputs, load_audio_processing, render_chat
from .backend import Generation, GenerationRequest
from .hf import SeededSampler, default_device

_INSTALL = 'pip install "hear2act[llm]"'


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"audio LLM backends need torch and transformers: {_INSTALL}") from exc
    return torch


def stop_ids(configured: Any, tokenizer: Any) -> set[int]:
    """Token ids that end a reply: the generation config's, the tokenizer's eos and ChatML's turn ends.

    A thinker loaded out of a full Omni checkpoint may come without a generation config of its own; the
    chat template's ``<|im_end|>`` still ends the assistant turn.
    """
    ids = set(configured if isinstance(configured, list | tuple) else [configured])
    ids.add(tokenizer.eos_token_id)
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in ("<|im_end|>", "<|endoftext|>") if t in vocab)
    return {int(i) for i in ids if i is not None}


class AudioLLMBackend:
    """A local transformers audio LLM as a :class:`~hear2act.agents.llm.backend.Backend`."""

    accepts_audio = True
    prefix: ClassVar[str] = ""
    model_class: ClassVar[str] = ""  # transformers class name
    default_template: ClassVar[str | None] = None  # used when the checkpoint ships no chat template

    def __init__(self, path: str | Path, *, max_new_tokens: int = 256, temperature: float = 0.0, top_p: float = 1.0,
                 top_k: int = 0, batch_size: int | None = None, device: str | None = None, dtype: str = "auto",
                 attn_implementation: str | None = None, audio_token: str = AUDIO_TOKEN,
                 name: str | None = None) -> None:
        """``batch_size``: most requests per ``generate`` (default: all of a call, i.e. the engine's episodes
        in flight); ``attn_implementation``: e.g. ``"flash_attention_2"`` on GPUs (default: transformers')."""
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = off), got {top_k}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        root = Path(path)
        if not (root / "config.json").is_file():
            raise FileNotFoundError(f"{self.prefix}: {root} is not a checkpoint directory (no config.json)")
        torch = _torch()
        import transformers

        self.name = name or f"{self.prefix}:{root.name}"
        self.path = root
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.top_k = int(top_k)
        self.batch_size = batch_size
        self.processing = load_audio_processing(root, audio_token=audio_token, default_template=self.default_template)
        self.device = torch.device(device or default_device())  # cuda:$LOCAL_RANK under a launcher
        torch_dtype = {"auto": torch.bfloat16 if self.device.type == "cuda" else torch.float32,
                       "bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}.get(dtype)
        if torch_dtype is None:
            raise ValueError(f"dtype must be auto, bfloat16, float16 or float32, got {dtype!r}")
        cls = getattr(transformers, self.model_class)
        extra = {"attn_implementation": attn_implementation} if attn_implementation else {}
        self.model = cls.from_pretrained(root, dtype=torch_dtype, **extra).to(self.device).eval()
        tok = self.processing.tokenizer
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.eos_ids = stop_ids(self.model.generation_config.eos_token_id, tok)

    @classmethod
    def from_spec(cls, target: str, **kwargs: Any) -> AudioLLMBackend:
        """``PREFIX:PATH`` -> a backend on the checkpoint directory PATH."""
        return cls(target, **kwargs)

    def inputs(self, messages_batch: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        """The model inputs of a batch, on the model's device and dtype."""
        p = self.processing
        batch = build_audio_inputs(messages_batch, p.tokenizer, p.feature_extractor, chat_template=p.chat_template,
                                   audio_token=p.audio_token)
        dtype = self.model.dtype
        return {k: v.to(self.device, dtype=dtype if k == "input_features" else v.dtype) for k, v in batch.items()}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        out: list[Generation | None] = [None] * len(requests)
        ready: list[int] = []
        for i, r in enumerate(requests):
            try:
                render_chat(r.messages, self.processing)
            except (ValueError, TypeError, ImportError) as exc:
                out[i] = Generation("", error=f"{self.name}: bad request {r.key!r}: {exc}")
            else:
                ready.append(i)
        step = self.batch_size or max(len(ready), 1)
        for start in range(0, len(ready), step):
            chunk = ready[start:start + step]
            for i, gen in zip(chunk, self._generate([requests[i] for i in chunk]), strict=True):
                out[i] = gen
        return [g for g in out if g is not None]

    def _generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        torch = _torch()
        batch = self.inputs([r.messages for r in requests])
        kwargs: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "do_sample": False,
                                  "pad_token_id": self.pad_id, "eos_token_id": sorted(self.eos_ids),
                                  "temperature": None, "top_p": None, "top_k": None}
        if self.temperature > 0:
            kwargs["logits_processor"] = [SeededSampler([r.seed for r in requests], self.temperature, self.top_p,
                                                        self.top_k, device=self.device)]
        with torch.inference_mode():
            sequences = self.model.generate(**batch, **kwargs)
        new = sequences[:, batch["input_ids"].shape[1]:].tolist()
        gens = []
        for ids in new:
            n = next((k + 1 for k, t in enumerate(ids) if t in self.eos_ids), len(ids))
            text = self.processing.tokenizer.decode(ids[:n], skip_special_tokens=True)
            gens.append(Generation(text.strip(), n_tokens=n))
        return gens
