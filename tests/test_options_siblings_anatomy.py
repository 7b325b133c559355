"""``benchmarks/options_siblings_anatomy.py``: the oracles read the shipped bank's sides (rebuilt byte for byte)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_needs_cube_is_a_design_cube_and_one_scenario_is_at_its_floor(capsys) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import options_siblings_anatomy
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    result = options_siblings_anatomy.main([])  # exits if the bank differs or a needs' cube is not a cube
    readers = result["readers"]
    assert result["scenarios"] == 480
    # 8-column designs: 7 cubes; 7-column ones (a request naming a categorical attribute): 6
    assert 1 / 7 <= readers["one scenario (uniform over its cubes)"]["top1"] <= 1 / 6
    for figures in readers.values():
        assert 0.0 <= figures["ci95"][0] <= figures["top1"] <= figures["ci95"][1] <= 1.0
    assert "| side recurrence - | siblings' sides |" in capsys.readouterr().out
    # Distractor sides are sets some persona of the domain accepts, so a reader that knows which offerings are the
    # better ones (any LLM) does not find the needs' columns within one scenario (a decoy side would: --decoys).
    assert readers["premium value on the better side"]["top1"] <= 0.20
