"""Model inputs for audio LLMs (Qwen2.5-Omni thinker, Qwen2-Audio) without their processor classes.

``Qwen2_5OmniProcessor`` cannot be built where torchvision fails to import
(its PyPI build here is CUDA-only), and both processors are thin: render the
chat template, run the Whisper feature extractor, and repeat each audio
placeholder token once per audio-encoder output frame. This module does the
same from a tokenizer and a ``WhisperFeatureExtractor`` alone, so evaluation
(``omni:`` / ``qwen2audio:`` backends, the audio perceiver) and GRPO training
build identical inputs with :func:`build_audio_inputs`.

Matching the processors exactly (transformers 5.x ``processing_qwen2_5_omni``
and ``processing_qwen2_audio``):

* features: ``padding="max_length"`` (every clip padded to the extractor's
  30 s window, longer clips truncated to it), ``return_attention_mask=True``,
  the mask renamed ``feature_attention_mask``;
* placeholder count per clip: ``n = mask.sum()`` mel frames, then
  ``((n - 1) // 2 + 1 - 2) // 2 + 1`` (the encoder's stride-2 conv, then its
  stride-2 pooling) -- :func:`num_audio_tokens`;
* the expansion is done on token ids; identical to the processors' string
  replacement because the placeholder is an atomic special token (checked).

Padding across the batch is on the left (decoder-only generation).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

AUDIO_TOKEN = "<|AUDIO|>"
SAMPLING_RATE = 16_000
# Shorter clips give the encoder 0 or 1 output frames: 0 silently drops the placeholder (the processors do
# this too), 1 sends Qwen2-Audio down its legacy merge path. A user turn is never this short.
MIN_SECONDS = 0.1
_INSTALL = 'pip install "hear2act[llm]"'


def num_audio_tokens(n_frames: int) -> int:
    """Audio-encoder output length for ``n_frames`` valid mel frames (both Qwen audio processors)."""
    n = int(n_frames)
    if n < 1:
        raise ValueError(f"an audio clip needs at least one mel frame, got {n}")
    return ((n - 1) // 2 + 1 - 2) // 2 + 1


@dataclass(frozen=True)
class AudioProcessing:
    """What input building needs from a checkpoint: tokenizer, feature extractor, chat template, placeholder."""

    tokenizer: Any
    feature_extractor: Any
    chat_template: str
    audio_token: str = AUDIO_TOKEN


def load_audio_processing(path: str | Path, *, audio_token: str = AUDIO_TOKEN,
                          default_template: str | None = None) -> AudioProcessing:
    """Tokenizer (``AutoTokenizer``) + ``WhisperFeatureExtractor`` (``preprocessor_config.json``) of a checkpoint.

    The chat template is the processor's when the checkpoint ships one
    (``chat_template.jinja`` / ``chat_template.json`` / ``processor_config.json``),
    else the tokenizer's, else ``default_template``.
    """
    try:
        from transformers import AutoTokenizer, WhisperFeatureExtractor
    except ImportError as exc:
        raise ImportError(f"audio LLM backends need transformers: {_INSTALL}") from exc
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such checkpoint directory (an audio LLM folder with config.json, "
                                "tokenizer files, preprocessor_config.json and weights)")
    if not (root / "preprocessor_config.json").is_file():
        raise FileNotFoundError(f"{root}: no preprocessor_config.json (the Whisper feature extractor of an audio LLM)")
    tokenizer = AutoTokenizer.from_pretrained(root)
    feature_extractor = WhisperFeatureExtractor.from_pretrained(root)
    template = _processor_template(root) or getattr(tokenizer, "chat_template", None) or default_template
    if not template:
        raise ValueError(f"{root}: no chat template (chat_template.jinja/.json, processor or tokenizer config)")
    return AudioProcessing(tokenizer, feature_extractor, template, audio_token)


def _processor_template(root: Path) -> str | None:
    if (root / "chat_template.jinja").is_file():
        return (root / "chat_template.jinja").read_text(encoding="utf-8")
    for name in ("chat_template.json", "processor_config.json"):
        if (root / name).is_file():
            template = json.loads((root / name).read_text(encoding="utf-8")).get("chat_template")
            if isinstance(template, str) and template:
                return template
    return None


def prepare_audio(part: dict[str, Any], target_rate: int, where: str) -> np.ndarray:
    """The waveform of one ``{"type": "audio", ...}`` part as 1-D float32 at ``target_rate`` (resampled if needed)."""
    if "audio" not in part:
        raise ValueError(f"{where}: an audio part needs an 'audio' array (got keys {sorted(part)})")
    audio = np.asarray(part["audio"])
    if audio.ndim != 1 or audio.size == 0:
        raise ValueError(f"{where}: 'audio' must be a non-empty mono 1-D array, got shape {audio.shape}")
    if not np.issubdtype(audio.dtype, np.floating):
        raise ValueError(f"{where}: 'audio' must be float samples in [-1, 1], got dtype {audio.dtype}")
    if not np.isfinite(audio).all():
        raise ValueError(f"{where}: 'audio' contains NaN or inf")
    rate = part.get("sampling_rate", SAMPLING_RATE)
    if not isinstance(rate, int | np.integer) or rate <= 0:
        raise ValueError(f"{where}: 'sampling_rate' must be a positive int, got {rate!r}")
    audio = audio.astype(np.float32, copy=False)
    if rate != target_rate:
        try:
            import soxr
        except ImportError as exc:
            raise ImportError(f"{where}: resampling {rate} Hz -> {target_rate} Hz needs soxr: {_INSTALL}") from exc
        audio = soxr.resample(audio, int(rate), target_rate).astype(np.float32)
    if audio.size < MIN_SECONDS * target_rate:
        raise ValueError(f"{where}: audio of {audio.size / target_rate * 1000:.0f} ms is shorter than "
                         f"{MIN_SECONDS * 1000:.0f} ms, too short for the audio encoder")
    return audio


def render_chat(messages: Sequence[dict[str, Any]], processing: AudioProcessing, *,
                add_generation_prompt: bool = True) -> tuple[str, list[np.ndarray]]:
    """One conversation -> (prompt text with one placeholder per clip, the clips in order)."""
    clips: list[np.ndarray] = []
    shown: list[dict[str, Any]] = []
    rate = int(processing.feature_extractor.sampling_rate)
    for i, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    raise ValueError(f"message {i} part {j} must be a dict, got {type(part).__name__}")
                if part.get("type") == "audio":
                    clips.append(prepare_audio(part, rate, f"message {i} part {j}"))
                    # The template only needs to know an audio part is here, not its samples.
                    parts.append({"type": "audio", "audio": f"<clip {len(clips)}>"})
                elif part.get("type") == "text":
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
                else:
                    raise ValueError(f"message {i} part {j}: type must be 'text' or 'audio', got {part.get('type')!r}")
            content = parts
        elif not isinstance(content, str):
            raise ValueError(f"message {i} content must be str or a list of parts, got {type(content).__name__}")
        shown.append({"role": str(message.get("role", "user")), "content": content})
    text = processing.tokenizer.apply_chat_template(
        shown, chat_template=processing.chat_template, tokenize=False, add_generation_prompt=add_generation_prompt
    )
    found = text.count(processing.audio_token)
    if found != len(clips):
        raise ValueError(f"the chat template rendered {found} {processing.audio_token} placeholders "
                         f"for {len(clips)} audio parts")
    return text, clips


def audio_token_id(tokenizer: Any, audio_token: str = AUDIO_TOKEN) -> int:
    """Id of the placeholder; it must tokenize to exactly that one id (else expansion on ids would be wrong)."""
    ids = tokenizer(audio_token, add_special_tokens=False)["input_ids"]
    if len(ids) != 1 or ids[0] == getattr(tokenizer, "unk_token_id", None):
        raise ValueError(f"tokenizer does not treat {audio_token!r} as one special token (got ids {ids})")
    return int(ids[0])


def build_audio_inputs(messages_batch: Sequence[Sequence[dict[str, Any]]], tokenizer: Any, feature_extractor: Any,
                       *, chat_template: str | None = None, audio_token: str = AUDIO_TOKEN,
                       add_generation_prompt: bool = True) -> dict[str, Any]:
    """A left-padded batch of model inputs for Qwen2.5-Omni thinker / Qwen2-Audio ``generate`` or ``forward``.

    ``messages_batch``: one chat per row (see :mod:`hear2act.agents.prompts`; audio parts
    are float arrays, resampled to the extractor's rate when their
    ``sampling_rate`` differs). Returns torch tensors ``input_ids``,
    ``attention_mask`` and, when any row has audio, ``input_features``
    (clips in row order, then order within the row) and
    ``feature_attention_mask``.
    """
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"audio LLM backends need torch and transformers: {_INSTALL}") from exc
    if not messages_batch:
        raise ValueError("messages_batch is empty")
    template = chat_template if chat_template is not None else getattr(tokenizer, "chat_template", None)
    if not template:
        raise ValueError("no chat template: pass chat_template= or use a tokenizer that has one")
    processing = AudioProcessing(tokenizer, feature_extractor, template, audio_token)
    rendered = [render_chat(m, processing, add_generation_prompt=add_generation_prompt) for m in messages_batch]
    clips = [clip for _, row in rendered for clip in row]

    features: dict[str, Any] = {}
    counts: list[int] = []
    if clips:
        out = feature_extractor(clips, sampling_rate=int(feature_extractor.sampling_rate), return_attention_mask=True,
                                padding="max_length", return_tensors="pt")
        mask = out["attention_mask"].long()
        features = {"input_features": out["input_features"], "feature_attention_mask": mask}
        counts = [num_audio_tokens(n) for n in mask.sum(-1).tolist()]

    placeholder = audio_token_id(tokenizer, audio_token) if clips else -1
    rows: list[list[int]] = []
    next_clip = 0
    for text, _ in rendered:
        ids: list[int] = []
        for tok in tokenizer(text, add_special_tokens=False)["input_ids"]:
            if tok == placeholder:
                ids.extend([placeholder] * counts[next_clip])
                next_clip += 1
            else:
                ids.append(int(tok))
        rows.append(ids)
    if next_clip != len(clips):
        raise ValueError(f"found {next_clip} {audio_token} tokens after tokenization for {len(clips)} audio clips")

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad is None:
        raise ValueError("tokenizer has neither a pad nor an eos token to left-pad the batch with")
    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), int(pad), dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, ids in enumerate(rows):
        if ids:
            input_ids[i, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            attention_mask[i, width - len(ids):] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, **features}


__all__ = ["AUDIO_TOKEN", "MIN_SECONDS", "AudioProcessing", "audio_token_id", "build_audio_inputs",
           "load_audio_processing", "num_audio_tokens", "prepare_audio", "render_chat"]
