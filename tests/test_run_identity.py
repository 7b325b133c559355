"""Run directories hold only their own rows (issue 20): grid identity on every row, foreign/conflicting rows
refused naming file:line, an empty run is an error, a grown grid resumes, a changed cell is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hear2act.eval.grid import parse_grid
from hear2act.eval.run_identity import cell_hash, grid_id
from hear2act.eval.runner import RunDirError, read_run, rollouts_path, run_grid
from hear2act_env.cli import main as cli_main

GRID = """
name = "identity"
seed = 5
[scenarios]
few = "first:2"
[[block]]
name = "text"
kind = "text"
agents = ["state-rule"]
realizations = ["prosody"]
conditions = ["T"]
scenarios = "few"
"""


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    result = run_grid(parse_grid(GRID, tmp_path / "g.toml"), out, progress=False)
    assert result["run"] == result["planned"] == 2
    return out


def _lines(out: Path) -> list[str]:
    return rollouts_path(out).read_text(encoding="utf-8").splitlines()


def _append(out: Path, row: dict) -> None:
    with rollouts_path(out).open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def test_every_row_carries_its_grid_identity(run: Path) -> None:
    for line in _lines(run):
        row = json.loads(line)
        assert row["grid_id"] == grid_id("identity", 5)
        assert row["cell_hash"] == cell_hash(row["cell"])


def _other_grid_row(tmp_path: Path) -> dict:
    other = run_grid(parse_grid(GRID.replace('"identity"', '"other"')), tmp_path / "other", progress=False)
    return json.loads(Path(other["path"]).read_text(encoding="utf-8").splitlines()[0])


def test_a_row_of_another_grid_is_refused_by_eval_and_report(run: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _append(run, _other_grid_row(tmp_path))
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:3: rollout \w+ belongs to grid 'other'"):
        read_run(run)
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    assert cli_main(["eval", str(grid), "--out", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "rollouts.jsonl:3:" in err and "grid 'other'" in err
    assert cli_main(["report", str(run), "--out", str(tmp_path / "rep"), "--no-audio"]) == 2
    assert "rollouts.jsonl:3:" in capsys.readouterr().err


def test_a_second_different_line_for_one_rollout_is_refused(run: Path, tmp_path: Path) -> None:
    row = json.loads(_lines(run)[0])
    row["outcome"] = dict(row["outcome"], success=not row["outcome"]["success"])
    _append(run, row)
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:3: rollout .* appears again with different content "
                                          r"\(first at .*rollouts.jsonl:1\)"):
        read_run(run)
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:3: .*appears again"):
        run_grid(parse_grid(GRID), run, progress=False)


def test_an_identical_duplicate_collapses(run: Path) -> None:
    _append(run, json.loads(_lines(run)[0]))
    assert len(read_run(run)) == 2


def test_a_duplicate_played_under_another_repeats_or_limit_collapses(run: Path) -> None:
    """``--repeats 1`` / ``--limit N`` record another ``repeats`` / ``scenarios`` in the row's cell: which
    rollouts the cell has, not how this one was played; the same rollout's row collapses with it."""
    row = json.loads(_lines(run)[0])
    row["cell"] = dict(row["cell"], repeats=row["cell"]["repeats"] + 1, scenarios="first:1")
    _append(run, row)
    assert len(read_run(run)) == 2
    row["outcome"] = dict(row["outcome"], success=not row["outcome"]["success"])
    _append(run, row)
    with pytest.raises(RunDirError, match="appears again with different content"):
        read_run(run)


def test_a_row_whose_cell_differs_is_refused(run: Path) -> None:
    row = json.loads(_lines(run)[0])
    row["cell"]["agent_spec"] = "oracle"
    row.pop("cell_hash")
    rollouts_path(run).write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:1: .*another definition of cell .*agent_spec"):
        read_run(run)


def test_a_tampered_identity_is_refused(run: Path) -> None:
    row = json.loads(_lines(run)[0])
    row["cell_hash"] = "0" * 16
    rollouts_path(run).write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"rollouts.jsonl:1: row's recorded grid identity"):
        read_run(run)


@pytest.mark.parametrize("content", ["", '{"rollout_id": "torn'])
def test_an_empty_or_torn_only_run_is_an_error(run: Path, tmp_path: Path, content: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rollouts_path(run).write_text(content, encoding="utf-8")
    with pytest.raises(RunDirError, match="an empty run"):
        read_run(run)
    assert cli_main(["report", str(run), "--out", str(tmp_path / "rep"), "--no-audio"]) == 2
    assert "an empty run" in capsys.readouterr().err


def test_a_grid_that_only_adds_resumes_and_runs_the_new_rollouts(run: Path, tmp_path: Path) -> None:
    before = _lines(run)
    grown = GRID.replace("first:2", "first:3").replace('conditions = ["T"]', 'conditions = ["T", "T+S"]')
    grown = "# a comment changes the bytes, not the cells\n" + grown
    result = run_grid(parse_grid(grown, tmp_path / "g2.toml"), run, progress=False)
    assert result["skipped"] == 2 and result["run"] == 4  # 3 scenarios x 2 conditions, 2 already played
    assert _lines(run)[:2] == before  # the old rows untouched
    assert (run / "grid.toml").read_text(encoding="utf-8") == grown
    assert len(read_run(run)) == 6


def test_a_grid_that_changes_an_existing_cell_is_refused_naming_it(run: Path, tmp_path: Path) -> None:
    changed = GRID.replace('agents = ["state-rule"]', 'agents = ["state-rule"]\nrepeats = 1') + (
        '\n[agents]\n"state-rule" = { spec = "transcript-rule" }\n')
    with pytest.raises(RunDirError, match=r"cell text \| state-rule \| prosody \| T changed \(agent_spec "
                                          r"'state-rule' -> 'transcript-rule'\)"):
        run_grid(parse_grid(changed, tmp_path / "g3.toml"), run, progress=False)


def test_a_grid_that_drops_rollouts_is_refused(run: Path) -> None:
    with pytest.raises(RunDirError, match="no longer plans scenario"):
        run_grid(parse_grid(GRID.replace("first:2", "first:1")), run, progress=False)


def test_a_grid_changed_only_by_a_comment_resumes_with_nothing_to_do(run: Path, tmp_path: Path) -> None:
    result = run_grid(parse_grid("# reformatted\n" + GRID.replace("\n", "\n\n"), tmp_path / "g4.toml"), run,
                      progress=False)
    assert result["skipped"] == 2 and result["run"] == 0
