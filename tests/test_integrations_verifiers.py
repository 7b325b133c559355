"""The verifiers integration, end to end: verifiers' own eval runner against a local OpenAI-compatible server.

The fake server (tests/fake_openai.py) answers every chat completion with a
scripted policy that reads only the prompt: it recognises the scenario by its
options text and recommends the gold option (half the episodes) or a wrong
one, then confirms. Each episode is then replayed in a local Gymnasium env
with the same seed and the same replies: the rewards verifiers recorded must
equal the local env's return, and every prompt the server saw must be the
P6 prompt the evaluation builds for that observation.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeChatServer, Reply

from hear2act_env import load_scenarios
from hear2act_env.env import options_text
from hear2act_env.integrations.episode import decision_messages, make_env, read_reply

ROOT = Path(__file__).resolve().parents[1]


def test_integrations_package_imports_neither_stack() -> None:
    code = ("import sys, hear2act_env.integrations, hear2act_env.integrations.episode; "
            "print(sorted(m for m in ('verifiers', 'openenv', 'openenv.core') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("stack", "module", "extra"), [("verifiers", "verifiers", "verifiers"),
                                                        ("openenv", "openenv", "openenv")])
def test_missing_stack_names_the_pip_install(stack: str, module: str, extra: str) -> None:
    code = f"import sys; sys.modules[{stack!r}] = None; import hear2act_env.integrations.{module}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode != 0
    assert out.stderr.strip().splitlines()[-1].endswith(f'pip install "hear2act[{extra}]"')


try:
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    from hear2act_env.integrations import verifiers as hv
except ImportError:  # the verifiers extra is not installed: the tests below skip
    hv = None

needs_vf = pytest.mark.skipif(hv is None, reason='needs the verifiers extra: pip install "hear2act[verifiers]"')


SCENARIOS = load_scenarios()
BY_OPTIONS = {options_text(s): s for s in SCENARIOS}
IDS = [SCENARIOS[i].id for i in (0, 1, 7, 12)]
CONFIRM = "[ACTION: CONFIRM] Great, let's book it."
GOOD = {IDS[0], IDS[2]}  # the policy recommends the gold option in these, a wrong one in the others


def policy(messages: list[dict[str, Any]]) -> str:
    """The scripted assistant: reads the prompt only (options in the system message, the transcript)."""
    system, user = str(messages[0]["content"]), str(messages[-1]["content"])
    s = next(sc for text, sc in BY_OPTIONS.items() if text in system)
    option = s.gold if s.id in GOOD else s.gold % 11 + 1
    assistant_turns = user.split("CONCERN STATE:")[0].count("Assistant:")
    if assistant_turns == 1:
        return f"[ACTION: RECOMMEND] [OPTION: {option}] How about option {option}?\nextra text never read"
    return "[ACTION: CONFIRM] Great, let's book it."


def plan(body: dict[str, Any], attempt: int) -> Reply:
    return Reply(text=policy(body["messages"]))


def local_episode(sid: str, seed: int, access: str) -> tuple[float, list[list[dict[str, Any]]], list[str]]:
    """(return, the P6 prompts of every decision, the final transcript) in a plain local env."""
    env = make_env("prosody", access)
    obs, _ = env.reset(seed=seed, options={"scenario_id": sid})
    total, prompts, done, turn = 0.0, [], False, 0
    while not done:
        messages = decision_messages(obs, sid, access, turn=turn)
        prompts.append(messages)
        obs, reward, terminated, truncated, _ = env.step(read_reply(policy(messages)))
        total, done, turn = total + reward, terminated or truncated, turn + 1
    return total, prompts, obs["transcript"]


def evaluate(server: FakeChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **taskset: Any) -> list[Any]:
    monkeypatch.setenv("HEAR2ACT_TEST_KEY", "not-a-secret")
    config = EvalConfig(env=hv.env_config(scenario_ids=IDS, **taskset), model="fake-model",
                        client={"type": "eval", "base_url": server.url, "api_key_var": "HEAR2ACT_TEST_KEY"},
                        rich=None, push=False, output_dir=tmp_path)
    return asyncio.run(run_eval(config))


def info_of(episode: Any) -> dict[str, Any]:
    data = episode.task.data
    return data["info"] if isinstance(data, dict) else data.info


@needs_vf
@pytest.mark.slow
def test_vf_eval_rewards_equal_the_env_outcome_and_prompts_are_p6(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeChatServer(plan) as server:
        episodes = evaluate(server, tmp_path, monkeypatch, access="T+S", seed=5)
    assert len(episodes) == len(IDS) and all(e.ok for e in episodes), [e.errors for e in episodes]
    seen = [json.dumps(b["messages"], sort_keys=True) for b in server.bodies]
    returns, n_calls = {}, 0
    for episode in episodes:
        info = info_of(episode)
        total, prompts, _ = local_episode(info["scenario_id"], info["seed"], "T+S")
        returns[info["scenario_id"]] = total
        n_calls += len(prompts)
        # p6 context: one trace (one model call) per decision, each scored with the episode's outcome.
        assert len(episode.traces) == len(prompts)
        assert [t.reward for t in episode.traces] == [total] * len(prompts)
        assert all(t.rewards["success"].score == total for t in episode.traces)
        for messages in prompts:  # exactly the prompt `hear2act rollout` sends for this observation
            assert json.dumps(messages, sort_keys=True) in seen
    assert sorted(info_of(e)["seed"] for e in episodes) == [5, 6, 7, 8]
    assert len(server.bodies) == n_calls
    assert {returns[i] for i in GOOD} == {1.0} and {returns[i] for i in set(IDS) - GOOD} == {0.0}
    assert {b["model"] for b in server.bodies} == {"fake-model"}
    assert (tmp_path / next(p.name for p in tmp_path.iterdir()) / "traces.jsonl").stat().st_size > 0


@needs_vf
@pytest.mark.slow
def test_chat_context_is_one_conversation_scored_with_cesar_terms(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from hear2act.training.episodes import EpisodeReward, TurnRecord, score_episode

    weights = {"format": 0.1, "consistency": 0.05}
    with FakeChatServer(plan) as server:
        episodes = evaluate(server, tmp_path, monkeypatch, access="T", context="chat", process=weights,
                            turn_cost=0.01)
    assert all(e.ok for e in episodes), [e.errors for e in episodes]
    for episode in episodes:
        info = info_of(episode)
        total, prompts, _ = local_episode(info["scenario_id"], info["seed"], "T")
        (trace,) = episode.traces
        # One growing conversation: the k-th call carries k user messages, the last the k-th P6 user prompt.
        calls = [b["messages"] for b in server.bodies if b["messages"][0] == prompts[0][0]
                 and b["messages"][1] == prompts[0][1]]
        assert len(calls) == len(prompts)
        for k, call in enumerate(sorted(calls, key=len)):
            assert [m["role"] for m in call] == ["system"] + ["user", "assistant"] * k + ["user"]
            assert call[-1] == prompts[k][1]
        env = make_env("prosody", "T")
        obs, _ = env.reset(seed=info["seed"], options={"scenario_id": info["scenario_id"]})
        records = []
        for messages in prompts:
            reply = policy(messages)
            records.append(TurnRecord(obs["transcript"], obs["options"], "", reply.split("\n")[0]))
            obs, _, _, _, step_info = env.step(read_reply(reply))
        expected = score_episode({"outcome": step_info["outcome"]}, records,
                                 EpisodeReward(turn_cost=0.01, process=weights))
        assert trace.rewards["success"].score == total
        assert trace.reward == pytest.approx(expected["reward"])
        assert set(trace.rewards) == {"success", "turn_cost", "process/format", "process/consistency"}


@needs_vf
def test_bad_arguments_are_refused_with_the_field_named() -> None:
    with pytest.raises(ValueError, match="access must be one of"):
        hv.load_environment(access="A+T")
    with pytest.raises(ValueError, match="access must be one of"):
        hv.env_config(access="nope")
    with pytest.raises(ValueError, match="realization must be one of"):
        hv.env_config(realization="whispered")
    with pytest.raises(ValueError, match="unknown term"):
        hv.env_config(process={"style": 0.1})


@needs_vf
def test_taskset_tasks_are_first_decision_prompts() -> None:
    env = hv.load_environment(access="T+S", scenario_ids=IDS[:2], seed=3)
    tasks = list(env.taskset)
    assert [t.key for t in tasks] == [f"{IDS[0]}/3", f"{IDS[1]}/4"]
    _, prompts, _ = local_episode(IDS[0], 3, "T+S")
    assert tasks[0].data.system_prompt == prompts[0][0]["content"] and tasks[0].data.prompt == prompts[0][1]["content"]
    import verifiers.v1.utils.loaders as loaders

    assert loaders.taskset_class(hv.TASKSET_ID) is hv.Hear2ActTaskset
    assert loaders.environment_class(hv.TASKSET_ID) is hv.Hear2ActVfEnv


@needs_vf
@pytest.mark.slow
def test_vf_eval_cli_on_the_taskset(tmp_path: Path) -> None:
    """The documented command: verifiers' eval CLI through ``python -m hear2act_env.integrations.verifiers``."""
    import os

    def confirm_at_once(body: dict[str, Any], attempt: int) -> Reply:
        return Reply(text=CONFIRM)

    with FakeChatServer(confirm_at_once) as server:
        env = {**os.environ, "HEAR2ACT_TEST_KEY": "not-a-secret",
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        out = subprocess.run([sys.executable, "-m", "hear2act_env.integrations.verifiers", "-m", "fake-model",
                              "--client.base-url", server.url, "--client.api-key-var", "HEAR2ACT_TEST_KEY",
                              "-n", "3", "--env.taskset.access", "T+S", "--env.taskset.seed", "4",
                              "--no-push", "--no-rich", "--output-dir", str(tmp_path)],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (traces_file,) = tmp_path.glob("*/traces.jsonl")
    rows = [json.loads(line) for line in traces_file.read_text().splitlines()]
    assert len(rows) == 3 and len(server.bodies) >= 3
    for row in rows:  # every decision answered CONFIRM: each trace scored with the local env's return
        info = row["task"]["data"]["info"]
        expected, n_decisions, _ = local_episode_replies(info["scenario_id"], info["seed"], CONFIRM)
        assert [t["rewards"]["success"]["score"] for t in row["traces"]] == [expected] * n_decisions
    assert sorted(r["task"]["data"]["info"]["seed"] for r in rows) == [4, 5, 6]


def local_episode_replies(sid: str, seed: int, reply: str) -> tuple[float, int, str]:
    """(return, decisions, transcript) of a local episode answering every decision with ``reply``."""
    env = make_env("prosody", "T+S")
    obs, _ = env.reset(seed=seed, options={"scenario_id": sid})
    total, n, done = 0.0, 0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(read_reply(reply))
        total, n, done = total + reward, n + 1, terminated or truncated
    return total, n, obs["transcript"]


@needs_vf
def test_a_failed_model_call_fails_the_episode_unscored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_openai import FAULTS

    def plan_500_on_second_decision(body: dict[str, Any], attempt: int) -> Reply:
        second = str(body["messages"][-1]["content"]).count("Assistant:") >= 2
        return FAULTS["500"] if second else Reply(text="[ACTION: ASK] What matters most?")

    monkeypatch.setenv("HEAR2ACT_TEST_KEY", "not-a-secret")
    with FakeChatServer(plan_500_on_second_decision) as server:
        config = EvalConfig(env=hv.env_config(scenario_ids=IDS[:1]), model="fake-model",
                            client={"type": "eval", "base_url": server.url, "api_key_var": "HEAR2ACT_TEST_KEY"},
                            rich=None, push=False, output_dir=tmp_path)
        (episode,) = asyncio.run(run_eval(config))
    assert not episode.ok
    assert "turn 1: the assistant produced no reply" in episode.errors[0].message and "500" in episode.errors[0].message
    assert all(not t.rewards for t in episode.traces)  # never scored as a loss
