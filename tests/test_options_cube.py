"""The pattern cube (issue 17 §1): a structural options-only reader, and the decoy deal that blurs it.

PROTOCOL.md fixes that the nine request-meeting options realise every (L1, L2, L3) pattern once
plus the safe option's second 111, and that the gold leads the safe option on the priority.
``hear2act_env.scenarios.cube.cube_leaders`` searches the options text for three columns whose
value splits form that cube and names the leader of its 111 pair. On env -v3's bank (1-2 distractor
columns, no decoys) it named the gold in 0.879 of scenarios (every cube it found named the gold in
0.765), against chance 0.125 and the issue's limit 0.20 for any options-only reader. Env -v4 deals
3-4 distractor columns as decoy cubes (``generator.build_bank(decoys=True)``, the default): 0.209
(``python benchmarks/options_cube.py``; ``--control --distractors 1 2`` rebuilds -v3's bank). The
record is below: still above the limit, by a hair.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from hear2act_env.scenarios import cube, load_scenarios
from hear2act_env.scenarios.content import load_all_domains
from hear2act_env.scenarios.generator import build_bank

PATTERNS = ["110", "111", "111", "000", "001", "010", "011", "100", "101"]  # opening first, then gold, safe


def _rows(patterns: list[str]) -> list[dict[str, str]]:
    names = ("x", "y", "z")
    return [{n: ("good" if bit == "1" else "bad") for n, bit in zip(names, p, strict=True)} for p in patterns]


def test_doctests():
    result = doctest.testmod(cube, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


def test_the_reader_finds_the_one_cube_and_names_its_leader():
    rows = _rows(PATTERNS)
    found = cube.cube_leaders(rows, ["x", "y", "z"], range(1, 9), 0, keys=[0, 1, 2, 3, 4, 5, 6, 7, 8])
    assert found == {1: 1}
    # the safe option ahead of the gold on the priority: the reader names the safe option
    found = cube.cube_leaders(rows, ["x", "y", "z"], range(1, 9), 0, keys=[0, 2, 1, 3, 4, 5, 6, 7, 8])
    assert found == {2: 1}
    # one pattern twice (no cube): the reader finds nothing and falls back on chance
    broken = _rows([*PATTERNS[:-1], "100"])
    found = cube.cube_leaders(broken, ["x", "y", "z"], range(1, 9), 0, keys=range(9))
    assert not found and cube.gold_share(found, 1, 8) == pytest.approx(1 / 8)


def test_a_decoy_column_completes_another_cube_with_another_pair():
    truth = [[int(p[j]) for p in PATTERNS] for j in range(3)]
    for seed in range(20):
        sides, k = cube.decoy_sides(np.random.default_rng(seed), truth, opening=0, pair=(1, 2))
        decoy = [sides if j == k else truth[j] for j in range(3)]
        codes = [4 * a + 2 * b + c for a, b, c in zip(*decoy, strict=True)]
        assert sorted(codes[1:]) == sorted([7, 7, *[c for c in range(7) if c != codes[0]]])
        assert codes[0] != 7
        pair = {r for r, c in enumerate(codes) if c == 7}
        assert pair != {1, 2} and 0 not in pair
        rows = [{**r, "d": str(s)} for r, s in zip(_rows(PATTERNS), sides, strict=True)]
        found = cube.cube_leaders(rows, ["x", "y", "z", "d"], range(1, 9), 0, keys=range(9))
        assert len(found) >= 2 or min(pair) == 1  # a second leader, unless the gold also leads the decoy pair


@pytest.mark.xfail(strict=True, reason=(
    "issue 17 §1: the protocol's cube (every pattern once plus the safe option's 111, the gold ahead of the safe) "
    "let a structural options-only reader name the gold in 0.879 of -v3's scenarios; -v4's decoy distractors cut "
    "it to 0.209, still above 0.20"))
def test_the_cube_reader_names_the_gold_at_most_at_the_limit():
    rate, sure = cube.reader_rate(load_scenarios())
    assert rate == pytest.approx(0.209, abs=0.002) and sure < 0.01  # the record
    assert rate <= 0.20


@pytest.fixture(scope="module")
def eight_domains():
    return load_all_domains()[::6]


def test_the_decoy_deal_cuts_the_cube_reader(eight_domains):
    """Eight domains (80 scenarios): without decoys the cube reader is far above chance, with them far lower."""
    control, _ = cube.reader_rate(build_bank(eight_domains, decoys=False))
    decoyed, _ = cube.reader_rate(build_bank(eight_domains))
    assert control > 0.7
    assert decoyed < control - 0.35
