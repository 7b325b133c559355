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


def _episode_requests(turns: int = 4):
    """Requests like an episode's: each turn's prompt extends the previous one (the prefix cache's case)."""
    from hear2act.agents.llm.backend import GenerationRequest

    history = "\n".join(f"Option {i}: ${10 * i} a month, rated {i % 5}/5." for i in range(1, 12))
    messages = [{"role": "system", "content": history}]
    out = []
    for k in range(turns):
        messages = [*messages, {"role": "user", "content": f"Turn {k}: that one sounds fine, I guess."}]
        out.append(GenerationRequest(list(messages), seed=k))
        messages = [*messages, {"role": "assistant", "content": f"[ACTION: RECOMMEND] [OPTION: {k + 1}]"}]
    return out


def test_a_windowed_tiny_lm_answers_as_without_the_prefix_cache(tmp_path):
    """A reused prefix cache of a sliding layer changed a windowed tiny LM's replies (19 of 32 held-out prompts
    confirmed with it, 0 without), so hf: turns the cache off for such a model and says so."""
    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "lm", seed=0, hidden_size=32, num_layers=2, sliding_window=16)
    with pytest.warns(UserWarning, match="prefix caching is off"):
        cached = HFBackend(str(path), max_new_tokens=6, temperature=1.0, threads=1)
    assert cached.prefix_store is None
    plain = HFBackend(str(path), max_new_tokens=6, temperature=1.0, prefix_cache=False, threads=1)
    requests = _episode_requests()
    got = [cached.generate([r])[0].text for r in requests]  # one turn a call, as an episode plays
    want = [plain.generate([r])[0].text for r in requests]
    assert got == want and any(got)


def test_a_full_attention_tiny_lm_keeps_the_prefix_cache(tmp_path):
    import warnings

    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.tiny import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "lm", seed=0, hidden_size=32, num_layers=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        backend = HFBackend(str(path), max_new_tokens=6, threads=1)
    assert backend.prefix_store is not None
