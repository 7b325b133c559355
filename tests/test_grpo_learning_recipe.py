"""``benchmarks/grpo_learning.py`` end to end with its default recipe at a tiny budget (CPU).

The defaults build a tiny LM with a sliding window on every layer and warm-start it on the tag-blind
teacher; a run must go through SFT, GRPO and the held-out evaluations, write its record and its curve, and
its policy must play held-out episodes without the prefix cache a windowed model cannot reuse.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_default_recipe_runs_sft_grpo_and_the_held_out_evaluations(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import grpo_learning
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    args = grpo_learning._args([])
    assert (args.window, args.teacher, args.sft_resolved_share) == (64, "explore", 0.0)  # what the docs measured
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = grpo_learning.main(["--out", str(tmp_path / "run"), "--figure", str(tmp_path / "curve.png"),
                                     "--sft-scenarios", "4", "--sft-steps", "2", "--grpo-steps", "1",
                                     "--grpo-scenarios", "2", "--k", "2", "--groups", "1", "--eval-stride", "80",
                                     "--eval-every", "1", "--max-new-tokens", "12"])
    assert any("prefix caching is off" in str(w.message) for w in caught)
    config = json.loads((tmp_path / "run" / "base" / "config.json").read_text())
    assert config["sliding_window"] == 64 and config["max_window_layers"] == 0
    assert [h["step"] for h in result["history"]] == [0, 1]
    assert len(result["held_out_ids"]) == 2 and result["args"]["teacher"] == "explore"
    for row in (result["before"], result["after"]):
        assert 0.0 <= row["success"] <= 1.0 and 0.0 <= row["invalid_rate"] <= 1.0
    assert result["references"]["explore-tag"]["success"] > result["references"]["explore"]["success"]
    saved = json.loads((tmp_path / "run" / "grpo_learning.json").read_text())
    assert saved["delta_success_points"] == pytest.approx(result["delta_success_points"])
    # --eval-stride 80 keeps the first scenario of each held-out part: one unseen domain's, one trained domain's
    by = saved["by_split"]
    assert by["unseen_domain"]["n"] == by["unseen_scenario"]["n"] == 1 and len(by["gap_ci95"]) == 3
    assert (tmp_path / "curve.png").stat().st_size > 1000
    assert (tmp_path / "run" / "grpo" / "config.json").is_file()
