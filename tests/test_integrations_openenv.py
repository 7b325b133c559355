"""The OpenEnv integration, end to end: the server in a subprocess on 127.0.0.1, episodes played by the client.

Each episode is replayed in a local Gymnasium env with the same seed and
actions: every observation's text, every reward and the outcome must be the
same, and each observation's prompt must be the P6 prompt of the evaluation.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv.core", reason='needs the openenv extra: pip install "hear2act[openenv]"')

from hear2act_env import load_scenarios
from hear2act_env.integrations.episode import decision_messages, make_env
from hear2act_env.integrations.openenv import (
    Hear2ActAction,
    Hear2ActClient,
    Hear2ActEnvironment,
    public_info,
)

ROOT = Path(__file__).resolve().parents[1]
ACCESS = "T+S"
SCENARIOS = load_scenarios()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log_path = tmp_path_factory.mktemp("openenv") / "server.log"
    log = log_path.open("wb")  # a file, not a pipe: a chatty server never blocks on a full pipe
    proc = subprocess.Popen([sys.executable, "-m", "hear2act_env.integrations.openenv", "--host", "127.0.0.1",
                             "--port", str(port), "--access", ACCESS], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # up to 60 s for the server to come up (a cold import on a busy machine)
            if proc.poll() is not None:
                raise RuntimeError(f"server exited {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("server did not answer /health")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def actions_for(s: Any, good: bool) -> list[str]:
    option = s.gold if good else s.gold % 11 + 1
    return ["[ACTION: ASK] What matters most to you on this one?",
            "not an action at all",  # an invalid action costs a turn: the same on both sides
            f"[ACTION: RECOMMEND] [OPTION: {option}] How about this one?"] + ["[ACTION: CONFIRM] Great."] * 17


def text_fields(obs: dict[str, Any]) -> dict[str, str]:
    return {k: obs.get(k, "") for k in ("transcript", "options", "state")}


def local_play(sid: str, seed: int, actions: list[str]) -> list[dict[str, Any]]:
    env = make_env("prosody", ACCESS)
    obs, info = env.reset(seed=seed, options={"scenario_id": sid})
    steps = [{"text": text_fields(obs), "reward": 0.0, "done": False, "info": public_info(info),
              "prompt": decision_messages(obs, sid, ACCESS, turn=0)}]
    for turn, action in enumerate(actions, start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        steps.append({"text": text_fields(obs), "reward": float(reward), "done": done, "info": public_info(info),
                      "prompt": [] if done else decision_messages(obs, sid, ACCESS, turn=turn),
                      "outcome": info.get("outcome")})
        if done:
            break
    return steps


def remote_play(url: str, sid: str, seed: int, actions: list[str]) -> list[dict[str, Any]]:
    with Hear2ActClient(base_url=url).sync() as client:
        result = client.reset(seed=seed, scenario_id=sid)
        o = result.observation
        steps = [{"text": text_fields(o.model_dump()), "reward": float(result.reward), "done": result.done,
                  "info": o.info, "prompt": o.prompt}]
        for action in actions:
            result = client.step(Hear2ActAction(message=action))
            o = result.observation
            steps.append({"text": text_fields(o.model_dump()), "reward": float(result.reward), "done": result.done,
                          "info": o.info, "prompt": o.prompt, "outcome": o.outcome})
            if result.done:
                break
        state = client.state()
    assert state.scenario_id == sid and state.seed == seed and state.step_count == len(steps) - 1 and state.done
    return steps


def roundtrip(x: Any) -> Any:
    return json.loads(json.dumps(x, allow_nan=False, default=str))


@pytest.mark.parametrize(("index", "seed", "good"), [(0, 5, True), (3, 6, False), (21, 11, True)])
def test_client_episode_equals_local_env(server: str, index: int, seed: int, good: bool) -> None:
    s = SCENARIOS[index]
    actions = actions_for(s, good)
    remote = remote_play(server, s.id, seed, actions)
    local = local_play(s.id, seed, actions)
    assert len(remote) == len(local) >= 4
    for r, lo in zip(remote, local, strict=True):
        assert r["text"] == lo["text"]
        assert r["reward"] == lo["reward"] and r["done"] == lo["done"]
        assert r["info"] == roundtrip(lo["info"])
        assert r["prompt"] == lo["prompt"]
        assert "state" not in r["info"] and "delivery" not in r["info"]  # hidden ground truth stays on the server
    assert remote[2]["info"]["action"] == "invalid" and remote[2]["info"]["invalid_action"]
    outcome = remote[-1]["outcome"]
    assert outcome["success"] is good and outcome == roundtrip(public_info(local[-1]["outcome"]))
    assert sum(r["reward"] for r in remote) == (1.0 if good else 0.0)


def test_sessions_are_independent(server: str) -> None:
    a, b = SCENARIOS[0], SCENARIOS[1]
    with Hear2ActClient(base_url=server).sync() as one, Hear2ActClient(base_url=server).sync() as two:
        one.reset(seed=1, scenario_id=a.id)
        two.reset(seed=2, scenario_id=b.id)
        r1 = one.step(Hear2ActAction(message="[ACTION: ASK] Anything else?"))
        assert r1.observation.scenario_id == a.id and two.state().scenario_id == b.id
        assert two.state().step_count == 0 and one.state().step_count == 1


def test_environment_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="access must be one of"):
        Hear2ActEnvironment(access="A+T")
    with pytest.raises(ValueError, match="realization must be one of"):
        Hear2ActEnvironment(realization="whispered")
    env = Hear2ActEnvironment(access="T")
    with pytest.raises(ValueError, match="unknown reset argument"):
        env.reset(seed=0, scenario="x")
    with pytest.raises(ValueError, match="unknown scenario_id"):
        env.reset(seed=0, scenario_id="no-such-scenario-01")


def test_trl_environment_factory_matches_the_local_tool_env(server: str) -> None:
    """TRL's environment_factory contract (tools = public methods but reset/get_reward) on a remote episode."""
    import inspect

    from hear2act.training.tools_env import Hear2ActToolEnv
    from hear2act_env.integrations.openenv import tool_env_factory

    factory = tool_env_factory(server)

    def tools(cls: type) -> list[str]:
        return sorted(n for n, _ in inspect.getmembers(cls, inspect.isfunction)
                      if n not in ("reset", "get_reward") and not n.startswith("_"))

    assert tools(factory) == tools(Hear2ActToolEnv) == ["ask", "clarify", "confirm", "recommend"]
    s = SCENARIOS[5]
    remote, local = factory(), Hear2ActToolEnv()
    row = {"scenario_id": s.id, "seed": 9, "realization": "prosody", "access": ACCESS,
           "history": ["[ACTION: ASK] What matters most?"]}
    assert remote.reset(**row) == local.reset(**row)
    calls = [("clarify", ("Could you say more?",)), ("recommend", (s.gold, "This one fits.")),
             ("confirm", ("Booking it.",)), ("ask", ("Anything else?",))]
    for name, args in calls:
        assert getattr(remote, name)(*args) == getattr(local, name)(*args)
    assert remote.done and local.done and remote.get_reward() == local.get_reward() == 1.0
    with pytest.raises(ValueError, match="serves realization='prosody' access='T\\+S'"):
        remote.reset(scenario_id=s.id, seed=1, access="T")
    remote._close()
    try:
        from transformers.utils import get_json_schema
    except ImportError:
        return
    for name in tools(factory):  # TRL builds each tool's schema from its signature and docstring
        assert get_json_schema(getattr(remote, name))["function"]["name"] == name
