"""GRPO for Qwen2.5-Omni (and other Qwen audio LLMs) with the user's audio in every forward.

Stock TRL 1.16 ``GRPOTrainer`` builds multimodal model inputs from image
keys only. Audio can reach ``generate`` but the old-logprob, reference and
loss forwards (``_get_per_token_logps_and_entropies``, ``_compute_loss``)
drop ``input_features`` / ``feature_attention_mask``: the placeholders are
then read as plain text tokens, the log-probs belong to a different
(audio-less) model, and the audio encoder never gets a gradient -- with no
error. :class:`OmniGRPOTrainer` fixes this:

* ``_tokenize_prompts`` builds the prompts with
  :func:`hear2act.agents.llm.audio_inputs.build_audio_inputs` (the processor-free path
  evaluation uses, so training and evaluation see identical inputs) and keeps
  the features as per-row tensors ``(B, clips, mel, frames)`` so TRL's
  shuffling and splitting of the generation batch keeps them aligned with
  their rows;
* the features are returned in the generation batch and passed, row-sliced,
  to every forward (old policy, reference, loss);
* the audio placeholder is suppressed during sampling (TRL only suppresses an
  image token, and only for processors): a sampled placeholder would not
  match the features;
* the vision tower is frozen (Hear2Act has no images) and DDP is told to
  expect parameters without gradients (text-only batches skip the audio
  tower), as TRL does only when the processing class is a processor.

Prompts without audio fall through to the stock text path, so the same
trainer serves every access condition. With ``beta > 0`` TRL rebuilds the
reference model from the model's ``name_or_path``: pass a saved directory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hear2act.agents.llm.audio_inputs import AUDIO_TOKEN, AudioProcessing, audio_token_id, build_audio_inputs
from hear2act_env.extras import missing_extra

from .grpo_data import attach_audio

AUDIO_KEYS = ("input_features", "feature_attention_mask")


def _clips_per_row(prompts: list[Any]) -> list[int]:
    counts = []
    for prompt in prompts:
        n = 0
        for message in prompt if isinstance(prompt, list) else []:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                n += sum(1 for p in content if isinstance(p, dict) and p.get("type") == "audio")
        counts.append(n)
    return counts


def _trainer_base():
    try:
        from trl import GRPOTrainer
    except ImportError as exc:
        raise ImportError(missing_extra("GRPO training", "train", exc)) from exc
    return GRPOTrainer


class OmniGRPOTrainer(_trainer_base()):
    """``GRPOTrainer`` whose every forward of the policy and the reference model sees the prompt's audio.

    Arguments are those of ``trl.GRPOTrainer`` plus ``audio_processing``
    (:class:`hear2act.agents.llm.audio_inputs.AudioProcessing`: tokenizer, Whisper
    feature extractor, chat template); its tokenizer is the processing class.
    """

    def __init__(self, *args: Any, audio_processing: AudioProcessing, **kwargs: Any) -> None:
        kwargs.setdefault("processing_class", audio_processing.tokenizer)
        self.audio_processing = audio_processing
        model = kwargs.get("model", args[0] if args else None)
        visual = getattr(model, "visual", None) or getattr(getattr(model, "model", None), "visual", None)
        if visual is not None:  # no images in Hear2Act: the vision tower stays as loaded
            visual.requires_grad_(False)
        config = kwargs.get("args", args[2] if len(args) > 2 else None)
        if config is not None and config.ddp_find_unused_parameters is None:
            # A text-only batch (T, T+S access) leaves the audio tower without gradients; DDP must expect it.
            # (TRL does this for processors only; here the processing class is the tokenizer.)
            config.ddp_find_unused_parameters = True
        self._audio: dict[str, Any] | None = None  # the features of the rows being scored right now
        super().__init__(*args, **kwargs)
        self.audio_token_id = audio_token_id(self._tokenizer, audio_processing.audio_token)
        suppress = sorted({*(self.generation_kwargs.get("suppress_tokens") or []), self.audio_token_id})
        self.generation_kwargs["suppress_tokens"] = suppress
        self.generation_config.suppress_tokens = suppress

    # -- generation: audio-aware prompt building ---------------------------------------------------------------
    def _tokenize_prompts(self, prompts: list):
        counts = _clips_per_row(prompts)
        if not any(counts):
            return super()._tokenize_prompts(prompts)
        if self.use_vllm or self.use_transformers_continuous_batching:
            raise ValueError("audio prompts need transformers generate(): TRL's vLLM and continuous-batching paths "
                             "drop the audio features (set use_vllm=False, use_transformers_continuous_batching=False)")
        if len(set(counts)) != 1:
            raise ValueError(f"every prompt of a batch needs the same number of audio clips, got {counts}; "
                             "build the dataset from one access condition")
        p = self.audio_processing
        batch = build_audio_inputs(prompts, p.tokenizer, p.feature_extractor, chat_template=p.chat_template,
                                   audio_token=p.audio_token)
        prompt_ids = [ids[mask.bool()].tolist() for ids, mask in zip(batch["input_ids"], batch["attention_mask"],
                                                                        strict=True)]
        dtype = self.accelerator.unwrap_model(self.model).dtype
        features = batch["input_features"].to(dtype)
        rows, clips = len(prompts), counts[0]
        self._audio = {
            "input_features": features.reshape(rows, clips, *features.shape[1:]),
            "feature_attention_mask": batch["feature_attention_mask"].reshape(rows, clips, -1),
        }
        # generate() takes the flat per-clip tensors, as the model does.
        return prompt_ids, None, {"input_features": features, "feature_attention_mask": batch["feature_attention_mask"]}

    def _generate_and_score_completions(self, inputs):
        self._audio = None
        # Dataset rows keep the clip in an ``audio`` column (Arrow cannot mix str and part-list contents):
        # put it back into the last user message, where hear2act.agents.prompts.build_messages had it.
        inputs = [{**x, "prompt": attach_audio(x["prompt"], np.asarray(x["audio"], dtype=np.float32))}
                  if x.get("audio") is not None and not any(_clips_per_row([x["prompt"]])) else x for x in inputs]
        try:
            output = super()._generate_and_score_completions(inputs)
            if self._audio is not None:
                device = output["prompt_ids"].device
                output.update({k: v.to(device) for k, v in self._audio.items()})
        finally:
            self._audio = None
        return output

    # -- every scoring / loss forward gets the rows' audio -----------------------------------------------------
    def _compute_loss(self, model, inputs):
        self._audio = {k: inputs[k] for k in AUDIO_KEYS if k in inputs} or None
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._audio = None

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                                           compute_entropy=False, compute_aux_loss=False, input_features=None,
                                           feature_attention_mask=None, **kwargs):
        if input_features is None and self._audio is not None:
            input_features = self._audio["input_features"]
            feature_attention_mask = self._audio["feature_attention_mask"]
        if input_features is None:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **kwargs)
        if input_features.shape[0] != input_ids.shape[0]:
            raise RuntimeError(f"audio features for {input_features.shape[0]} rows, inputs have {input_ids.shape[0]}")
        import torch

        batch_size = batch_size or input_ids.size(0)
        all_logps, all_entropies, all_aux = [], [], []
        for start in range(0, input_ids.size(0), batch_size):
            end = min(start + batch_size, input_ids.size(0))
            ids = input_ids[start:end]
            mask = attention_mask[start:end]
            model_inputs = {
                "input_ids": ids, "attention_mask": mask,
                "input_features": input_features[start:end].flatten(0, 1),
                "feature_attention_mask": feature_attention_mask[start:end].flatten(0, 1),
            }
            if compute_aux_loss:
                model_inputs["output_router_logits"] = True
            labels = ids.masked_fill(mask == 0, -100)
            labels[:, :-logits_to_keep] = -100
            with self.accelerator.autocast():
                outputs = model(**model_inputs, labels=labels, fused_lm_head=True)
            all_logps.append(outputs.log_probs[:, -logits_to_keep:])
            if compute_entropy:
                all_entropies.append(outputs.entropy[:, -logits_to_keep:])
            if compute_aux_loss:
                all_aux.append(outputs.aux_loss)
        logps = torch.cat(all_logps, dim=0)
        entropies = torch.cat(all_entropies, dim=0) if compute_entropy else None
        aux = torch.stack(all_aux).mean() if compute_aux_loss else None
        return logps, entropies, aux


def load_omni_for_training(path: str, *, dtype: str = "auto", audio_token: str = AUDIO_TOKEN):
    """(thinker model, :class:`AudioProcessing`) of a checkpoint directory (full Omni or thinker-only)."""
    try:
        import torch
        from transformers import Qwen2_5OmniThinkerForConditionalGeneration
    except ImportError as exc:
        raise ImportError(missing_extra("GRPO training", "train", exc)) from exc
    from hear2act.agents.llm.audio_inputs import load_audio_processing

    torch_dtype = {"auto": torch.bfloat16 if torch.cuda.is_available() else torch.float32,
                   "bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}.get(dtype)
    if torch_dtype is None:
        raise ValueError(f"dtype must be auto, bfloat16, float16 or float32, got {dtype!r}")
    model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(path, dtype=torch_dtype)
    return model, load_audio_processing(path, audio_token=audio_token)


__all__ = ["AUDIO_KEYS", "OmniGRPOTrainer", "load_omni_for_training"]
