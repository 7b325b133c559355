"""The protocol's pattern cube, as an options-only reader sees it, and decoy columns that blur it.

PROTOCOL.md "Scenario" fixes the satisfaction patterns: the nine request-meeting options
(the opening among them) realise all eight (L1, L2, L3) patterns plus a second all-needs
option (the safe one), and the gold leads the safe option on the priority. So three columns
exist whose meet/miss sides give the nine rows exactly the codes 0..7 once each plus a
second 7, with the opening off 7. A reader of the options text alone can search for them:
every triple of categorical columns the request does not name, every way of splitting each
column's values into two sides, and keep the splits that form that cube; the leader (on
the priority) of each cube's 111 pair is its guess. Left alone, one cube exists and its
leader is the gold (0.879 of the -v3 bank's scenarios, ``benchmarks/options_cube.py``).

:func:`cube_leaders` is that reader. The generator answers it with cube designs
(:mod:`.design`): tables of sides in which seven cubes exist, each led by another candidate,
and the needs are one of them drawn at random.

Pure functions over rows (``{attribute: value}`` dicts) and numpy arrays; no global state.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from .model import Scenario
from .shortcuts import candidates

Row = dict[str, "str | float | int"]
# Columns with more value classes than this are split only as one class against the rest
# (2 ** k - 2 splits grow fast and no bank column has more than 5 values).
MAX_CLASSES = 5


def splits(values: Sequence[str]) -> np.ndarray:
    """Every two-sided split of a column's value classes, as 0/1 rows (one per split, each side once).

    >>> splits(["a", "b", "a"]).tolist()
    [[0, 1, 0]]
    >>> splits(["a", "b", "c"]).tolist()
    [[0, 0, 1], [0, 1, 0], [0, 1, 1]]
    """
    classes = sorted(set(values))
    idx = np.array([classes.index(v) for v in values])
    if len(classes) < 2:
        return np.zeros((0, len(values)), dtype=np.int8)
    if len(classes) > MAX_CLASSES:
        masks = [1 << i for i in range(len(classes))]
    else:
        masks = list(range(1, 2 ** len(classes) - 1))
    out = {tuple(int((m >> i) & 1) for i in idx) for m in masks}
    # a split and its mirror are one split: keep the one whose first row is on side 0
    out = {b if b[0] == 0 else tuple(1 - x for x in b) for b in out}
    return np.array(sorted(out), dtype=np.int8)


def cube_codes(a: np.ndarray, b: np.ndarray, c: np.ndarray, opening: int) -> np.ndarray:
    """For every choice of one split (or its mirror) per column, whether the rows form the cube.

    ``a``, ``b``, ``c``: the splits of three columns (``splits`` rows); mirrors are added here.
    Returns the codes (one row of per-row codes 0..7 per valid choice), opening included.
    """
    cols = [np.concatenate([x, 1 - x]) for x in (a, b, c)]
    codes = (4 * cols[0][:, None, None, :] + 2 * cols[1][None, :, None, :] + cols[2][None, None, :, :])
    codes = codes.reshape(-1, codes.shape[-1]).astype(np.int64)
    n = codes.shape[1]
    counts = np.zeros((codes.shape[0], 8), dtype=np.int64)
    for r in range(n):
        counts[np.arange(codes.shape[0]), codes[:, r]] += 1
    # all eight codes over the nine rows, 7 twice, and the opening is not one of the two 7s
    ok = (counts[:, 7] == 2) & (counts[:, :7] == 1).all(axis=1) & (codes[:, opening] != 7)
    return codes[ok]


def cube_leaders(rows: Sequence[Row], columns: Sequence[str], candidates: Sequence[int], opening: int,
                 keys: Sequence[float]) -> Counter[int]:
    """How many cubes the reader finds for each leader (a row index), over the given rows.

    ``rows``: every option's values; ``columns``: the categorical columns the request does not
    name; ``candidates`` and ``opening``: the nine request-meeting rows (the opening apart);
    ``keys[row]``: its place on the priority, lower is better.

    >>> rows = [{"x": x, "y": y, "z": z} for x, y, z in
    ...         ["000", "111", "111", "001", "010", "011", "100", "101", "110"]]
    >>> cube_leaders(rows, ["x", "y", "z"], range(1, 9), 0, keys=range(9))
    Counter({1: 1})
    """
    nine = [opening, *candidates]
    split = {c: splits([str(rows[i][c]) for i in nine]) for c in columns}
    key = np.array([float(keys[i]) for i in nine])
    found: Counter[int] = Counter()
    for trio in itertools.combinations(columns, 3):
        if any(len(split[c]) == 0 for c in trio):
            continue
        for codes in cube_codes(*(split[c] for c in trio), opening=0):
            pair = np.flatnonzero(codes == 7)
            found[nine[int(pair[np.argmin(key[pair])])]] += 1
    return found


def gold_share(found: Counter[int], gold: int, n_candidates: int) -> float:
    """The reader's chance of naming the gold: its share of the cubes found (chance when none)."""
    total = sum(found.values())
    return found[gold] / total if total else 1.0 / n_candidates


def reader_rate(scenarios: Iterable[Scenario]) -> tuple[float, float]:
    """Over a bank: the cube reader's expected top-1 (its chance of naming the gold, averaged), and the
    share of scenarios in which every cube it finds names the gold.

    The reader sees what an agent sees: the options, the request's named columns (left out), the
    opening (the first recommendation) and the priority; nothing of the needs.
    """
    shares, sure = [], []
    for s in scenarios:
        rows = [dict(o.values) for o in s.options]
        index = {o.number: i for i, o in enumerate(s.options)}
        cands = [index[o.number] for o in candidates(s)]
        named = {r.attribute for r in s.requirements}  # the request names them
        cols = [a.name for a in s.attributes if not a.numeric and a.name not in named]
        keys = [s._rank_key(o) for o in s.options]
        found = cube_leaders(rows, cols, cands, index[s.opening], keys)
        shares.append(gold_share(found, index[s.gold], len(cands)))
        sure.append(bool(found) and set(found) == {index[s.gold]})
    return float(np.mean(shares)), float(np.mean(sure))
