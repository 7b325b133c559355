"""Model replies that must never stop a run or leave the denominator (issue 20).

* no-text replies (``content: null`` alone / with ``reasoning_content`` / with ``tool_calls``, content as a
  list, a 400 "maximum context length") are played as an invalid action and scored, sent once;
* infrastructure failures stay failures; ``Retry-After`` is honoured (capped, seeded jitter);
* lone surrogates in a reply are recorded (escaped) and played by ``eval`` and ``rollout``;
* policies close: no thread or file descriptor left behind.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import threading
import time
from pathlib import Path

import pytest

from hear2act.agents import make_policy
from hear2act.agents.llm import openai_backend
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.llm.openai_backend import OpenAIBackend
from hear2act.eval.engine import make_specs, run_episodes
from hear2act.eval.grid import parse_grid
from hear2act.eval.runner import read_run, run_grid
from hear2act_env import load_scenarios
from hear2act_env.cli import main as cli_main
from tests.fake_openai import FakeChatServer, Reply, message_completion

FAST = {"timeout": 2.0, "max_retries": 2, "backoff": 0.01, "backoff_max": 0.02}


def req(text: str = "hi", key: str = "ep/0", seed: int = 0) -> GenerationRequest:
    return GenerationRequest([{"role": "user", "content": text}], seed, key)


NO_TEXT = {
    "null": ({"content": None}, "content is null"),
    "null+reasoning": ({"content": None, "reasoning_content": "Let me think about the budget..."},
                       "with reasoning_content"),
    "null+tools": ({"content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                     "function": {"name": "book", "arguments": "{}"}}]},
                   "with tool_calls"),
    "list-no-text": ({"content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}, "no text"),
}


@pytest.mark.parametrize("name", sorted(NO_TEXT))
def test_no_text_reply_is_not_a_failure_and_is_sent_once(name: str) -> None:
    message, why = NO_TEXT[name]
    with (FakeChatServer(lambda body, attempt: Reply(body=message_completion(message))) as server,
          OpenAIBackend("m", server.url, **FAST) as b):
        [g] = b.generate([req()])
    assert g.error == "" and g.text == "" and why in g.no_text
    assert sum(server.attempts.values()) == 1  # a deterministic null is never resent
    if "reasoning_content" in message:
        assert g.reasoning == message["reasoning_content"]


def test_content_as_a_list_of_text_parts_is_read() -> None:
    message = {"content": [{"type": "text", "text": "[ACTION: ASK] "}, {"type": "text", "text": "Budget?"}]}
    with (FakeChatServer(lambda body, attempt: Reply(body=message_completion(message))) as server,
          OpenAIBackend("m", server.url, **FAST) as b):
        [g] = b.generate([req()])
    assert (g.text, g.no_text, g.error) == ("[ACTION: ASK] Budget?", "", "")


def test_context_length_400_is_an_invalid_action_not_a_failure() -> None:
    body = (b'{"object":"error","message":"This model\'s maximum context length is 4096 tokens. However, you '
            b'requested 5000 tokens.","type":"BadRequestError","code":400}')
    with (FakeChatServer(lambda b, a: Reply(status=400, body=body)) as server,
          OpenAIBackend("m", server.url, **FAST) as b):
        [g] = b.generate([req()])
    assert g.error == "" and "context length" in g.no_text
    assert sum(server.attempts.values()) == 1


def _no_text_plan(body: dict, attempt: int) -> Reply:
    return Reply(body=message_completion({"content": None, "reasoning_content": "thinking that never ends"}))


@pytest.mark.parametrize("plan_name", ["null", "context"])
def test_no_text_episodes_are_scored_as_invalid_actions(plan_name: str) -> None:
    ctx = (b'{"message":"maximum context length exceeded","code":400}')
    plan = _no_text_plan if plan_name == "null" else (lambda b, a: Reply(status=400, body=ctx))
    ids = [s.id for s in load_scenarios()[:2]]
    with FakeChatServer(plan) as server, make_policy(f"openai:m@{server.url}", access="T", **FAST) as policy:
        trajs = run_episodes(make_specs("Hear2Act-Prosody-v5", ids), policy, batch_size=2)
    for t in trajs:
        assert t["failed"] is None and t["outcome"] is not None  # in the denominator
        assert not t["outcome"]["success"]
        assert t["parse_failures"] == len(t["turns"]) > 0
        assert all(turn["parsed_kind"] == "invalid" and turn["no_text"] for turn in t["turns"])
    if plan_name == "null":
        assert trajs[0]["turns"][0]["reasoning"] == "thinking that never ends"


def test_server_errors_after_retries_stay_infrastructure_failures() -> None:
    ids = [load_scenarios()[0].id]
    with (FakeChatServer(lambda b, a: Reply(status=500, body=b"{}")) as server,
          make_policy(f"openai:m@{server.url}", access="T", **FAST) as policy):
        [t] = run_episodes(make_specs("Hear2Act-Prosody-v5", ids), policy)
    assert t["failed"] and "HTTP 500" in t["failed"] and t["outcome"] is None


# -- Retry-After -------------------------------------------------------------------------------


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    recorded: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        recorded.append(seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(openai_backend, "_sleep", fake_sleep)
    return recorded


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_seconds_is_honoured_with_jitter(waits: list[float], status: int) -> None:
    def plan(b, a):
        return (Reply(status=status, body=b"{}", headers=(("retry-after", "3"),)) if a < 2 else Reply())
    with FakeChatServer(plan) as server, OpenAIBackend("m", server.url, **FAST) as b:
        [g] = b.generate([req()])
    assert g.error == "" and sum(server.attempts.values()) == 3
    assert len(waits) == 2 and all(3.0 <= w <= 3.0 * (1 + openai_backend.JITTER) for w in waits)
    assert waits[0] != waits[1]  # jittered per attempt


def test_retry_after_is_capped_and_read_as_an_http_date(waits: list[float]) -> None:
    date = email.utils.formatdate(time.time() + 3600, usegmt=True)
    def plan(b, a):
        return (Reply(status=429, body=b"{}", headers=(("retry-after", date),)) if a < 1 else Reply())
    with FakeChatServer(plan) as server, OpenAIBackend("m", server.url, retry_after_max=5.0, **FAST) as b:
        [g] = b.generate([req()])
    assert g.error == "" and len(waits) == 1 and 5.0 <= waits[0] <= 5.0 * (1 + openai_backend.JITTER)


def test_jitter_is_seeded_by_the_request_not_global(waits: list[float]) -> None:
    def plan(b, a):
        return (Reply(status=429, body=b"{}", headers=(("retry-after", "1"),)) if a < 1 else Reply())
    runs = []
    for _ in range(2):
        with FakeChatServer(plan) as server, OpenAIBackend("m", server.url, **FAST) as b:
            b.generate([req(key="same/0")])
        runs.append(waits[-1])
    assert runs[0] == runs[1]


# -- leaks -------------------------------------------------------------------------------------


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_twenty_policies_leave_no_thread_or_fd() -> None:
    with FakeChatServer() as server:
        with make_policy(f"openai:m@{server.url}", access="T", **FAST) as warm:  # import-time threads/fds
            warm.backend.generate([req()])
        threads, fds = threading.active_count(), _fds()
        for _ in range(20):
            with make_policy(f"openai:m@{server.url}", access="T", **FAST) as policy:
                [g] = policy.backend.generate([req()])
                assert g.error == ""
        time.sleep(0.2)  # let the server's per-connection handler threads finish
        assert threading.active_count() <= threads
        assert _fds() <= fds


GRID = """
name = "close-test"
seed = 1
[scenarios]
few = "first:2"
[agents]
m = "openai:m@{url}"
[[block]]
name = "text"
kind = "text"
agents = ["m"]
conditions = ["T"]
scenarios = "few"
"""


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_eval_closes_the_policies_it_makes(tmp_path: Path) -> None:
    with FakeChatServer() as server, make_policy(f"openai:m@{server.url}", access="T", **FAST) as warm:
        warm.backend.generate([req()])
        threads = threading.active_count()
        grid = parse_grid(GRID.format(url=server.url), tmp_path / "g.toml")
        result = run_grid(grid, tmp_path / "run", progress=False)
        time.sleep(0.2)
        assert result["run"] == result["planned"] > 0 and result["failed"] == 0
        assert threading.active_count() <= threads


# -- lone surrogates ----------------------------------------------------------------------------


SURROGATE_GRID = """
name = "surrogate"
seed = 3
[scenarios]
few = "first:3"
[agents]
s = "scripted:{script}"
[[block]]
name = "text"
kind = "text"
agents = ["s"]
conditions = ["T"]
scenarios = "few"
"""


def test_a_lone_surrogate_reply_is_recorded_and_played_by_eval(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    # valid JSON holding a lone surrogate, as a server could send it
    script.write_text('["[ACTION: ASK] \\ud800 why?", "\\udfff", "[ACTION: CONFIRM] ok \\ud83d"]', encoding="ascii")
    grid = tmp_path / "g.toml"
    grid.write_text(SURROGATE_GRID.format(script=script))
    for _ in range(2):  # and a resume reads the file back
        assert cli_main(["eval", str(grid), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    rows = read_run(tmp_path / "run")
    assert len(rows) == 6 and all(r["failed"] is None for r in rows)  # 3 scenarios x 2 realizations
    row = next(r for r in rows if r["trajectory"]["turns"][0]["raw"].startswith("[ACTION: ASK]"))
    raws = [t["raw"] for t in row["trajectory"]["turns"]]
    assert raws[:3] == ["[ACTION: ASK] \ud800 why?", "\udfff", "[ACTION: CONFIRM] ok \ud83d"]
    assert row["trajectory"]["turns"][0]["parsed_kind"] == "ask"
    data = (tmp_path / "run" / "rollouts.jsonl").read_bytes()
    data.decode("utf-8")  # the file is valid UTF-8, the surrogate stored as its JSON escape
    assert b"\\ud800" in data
    assert cli_main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0


def test_a_lone_surrogate_reply_is_recorded_by_rollout(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('["[ACTION: ASK] \\ud800?", "[ACTION: CONFIRM] \\udc00"]', encoding="ascii")
    out = tmp_path / "t.jsonl"
    assert cli_main(["rollout", "--agent", f"scripted:{script}", "--n", "2", "--out", str(out), "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and rows[0]["turns"][0]["raw"] == "[ACTION: ASK] \ud800?"


# -- the failed count in every rate table ----------------------------------------------------------


def test_every_rate_table_prints_the_failed_count(tmp_path: Path) -> None:
    from hear2act.eval.report import tables

    grid = parse_grid(GRID.replace('m = "openai:m@{url}"', 'm = "state-rule"'), tmp_path / "g.toml")
    run_grid(grid, tmp_path / "run", progress=False)
    rows = read_run(tmp_path / "run")
    rows[0] = {**rows[0], "failed": "HTTP 500 after 3 retries", "outcome": None}
    built = [tables.text_table(rows), tables.behaviour_table(rows), tables.overview_table(rows),
             tables.ci_table(tables.contrasts(rows, n_resamples=50), rows)]
    built = [t for t in built if t is not None]
    assert len(built) >= 3
    for t in built:
        assert f"Failed rollouts (infrastructure errors after retries, never scored): 1 of {len(rows)}" in t.caption


def test_hear2act_cache_is_the_root_of_every_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from hear2act_env.speech.cache import cache_root, default_cache_dir

    monkeypatch.setenv("HEAR2ACT_CACHE", str(tmp_path))
    assert cache_root() == tmp_path and default_cache_dir() == tmp_path / "audio"
    monkeypatch.delenv("HEAR2ACT_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "hear2act" / "audio"
