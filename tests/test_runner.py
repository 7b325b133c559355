"""``hear2act eval``: durable lines, resume after SIGKILL at random moments, torn lines, shards, refusals."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hear2act.eval.grid import parse_grid
from hear2act.eval.runner import RunDirError, read_rollouts, read_run, rollouts_path, run_grid
from hear2act_env.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
# 2 agents x 2 realizations x (T, T+S) x 30 scenarios = 240 rollouts, a few seconds: long enough to kill mid-run
GRID = """
name = "resume-test"
seed = 7
[scenarios]
some = "first:30"
[[block]]
name = "text"
kind = "text"
agents = ["transcript-rule", "state-rule"]
conditions = ["T", "T+S"]
scenarios = "some"
"""


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """An uninterrupted in-process run of the test grid."""
    root = tmp_path_factory.mktemp("ref")
    (root / "grid.toml").write_text(GRID)
    out = root / "run"
    result = run_grid(parse_grid(GRID, root / "grid.toml"), out, progress=False, batch_size=4)
    assert result["run"] == result["planned"] == 240 and result["failed"] == 0
    return root / "grid.toml", lines(out / "rollouts.jsonl")


def test_rows_carry_identity_seed_hashes_trajectory(reference) -> None:
    _, ref = reference
    row = json.loads(ref[0])
    assert set(row) >= {"rollout_id", "cell", "scenario_id", "repeat", "seed", "scenario_hash", "bank_hash",
                        "trajectory", "outcome", "failed"}
    traj = row["trajectory"]
    assert traj["key"] == row["rollout_id"] and traj["seed"] == row["seed"]
    assert traj["turns"] and all({"raw", "action", "parsed_kind", "user_words", "state", "delivery",
                                  "audio_seed"} <= set(t) for t in traj["turns"])
    assert len({json.loads(x)["rollout_id"] for x in ref}) == 240


def _launch(grid: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hear2act_env.cli", "eval", str(grid), "--out", str(out),
                             "--quiet", "--batch-size", "4"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow  # end to end, over 15 s: make test runs it, make test-fast leaves it out
def test_resume_after_sigkill_at_random_moments(reference, tmp_path: Path) -> None:
    grid, ref = reference
    out = tmp_path / "run"
    path = rollouts_path(out)
    rng = random.Random(2026)
    kills_mid_run = 0
    # Kill once during start-up, then each time the file has grown past a random mark, and once more while
    # lines are being written as fast as they come (no wait at all after the mark).
    marks = [0, *sorted(rng.sample(range(10, 230), 3))]
    for mark in marks:
        proc = _launch(grid, out)
        deadline = time.monotonic() + 120
        while _count(path) < mark and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        if mark == 0:
            time.sleep(rng.uniform(0.05, 0.5))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills_mid_run += 0 < _count(path) < len(ref)
        proc.wait(timeout=30)
        proc.stderr.close()
        assert _count(path) < len(ref) or proc.returncode == 0
    # a torn write on top, as a crash inside write() would leave
    if _count(path) < len(ref):
        with path.open("ab") as f:
            f.write(ref[-1].encode()[:57])
    proc = _launch(grid, out)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    final = lines(path)
    assert kills_mid_run >= 3
    ids = [json.loads(x)["rollout_id"] for x in final]
    assert len(ids) == len(set(ids)) == 240  # nothing lost, nothing duplicated
    assert sorted(final) == sorted(ref)  # nothing changed: byte-identical lines
    # and a re-run has nothing left to do
    assert run_grid(parse_grid(GRID, grid), out, progress=False)["run"] == 0


def test_torn_last_line_is_dropped_and_rerun(reference, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid, ref = reference
    out = tmp_path / "run"
    out.mkdir()
    (out / "grid.toml").write_text(GRID)
    path = rollouts_path(out)
    path.write_text("\n".join(ref[:10]) + "\n" + ref[10][:100], encoding="utf-8")
    assert len(read_rollouts(path)) == 10
    result = run_grid(parse_grid(GRID, grid), out, progress=False, batch_size=4)
    assert result["skipped"] == 10 and result["run"] == 230
    assert "torn last line" in capsys.readouterr().err
    assert sorted(lines(path)) == sorted(ref)


def test_corrupt_middle_line_is_an_error_not_a_silent_drop(reference, tmp_path: Path) -> None:
    _, ref = reference
    path = tmp_path / "rollouts.jsonl"
    path.write_text("\n".join([ref[0], "{not json", ref[1]]) + "\n")
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:2: unreadable"):
        read_rollouts(path)


def test_shards_merge_by_concatenation(reference, tmp_path: Path) -> None:
    grid, ref = reference
    g = parse_grid(GRID, grid)
    parts = []
    for i in range(3):
        result = run_grid(g, tmp_path / "shared", (i, 3), progress=False, batch_size=4)
        parts.append(Path(result["path"]))
    assert [p.name for p in parts] == [f"rollouts.shard-{i}-of-3.jsonl" for i in range(3)]
    merged = [x for p in parts for x in lines(p)]
    assert sorted(merged) == sorted(ref)
    assert min(len(lines(p)) for p in parts) > 50  # every shard got work
    # the same shard in its own directory writes the same lines
    alone = run_grid(g, tmp_path / "alone", (1, 3), progress=False, batch_size=4)
    assert lines(Path(alone["path"])) == lines(parts[1])
    # read_run reads every shard file of a directory
    assert sorted(r["rollout_id"] for r in read_run(tmp_path / "shared")) == sorted(
        json.loads(x)["rollout_id"] for x in ref)
    # sharded another way (here: as one shard), the directory plays nothing twice
    again = run_grid(g, tmp_path / "shared", progress=False, batch_size=4)
    assert again["run"] == 0 and again["skipped"] == again["planned"] == len(ref)
    assert not Path(again["path"]).exists() or lines(Path(again["path"])) == []


def test_another_grid_or_bank_in_the_same_directory_is_refused(reference, tmp_path: Path) -> None:
    grid, ref = reference
    small = GRID.replace("first:30", "first:2")
    run_grid(parse_grid(small), tmp_path / "run", progress=False)
    with pytest.raises(RunDirError, match=r"another grid.*name/seed changed"):
        run_grid(parse_grid(GRID.replace("seed = 7", "seed = 8"), grid), tmp_path / "run", progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "grid.toml").write_text(GRID)
    row = json.loads(ref[0])
    row["bank_hash"] = "0000000000000000"
    (other / "rollouts.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(RunDirError, match="another scenario bank"):
        run_grid(parse_grid(GRID, grid), other, progress=False)


def test_cli_runs_and_reports_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID.replace("first:30", "first:2"))
    assert cli_main(["eval", str(grid), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert "16 rollouts in this shard; 0 already done, 16 run now (0 failed)" in capsys.readouterr().out
    assert cli_main(["eval", str(grid), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert "16 already done, 0 run now" in capsys.readouterr().out
    assert cli_main(["eval", str(grid), "--out", str(tmp_path / "run"), "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["total", "16", "(16", "done)"]
    assert cli_main(["eval", str(grid)]) == 2
    assert "--out RUN_DIR is required" in capsys.readouterr().err
    assert os.path.exists(tmp_path / "run" / "grid.toml")


class FlakyServer:
    """A rule policy whose 'server' fails for good on one scenario (the episode fails, is never scored)."""

    def __init__(self, cell, bad: str) -> None:
        from hear2act.agents.adapter import RuleAgentPolicy

        self.inner, self.bad, self.name = RuleAgentPolicy(cell.agent_spec, access=cell.access), bad, cell.agent

    def act_batch(self, items):
        from hear2act.agents.base import PolicyOutput

        outs = self.inner.act_batch(items)
        return [PolicyOutput(action="", raw="", error="HTTP 500 after 3 retries")
                if it.info_reset["scenario_id"] == self.bad and it.turn == 1 else o for it, o in zip(items, outs,
                                                                                                      strict=True)]


def test_failed_rollouts_are_recorded_and_never_scored(tmp_path: Path) -> None:
    from hear2act.eval.report.tables import cells_of, overview_table
    from hear2act_env import load_scenarios

    bad = load_scenarios()[1].id
    g = parse_grid(GRID.replace("first:30", "first:3").replace('"transcript-rule", ', ""))
    result = run_grid(g, tmp_path / "run", progress=False, make_policy=lambda cell: FlakyServer(cell, bad))
    rows = read_run(tmp_path / "run")
    failed = [r for r in rows if r["failed"]]
    assert result["failed"] == len(failed) > 0 and {r["scenario_id"] for r in failed} == {bad}
    assert all(r["outcome"] is None and r["failed"] == "HTTP 500 after 3 retries" for r in failed)
    # a resume does not retry them: the failure is the recorded result of that rollout ...
    assert run_grid(g, tmp_path / "run", progress=False)["run"] == 0
    # ... unless asked to, once the server is fixed: the new lines supersede the failed ones
    retried = run_grid(g, tmp_path / "run", progress=False, retry_failed=True)
    assert retried["run"] == len(failed) and retried["failed"] == 0
    assert not [r for r in read_run(tmp_path / "run") if r["failed"]]
    assert run_grid(g, tmp_path / "run", progress=False, retry_failed=True)["run"] == 0
    table = overview_table(rows)  # the run as it was before the retry
    n_failed = sum(int(values[4].text) for _, values in table.rows)  # Agent, Responses, Condition, n, failed
    assert n_failed == len(failed) and len(table.rows) == len(cells_of(rows))
