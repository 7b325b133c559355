"""``hear2act train ppo|grpo|sft``: help, one flag style, and one-line errors (exit 2, no traceback)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hear2act.training.ppo import Args, parse_args
from hear2act_env.access import NAMES
from hear2act_env.cli import main
from hear2act_env.extras import TORCH_CPU_INSTALL

ROOT = Path(__file__).resolve().parents[1]
HAS_TRL = all(importlib.util.find_spec(m) for m in ("trl", "transformers", "torch"))
needs_trl = pytest.mark.skipif(not HAS_TRL, reason="needs the train extra (trl, transformers, torch)")


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI, expect exit status 2, one ``hear2act: error:`` line last on stderr and no traceback; return it.

    (GRPO's ``--mode state`` prints a one-line note about its reward before the checks run.)
    """
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and lines and lines[-1].startswith("hear2act: error: "), lines
    assert sum(line.startswith("hear2act: error:") for line in lines) == 1 and len(lines) <= 2, lines
    return lines[-1]


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """A directory that looks like a checkpoint (config.json) without weights: the checks run before loading."""
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    return tmp_path / "ck"


def test_train_help_lists_the_trainers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["train", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("ppo", "grpo", "sft"))


def test_ppo_help_is_the_trainers_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["train", "ppo", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: hear2act train ppo")
    assert "--total-timesteps" in out and "--test-domains" in out


def test_unknown_trainer(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse's usage error, like every subcommand's
        main(["train", "dqn"])
    assert exc.value.code == 2
    assert "invalid choice: 'dqn'" in capsys.readouterr().err


def test_one_flag_style_both_spellings() -> None:
    dashed = parse_args(Args, ["--total-timesteps", "7", "--test-per-domain", "1", "--no-wandb"])
    underscored = parse_args(Args, ["--total_timesteps", "7", "--test_per_domain", "1", "--no-wandb"])
    assert dashed == underscored and dashed.total_timesteps == 7 and dashed.test_per_domain == 1


@pytest.mark.parametrize(("argv", "expected"), [
    (["--access", "X"], f"--access must be one of {', '.join(NAMES)}; got 'X'"),
    (["--env-id", "Hear2Act-Prosody-v0"], "--env-id must be one of"),
    (["--action-set", "tiny"], "--action-set must be one of macro, full; got 'tiny'"),
    (["--test-domains", "99"], "--test-domains must be in 0..47"),
    (["--test-per-domain", "50"], "--test-per-domain must be in 0..9"),
    (["--split-seed", "-1"], "--split-seed must be >= 0, got -1"),
    (["--net-arch", "wide"], "--net-arch must be comma-separated"),
    (["--total-timesteps", "0"], "--total-timesteps must be >= 1"),
])
def test_ppo_bad_flags_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert expected in _error(capsys, ["train", "ppo", *argv])


def test_ppo_without_torch_names_the_cpu_index(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails as if it were not installed
    line = _error(capsys, ["train", "ppo", "--access", "T"])
    assert "PPO training needs torch" in line and TORCH_CPU_INSTALL in line and 'pip install "hear2act[train]"' in line


def test_python_m_gives_the_same_one_line_error() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "hear2act.training.ppo", "--access", "X"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [f"hear2act: error: --access must be one of {', '.join(NAMES)}; "
                                               "got 'X'"]


@needs_trl
@pytest.mark.parametrize(("argv", "expected"), [
    ([], "--model is required"),
    (["--model", "{ck}", "--access", "X"], f"--access must be one of {', '.join(NAMES)}; got 'X'"),
    (["--model", "{ck}", "--test-domains", "48"], "--test-domains must be in 0..47"),
    (["--model", "{ck}", "--split_seed", "-3"], "--split-seed must be >= 0"),
    (["--model", "{tmp}/no-such-model"], "not a checkpoint directory (no config.json there)"),
    (["--model", "{ck}", "--no-such-flag", "1"], "not used by the HfArgumentParser: ['--no-such-flag', '1']"),
])
def test_grpo_bad_flags_are_one_line(capsys: pytest.CaptureFixture[str], checkpoint: Path, argv: list[str],
                                     expected: str) -> None:
    argv = [a.format(ck=checkpoint, tmp=checkpoint.parent) for a in argv]
    assert expected in _error(capsys, ["train", "grpo", "--output-dir", str(checkpoint.parent / "out"), *argv])


@needs_trl
def test_grpo_audio_access_without_the_speech_extra(capsys: pytest.CaptureFixture[str], checkpoint: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hibari", None)  # the speech extra's renderer, as if not installed
    line = _error(capsys, ["train", "grpo", "--model", str(checkpoint), "--access", "A+T", "--mode", "state",
                           "--output-dir", str(checkpoint.parent / "out")])
    assert line == ('hear2act: error: --access A+T renders speech, which needs the speech extra (hibari is not '
                    'installed): pip install "hear2act[speech]"')
    assert not (checkpoint.parent / "out").exists()  # refused before anything was built


@needs_trl
def test_grpo_without_torch_names_the_cpu_index(capsys: pytest.CaptureFixture[str], checkpoint: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    line = _error(capsys, ["train", "grpo", "--model", str(checkpoint)])
    assert "GRPO training needs torch" in line and TORCH_CPU_INSTALL in line


@needs_trl
@pytest.mark.parametrize(("argv", "expected"), [
    ([], "--model is required"),
    (["--model", "{ck}", "--access", "A+T"], "--access must be one of T, T+S; got 'A+T'"),
    (["--model", "{ck}", "--test-per-domain", "10"], "--test-per-domain must be in 0..9"),
])
def test_sft_bad_flags_are_one_line(capsys: pytest.CaptureFixture[str], checkpoint: Path, argv: list[str],
                                    expected: str) -> None:
    argv = [a.format(ck=checkpoint) for a in argv]
    assert expected in _error(capsys, ["train", "sft", "--output-dir", str(checkpoint.parent / "out"), *argv])


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None, reason="needs stable-baselines3")
def test_train_ppo_tiny_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    out = tmp_path / "ppo"
    assert main(["train", "ppo", "--access", "T+S", "--total-timesteps", "64", "--n-envs", "1", "--n-steps", "32",
                 "--batch-size", "32", "--n-epochs", "1", "--max-scenarios", "30", "--test-domains", "1",
                 "--test-per-domain", "1", "--out", str(out)]) == 0
    result = json.loads((out / "eval.json").read_text())
    assert result["access"] == "T+S" and result["timesteps"] >= 64 and result["overall"]["n"] > 0
    assert (out / "policy.zip").is_file()
    assert str(out / "eval.json") in capsys.readouterr().out


def test_missing_extra_hints() -> None:
    import doctest

    from hear2act_env import extras

    assert doctest.testmod(extras).failed == 0
    torch_missing = extras.missing_extra("the hf: backend", "llm", module="torch.nn")
    assert TORCH_CPU_INSTALL in torch_missing and torch_missing.endswith(
        'then pip install "hear2act[llm]" (the extra alone pulls a multi-GB CUDA build of torch)')
    assert extras.missing_extra("GRPO training", "train") == (
        'GRPO training needs the train extra, which is not installed: pip install "hear2act[train]"')
