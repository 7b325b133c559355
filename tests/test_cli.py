"""The ``hear2act`` command line, end to end on small inputs."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

import pytest

import hear2act_env
from hear2act.eval.play import _play, expand
from hear2act_env.cli import main


def test_rollout_prints_episodes_and_summary(capsys):
    assert main(["rollout", "--agent", "oracle", "--env", "Hear2Act-Explicit-v5", "--n", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("success=1") == 3
    assert "oracle Hear2Act-Explicit-v5 T" in out and "100.0" in out


def test_demo_on_a_few_scenarios(capsys, tmp_path):
    assert main(["demo", "--n", "2", "--text-only", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for agent in ("random", "confirm", "options-value", "transcript-rule", "state-rule", "oracle"):
        assert agent in out
    # text: 6 agents x (T, T+S) x 2 realizations x 2 scenarios; label fidelity: 3 corrupted tags x 2 x 2 repeats
    assert "60 rollouts (60 run now" in out
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.md").exists()


def test_scenarios_show_and_list(capsys):
    assert main(["scenarios", "show", "budget-airline-tickets-01"]) == 0
    out = capsys.readouterr().out
    assert "Hidden needs:" in out and "gold" in out and "<- opening" in out
    assert main(["scenarios", "show", "nope-01"]) == 2
    assert main(["scenarios", "list", "--domain", "meditation-apps"]) == 0
    assert capsys.readouterr().out.count("meditation-apps-") == 10


def test_scenarios_build_check_says_up_to_date(capsys):
    assert main(["scenarios", "build", "--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def _run(argv: list[str]) -> int:
    """Exit status of ``hear2act ARGV`` in-process (argparse's own errors exit via SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_unknown_agent_is_a_one_line_error(capsys):
    assert _run(["rollout", "--agent", "gpt-17"]) == 2
    err = capsys.readouterr().err
    assert "gpt-17" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, says", [
    (["rollout", "--agent", "random", "--access", "X"], "--access"),
    (["rollout", "--agent", "random", "--intervention", "bogus"], "--intervention"),
    (["rollout", "--agent", "random", "--n", "-1"], "--n"),
    (["rollout", "--agent", "random", "--n", "0"], "--n"),
    (["rollout", "--agent", "random", "--seed", "-1"], "--seed"),
    (["rollout", "--agent", "random", "--n", "1", "--access", "T", "--intervention", "shuffled"], "state tag"),
    (["demo", "--n", "two"], "--n"),
    (["play", "--scenario", "no-such-scenario"], "no-such-scenario"),
    (["play", "--access", "Z"], "--access"),
    (["render", "--renderer", "espeak"], "--renderer"),
    (["perception", "--n", "0"], "--n"),
    (["listen", "somewhere", "--annotator", "a", "--port", "99999"], "--port"),
    (["scenarios", "validate", "/"], "folder"),
    (["scenarios", "show", "x", "--file", "/no/such/file.jsonl"], "/no/such/file.jsonl"),
    (["scenarios", "list", "--domain", "no such domain"], "no domain"),
])
def test_user_mistakes_end_in_one_line_not_a_traceback(argv, says, capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda _: "q")
    assert _run(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err.splitlines()[-1] and "Traceback" not in err


def test_non_utf8_scenario_file_is_a_message(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe{}\n")
    assert _run(["scenarios", "validate", str(bad)]) == 1  # a problem of that line, named like any other
    assert "INVALID line 1: bad.jsonl: <json>: not UTF-8 text (byte 0xff at column 1)" in capsys.readouterr().out


def test_version(capsys):
    assert _run(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"hear2act {hear2act_env.__version__}"


def test_ctrl_c_exits_130_quietly(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("hear2act_env.scenarios.cli._list", interrupted)
    assert _run(["scenarios", "list"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_closed_pipe_is_quiet():
    proc = subprocess.Popen([sys.executable, "-m", "hear2act_env.cli", "scenarios", "list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_scenarios_list_domain_is_case_insensitive(capsys):
    for name in ("Meditation-Apps", "MEDITATION APPS", "meditation_apps"):
        assert main(["scenarios", "list", "--domain", name]) == 0
        assert capsys.readouterr().out.count("meditation-apps-") == 10


def test_play_shortcuts_and_a_scripted_session():
    assert expand("r 3 how about it") == "[ACTION: RECOMMEND] [OPTION: 3] how about it"
    assert expand("a Any layovers?") == "[ACTION: ASK] Any layovers?"
    assert expand("ok") == "[ACTION: CONFIRM]"
    assert expand("[ACTION: CLARIFY] x") == "[ACTION: CLARIFY] x"
    assert expand("r ３ x") == "r ３ x"  # not an ASCII number: passes through (and the env says why)
    sid = "budget-airline-tickets-01"
    gold = next(s for s in hear2act_env.load_scenarios() if s.id == sid).gold
    args = argparse.Namespace(env="Hear2Act-Prosody-v5", access="T+S", scenario=sid, seed=0)
    inputs = iter(["", "a Is there anything else that matters to you?", "   ", f"r {gold} this one", "ok"])
    printed: list[str] = []
    prompts: list[str] = []
    assert _play(args, read=lambda p: prompts.append(p) or next(inputs), write=printed.append) == 0
    text = "\n".join(printed)
    assert "CONCERN STATE" in text and "SUCCESS" in text
    # empty lines cost no turn: the opening, one question, one recommendation, the confirmation
    assert "after 4 turns" in text
    assert prompts == ["turn 2/20 assistant> "] * 2 + ["turn 3/20 assistant> "] * 2 + ["turn 4/20 assistant> "]


@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_play_under_audio_access_saves_and_says_how_to_listen(tmp_path):
    args = argparse.Namespace(env="Hear2Act-Prosody-v5", access="A", scenario="budget-airline-tickets-01", seed=0,
                              audio_dir=tmp_path, no_play=True)
    inputs = iter(["a Is there anything else that matters to you?", "q"])
    printed: list[str] = []
    assert _play(args, read=lambda _: next(inputs), write=printed.append) == 0
    text = "\n".join(printed)
    assert "User: (spoken)" in text and str(tmp_path) in text and "audio player" in text
    assert sorted(p.name for p in tmp_path.glob("*.wav")) == ["turn-01.wav", "turn-02.wav"]


def test_progress_bar_only_on_a_terminal(capsys):
    import io

    from hear2act_env.progress import progress

    assert list(progress(range(3), "x")) == [0, 1, 2]  # stderr is captured: not a terminal
    assert capsys.readouterr().err == ""
    out = io.StringIO()
    assert list(progress(range(3), "work", stream=out, force=True)) == [0, 1, 2]
    assert "work 0/3" in out.getvalue() and out.getvalue().endswith("\r\033[K")


@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_render_reports_count_and_time(tmp_path, capsys):
    assert main(["render", "--n", "1", "--env", "Hear2Act-Prosody-v5", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "distinct utterances" in out and "rendered" in out
    assert list(tmp_path.rglob("*.h2a"))
    assert main(["render", "--n", "1", "--env", "Hear2Act-Prosody-v5", "--cache", str(tmp_path)]) == 0
    assert "rendered 0" in capsys.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_perception_report_and_clips_for_the_listening_page(tmp_path, capsys):
    from hear2act.eval.listening.data import load_manifest

    assert main(["perception", "--renderers", "hibari", "--n", "6", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "renderer hibari" in out and "confusion" in out and "re-derived within tolerance" in out
    manifest = load_manifest(tmp_path / "hibari")
    assert len(manifest.clips) == 6
    combined = load_manifest(tmp_path)  # `perception --out DIR` then `listen DIR`, as typed
    assert [c.audio for c in combined.clips] == [c.audio for c in manifest.clips]
    assert main(["listen", str(tmp_path), "--score"]) == 0
    intended = [c.intended for c in manifest.clips]
    assert sum(i == "resolved" for i in intended) == 3


def test_the_bar_driven_by_hand_resumes_and_logs_without_a_terminal():
    """hear2act eval's bar (hear2act_env.progress.Bar): starts part-way, and writes a line per 10 % into a log."""
    import io

    from hear2act_env.progress import Bar

    log = io.StringIO()  # not a terminal
    bar = Bar(20, "x", done=10, log="hear2act eval", stream=log)
    for _ in range(10):
        bar.update("cell")
    bar.close()
    lines = log.getvalue().splitlines()
    assert [ln.split()[2] for ln in lines] == [f"{k}/20" for k in range(12, 21, 2)]  # 60 %, 70 % ... 100 %
    drawn = io.StringIO()
    bar = Bar(4, "work", done=2, stream=drawn, force=True)
    bar.update("a")  # within the redraw interval: not drawn
    bar.update("last cell")  # the last item is always drawn, with its label and the rate
    bar.close()
    text = drawn.getvalue()
    assert "work 2/4" in text and "work 4/4" in text and "/s eta" in text and "last cell" in text
    assert text.endswith("\r\033[K")
    quiet = io.StringIO()
    bar = Bar(4, "work", stream=quiet, show=False, log="x")
    bar.update()
    assert quiet.getvalue() == ""
    import doctest

    from hear2act_env import progress

    assert doctest.testmod(progress).failed == 0
