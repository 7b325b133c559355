"""The ``hear2act`` command line, end to end on small inputs."""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from eval.play import _play, expand
from hear2act_env.cli import main


def test_rollout_prints_episodes_and_summary(capsys):
    assert main(["rollout", "--agent", "oracle", "--env", "Hear2Act-Explicit-v0", "--n", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("success=1") == 3
    assert "oracle Hear2Act-Explicit-v0 T" in out and "100.0" in out


def test_demo_on_a_few_scenarios(capsys):
    assert main(["demo", "--n", "4"]) == 0
    out = capsys.readouterr().out
    for agent in ("random", "confirm", "transcript-rule", "state-rule", "oracle"):
        assert agent in out
    assert "40 episodes" in out


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


def test_unknown_agent_is_an_argparse_error():
    with pytest.raises(SystemExit):
        main(["rollout", "--agent", "gpt-17"])


def test_play_shortcuts_and_a_scripted_session():
    assert expand("r 3 how about it") == "[ACTION: RECOMMEND] [OPTION: 3] how about it"
    assert expand("a Any layovers?") == "[ACTION: ASK] Any layovers?"
    assert expand("ok") == "[ACTION: CONFIRM]"
    assert expand("[ACTION: CLARIFY] x") == "[ACTION: CLARIFY] x"
    args = argparse.Namespace(env="Hear2Act-Prosody-v0", access="T+S", scenario="budget-airline-tickets-01",
                              seed=0)
    inputs = iter(["a Do you mind layovers?", "r 11 this one", "ok"])
    printed: list[str] = []
    assert _play(args, read=lambda _: next(inputs), write=printed.append) == 0
    text = "\n".join(printed)
    assert "nonstop" in text and "CONCERN STATE" in text and "SUCCESS" in text


@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_render_reports_count_and_time(tmp_path, capsys):
    assert main(["render", "--n", "1", "--env", "Hear2Act-Prosody-v0", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "distinct utterances" in out and "rendered" in out
    assert list(tmp_path.rglob("*.h2a"))
    assert main(["render", "--n", "1", "--env", "Hear2Act-Prosody-v0", "--cache", str(tmp_path)]) == 0
    assert "rendered 0" in capsys.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_perception_report_and_clips_for_the_listening_page(tmp_path, capsys):
    from eval.listening.data import load_manifest

    assert main(["perception", "--renderers", "hibari", "--n", "6", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "renderer hibari" in out and "confusion" in out and "re-derived within tolerance" in out
    manifest = load_manifest(tmp_path / "hibari")
    assert len(manifest.clips) == 6
    intended = [c.intended for c in manifest.clips]
    assert sum(i == "resolved" for i in intended) == 3
