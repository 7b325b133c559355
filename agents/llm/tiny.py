"""Tiny random-init models built locally for smoke tests, tutorials and benchmarks (no downloads).

``build_tiny_causal_lm(dir)``: a Qwen2-style causal LM (hidden 32, 2 layers)
with a byte-level BPE tokenizer trained on the fly on the bundled scenario
texts and the prompt templates, and a ChatML chat template (Qwen's). Its
outputs are garbage, which is the point for parse-failure paths; tests that
need valid actions use :class:`hear2act.agents.llm.scripted.ScriptedBackend`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def training_corpus(n_scenarios: int = 480) -> list[str]:
    """Texts the tokenizer learns from: prompt templates, scenario requests and options."""
    from hear2act.agents.prompts import TEMPLATES
    from hear2act_env import load_scenarios

    texts = [p.read_text(encoding="utf-8") for p in sorted(TEMPLATES.glob("*.txt"))]
    for s in load_scenarios()[:n_scenarios]:
        texts.append(s.request)
        texts.extend(o.description for o in s.options)
    texts.append("[ACTION: RECOMMEND] [OPTION: 3] [ACTION: ASK] [ACTION: CLARIFY] [ACTION: CONFIRM] <think></think>")
    return texts


def build_tokenizer(vocab_size: int = 4000, extra_corpus: Sequence[str] = (), added_tokens: Sequence[str] = ()):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with ChatML specials and chat template.

    ``extra_corpus``: more texts to learn merges from (e.g. the replies a model will be taught, so that
    ``[ACTION: RECOMMEND]`` becomes a few tokens instead of a dozen); ``added_tokens``: whole strings that become
    one (non-special) token each, e.g. ``[ACTION: CONFIRM]`` or ``[OPTION: 3]``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_corpus() + list(extra_corpus), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=["<|im_start|>"])
    fast.chat_template = CHATML
    if added_tokens:
        fast.add_tokens(list(added_tokens))
    return fast


def build_tiny_causal_lm(directory: str | Path, *, seed: int = 0, vocab_size: int = 4000, hidden_size: int = 32,
                         num_layers: int = 2, extra_corpus: Sequence[str] = (),
                         added_tokens: Sequence[str] = (), sliding_window: int = 0) -> Path:
    """Write a random Qwen2 causal LM + tokenizer to ``directory``; returns the path (loadable by ``hf:``).

    ``sliding_window > 0``: every layer attends to at most that many preceding tokens (Qwen2's sliding
    attention; ``max_window_layers=0`` so that it applies from the first layer -- Qwen2's default of 28 would
    leave a 2-layer model on full attention).
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab_size, extra_corpus, added_tokens)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192, tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
        **({"use_sliding_window": True, "sliding_window": sliding_window, "max_window_layers": 0}
           if sliding_window > 0 else {}),
    )
    with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's global RNG
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config).eval()
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


# -- audio LLMs (helper "audio-llm") ---------------------------------------------------------------------------------
# Tiny Qwen2.5-Omni thinker / Qwen2-Audio checkpoints laid out like the real ones: tokenizer with the audio special
# tokens and a chat template, preprocessor_config.json (WhisperFeatureExtractor, 128 mel bins), chat_template.json,
# weights. Loaded by omni:PATH / qwen2audio:PATH without any processor class.
OMNI_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
AUDIO_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>",
                  "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>")
_CORPUS = (
    "[ACTION: RECOMMEND] [OPTION: 3] How about this one? [ACTION: ASK] Is there anything else that matters to you? "
    "[ACTION: CONFIRM] Great, I'll book it. [ACTION: CLARIFY] Could you say more? User: That could work. "
    "Assistant: Based on your request, I'd recommend it. The user's delivery sounds hesitant, so the current "
    "recommendation seems unresolved. resolved unresolved concern rejection reluctant 0123456789 "
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?'\"()[]<>-_/\n"
)


def _audio_tokenizer(template: str, vocab_size: int = 400):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(AUDIO_SPECIALS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([_CORPUS] * 4, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   chat_template=template)


def _save_audio_model(model_class, config, tokenizer, root: Path, template: str, *, seed: int) -> Path:
    """Seeded random weights for ``config``, saved with the tokenizer and the audio processing files."""
    import json

    import torch
    from transformers import WhisperFeatureExtractor

    with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's global RNG
        torch.manual_seed(seed)
        model = model_class(config).eval()
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.pad_token_id = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    model.save_pretrained(root)
    tokenizer.save_pretrained(root)
    WhisperFeatureExtractor(feature_size=128, return_attention_mask=True).save_pretrained(root)
    (root / "chat_template.json").write_text(json.dumps({"chat_template": template}), encoding="utf-8")
    return root


def build_tiny_omni(directory: str | Path, *, seed: int = 0) -> Path:
    """A random tiny Qwen2.5-Omni thinker checkpoint (tokenizer, preprocessor_config.json, weights) in ``directory``."""
    from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

    root = Path(directory)
    tokenizer = _audio_tokenizer(OMNI_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in AUDIO_SPECIALS}
    config = Qwen2_5OmniThinkerConfig(
        audio_config={"d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                      "num_mel_bins": 128, "max_source_positions": 1500, "n_window": 100, "output_dim": 32},
        vision_config={"depth": 1, "hidden_size": 16, "intermediate_size": 32, "num_heads": 2, "out_hidden_size": 32,
                       "fullatt_block_indexes": [0]},
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                                                                          "mrope_section": [1, 1, 2]},
                     "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]},
        audio_token_index=ids["<|AUDIO|>"], image_token_index=ids["<|IMAGE|>"], video_token_index=ids["<|VIDEO|>"],
        audio_start_token_id=ids["<|audio_bos|>"], audio_end_token_id=ids["<|audio_eos|>"],
        vision_start_token_id=ids["<|vision_bos|>"], vision_end_token_id=ids["<|vision_eos|>"],
        user_token_id=tokenizer.convert_tokens_to_ids("user") or 0,
    )
    return _save_audio_model(Qwen2_5OmniThinkerForConditionalGeneration, config, tokenizer, root, OMNI_TEMPLATE,
                             seed=seed)


def build_tiny_qwen2audio(directory: str | Path, *, seed: int = 0) -> Path:
    """A random tiny Qwen2-Audio checkpoint (tokenizer, preprocessor_config.json, weights) in ``directory``."""
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration

    from hear2act.agents.llm.qwen2audio import QWEN2_AUDIO_TEMPLATE

    root = Path(directory)
    tokenizer = _audio_tokenizer(QWEN2_AUDIO_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in AUDIO_SPECIALS}
    config = Qwen2AudioConfig(
        audio_config={"model_type": "qwen2_audio_encoder", "d_model": 32, "encoder_layers": 1,
                      "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "num_mel_bins": 128,
                      "max_source_positions": 1500},
        text_config={"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"]},
        audio_token_index=ids["<|AUDIO|>"],
    )
    return _save_audio_model(Qwen2AudioForConditionalGeneration, config, tokenizer, root, QWEN2_AUDIO_TEMPLATE,
                             seed=seed)


_BUILT: dict[str, Path] = {}


def shared_tiny_causal_lm() -> Path:
    """One tiny causal LM per test process (built on first use into a temporary folder)."""
    if "causal" not in _BUILT:
        import tempfile

        _BUILT["causal"] = build_tiny_causal_lm(Path(tempfile.mkdtemp(prefix="hear2act-tiny-lm-")))
    return _BUILT["causal"]
