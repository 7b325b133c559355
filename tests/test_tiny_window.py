"""The tiny LM's sliding attention window (``build_tiny_causal_lm(sliding_window=N)``) really limits every layer.

Qwen2 applies its window only to layers at or past ``max_window_layers`` (default 28), so a window set without
it leaves a 2-layer model on full attention; the builder sets it to 0. Measured on the logits: a token farther
back than the window must not move the last position's output, and must with full attention.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def _last_logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0, -1]


@pytest.mark.parametrize("window", [0, 8])
def test_a_token_beyond_the_window_does_not_reach_the_answer(tmp_path, window):
    from transformers import AutoModelForCausalLM

    from hear2act.agents.llm.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "lm", seed=0, hidden_size=32, num_layers=2, sliding_window=window)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    ids = [(7 * i) % 200 + 10 for i in range(40)]
    far, near = list(ids), list(ids)
    far[2] += 1  # 38 tokens before the last: outside an 8-token window of two layers (reach 2 x 7 = 14)
    near[-3] += 1
    base = _last_logits(model, ids)
    moved_far = (base - _last_logits(model, far)).abs().max().item()
    moved_near = (base - _last_logits(model, near)).abs().max().item()
    assert moved_near > 1e-6
    if window:
        assert model.config.layer_types == ["sliding_attention", "sliding_attention"]
        assert moved_far == 0.0
    else:
        assert moved_far > 1e-6


def test_a_windowed_tiny_lm_answers_alike_with_and_without_the_prefix_cache(tmp_path):
    """hf: takes model.generate on the stacked cache for a sliding layer; its sampled replies must be the
    uncached path's, prompt for prompt (long prompts: the window drops their start)."""
    from hear2act.agents.llm.backend import GenerationRequest
    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "lm", seed=0, hidden_size=32, num_layers=2, sliding_window=16)
    history = " ".join(f"option {i} costs ${10 * i}." for i in range(30))
    requests = [GenerationRequest([{"role": "system", "content": history},
                                   {"role": "user", "content": f"Turn {k}: which one?"}], seed=k)
                for k in range(3)]
    replies = {}
    for cached in (True, False):
        backend = HFBackend(str(path), max_new_tokens=6, temperature=1.0, prefix_cache=cached, threads=1)
        replies[cached] = [g.text for g in backend.generate(requests)]
    assert replies[True] == replies[False]
    assert any(replies[True])
