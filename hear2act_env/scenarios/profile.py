"""Categorical profile of the options within one scenario, and values dealt so it is blind.

An options-only reader can look at how an option's categorical values sit among the
others': how common each value is (among all options, among the candidates), whether it
is a column's modal value, whether it matches the opening. The all-needs rows meet every
need, so if nothing else moved, the gold would be the option that shares the meeting
value in every need column (the "centroid" of the option set). :func:`features` computes
those statistics; :func:`deal_blind` is how the generator picks, among seeded draws of
the values that are free (which accepted or missing value a row shows, what the request
violators offer, the distractor columns), one in which the gold's place on every
statistic is that of an arbitrary candidate rather than the top.

Pure functions over rows (``{attribute: value}`` dicts); no global state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

# Feature names, in column order of :func:`features`.
NAMES = ("freq_all", "freq_cand", "freq_rest", "agree_mode", "agree_open", "min_freq", "unique",
         "desirable", "chars")
# Weight of each statistic in the deal's distance (the desirability count leaks most; 12 before the
# twin statistics joined the deal, which then left the validator's desirable-place rule at 0.204-0.231).
WEIGHTS = np.array([1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 20.0, 1.0])
# The twin statistics of :func:`twin_features`, and their weights in the deal's distance.
TWIN_NAMES = ("near", "count", "leads", "near_leads", "twin_leads")
TWIN_WEIGHTS = np.full(len(TWIN_NAMES), 3.0)
# Seeded draws of the free values the generator chooses among, per scenario (64 before the twin deal).
DRAWS = 128

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


def _ranks(x: np.ndarray) -> np.ndarray:
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
    return _ranks(f)[g]


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


def deal_blind(draw: Callable[[np.random.Generator], list[Row]], rng: np.random.Generator,
               columns: Sequence[str], candidates: Sequence[int], opening: int, gold: int,
               draws: int | None = None, desirable: Mapping[str, Collection[str]] | None = None,
               priority_keys: Callable[[list[Row]], Sequence[float]] | None = None,
               structure: Callable[[list[Row]], Sequence[float]] | None = None,
               structure_weight: float = 0.0, weights: np.ndarray | None = None) -> list[Row]:
    """Of ``draws`` seeded draws of the rows, the one whose gold looks most like a random candidate.

    A first draw names the model: one of its candidates other than the gold, at random,
    and that candidate's places among the candidates on every statistic (all of them
    together: a real candidate's statistics move together). The draw kept is the one whose
    gold has the places nearest the model's: the gold's categorical profile is then an
    arbitrary candidate's, neither the centroid nor an outlier.

    ``priority_keys(rows)``, when given, returns every row's key on the priority attribute
    (lower is better) as the rows' numbers would then be dealt; the :func:`twin_features`
    join the statistics matched (weights :data:`TWIN_WEIGHTS`), so that the gold's nearest
    candidates, and whether it leads them, are also an arbitrary candidate's.

    ``structure(rows)``, when given, returns one more statistic per candidate (the generator's
    decoy deal: each candidate's share of the cube reader's picks, :mod:`.cube`), matched the
    same way with weight ``structure_weight``; it is read only for a draw that could still
    win. ``weights`` replaces :data:`WEIGHTS` for the nine categorical statistics.
    """
    cand = list(candidates)
    g = cand.index(gold)
    base = WEIGHTS if weights is None else np.asarray(weights, dtype=float)
    weights = base if priority_keys is None else np.concatenate([base, TWIN_WEIGHTS])

    def places(rows: list[Row]) -> np.ndarray:
        f = features(rows, columns, cand, opening, desirable)[cand]
        if priority_keys is not None:
            f = np.column_stack([f, twin_features(rows, columns, cand, priority_keys(rows))])
        return _ranks(f)

    def structure_place(rows: list[Row]) -> np.ndarray:
        return _ranks(np.asarray(structure(rows), dtype=float))  # type: ignore[misc]

    first = draw(rng)
    ref = places(first)
    others = [k for k, i in enumerate(cand) if i != gold]
    pick = others[int(rng.integers(len(others)))]
    model = ref[pick]
    best, best_cost = first, float((weights * np.abs(ref[g] - model)).sum())
    if structure is not None:
        ref_s = structure_place(first)
        model_s = ref_s[pick]
        best_cost += structure_weight * abs(ref_s[g] - model_s)
    for _ in range((DRAWS if draws is None else draws) - 1):
        rows = draw(rng)
        cost = float((weights * np.abs(places(rows)[g] - model)).sum())
        # the structure term is never negative: a draw already as far as the best needs no reading of it
        if structure is not None and cost < best_cost:
            cost += structure_weight * abs(structure_place(rows)[g] - model_s)
        if cost < best_cost:
            best, best_cost = rows, cost
    return best
