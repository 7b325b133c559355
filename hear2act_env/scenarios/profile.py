"""Categorical profile of the options within one scenario: the statistics an options-only reader counts.

An options-only reader can look at how an option's categorical values sit among the
others': how common each value is (among all options, among the candidates), whether it
is a column's modal value, whether it matches the opening. The all-needs rows meet every
need, so if nothing else moved, the gold would be the option that shares the meeting
value in every need column (the "centroid" of the option set). :func:`features` computes
those statistics and :func:`twin_features` the gold/safe twin's; the validator's bank rules
(:mod:`.shortcuts`) and the tests' classifiers read them. Env -v4 dealt the values so the
gold's place on each was an arbitrary candidate's; env -v5 deals the sides from cube
designs (:mod:`.design`), which leave every statistic of the sides blind by construction.

Pure functions over rows (``{attribute: value}`` dicts); no global state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence

import numpy as np

# Feature names, in column order of :func:`features`.
NAMES = ("freq_all", "freq_cand", "freq_rest", "agree_mode", "agree_open", "min_freq", "unique",
         "desirable", "chars")
# The twin statistics of :func:`twin_features`.
TWIN_NAMES = ("near", "count", "leads", "near_leads", "twin_leads")

Row = dict[str, "str | float | int"]


def features(rows: Sequence[Row], columns: Sequence[str], candidates: Sequence[int], opening: int,
             desirable: Mapping[str, Collection[str]] | None = None) -> np.ndarray:
    """Per option (row), the categorical statistics in :data:`NAMES` order.

    ``freq_all`` / ``freq_cand`` / ``freq_rest``: mean share of all options / of the
    candidates / of the other options (the opening and the request violators) that show
    the option's value, over ``columns``; ``agree_mode``: share of columns where it shows a
    modal value (ties count as modal); ``agree_open``: share where it shows the opening's
    value; ``min_freq``: fewest options sharing one of its values; ``unique``: columns in
    which no other option shares its value; ``desirable``: share of columns where it shows
    a value in ``desirable[column]`` (the values the domain accepts when that attribute is
    a need: what a reader with world knowledge counts as the better value); ``chars``: mean
    length of its values (an accepted value may be a longer phrase).
    """
    desirable = desirable or {}
    n = len(rows)
    out = np.zeros((n, len(NAMES)))
    if not columns:
        return out
    out[:, 5] = n
    cand = list(candidates)
    rest = [i for i in range(n) if i not in cand]
    for col in columns:
        vals = [str(r[col]) for r in rows]
        every = Counter(vals)
        among = Counter(vals[i] for i in cand)
        others = Counter(vals[i] for i in rest)
        top = max(every.values())
        for i, v in enumerate(vals):
            out[i, 0] += every[v] / n
            out[i, 1] += among[v] / max(1, len(cand))
            out[i, 2] += others[v] / max(1, len(rest))
            out[i, 3] += every[v] == top
            out[i, 4] += v == vals[opening]
            out[i, 5] = min(out[i, 5], every[v])
            out[i, 6] += every[v] == 1
            out[i, 7] += v in desirable.get(col, ())
            out[i, 8] += len(v)
    out[:, :5] /= len(columns)
    out[:, 7:9] /= len(columns)
    return out


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks, 0 = smallest (ties share the mean of their places); down the rows of
    each column when ``x`` is a matrix."""
    below = (x[None, :] < x[:, None]).sum(axis=1)
    equal = (x[None, :] == x[:, None]).sum(axis=1)
    return below + (equal - 1) / 2


def gold_places(rows: Sequence[Row], columns: Sequence[str], candidates: Sequence[int],
                opening: int, gold: int, desirable: Mapping[str, Collection[str]] | None = None) -> np.ndarray:
    """The gold's rank among the candidates (0 = lowest) on each statistic."""
    f = features(rows, columns, candidates, opening, desirable)[list(candidates)]
    g = list(candidates).index(gold)
    return average_ranks(f)[g]


def twin_features(rows: Sequence[Row], columns: Sequence[str], candidates: Sequence[int],
                  keys: Sequence[float]) -> np.ndarray:
    """Per candidate (in ``candidates`` order), the twin statistics in :data:`TWIN_NAMES` order.

    ``near``: the largest share of ``columns`` it shows alike with one other candidate;
    ``count``: how many candidates are that near; ``leads``: 1 if it is ahead (lower
    ``keys[row]``, the priority attribute's better direction) of every one of them; then
    ``near * leads`` and ``(near == 1) * leads``. The gold and the safe option both meet
    every need, so where a need accepts one value they show it both: left alone, they are
    the one candidate pair alike on every need column, the gold ahead (issue 17's twin).

    >>> rows = [{"a": "x", "b": "y"}, {"a": "x", "b": "y"}, {"a": "z", "b": "y"}]
    >>> twin_features(rows, ["a", "b"], [0, 1, 2], keys=[1.0, 2.0, 0.0])[:, :3].tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.5, 2.0, 1.0]]
    """
    cand = list(candidates)
    if not columns:
        return np.zeros((len(cand), len(TWIN_NAMES)))
    table = np.array([[str(rows[i][c]) for c in columns] for i in cand])
    same = (table[:, None, :] == table[None, :, :]).mean(axis=2)
    np.fill_diagonal(same, -1.0)
    near = same.max(axis=1)
    nearest = same == near[:, None]
    key = np.array([float(keys[i]) for i in cand])
    leads = np.array([float(np.all(key[i] < key[nearest[i]])) for i in range(len(cand))])
    return np.column_stack([near, nearest.sum(axis=1), leads, near * leads, (near == 1.0) * leads])
