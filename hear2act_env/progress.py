"""The project's one progress bar, for long commands (stdlib only; tqdm is not a core dependency).

``for x in progress(items, "rendering"): ...`` draws ``rendering  120/480 [=====     ] 25% 3s``
on stderr, redrawn at most ten times a second, and erases it at the end. It
draws only when stderr is a terminal (never into a pipe, a log file or a
test's captured output) and not when ``HEAR2ACT_NO_PROGRESS`` is set.

:class:`Bar` is the same bar driven by hand (``bar.update(label)`` per item done,
``bar.close()``), for loops whose items finish out of order (``hear2act eval``):
it can start part-way (a resumed run), shows the rate, the time left and a label,
and, given ``log``, writes one plain line per 10 % where there is no terminal
(a log file of a long run).
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


def clock(seconds: float) -> str:
    """``12m05s``; ``?`` for an unknown (infinite or NaN) duration.

    >>> clock(725.4), clock(float("inf"))
    ('12m05s', '?')
    """
    if seconds != seconds or seconds == float("inf"):
        return "?"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class Bar:
    """A progress bar advanced by :meth:`update` (see the module doc).

    ``done``: items already done when it starts (they count towards the bar, not the rate).
    ``show``: False draws and logs nothing. ``log``: a prefix for the one-line-per-10 % log
    written where ``stream`` is not a terminal (None: nothing there). ``force`` draws even when
    ``stream`` is not a terminal (for tests).
    """

    def __init__(self, total: int | None, desc: str = "", *, done: int = 0, stream: TextIO | None = None,
                 show: bool = True, log: str | None = None, force: bool = False) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.total, self.desc, self.done, self.start_done = total, desc, done, done
        self.draw = show and (force or enabled(self.stream))
        self.log = log if show and not self.draw and total else None
        self.t0 = self.last = time.monotonic()
        self.next_pct = 10 * (100 * done // max(total or 1, 1) // 10 + 1)
        if self.draw:
            self._draw("")

    def update(self, label: str = "", n: int = 1) -> None:
        """``n`` more items done (the last one: ``label``)."""
        self.done += n
        now = time.monotonic()
        if self.draw and (now - self.last >= INTERVAL_S or self.done == self.total):
            self.last = now
            self._draw(label)
        elif self.log is not None and self.total:
            pct = 100 * self.done // self.total
            if pct >= self.next_pct or self.done == self.total:
                self.next_pct = 10 * (pct // 10 + 1)
                print(f"{self.log}: {self.done}/{self.total} ({pct}%) {clock(now - self.t0)}", file=self.stream)

    def close(self) -> None:
        """Erase the bar: what the command prints next starts clean."""
        if self.draw:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.draw = False

    def _draw(self, label: str) -> None:
        elapsed = time.monotonic() - self.t0
        total, done = self.total, self.done
        if total:
            filled, pct = min(WIDTH, WIDTH * done // total), 100 * done // total
            bar = f"{done:>{len(str(total))}}/{total} [{'=' * filled}{' ' * (WIDTH - filled)}] {pct:>3}%"
        else:
            bar = f"{done}"
        text = f"\r{self.desc} {bar} {elapsed:.0f}s"
        if self.done > self.start_done and total:  # rate and time left, once something has been done here
            rate = (done - self.start_done) / max(elapsed, 1e-9)
            text += f" {rate:.1f}/s eta {clock((total - done) / rate)}"
        if label:
            text += f"  {label[:50]}"
        self.stream.write(text + "\033[K")
        self.stream.flush()


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
    bar = Bar(total, desc, stream=stream, force=True)
    try:
        for item in items:
            yield item
            bar.update()
    finally:
        bar.close()


__all__ = ["Bar", "clock", "enabled", "progress"]
