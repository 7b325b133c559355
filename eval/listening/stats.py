"""Pure scoring functions for the ``hear2act listen`` human listening test.

Labels are plain strings. The four graded user states collapse to the binary
distinction the paper also reports: ``resolved`` stays ``resolved``; ``reluctant``,
``concern`` and ``rejection`` become ``unresolved``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

RESOLVED, RELUCTANT, CONCERN, REJECTION = "resolved", "reluctant", "concern", "rejection"
UNRESOLVED = "unresolved"
GRADED: tuple[str, ...] = (RESOLVED, RELUCTANT, CONCERN, REJECTION)
BINARY: tuple[str, ...] = (RESOLVED, UNRESOLVED)


def collapse(label: str) -> str:
    """Map a graded (or already binary) label to ``resolved`` / ``unresolved``.

    >>> [collapse(x) for x in ("resolved", "reluctant", "concern", "rejection", "unresolved")]
    ['resolved', 'unresolved', 'unresolved', 'unresolved', 'unresolved']
    >>> collapse("maybe")
    Traceback (most recent call last):
    ...
    ValueError: unknown label 'maybe'
    """
    if label == RESOLVED:
        return RESOLVED
    if label in (RELUCTANT, CONCERN, REJECTION, UNRESOLVED):
        return UNRESOLVED
    raise ValueError(f"unknown label {label!r}")


def _check_pairs(gold: Sequence[str], pred: Sequence[str]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"length mismatch: {len(gold)} reference labels vs {len(pred)} answers")


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Fraction of positions where ``pred`` equals ``gold``.

    >>> accuracy(["resolved", "concern", "rejection"], ["resolved", "concern", "reluctant"])
    0.6666666666666666
    >>> accuracy([], [])
    Traceback (most recent call last):
    ...
    ValueError: accuracy of no items is undefined
    """
    _check_pairs(gold, pred)
    if not gold:
        raise ValueError("accuracy of no items is undefined")
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)


def per_class_accuracy(gold: Sequence[str], pred: Sequence[str]) -> dict[str, tuple[int, int]]:
    """For each reference class (in first-seen order): ``(correct, total)``.

    >>> per_class_accuracy(["concern", "resolved", "concern"], ["concern", "concern", "rejection"])
    {'concern': (1, 2), 'resolved': (0, 1)}
    """
    _check_pairs(gold, pred)
    out: dict[str, list[int]] = {}
    for g, p in zip(gold, pred, strict=True):
        cell = out.setdefault(g, [0, 0])
        cell[0] += g == p
        cell[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def confusion_matrix(
    gold: Sequence[str], pred: Sequence[str], rows: Sequence[str], cols: Sequence[str] | None = None
) -> list[list[int]]:
    """Counts with rows = reference label, columns = answered label.

    ``cols`` defaults to ``rows``. A label outside the given rows/columns is an error.

    >>> confusion_matrix(["resolved", "concern", "concern"], ["resolved", "resolved", "concern"],
    ...                  ["resolved", "concern"])
    [[1, 0], [1, 1]]
    >>> confusion_matrix(["concern"], ["unresolved"], GRADED, BINARY)
    [[0, 0], [0, 0], [0, 1], [0, 0]]
    """
    _check_pairs(gold, pred)
    cols = rows if cols is None else cols
    r_index = {label: i for i, label in enumerate(rows)}
    c_index = {label: i for i, label in enumerate(cols)}
    matrix = [[0] * len(cols) for _ in rows]
    for g, p in zip(gold, pred, strict=True):
        if g not in r_index:
            raise ValueError(f"reference label {g!r} not among the rows {list(rows)}")
        if p not in c_index:
            raise ValueError(f"answered label {p!r} not among the columns {list(cols)}")
        matrix[r_index[g]][c_index[p]] += 1
    return matrix


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa between two raters' labels for the same items.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e``
    the agreement expected from the two raters' marginal label frequencies.
    When ``p_e == 1`` (both raters gave one and the same label to every item) the
    ratio is 0/0; we return 1.0 there, since the agreement is perfect.

    >>> cohen_kappa(["resolved", "concern", "rejection"], ["resolved", "concern", "rejection"])
    1.0
    >>> round(cohen_kappa(["y", "y", "n", "n"], ["y", "n", "y", "n"]), 6)  # chance level
    0.0
    >>> round(cohen_kappa(["y", "y", "n", "n"], ["n", "n", "y", "y"]), 6)  # systematic disagreement
    -1.0
    >>> round(cohen_kappa(list("yyyyyyynnn"), list("yyyyyynnny")), 4)  # p_o 0.8, p_e 0.58
    0.5238
    """
    _check_pairs(a, b)
    n = len(a)
    if n == 0:
        raise ValueError("kappa of no items is undefined")
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    p_e = sum(count_a[k] * count_b[k] for k in count_a) / (n * n)
    if p_e >= 1.0:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)

