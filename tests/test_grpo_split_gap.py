"""``benchmarks/grpo_split_gap.py`` on the committed held-out records: the parts add up to each record's figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = sorted((ROOT / "docs" / "results" / "grpo-v5").glob("heldout-seed*.json"))


def _module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import grpo_split_gap
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return grpo_split_gap


def test_the_two_parts_make_up_each_record(tmp_path, capsys) -> None:
    assert len(RECORDS) == 3
    result = _module().main(["--json", str(tmp_path / "gap.json")])
    assert json.loads((tmp_path / "gap.json").read_text()) == json.loads(json.dumps(result))
    for record_path, row in zip(RECORDS, result["per_seed"], strict=True):
        record = json.loads(record_path.read_text())
        assert row["seed"] == record["seed"]
        d, s = row["unseen_domain"], row["unseen_scenario"]
        assert d["n"] == s["n"] == 80
        for when in ("before", "after"):
            assert (d[when] * d["n"] + s[when] * s["n"]) / 160 == pytest.approx(record[when]["success"])
        gap, low, high = row["gap_ci95"]
        assert gap == pytest.approx(s["gain_ci95"][0] - d["gain_ci95"][0]) and low <= gap <= high
    assert "pooled (3 seeds)" in capsys.readouterr().out


def test_a_record_of_another_split_is_refused(tmp_path) -> None:
    record = json.loads(RECORDS[0].read_text())
    record["held_out_ids"] = record["held_out_ids"][:-1]
    for when in ("before", "after"):
        record[when]["success_by_episode"] = record[when]["success_by_episode"][:-1]
    bad = tmp_path / "heldout-seed9.json"
    bad.write_text(json.dumps(record))
    with pytest.raises(SystemExit, match="not the default split's"):
        _module().main([str(bad)])
    (tmp_path / "broken.json").write_text(json.dumps({"seed": 0}))
    with pytest.raises(SystemExit, match="missing"):
        _module().main([str(tmp_path / "broken.json")])
