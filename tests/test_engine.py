"""The batched rollout engine: batch invariance, failures, parse failures, replay, data parallel."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from hear2act.agents import make_agent, make_policy
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.llm.policy import ModelPolicy, jsonable_messages, prompt_hash
from hear2act.agents.llm.scripted import ScriptedBackend
from hear2act.agents.prompts import build_messages, domain_from_scenario_id
from hear2act.eval.engine import EpisodeSpec, make_specs, read_jsonl, run_episodes, write_jsonl
from hear2act.eval.parallel import ProcessInfo, merge, run_sharded, shard
from hear2act.eval.rollout import run_episode
from hear2act_env import load_scenarios

ROOT = Path(__file__).resolve().parent.parent
IDS = [s.id for s in load_scenarios()[::24]]  # 20 scenarios over 20 domains
CHOICES = (
    "[ACTION: ASK] Is there anything about this option that doesn't work for you?",
    "[ACTION: RECOMMEND] [OPTION: {n}] How about this one?",
    "<think>The user sounds unsure.</think><answer>[ACTION: RECOMMEND] [OPTION: {n}] Maybe this?</answer>",
    "I am not sure what to do here.",  # unparseable
    "[ACTION: CONFIRM] Great, let's book it.",
)


def hashed_choice(request: GenerationRequest) -> str:
    """A deterministic 'model': its output depends only on its own prompt and seed."""
    blob = json.dumps(request.messages, sort_keys=True) + str(request.seed)
    h = int(hashlib.sha256(blob.encode()).hexdigest(), 16)
    return CHOICES[h % len(CHOICES)].format(n=1 + (h >> 8) % 11)


def specs(access: str = "T") -> list[EpisodeSpec]:
    out = []
    for env_id in ("Hear2Act-Prosody-v5", "Hear2Act-Explicit-v5"):
        out += make_specs(env_id, IDS, seed=7, access=access)
    return out


@pytest.mark.parametrize("access", ["T", "T+S"])
def test_batch_size_does_not_change_trajectories(access: str) -> None:
    runs = {}
    for batch_size in (1, 16):
        backend = ScriptedBackend(hashed_choice)
        runs[batch_size] = run_episodes(specs(access), ModelPolicy(backend, access=access), batch_size=batch_size)
        widest = max(len(call) for call in backend.calls)
        assert widest == min(batch_size, len(specs(access)))  # really batched
    assert runs[1] == runs[16]
    kinds = {t["parsed_kind"] for traj in runs[1] for t in traj["turns"]}
    assert {"ask", "recommend", "invalid", "confirm"} <= kinds


def test_trajectory_records_every_turn_and_is_json() -> None:
    trajs = run_episodes(specs("T+S")[:6], ModelPolicy(ScriptedBackend(hashed_choice), access="T+S"), batch_size=4)
    for traj in trajs:
        json.dumps(traj.to_dict())  # a Trajectory; its JSON object is to_dict()
        assert traj["failed"] is None and traj["outcome"] is not None
        assert traj["prompt_version"] == "v1"
        assert len(traj["turns"]) == traj["outcome"]["turns"] - 1  # the opening is turn 1 of the budget
        assert traj["parse_failures"] == sum(t["parsed_kind"] == "invalid" for t in traj["turns"])
        assert traj["parse_failures"] == traj["outcome"]["action_counts"]["invalid"]
        for t in traj["turns"]:
            assert set(t) >= {"turn", "prompt_hash", "raw", "reasoning", "action", "parsed_kind", "option",
                              "parse_error", "parse_note", "user_words", "state", "delivery", "audio_seed"}
            assert (t["parse_error"] != "") == (t["parsed_kind"] == "invalid")
            if t["raw"].startswith("<think>"):
                assert t["reasoning"] == "The user sounds unsure." and t["action"].startswith("[ACTION: RECOMMEND]")
            if t["parsed_kind"] == "recommend":
                assert 1 <= t["option"] <= 11


def test_prompts_are_rebuilt_by_replaying_the_actions() -> None:
    import gymnasium as gym

    spec = specs("T+S")[3]
    traj = run_episodes([spec], ModelPolicy(ScriptedBackend(hashed_choice), access="T+S"), record_prompts=True)[0]
    env = gym.make(spec.env_id, access=spec.access, disable_env_checker=True)
    obs, info = env.reset(seed=spec.seed, options={"scenario_id": spec.scenario_id})
    domain = domain_from_scenario_id(info["scenario_id"])
    for turn in traj["turns"]:
        record = jsonable_messages(build_messages(obs, spec.access, domain=domain))
        assert prompt_hash(record) == turn["prompt_hash"]
        assert record == turn["prompt"]
        obs, *_ = env.step(turn["action"])
        assert env.unwrapped.utterance == (turn["user_words"], turn["delivery"], turn["audio_seed"])


def test_rule_agents_through_the_engine_match_a_plain_step_loop() -> None:
    """The engine (batched, pooled envs) plays a rule agent exactly as stepping one env by hand does."""
    for agent, access in (("state-rule", "T+S"), ("transcript-rule", "T"), ("oracle", "T")):
        specs_ = make_specs("Hear2Act-Prosody-v5", IDS, seed=3, access=access)
        batched = run_episodes(specs_, make_policy(agent, access=access), batch_size=8)
        env = gym.make("Hear2Act-Prosody-v5", access=access, disable_env_checker=True)
        for spec, traj in zip(specs_, batched, strict=True):
            plain = run_episode(env, make_agent(agent), spec.scenario_id, spec.seed)
            for key in ("success", "turns", "final_option", "n_disclosed", "premature_closure", "action_counts"):
                assert traj["outcome"][key] == plain[key], (agent, spec.scenario_id, key)


def test_a_failed_call_fails_only_its_episode_with_the_reason() -> None:
    chosen = specs()[:5]
    backend = ScriptedBackend(hashed_choice, fail={chosen[2].key: "HTTP 500 after 5 attempts"})
    done: list[str] = []
    trajs = run_episodes(chosen, ModelPolicy(backend, access="T"), batch_size=3,
                         on_done=lambda t: done.append(t["key"]))
    assert trajs[2]["failed"] == "HTTP 500 after 5 attempts" and trajs[2]["outcome"] is None
    assert trajs[2]["turns"][-1]["error"] == "HTTP 500 after 5 attempts"
    assert all(t["failed"] is None and t["outcome"] for i, t in enumerate(trajs) if i != 2)
    assert sorted(done) == sorted(s.key for s in chosen)


def test_garbage_outputs_are_parse_failures_and_episodes_end_by_truncation() -> None:
    trajs = run_episodes(specs()[:3], ModelPolicy(ScriptedBackend(lambda r: "zzz qq"), access="T"))
    for traj in trajs:
        assert traj["outcome"]["turns"] == 20 and not traj["outcome"]["confirmed"]
        assert traj["parse_failures"] == 19
        assert traj["turns"][0]["parse_error"].startswith("no [ACTION")


def test_bad_specs_are_refused_before_anything_runs() -> None:
    policy = make_policy("confirm", access="T")
    with pytest.raises(ValueError, match="unknown scenario_id 'nope'"):
        run_episodes([EpisodeSpec("Hear2Act-Prosody-v5", "nope", 0)], policy)
    with pytest.raises(ValueError, match="unknown env_id"):
        run_episodes([EpisodeSpec("Hear2Act-Foo-v0", IDS[0], 0)], policy)
    dup = EpisodeSpec("Hear2Act-Prosody-v5", IDS[0], 0, key="a")
    with pytest.raises(ValueError, match="unique"):
        run_episodes([dup, dup], policy)
    with pytest.raises(ValueError, match="batch_size"):
        run_episodes([dup], policy, batch_size=0)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    trajs = run_episodes(specs()[:2], make_policy("random", access="T"))
    assert read_jsonl(write_jsonl(trajs, tmp_path / "t.jsonl")) == trajs
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\n{oops\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2"):
        read_jsonl(tmp_path / "bad.jsonl")


def test_shards_cover_every_episode_once_and_merge_in_order() -> None:
    n, world = 11, 3
    parts = [shard(n, r, world) for r in range(world)]
    assert sorted(i for p in parts for i in p) == list(range(n))
    chosen = specs()[:7]
    whole = run_episodes(chosen, ModelPolicy(ScriptedBackend(hashed_choice), access="T"), batch_size=4)
    assert run_sharded(chosen, lambda: ModelPolicy(ScriptedBackend(hashed_choice), access="T"), batch_size=4,
                       info=ProcessInfo(0, 1)) == whole
    with pytest.raises(RuntimeError, match="missing"):
        merge([[(0, "a")]], 2)
    with pytest.raises(RuntimeError, match="two processes"):
        merge([[(0, "a")], [(0, "b")]], 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # end to end, over 15 s: make test runs it, make test-fast leaves it out
def test_two_processes_split_the_episodes_of_a_tiny_hf_model(tmp_path: Path) -> None:
    """What `accelerate launch` / `torchrun` do: two processes with RANK/WORLD_SIZE, merged over gloo."""
    from hear2act.agents.llm.tiny import shared_tiny_causal_lm

    model = shared_tiny_causal_lm()
    out = tmp_path / "merged.jsonl"
    port = _free_port()
    procs = []
    for rank in (0, 1):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "hear2act_env.cli", "rollout", "--agent", f"hf:{model}", "--n", "2",
               "--max-new-tokens", "4", "--quiet", "--out", str(out)]
        procs.append(subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], logs
    assert "episodes 2 (failed 0, on 2 process(es))" in logs[0], logs[0]
    assert "episodes" not in logs[1]
    trajs = read_jsonl(out)
    assert [t["scenario_id"] for t in trajs] == [s.id for s in load_scenarios()[:2]]
    assert all(t["outcome"]["turns"] == 20 and t["parse_failures"] == 19 for t in trajs)


class _FlakyPerceiver:
    """Fails for good on chosen episodes (by their request line), at reset or at a later turn."""

    name = "flaky"

    def __init__(self, at_reset: str, later: str) -> None:
        from hear2act_env.speech.perceiver import Perception

        self._perception = Perception("The user sounds satisfied.", "resolved", "resolved", 0.9, ())
        self.at_reset, self.later = at_reset, later

    def perceive(self, audio, sr, words="", context=""):
        from hear2act.agents.llm.perceiver_llm import PerceptionError

        lines = context.splitlines()
        first = lines[0] if lines else ""
        if self.at_reset in first or (self.later in first and len(lines) > 4):
            raise PerceptionError("server kept returning 500")
        return self._perception


@pytest.mark.slow
def test_a_failing_perceiver_fails_only_its_episode_at_reset_or_later() -> None:
    pytest.importorskip("hibari")
    scenarios = {s.id: s for s in load_scenarios()}
    chosen = make_specs("Hear2Act-Prosody-v5", IDS[:4], seed=3, access="T+S_hat")
    perceiver = _FlakyPerceiver(scenarios[IDS[1]].request, scenarios[IDS[2]].request)
    chosen = [EpisodeSpec(**{**s.__dict__, "env_kwargs": {"perceiver": perceiver}}) for s in chosen]
    policy = ModelPolicy(ScriptedBackend(hashed_choice), access="T+S_hat")
    done: list[str] = []
    trajs = run_episodes(chosen, policy, batch_size=2, on_done=lambda t: done.append(t["key"]))
    assert [t["key"] for t in trajs] == [s.key for s in chosen]
    assert "PerceptionError" in trajs[1]["failed"] and trajs[1]["turns"] == [] and trajs[1]["outcome"] is None
    assert "PerceptionError" in trajs[2]["failed"] and trajs[2]["outcome"] is None  # failed mid-episode
    assert trajs[2]["turns"] and trajs[2]["turns"][-1]["error"] == trajs[2]["failed"]
    assert trajs[0]["failed"] is None and trajs[0]["outcome"] is not None
    assert trajs[3]["failed"] is None and trajs[3]["outcome"] is not None
    assert sorted(done) == sorted(s.key for s in chosen)
