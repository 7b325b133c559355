"""Cutting a prompt to a windowed model's receptive field (``hear2act.agents.llm.window``) changes no answer.

A model whose every layer attends through a sliding window sees only the prompt's last ``L * (W - 1) + 1`` tokens.
``hf:`` and the GRPO rollout cut the rest before the forward; these tests measure the logits and the replies of
the cut prompt against the whole one, and check that a model with full attention is never cut.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def _model(tmp_path, window: int):
    from transformers import AutoModelForCausalLM

    from hear2act.agents.llm.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / f"lm{window}", seed=0, hidden_size=32, num_layers=2,
                                sliding_window=window)
    return path, AutoModelForCausalLM.from_pretrained(path).eval()


def _logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0, -1]


def test_the_field_of_a_windowed_model_is_layers_times_reach(tmp_path):
    from hear2act.agents.llm.window import model_field

    _, windowed = _model(tmp_path, 8)
    _, full = _model(tmp_path, 0)
    assert model_field(windowed) == 2 * 7 + 1
    assert model_field(full) is None


def test_the_cut_prompt_gives_the_whole_prompts_logits(tmp_path):
    from hear2act.agents.llm.window import clip_prompt, model_field

    _, model = _model(tmp_path, 8)
    field = model_field(model)
    ids = [(13 * i) % 300 + 10 for i in range(200)]
    whole, cut = _logits(model, ids), _logits(model, clip_prompt(ids, field))
    assert len(clip_prompt(ids, field)) == field
    assert (whole - cut).abs().max().item() < 1e-4
    assert int(whole.argmax()) == int(cut.argmax())
    # One token fewer is not enough: the first token of the field reaches the answer.
    short = _logits(model, ids[-(field - 1):])
    assert (whole - short).abs().max().item() > 1e-5


def _requests():
    from hear2act.agents.llm.backend import GenerationRequest

    options = "\n".join(f"Option {i}: ${10 * i} a month, rated {i % 5}/5, free setup." for i in range(1, 12))
    out, messages = [], [{"role": "system", "content": options}]
    for k in range(4):
        messages = [*messages, {"role": "user", "content": f"Turn {k}: that one sounds fine, I guess."}]
        out.append(GenerationRequest(list(messages), seed=k))
        messages = [*messages, {"role": "assistant", "content": f"[ACTION: RECOMMEND] [OPTION: {k + 1}]"}]
    return out


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_hf_replies_are_those_of_the_whole_prompt(tmp_path, temperature):
    from hear2act.agents.llm.hf import HFBackend

    path, _ = _model(tmp_path, 8)
    cut = HFBackend(str(path), max_new_tokens=8, temperature=temperature, prefix_cache=False, threads=1)
    whole = HFBackend(str(path), max_new_tokens=8, temperature=temperature, prefix_cache=False, threads=1)
    whole.field = None  # the backend before the cut
    requests = _requests()
    assert cut.field == 15
    got, want = cut.generate(requests), whole.generate(requests)
    assert [g.text for g in got] == [g.text for g in want]
    assert cut.stats["prompt_tokens"] == 15 * len(requests) < whole.stats["prompt_tokens"]


def test_a_full_attention_model_is_never_cut(tmp_path):
    from hear2act.agents.llm.hf import HFBackend

    path, _ = _model(tmp_path, 0)
    backend = HFBackend(str(path), max_new_tokens=4, prefix_cache=False, threads=1)
    requests = _requests()
    backend.generate(requests)
    texts = backend.prompt_texts(requests)
    assert backend.field is None
    assert backend.stats["prompt_tokens"] == sum(len(backend.tokenizer(t, add_special_tokens=False)["input_ids"])
                                                 for t in texts)


def test_the_grpo_rollout_trains_on_the_cut_ids(tmp_path):
    """SamplingPolicy returns the ids it sampled from: cut to the field, so GRPO's forward sees what hf: sees."""
    from hear2act.agents.base import PolicyInput
    from hear2act.training.episode_rollout import SamplingPolicy
    from hear2act_env import load_scenarios
    from hear2act_env.env import Hear2ActEnv

    path, model = _model(tmp_path, 8)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    env = Hear2ActEnv(access="T+S", scenarios=load_scenarios()[:1])
    obs, _ = env.reset(seed=0)
    policy = SamplingPolicy(model, tok, access="T+S", reasoning=False, max_new_tokens=4)
    out = policy.act_batch([PolicyInput(observation=obs, info_reset={}, episode_seed=0, turn=0, key="e0")])[0]
    assert len(out.extra["prompt_ids"]) == 15
