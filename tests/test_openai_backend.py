"""The openai: backend against a real local HTTP server with injected faults."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
import soundfile as sf

from hear2act.agents import make_policy
from hear2act.agents.llm import make_backend
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.llm.openai_backend import OpenAIBackend
from hear2act.eval.engine import make_specs, run_episodes
from hear2act_env import load_scenarios
from hear2act_env.cli import main
from tests.fake_openai import OK_TEXT, FakeChatServer, Reply, request_text

FAST = {"timeout": 0.5, "max_retries": 2, "backoff": 0.01, "backoff_max": 0.02}


def req(text: str, key: str = "k/0", seed: int = 0) -> GenerationRequest:
    return GenerationRequest([{"role": "system", "content": "sys"}, {"role": "user", "content": text}], seed, key)


@pytest.fixture
def server():
    with FakeChatServer() as s:
        yield s


@pytest.fixture
def backend(server: FakeChatServer):
    b = OpenAIBackend("fake-model", server.url, **FAST)
    yield b
    b.close()


def test_ok_reply_sends_model_seed_and_key(server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    b = make_backend(f"openai:fake-model@{server.url}", temperature=0.7, max_new_tokens=33)
    try:
        [g] = b.generate([req("hello", seed=1234)])
    finally:
        b.close()
    assert g.text == OK_TEXT and g.error == "" and g.n_tokens == len(OK_TEXT.split())
    body = server.bodies[0]
    assert body["model"] == "fake-model" and body["seed"] == 1234 and body["max_tokens"] == 33
    assert body["temperature"] == 0.7 and body["messages"][1] == {"role": "user", "content": "hello"}


@pytest.mark.parametrize("fault", ["500x2", "503x1", "badjsonx2", "textx1", "nochoicesx2", "hangx1"])
def test_transient_faults_are_retried_until_success(backend: OpenAIBackend, server: FakeChatServer,
                                                    fault: str) -> None:
    [g] = backend.generate([req(f"<<fault:{fault}>>")])
    assert g.text == OK_TEXT and g.error == ""
    assert sum(server.attempts.values()) == int(fault[-1]) + 1


@pytest.mark.parametrize(("fault", "reason"), [
    ("500", "HTTP 500"), ("badjson", "malformed reply"), ("text", "non-JSON text"), ("nochoices", "no choices"),
    ("hang", "timeout after 0.5s"),
])
def test_persistent_faults_fail_the_call_with_the_reason(backend: OpenAIBackend, server: FakeChatServer,
                                                         fault: str, reason: str) -> None:
    [g] = backend.generate([req(f"<<fault:{fault}>>", key="ep7/3")])
    assert g.text == "" and reason in g.error and "failed after 3 attempts" in g.error and "ep7/3" in g.error
    assert sum(server.attempts.values()) == 3  # bounded: exactly the retries, then the call fails


def test_client_errors_are_not_retried(backend: OpenAIBackend, server: FakeChatServer) -> None:
    [g] = backend.generate([req("<<fault:400>>")])
    assert "HTTP 400" in g.error and sum(server.attempts.values()) == 1


def test_garbage_text_is_a_reply_not_a_failure(backend: OpenAIBackend) -> None:
    [g] = backend.generate([req("<<fault:garbage>>")])
    assert g.error == "" and g.text == "qwzx !! ## not an action at all"


def test_concurrency_limit_and_order_with_slow_replies(server: FakeChatServer) -> None:
    b = OpenAIBackend("m", server.url, concurrency=3, **FAST)
    try:
        requests = [req(f"<<fault:slow:0.15>> #{i}", key=f"e{i}/0") for i in range(9)]
        out = b.generate(requests)
    finally:
        b.close()
    assert [g.text for g in out] == [OK_TEXT] * 9  # in request order, whatever order the replies came in
    # Behaviour, not wall time (speed lives in benchmarks/): three requests were in flight together, never more.
    assert server.max_in_flight == 3
    assert sum(server.attempts.values()) == 9  # each request once: none retried


def test_audio_parts_go_out_as_base64_wav(backend: OpenAIBackend, server: FakeChatServer) -> None:
    audio = (0.1 * np.sin(np.linspace(0, 100, 1600))).astype(np.float32)
    messages = [{"role": "user", "content": [{"type": "text", "text": "listen"},
                                             {"type": "audio", "audio": audio, "sampling_rate": 16000}]}]
    [g] = backend.generate([GenerationRequest(messages, 0, "a/0")])
    assert g.error == ""
    part = server.bodies[0]["messages"][0]["content"][1]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    decoded, sr = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])), dtype="float32")
    assert sr == 16000 and np.allclose(decoded, audio, atol=1e-3)


def test_bad_arguments_are_named(server: FakeChatServer) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        OpenAIBackend("m", server.url, concurrency=0)
    with pytest.raises(ValueError, match="timeout"):
        OpenAIBackend("m", server.url, timeout=0)


def _domain_plan(failing: str, flaky: str):
    """One domain's calls always fail with 500; another's fail once, then the server answers."""
    def plan(body: dict, attempt: int) -> Reply:
        text = request_text(body)
        if f"assistant for {failing}." in text:
            return Reply(status=500, body=b'{"error": {"message": "boom"}}')
        if f"assistant for {flaky}." in text and attempt == 0:
            return Reply(body=b"{not json")
        return Reply(text="[ACTION: ASK] Is there anything that doesn't work for you?" if "CONCERN" in text
                     else "[ACTION: CONFIRM] Great.")
    return plan


def test_engine_marks_only_the_failing_episodes_failed() -> None:
    scenarios = load_scenarios()
    ids = [scenarios[0].id, scenarios[10].id, scenarios[20].id]
    plan = _domain_plan(scenarios[10].domain, scenarios[20].domain)
    with FakeChatServer(plan) as server:
        policy = make_policy(f"openai:m@{server.url}", access="T", **FAST)
        trajs = run_episodes(make_specs("Hear2Act-Prosody-v5", ids), policy, batch_size=3)
        policy.backend.close()
    assert trajs[1]["failed"] and "HTTP 500" in trajs[1]["failed"] and trajs[1]["outcome"] is None
    assert trajs[0]["failed"] is None and trajs[0]["outcome"]["confirmed"]
    assert trajs[2]["failed"] is None and trajs[2]["outcome"]["confirmed"]


def test_cli_rollout_against_the_faulty_server(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = load_scenarios()[:2]

    def plan(body: dict, attempt: int) -> Reply:
        text = request_text(body)
        if first.request in text:  # a request the server refuses: not retried, the episode fails
            return Reply(status=400, body=b'{"error": {"message": "context too long"}}')
        if attempt == 0 and text.count("Assistant:") == 1:  # the other episode's first call hits a 503 first
            return Reply(status=503, body=b"{}")
        return Reply(text="[ACTION: CONFIRM] Great.")

    with FakeChatServer(plan) as server:
        code = main(["rollout", "--agent", f"openai:m@{server.url}", "--n", "2", "--timeout", "2",
                     "--concurrency", "2"])
    printed = capsys.readouterr().out
    assert code == 0
    assert f"{first.id:<42} FAILED: openai:m" in printed and "HTTP 400" in printed
    assert f"{second.id:<42} success=" in printed and "episodes 2 (failed 1" in printed
