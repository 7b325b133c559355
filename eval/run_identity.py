"""Which grid and cell a run-directory row belongs to, checked whenever a run directory is read.

Every row carries ``grid_id`` (a hash of the grid's name and seed, from which rollout ids and episode seeds
derive) and ``cell_hash`` (a hash of its cell's definition: everything in ``Cell.to_dict()`` but the
scenario subset and the repeat count, which say *which* rollouts a cell has, not how each is played). Rows
written before these fields existed get them computed from their ``grid``, ``grid_seed`` and ``cell``.

:func:`check_rows` refuses, with a one-line error naming ``file:line``: a row of another grid, a rollout the
grid does not plan, a row whose cell the grid defines differently, and a second, different line for one
rollout id (a retried failure excepted). :func:`compare_grids` decides whether a run directory made with one
grid can be resumed with another: it can when the new grid only adds cells, scenarios or repeats (every
rollout already planned is planned again with the same cell); a changed or removed cell is refused by name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .grid import Cell, Grid, Rollout

NOT_IDENTITY = ("scenarios", "repeats")  # which rollouts a cell has, not how one is played


class IdentityError(RuntimeError):
    """A row does not belong to this run (another grid, another cell definition, a conflicting duplicate)."""


def grid_id(name: str, seed: int) -> str:
    return hashlib.sha256(json.dumps(["hear2act-grid", name, int(seed)]).encode()).hexdigest()[:16]


def cell_definition(cell: Cell | Mapping[str, Any]) -> dict[str, Any]:
    d = cell.to_dict() if isinstance(cell, Cell) else dict(cell)
    return {k: v for k, v in d.items() if k not in NOT_IDENTITY}


def cell_hash(cell: Cell | Mapping[str, Any]) -> str:
    blob = json.dumps(cell_definition(cell), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def row_identity(row: Mapping[str, Any]) -> tuple[str, str]:
    """(grid_id, cell_hash) of a row: as recorded, which must agree with its grid, seed and cell."""
    try:
        computed = grid_id(str(row["grid"]), int(row["grid_seed"])), cell_hash(row["cell"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise IdentityError(f"row has no readable grid identity ({type(e).__name__}: {e})") from None
    recorded = row.get("grid_id", computed[0]), row.get("cell_hash", computed[1])
    if recorded != computed:
        raise IdentityError(f"row's recorded grid identity {recorded} disagrees with its grid/seed/cell {computed}")
    return computed


def _label(cell: Mapping[str, Any]) -> str:
    parts = [str(cell.get(k, "")) for k in ("block", "agent", "realization", "condition")]
    if cell.get("intervention", "correct") != "correct":
        parts.append(str(cell["intervention"]))
    if cell.get("renderer"):
        parts.append(str(cell["renderer"]))
    return " | ".join(parts)


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    a, b = cell_definition(old), cell_definition(new)
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return ", ".join(f"{k} {a.get(k)!r} -> {b.get(k)!r}" for k in keys[:4]) or "its definition"


def check_rows(numbered: Iterable[tuple[Path, int, dict[str, Any]]], grid: Grid | None,
               planned: Mapping[str, Rollout] | None = None) -> list[dict[str, Any]]:
    """The rows (``(file, line, row)`` in file order) with duplicates collapsed; IdentityError on a foreign row.

    With ``grid`` every row must be a rollout the grid plans, with the grid's definition of its cell; without
    one (a directory holding no grid.toml) every row must at least share one grid identity.
    """
    if grid is not None and planned is None:
        planned = {r.rollout_id: r for r in grid.expand()}
    want = grid_id(grid.name, grid.seed) if grid is not None else None
    by_id: dict[str, tuple[Path, int, dict[str, Any]]] = {}
    for path, n, row in numbered:
        where = f"{path}:{n}"
        try:
            gid, chash = row_identity(row)
        except IdentityError as e:
            raise IdentityError(f"{where}: {e}") from None
        rid = row["rollout_id"]
        if want is None:
            want = gid
        if gid != want:
            theirs = f"grid {row.get('grid')!r} (seed {row.get('grid_seed')})"
            ours = f"grid {grid.name!r} (seed {grid.seed})" if grid is not None else "the first row's grid"
            raise IdentityError(f"{where}: rollout {rid} belongs to {theirs}, not {ours}; remove it or use its own "
                                "run directory")
        if planned is not None:
            r = planned.get(rid)
            if r is None:
                raise IdentityError(f"{where}: rollout {rid} ({_label(row['cell'])}, scenario "
                                    f"{row.get('scenario_id')}) is not a rollout of this grid")
            if cell_hash(r.cell) != chash:
                raise IdentityError(f"{where}: rollout {rid} was played with another definition of cell "
                                    f"{_label(row['cell'])} ({_diff(row['cell'], r.cell.to_dict())})")
        old = by_id.get(rid)
        if old is not None and _content(old[2]) != _content(row) and not old[2].get("failed"):
            raise IdentityError(f"{where}: rollout {rid} appears again with different content (first at "
                                f"{old[0]}:{old[1]})")
        by_id[rid] = (path, n, row)  # a retried rollout (--retry-failed) supersedes its failed record
    return [row for _, _, row in by_id.values()]


def _content(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as compared with its duplicates: the cell by its definition, so the same rollout played under
    ``--limit`` / ``--repeats`` (another ``scenarios`` / ``repeats`` of its cell, NOT_IDENTITY) is the same row."""
    return {**row, "cell": cell_definition(row["cell"])} if isinstance(row.get("cell"), Mapping) else dict(row)


def compare_grids(old: Grid, new: Grid) -> None:
    """IdentityError naming the first cell ``new`` changes or drops; silent when ``new`` only adds."""
    if (old.name, old.seed) != (new.name, new.seed):
        raise IdentityError(f"the grid's name/seed changed ({old.name!r}/{old.seed} -> {new.name!r}/{new.seed}): "
                            "every rollout id changes; use a new --out directory")
    now = {r.rollout_id: r for r in new.expand()}
    for r in old.expand():
        n = now.get(r.rollout_id)
        label = _label(r.cell.to_dict())
        if n is None:
            raise IdentityError(f"cell {label} no longer plans scenario {r.scenario_id} repeat {r.repeat} "
                                "(a grid may only add cells, scenarios or repeats to a run); use a new --out directory")
        if cell_hash(n.cell) != cell_hash(r.cell):
            raise IdentityError(f"cell {label} changed ({_diff(r.cell.to_dict(), n.cell.to_dict())}); "
                                "use a new --out directory")
