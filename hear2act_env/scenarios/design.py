"""Cube designs: the meet/miss sides of a scenario's categorical columns, dealt so the gold is exchangeable.

PROTOCOL.md "Scenario" fixes the need patterns: the nine request-meeting options (the
opening among them) realise the eight (L1, L2, L3) patterns once each plus a second 111
(the safe option), the opening is not 111, and the gold leads the safe option on the
priority. Read as sides (1: shows a value the need accepts), the three need columns form a
*cube* over the nine rows, and the gold is the cube's *leader*: the first of its two 111
rows in priority order. An options-only reader who can tell a column's sides apart (a
need's accepted values read as the better ones) looks for that cube.

Env -v5 answers the reader by construction instead of by search. Every categorical column
a scenario shows (its three needs and every distractor its domain has) takes its sides from
a *design*: a 9 x C table of sides, row 0 the opening and rows 1..8 the candidates in
priority order, in which several column triples form a cube, each led by another candidate
(``tools/design_search.py`` finds them; ``data/cube-designs.json`` holds them). With C = 8
every candidate that can lead a cube (all but the last on the priority) leads one; with C = 7
six of them do (no design with all seven turned up); narrower tables, for users' domains, are
the best found. The generator picks a design, shuffles its columns, and only then makes one of
its cubes, uniformly at random, the needs: given the sides and the priority order, each leader
is the gold with the same chance, so no reader of the options, however it weighs what it sees,
finds the gold from the sides at better than 1/7 on average (AUC 0.571) with 8 columns, 1/6
(0.643) with 7. What is left to it is in the values that show a side, the numbers, and what the
domain's other scenarios show (``docs/protocol-choices.md``, "Cube designs", "What is left").

Pure functions over numpy arrays; the designs load once, read-only.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import ScenarioError

DESIGN_FILE = Path(__file__).resolve().parent.parent / "data" / "cube-designs.json"
# The opening's patterns (L1 first) and their weights: PROTOCOL.md lets the opening miss any
# need (Figure 2's misses only L3). A design fixes how many of a cube's columns the opening
# meets; these weights then pick which, so L1 is met as often as the -v4 bank's 0.72 allowed.
OPENING_PATTERNS = ("110", "101", "100", "011", "010", "001", "000")
OPENING_WEIGHTS = (0.27, 0.27, 0.18, 0.1, 0.08, 0.05, 0.05)


@dataclass(frozen=True)
class Cube:
    """Three columns of a design whose sides form the protocol's cube; ``pair``: its two 111 rows,
    the leader (ahead on the priority) first."""

    columns: tuple[int, int, int]
    pair: tuple[int, int]


def cubes(table: np.ndarray) -> list[Cube]:
    """Every cube of a 9 x C side table (row 0 the opening, rows in priority order).

    >>> rows = ["110", "111", "111", "000", "001", "010", "011", "100", "101"]
    >>> cubes(np.array([[int(c) for c in r] for r in rows]))
    [Cube(columns=(0, 1, 2), pair=(1, 2))]
    """
    table = np.asarray(table, dtype=np.int64)
    out = []
    for trio in itertools.combinations(range(table.shape[1]), 3):
        codes = 4 * table[:, trio[0]] + 2 * table[:, trio[1]] + table[:, trio[2]]
        counts = np.bincount(codes, minlength=8)
        if counts[7] == 2 and (counts[:7] == 1).all() and codes[0] != 7:
            a, b = (int(r) for r in np.flatnonzero(codes == 7))
            out.append(Cube(trio, (a, b)))
    return out


def leads(table: np.ndarray) -> list[int]:
    """How many cubes each candidate (rows 1..8) leads."""
    counts = [0] * 8
    for cube in cubes(table):
        counts[cube.pair[0] - 1] += 1
    return counts


def bayes_reader(table: np.ndarray) -> tuple[float, float]:
    """The best an options-only reader of the sides can do when the needs are a uniformly chosen cube:
    its expected top-1 (the largest share of cubes one candidate leads) and its expected AUC.

    >>> rows = ["110", "111", "111", "000", "001", "010", "011", "100", "101"]
    >>> bayes_reader(np.array([[int(c) for c in r] for r in rows]))
    (1.0, 1.0)
    """
    counts = leads(table)
    if sum(counts) == 0:
        raise ValueError("the table has no cube")
    return lead_figures(counts)


def lead_figures(counts: Sequence[int]) -> tuple[float, float]:
    """From how many cubes each candidate leads, a reader's expected top-1 and AUC when the needs are one
    of those cubes drawn uniformly (0, 0 when there is none).

    >>> lead_figures([1, 1, 1, 1, 1, 1, 1, 0])
    (0.14285714285714285, 0.5714285714285714)
    """
    p = np.asarray(counts, dtype=float) / max(sum(counts), 1)
    auc = sum(p[g] * ((p[g] > np.delete(p, g)).mean() + 0.5 * (p[g] == np.delete(p, g)).mean())
              for g in range(len(p)) if p[g] > 0)
    return float(p.max()), float(auc)


def decode(rows: list[str]) -> np.ndarray:
    return np.array([[int(c) for c in row] for row in rows], dtype=np.int64)


@lru_cache(maxsize=1)
def _library() -> dict[str, dict[int, tuple[np.ndarray, ...]]]:
    raw = json.loads(DESIGN_FILE.read_text(encoding="utf-8"))["designs"]
    return {kind: {int(c): tuple(decode(d["rows"]) for d in found) for c, found in by_c.items()}
            for kind, by_c in raw.items()}


def designs(kind: str, columns: int) -> tuple[np.ndarray, ...]:
    """The stored designs of one kind ("rising": what an option offers rises along the priority, as
    prices do for a cost priority; "falling": for a merit priority) and width."""
    lib = _library()
    if kind not in lib or columns not in lib[kind]:
        have = {k: sorted(v) for k, v in lib.items()}
        raise ScenarioError(DESIGN_FILE.name, f"designs.{kind}.{columns}",
                            f"no cube design of kind {kind!r} with {columns} columns (the file has {have}); a domain "
                            f"with {columns - 3} attributes besides the needs and the request's needs one: run "
                            f"tools/design_search.py --columns {columns}")
    return lib[kind][columns]


@dataclass(frozen=True)
class Deal:
    """One scenario's sides: ``table`` (9 x C, rows in priority order, row 0 the opening), ``cube``
    (the needs' three columns, unordered: :func:`levels` orders them), ``gold`` and ``safe`` (rows)."""

    table: np.ndarray
    cube: tuple[int, int, int]
    gold: int
    safe: int


def deal(rng: np.random.Generator, kind: str, columns: int) -> Deal:
    """A design of ``kind`` and width ``columns``, its columns shuffled, one of its cubes the needs (uniformly).

    A domain wider than every stored design (a user's, with many attributes) takes the widest design plus
    fair-coin columns; the needs are then one of all the cubes the table has, so the reader's best is still
    the share of cubes a candidate leads.
    """
    widest = max(_library()[kind]) if kind in _library() else 0
    if columns > widest > 0:
        found = designs(kind, widest)
        base = found[int(rng.integers(len(found)))]
        table = np.column_stack([base, rng.integers(0, 2, size=(9, columns - widest))])
    else:
        found = designs(kind, columns)
        table = found[int(rng.integers(len(found)))]
    table = table[:, rng.permutation(columns)]
    options = cubes(table)
    cube = options[int(rng.integers(len(options)))]
    return Deal(table, cube.columns, cube.pair[0], cube.pair[1])


def levels(rng: np.random.Generator, dealt: Deal,
           prefer: Callable[[tuple[int, int, int]], bool] | None = None) -> tuple[int, int, int]:
    """The cube's columns ordered L1, L2, L3.

    The opening's pattern follows :data:`OPENING_WEIGHTS` among the patterns with as many met needs
    as the cube gives it; the columns it meets take that pattern's 1s, the others its 0s, in an order
    ``prefer`` (when given) holds for if one does. Which column is which level changes neither the
    sides nor the values an option shows, so an options-only reader learns nothing from the choice.
    """
    met = [c for c in dealt.cube if dealt.table[0, c] == 1]
    missed = [c for c in dealt.cube if dealt.table[0, c] == 0]
    same = [k for k, p in enumerate(OPENING_PATTERNS) if p.count("1") == len(met)]
    weights = np.array([OPENING_WEIGHTS[k] for k in same])
    pattern = OPENING_PATTERNS[same[int(rng.choice(len(same), p=weights / weights.sum()))]]
    orders = []
    for m in itertools.permutations(met):
        for x in itertools.permutations(missed):
            ones, zeros = list(m), list(x)
            orders.append(tuple(ones.pop() if bit == "1" else zeros.pop() for bit in pattern))
    if prefer is not None:
        orders = [o for o in orders if prefer(o)] or orders
    return orders[int(rng.integers(len(orders)))]  # type: ignore[return-value]


def bare(rng: np.random.Generator, columns: int) -> Deal:
    """The control (``generator.build_bank(designs=False)``): the needs' cube alone, as env -v3 dealt it.

    The opening takes a pattern by :data:`OPENING_WEIGHTS`, the gold a random row of 1..7 and the
    safe option a random row behind it, the six other patterns the rest; every other column's sides
    are fair coins. A reader who finds the one cube finds the gold.
    """
    pattern = OPENING_PATTERNS[int(rng.choice(len(OPENING_PATTERNS), p=np.array(OPENING_WEIGHTS)
                                              / sum(OPENING_WEIGHTS)))]
    gold = int(rng.integers(1, 8))
    safe = int(rng.integers(gold + 1, 9))
    others = [p for p in (f"{i:03b}" for i in range(7)) if p != pattern]
    others = [others[i] for i in rng.permutation(len(others))]
    codes = [pattern] + [""] * 8
    codes[gold] = codes[safe] = "111"
    for row in range(1, 9):
        if not codes[row]:
            codes[row] = others.pop()
    table = np.zeros((9, columns), dtype=np.int64)
    table[:, :3] = [[int(c) for c in code] for code in codes]
    table[:, 3:] = rng.integers(0, 2, size=(9, columns - 3))
    return Deal(table, (0, 1, 2), gold, safe)

