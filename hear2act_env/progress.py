"""A tiny progress bar for long commands (stdlib only; tqdm is not a core dependency).

``for x in progress(items, "rendering"): ...`` draws ``rendering  120/480 [=====     ] 25% 3s``
on stderr, redrawn at most ten times a second, and erases it at the end. It
draws only when stderr is a terminal (never into a pipe, a log file or a
test's captured output) and not when ``HEAR2ACT_NO_PROGRESS`` is set.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")
WIDTH = 24  # characters of the bar itself
INTERVAL_S = 0.1  # the fastest redraw rate


def enabled(stream: TextIO | None = None) -> bool:
    """Whether a bar would be drawn on ``stream`` (default stderr)."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not os.environ.get("HEAR2ACT_NO_PROGRESS") and callable(isatty) and bool(isatty())


def progress(items: Iterable[T], desc: str = "", total: int | None = None, stream: TextIO | None = None,
             force: bool = False) -> Iterator[T]:
    """Yield ``items`` unchanged, drawing a bar while they are consumed (see the module doc).

    ``total`` defaults to ``len(items)`` when it has one (else a count is shown);
    ``force`` draws even when ``stream`` is not a terminal (for tests).
    """
    stream = sys.stderr if stream is None else stream
    if not (force or enabled(stream)):
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    start = last = time.monotonic()
    done = 0
    _draw(stream, desc, 0, total, 0.0)
    try:
        for item in items:
            yield item
            done += 1
            now = time.monotonic()
            if now - last >= INTERVAL_S:
                last = now
                _draw(stream, desc, done, total, now - start)
    finally:
        stream.write("\r\033[K")  # erase the bar; what the command prints next starts clean
        stream.flush()


def _draw(stream: TextIO, desc: str, done: int, total: int | None, elapsed: float) -> None:
    if total:
        filled = min(WIDTH, WIDTH * done // total)
        bar = f"{done:>{len(str(total))}}/{total} [{'=' * filled}{' ' * (WIDTH - filled)}] {100 * done // total:>3}%"
    else:
        bar = f"{done}"
    stream.write(f"\r{desc} {bar} {elapsed:.0f}s\033[K")
    stream.flush()
