"""Model policies: P6a-P6d prompts, reasoning split, make_policy, ModelPolicy, the hf: backend on a tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from hear2act.agents import AGENTS, PolicyInput, make_policy
from hear2act.agents.adapter import RuleAgentPolicy
from hear2act.agents.llm import call_seed, make_backend, split_reasoning
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.llm.openai_backend import parse_target
from hear2act.agents.llm.policy import ModelPolicy
from hear2act.agents.llm.scripted import ScriptedBackend
from hear2act.agents.prompts import build_infer_messages, build_messages, domain_from_scenario_id
from hear2act.eval.engine import EpisodeSpec, run_episodes
from hear2act_env import load_scenarios
from hear2act_env.cli import main

P6A_FORMS = ("[ACTION: RECOMMEND] [OPTION: <number>] <assistant utterance>", "[ACTION: ASK] <assistant utterance>",
             "[ACTION: CONFIRM] <assistant utterance>")


def first_obs(access: str = "T", env_id: str = "Hear2Act-Prosody-v5", **kw: object) -> tuple[dict, dict]:
    env = gym.make(env_id, access=access, disable_env_checker=True, **kw)
    return env.reset(seed=0, options={"scenario_id": load_scenarios()[0].id})


def text_of(messages: list[dict]) -> str:
    parts = []
    for m in messages:
        c = m["content"]
        parts.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))
    return "\n".join(parts)


# -- prompts ---------------------------------------------------------------------------------------------------------
def test_p6a_spoken_and_text_variants() -> None:
    obs, _ = first_obs()
    spoken = build_messages(obs, "T", domain="budget airline tickets")
    assert [m["role"] for m in spoken] == ["system", "user"]
    system = spoken[0]["content"]
    assert system.startswith("You are a task-oriented service assistant for budget airline tickets.")
    assert obs["options"] in system and all(form in system for form in P6A_FORMS)
    assert "CLARIFY" not in system  # spoken assistants have no CLARIFY (G.4)
    assert obs["transcript"] in spoken[1]["content"] and "CONCERN STATE" not in text_of(spoken)
    text = build_messages(obs, "T", assistant="text")[0]["content"]
    assert "[ACTION: CLARIFY] <assistant utterance>" in text and all(form in text for form in P6A_FORMS)
    with pytest.raises(ValueError, match="assistant must be one of"):
        build_messages(obs, "T", assistant="robot")


def test_t_plus_s_adds_only_the_state_definition_and_the_tag() -> None:
    obs_t, _ = first_obs("T")
    obs_s, _ = first_obs("T+S")
    t, s = build_messages(obs_t, "T"), build_messages(obs_s, "T+S")
    assert s[0]["content"].startswith(t[0]["content"])  # same instructions, plus the definition (G.3)
    assert "CONCERN STATE: <label> (resolved|unresolved)" in s[0]["content"]
    assert obs_s["state"].startswith("CONCERN STATE: ") and obs_s["state"] in s[1]["content"]
    assert "indicates whether it should be treated as resolved or unresolved" in s[1]["content"]
    none_obs, _ = first_obs("T+S", state_intervention="none")
    none = build_messages(none_obs, "T+S")
    assert none[0]["content"] == s[0]["content"] and "CONCERN STATE:" not in none[1]["content"]


def test_two_stage_and_audio_and_affect_channels() -> None:
    obs_t, _ = first_obs("T")
    hat = {**obs_t, "inferred_state": "AUDIO-INFERRED STATE: The user sounds hesitant about this option."}
    msgs = build_messages(hat, "T+S_hat")
    assert "AUDIO-INFERRED STATE: The user sounds hesitant about this option." in msgs[1]["content"]
    assert msgs[1]["content"].startswith("DIALOGUE TRANSCRIPT:\n" + obs_t["transcript"])  # P6d
    assert "INFERRED STATE: AUDIO" not in msgs[1]["content"]
    audio = np.linspace(-0.1, 0.1, 1600, dtype=np.float64)
    for access in ("A", "A+T"):
        msgs = build_messages({**obs_t, "audio": audio}, access)
        parts = msgs[-1]["content"]
        assert [p["type"] for p in parts] == ["text", "audio"]
        assert parts[1]["audio"].dtype == np.float32 and parts[1]["sampling_rate"] == 16000
        assert "audio of the user's latest turn is attached" in parts[0]["text"]
    affect = build_messages({**obs_t, "affect": "sad"}, "T+affect")
    assert "USER AFFECT: sad" in affect[1]["content"]
    p6c = build_infer_messages("User: hi\nAssistant: ok", audio)
    text = p6c[0]["content"][0]["text"]
    assert text.startswith("DIALOGUE CONTEXT:\nUser: hi") and "Write your interpretation in one short sentence." in text
    assert p6c[0]["content"][1]["type"] == "audio"


def test_prompts_come_only_from_the_observation() -> None:
    with pytest.raises(ValueError, match="'state'"):
        build_messages(first_obs("T")[0], "T+S")  # a T observation has no tag: no other source is consulted
    with pytest.raises(ValueError, match="'audio'"):
        build_messages(first_obs("T")[0], "A")
    with pytest.raises(ValueError, match="access must be one of"):
        build_messages(first_obs("T")[0], "X")
    obs, _ = first_obs("T+S")
    assert build_messages({**obs, "secret": "gold is 4"}, "T+S") == build_messages(obs, "T+S")
    # Over whole rollouts, a hidden need's statement is in the prompt only once the transcript shows it.
    scenarios = {s.id: s for s in load_scenarios()}
    for env_id in ("Hear2Act-Prosody-v5", "Hear2Act-Explicit-v5"):
        env = gym.make(env_id, access="T+S", disable_env_checker=True)
        agent = make_policy("state-rule", access="T+S")
        for sid in list(scenarios)[::60]:
            obs, _ = env.reset(seed=1, options={"scenario_id": sid})
            done, turn = False, 0
            while not done:
                prompt = text_of(build_messages(obs, "T+S", domain=domain_from_scenario_id(sid)))
                for need in scenarios[sid].needs:
                    assert (need.statement in prompt) == (need.statement in obs["transcript"])
                action = agent.act_batch([PolicyInput(obs, {"scenario_id": sid}, 1, turn, sid)])[0].action
                obs, _, term, trunc, _ = env.step(action)
                done, turn = term or trunc, turn + 1


def test_domain_from_scenario_id() -> None:
    assert domain_from_scenario_id("budget-airline-tickets-03") == "budget airline tickets"
    assert domain_from_scenario_id("") == "a consumer service"


# -- reasoning ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("[ACTION: ASK] Why?", ("", "[ACTION: ASK] Why?")),
    ("<think> sounds flat </think>\n<answer>[ACTION: ASK] Why?</answer>", ("sounds flat", "[ACTION: ASK] Why?")),
    ("<think>r</think> [ACTION: CONFIRM] ok", ("r", "[ACTION: CONFIRM] ok")),
    ("r1 r2</think><answer>[ACTION: CONFIRM]</answer>", ("r1 r2", "[ACTION: CONFIRM]")),
    ("<think>never closed [ACTION: CONFIRM]", ("never closed [ACTION: CONFIRM]", "")),
    ("<answer>[ACTION: ASK] Why?", ("", "[ACTION: ASK] Why?")),
    ("<THINK>a</THINK><ANSWER>b</ANSWER>", ("a", "b")),
])
def test_split_reasoning(text: str, expected: tuple[str, str]) -> None:
    assert split_reasoning(text) == expected


# -- make_policy / ModelPolicy -------------------------------------------------------------------------------------
def test_make_policy_specs_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AGENTS:
        assert isinstance(make_policy(name, access="T"), RuleAgentPolicy)
    with pytest.raises(ValueError, match=r"unknown agent 'gpt'.*hf"):
        make_policy("gpt", access="T")
    with pytest.raises(ValueError, match="names no model"):
        make_policy("hf:", access="T")
    with pytest.raises(ValueError, match="unknown agent"):
        make_policy("nope", access="T")
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["[ACTION: CONFIRM] ok"]))
    policy = make_policy(f"scripted:{script}", access="T+S", assistant="text", reasoning=True)
    assert isinstance(policy, ModelPolicy) and policy.assistant == "text" and policy.reasoning
    assert parse_target("Qwen/Qwen2.5-7B-Instruct@http://localhost:8000/v1") == (
        "Qwen/Qwen2.5-7B-Instruct", "http://localhost:8000/v1")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="MODEL@URL"):
        parse_target("just-a-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h:1/v1")
    assert parse_target("m") == ("m", "http://h:1/v1")


def test_model_policy_outputs_and_text_only_guard() -> None:
    obs, info = first_obs("T+S")
    backend = ScriptedBackend(["<think>hesitant</think><answer>[ACTION: ASK] What worries you?</answer>"])
    policy = ModelPolicy(backend, access="T+S")
    out = policy.act_batch([PolicyInput(obs, {"scenario_id": info["scenario_id"]}, 5, 0, "ep")])[0]
    assert out.action == "[ACTION: ASK] What worries you?" and out.reasoning == "hesitant"
    assert out.raw.startswith("<think>") and out.error == "" and len(out.prompt_hash) == 16
    request = backend.calls[0][0]
    assert request.seed == call_seed(5, 0) and request.key == "ep/0"
    assert call_seed(5, 0) != call_seed(5, 1) != call_seed(6, 0) and call_seed(5, 0, 1) != call_seed(5, 0)
    failing = ModelPolicy(ScriptedBackend(fail={"ep": "timeout"}), access="T+S")
    out = failing.act_batch([PolicyInput(obs, {"scenario_id": info["scenario_id"]}, 5, 0, "ep")])[0]
    assert out.error == "timeout" and out.action == ""

    class TextOnly(ScriptedBackend):
        accepts_audio = False

    with pytest.raises(ValueError, match="text-only"):
        ModelPolicy(TextOnly(), access="A+T")


def test_cli_rollout_with_a_scripted_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["[ACTION: ASK] Anything else?", "not an action", "[ACTION: CONFIRM] Done."]))
    out = tmp_path / "t.jsonl"
    assert main(["rollout", "--agent", f"scripted:{script}", "--n", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "episodes 3 (failed 0, on 1 process(es)); parse failures 3/" in printed
    assert printed.count("parse_failures=1") == 3
    assert len(out.read_text().splitlines()) == 3
    assert not list(tmp_path.glob("t.jsonl.part*"))  # the streamed part file is gone once the merge is written


# -- hf: backend on a tiny random model -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny() -> Path:
    from hear2act.agents.llm.tiny import shared_tiny_causal_lm

    return shared_tiny_causal_lm()


def test_hf_backend_batches_are_row_independent(tiny: Path) -> None:
    obs, _ = first_obs("T")
    other, _ = gym.make("Hear2Act-Explicit-v5", disable_env_checker=True).reset(seed=3)
    requests = [GenerationRequest(build_messages(o, "T"), seed=s, key=str(i))
                for i, (o, s) in enumerate([(obs, 1), (other, 2), (obs, 3)])]
    for temperature in (0.0, 1.0):
        backend = make_backend(f"hf:{tiny}", max_new_tokens=6, temperature=temperature)
        batched = backend.generate(requests)
        single = [backend.generate([r])[0] for r in requests]
        assert [g.text for g in batched] == [g.text for g in single]
        assert all(0 < g.n_tokens <= 6 and g.error == "" for g in batched)
        if temperature:  # same prompt, different seeds: different samples; same seed: same sample
            assert batched[0].text != batched[2].text
            assert backend.generate([requests[0]])[0].text == batched[0].text
        else:
            assert batched[0].text == batched[2].text
    with pytest.raises(ValueError, match="text-only"):
        backend.generate([GenerationRequest(build_messages({**obs, "audio": np.zeros(160)}, "A"), 0)])


def test_hf_policy_plays_real_episodes_to_truncation(tiny: Path) -> None:
    policy = make_policy(f"hf:{tiny}", access="T+S", max_new_tokens=8)
    specs = [EpisodeSpec("Hear2Act-Prosody-v5", s.id, i, "T+S", env_kwargs={"max_turns": 4}, key=s.id)
             for i, s in enumerate(load_scenarios()[:2])]
    trajs = run_episodes(specs, policy, batch_size=2)
    for t in trajs:
        assert t["failed"] is None and t["agent"] == f"hf:{tiny}"
        assert t["outcome"]["turns"] == 4 and len(t["turns"]) == 3
        assert t["parse_failures"] == sum(x["parsed_kind"] == "invalid" for x in t["turns"])
        assert t["n_tokens"] > 0
    with pytest.raises(ValueError, match="text-only"):
        make_policy(f"hf:{tiny}", access="A")
