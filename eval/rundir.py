"""The run directory of ``hear2act eval``: its file layout, readers, the durable line writer and the lock.

Layout of a run directory::

    RUN_DIR/grid.toml                          the grid as run (one that changes or drops a cell is refused;
                                               one that only adds cells, scenarios or repeats replaces it)
    RUN_DIR/rollouts.jsonl                     unsharded run
    RUN_DIR/rollouts.shard-I-of-N.jsonl        shard I of N (several machines may share RUN_DIR)

Durability. Each finished rollout is one line, written with a single ``write``
and flushed before the next one starts, with an fsync at least every half second
and at the end, so a SIGKILL at any moment loses no completed rollout (a machine
crash at most the last half second of them) and leaves at most one torn last line.
On start the file is read back: a torn last line (no newline, or not JSON) is cut
off, the ids already present are skipped, and the rest is run.
A rollout's line is a pure function of the grid, its cell, scenario and repeat
(no timestamps), so a resumed run equals an uninterrupted one line for line
(up to order), and shards merge by concatenation: ``cat RUN_DIR/rollouts*.jsonl``.
A lock file stops two processes from writing the same shard file.

:func:`read_run` (every shard file, checked against the saved grid with :mod:`hear2act.eval.run_identity`) is what
``hear2act report``, ``results.json`` and ``--wandb`` read; :func:`hear2act.eval.runner.run_grid` is the only writer.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .grid import parse_grid
from .run_identity import IdentityError, check_rows


class RunDirError(RuntimeError):
    """The run directory cannot be used (another grid, a corrupt line, another writer)."""


def rollouts_path(out: Path, shard_spec: tuple[int, int] = (0, 1)) -> Path:
    i, n = shard_spec
    return out / ("rollouts.jsonl" if n == 1 else f"rollouts.shard-{i}-of-{n}.jsonl")


def read_rollouts(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Rows of one rollouts file. A torn last line is dropped (and cut from the file when ``repair``).

    Any other unreadable line is an error naming the file and line: it is never dropped silently.
    """
    return [row for _, row in read_numbered(path, repair)]


def read_numbered(path: Path, repair: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of each complete line of one rollouts file (see :func:`read_rollouts`)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # everything after the last newline is a torn write
    lines = data[:end].split(b"\n")[:-1] if end else []
    rows: list[tuple[int, dict[str, Any]]] = []
    torn = end < len(data)
    for n, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("rollout_id"), str):
                raise ValueError("no rollout_id")
        except (ValueError, RecursionError) as e:
            if n == len(lines) and not torn:  # a last line cut right after a partial write of its newline
                torn, end = True, end - len(line) - 1
                break
            raise RunDirError(f"{path}:{n}: unreadable rollout line ({type(e).__name__}: {str(e)[:120]}); "
                              "fix or remove it by hand") from None
        rows.append((n, row))
    if torn and repair:
        with path.open("r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
        print(f"hear2act eval: dropped a torn last line of {path.name} ({len(data) - end} bytes)", file=sys.stderr)
    return rows


def shard_files(run_dir: str | Path) -> list[Path]:
    """Every rollouts file of a run directory (``rollouts.jsonl`` and ``rollouts.shard-I-of-N.jsonl``), sorted."""
    return sorted(Path(run_dir).glob("rollouts*.jsonl"))


def read_run(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every rollout of a run directory (all shard files), checked against its grid.toml.

    Identical duplicates collapse and a retry supersedes its failure; a foreign or conflicting row, or a
    directory with no complete row, is a :class:`RunDirError` naming the file (and line).
    """
    run_dir = Path(run_dir)
    files = shard_files(run_dir)
    if not files:
        raise RunDirError(f"{run_dir}: no rollouts*.jsonl files (run `hear2act eval GRID --out {run_dir}` first)")
    saved = run_dir / "grid.toml"
    grid = parse_grid(saved.read_text(encoding="utf-8"), saved) if saved.exists() else None
    numbered = [(f, n, row) for f in files for n, row in read_numbered(f)]
    if not numbered:
        raise RunDirError(f"{run_dir}: no complete rollout line in {', '.join(f.name for f in files)} "
                          "(an empty run); run `hear2act eval` into it first")
    try:
        return check_rows(numbered, grid)
    except IdentityError as e:
        raise RunDirError(str(e)) from None


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold ``PATH.lock`` (flock, non-blocking) while writing ``path``; RunDirError when another process holds it."""
    lock = path.with_name(path.name + ".lock")
    with lock.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirError(f"{path}: another `hear2act eval` is writing this file") from None
        yield


class DurableWriter:
    """Appends one JSON line per rollout with a single write, then flush and fsync.

    The flush hands the line to the kernel, which is what survives a SIGKILL of this
    process. fsync (what survives a machine crash) costs milliseconds, so it is
    grouped: at most every ``sync_interval`` seconds and at close (0 = every line).
    """

    def __init__(self, path: Path, sync_interval: float = 0.5) -> None:
        self.f = path.open("ab")
        self.sync_interval = sync_interval
        self.last_sync = time.monotonic()

    def write(self, row: Mapping[str, Any]) -> None:
        line = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        # A model may send any JSON string, lone surrogates ("\ud800") included: they are written as the JSON
        # escape they came as (backslashreplace inside a JSON string is that escape), never a crash.
        self.f.write(line.encode("utf-8", "backslashreplace"))
        self.f.flush()
        now = time.monotonic()
        if now - self.last_sync >= self.sync_interval:
            os.fsync(self.f.fileno())
            self.last_sync = now

    def close(self) -> None:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
