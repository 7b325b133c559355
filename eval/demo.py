"""``hear2act demo`` / ``make demo``: the quick grid end to end (run, then report) with the built-in agents.

The grid is ``eval/grids/quick.toml``; ``--n`` cuts every scenario subset to its first N scenarios and
``--text-only`` leaves out the spoken block (which needs the speech extra). Both are recorded in the run
directory's grid.toml, so a re-run with the same options resumes and one with other options is refused.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .grid import GRIDS_DIR, Grid
from .grid_edit import edit_grid
from .metrics import HEADLINE

COLUMNS = HEADLINE


def demo_grid(n: int | None = None, seed: int = 0, text_only: bool = False) -> Grid:
    """The quick grid with the demo's options applied (recorded in the grid text, see
    :mod:`hear2act.eval.grid_edit`)."""
    return edit_grid(GRIDS_DIR / "quick.toml", limit=n, seed=seed if seed else None,
                     drop_kinds=("spoken",) if text_only else ())


def default_out(n: int | None = None, seed: int = 0, text_only: bool = False) -> Path:
    """runs/demo for the full demo; other options get their own directory, so runs never collide."""
    parts = ["demo", *([f"n{n}"] if n is not None else []), *([f"seed{seed}"] if seed else []),
             *(["text"] if text_only else [])]
    return Path("runs") / "-".join(parts)


def run_demo(out: Path | None, n: int | None = None, seed: int = 0, text_only: bool = False,
             report: bool = True) -> int:
    from .runner import RunDirError, run_grid

    t0 = time.perf_counter()
    out = out if out is not None else default_out(n, seed, text_only)
    grid = demo_grid(n, seed, text_only)
    if not text_only:
        from hear2act_env.speech.deps import require

        try:
            for module in ("hibari", "parselmouth"):  # the spoken block renders with hibari, perceives with praat
                require(module)
        except ImportError as e:
            print(f"hear2act demo: the spoken block needs the speech extra ({e}); "
                  'pip install "hear2act[speech]", or run `hear2act demo --text-only`', file=sys.stderr)
            return 2
    try:
        result = run_grid(grid, out)
    except RunDirError as e:
        print(f"hear2act demo: error: {e}", file=sys.stderr)
        return 2
    from .results import format_results, read_results, write_results

    command = " ".join(["hear2act demo", *([f"--n {n}"] if n is not None else []),
                        *([f"--seed {seed}"] if seed else []), *(["--text-only"] if text_only else [])])
    results = read_results(write_results(out, command=command))
    print(format_results(results))
    print(f"\n{results['rollouts']} rollouts ({result['run']} run now, {result['skipped']} already in {out}) "
          f"in {time.perf_counter() - t0:.1f}s; results: {out / 'results.json'}")
    if report:
        from .report import build_report

        built = build_report(out)
        for note in built["notes"]:
            print(f"note: {note}")
        print(f"report: {built['markdown']}\n        {built['html']}")
    print(f"total {time.perf_counter() - t0:.1f}s")
    return 0
