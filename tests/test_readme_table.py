"""The README's demo table is generated from a demo run's results.json (eval/readme_table.py), and the
README shows what a run of the demo's text-baselines block gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from hear2act.eval.grid_edit import edit_grid
from hear2act.eval.readme_table import BEGIN, END, block, readme_block, rewrite, text_rows
from hear2act.eval.results import read_results, write_results
from hear2act.eval.runner import run_grid

ROOT = Path(__file__).parent.parent


def _cell(block_: str, kind: str, agent: str, cond: str, real: str, value: float | None, n: int = 480,
          iv: str = "correct") -> dict:
    low, high = (None, None) if value is None else (value - 10, value + 5)
    return {"block": block_, "kind": kind, "agent": agent, "condition": cond, "realization": real,
            "intervention": iv, "scenarios": n, "metrics": {"success": {"value": value, "low": low, "high": high}}}


def _results(spoken: bool) -> dict:
    cells = [_cell("text-baselines", "text", a, c, r, v) for a, v in (("random", 9.4), ("state-rule", 100.0))
             for c in ("T", "T+S") for r in ("prosody", "explicit")]
    cells += [_cell("label-fidelity", "label-fidelity", "state-rule", "T+S", "prosody", 14.58333, 48, iv)
              for iv in ("always_resolved", "shuffled", "always_unresolved")]
    if spoken:
        cells += [_cell("spoken", "spoken", "state-rule", c, r, 91.66667, 24) for c in ("T+S_hat", "T+affect")
                  for r in ("prosody", "explicit")]
    return {"cells": cells, "rollouts": 1234, "failed": 0, "command": "hear2act demo",
            "versions": {"git_commit": "abc123", "hear2act": "0.1.0", "bank_hash": ["f00"]}}


def test_block_from_results_and_rewrite_between_markers():
    text = block(_results(spoken=False))
    assert "| random | T | 9.4 | 9.4 |" in text and "| state-rule | T+S (true tag) | 100.0 | 100.0 |" in text
    assert "T+S_hat" not in text and "always-resolved 14.6" in text
    assert "`hear2act demo`" in text and "`abc123`" in text
    spoken = block(_results(spoken=True))
    assert ("| state-rule | T+S_hat (CPU perceiver on the audio; 24 spoken scenarios; 95% CI) "
            "| 91.7 [81.7, 96.7] | 91.7 [81.7, 96.7] |") in spoken
    readme = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    new = rewrite(readme, _results(spoken=True))
    assert new.startswith("intro\n") and new.endswith(f"{END}\noutro\n") and "old" not in new
    assert rewrite(new, _results(spoken=True)) == new
    with pytest.raises(ValueError, match="exactly one"):
        rewrite("no markers", _results(spoken=True))


@pytest.mark.slow
def test_readme_text_rows_are_what_the_demo_text_block_gives(tmp_path):
    """Runs the quick grid's text-baselines block on all its scenarios (11,520 rule-agent rollouts) and
    compares the generated text rows with the README's. Regenerate the README with
    `make demo && python -m hear2act.eval.readme_table runs/demo` when it fails."""
    grid = edit_grid("quick", drop_kinds=("label-fidelity", "spoken"))
    run_grid(grid, tmp_path, progress=False, batch_size=64)
    ours = text_rows(read_results(write_results(tmp_path, n_resamples=10)))
    shown = readme_block((ROOT / "README.md").read_text(encoding="utf-8")).splitlines()
    shown_text = [line for line in shown if line.startswith("| ") and line.split(" | ")[1] in ("T", "T+S (true tag)")]
    assert ours == shown_text
