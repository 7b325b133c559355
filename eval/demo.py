"""``hear2act demo`` / ``make demo``: the quick grid end to end (run, then report) with the built-in agents.

The grid is ``eval/grids/quick.toml``; ``--n`` cuts every scenario subset to its first N scenarios and
``--text-only`` leaves out the spoken block (which needs the speech extra). Both are recorded in the run
directory's grid.toml, so a re-run with the same options resumes and one with other options is refused.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .grid import GRIDS_DIR, Grid, parse_grid
from .metrics import format_table, summarize

COLUMNS = ("success", "accept", "fullfit", "full_disclosure", "premature_closure", "turns")


def demo_grid(n: int | None = None, seed: int = 0, text_only: bool = False) -> Grid:
    path = GRIDS_DIR / "quick.toml"
    source = path.read_text(encoding="utf-8")
    grid = parse_grid(source, path)
    notes = []
    if seed != grid.seed:
        grid.seed = seed
        notes.append(f"seed = {seed}")
    if n is not None:
        grid.subsets = {k: _cut(v, n) for k, v in grid.subsets.items()}
        notes.append(f"every scenario subset cut to its first {n}")
    if text_only:
        grid.cells = [c for c in grid.cells if c.kind != "spoken"]
        notes.append("spoken block left out")
    if notes:
        grid.source = source + "".join(f"\n# hear2act demo: {x}" for x in notes) + "\n"
    return grid


def _cut(subset: list[str] | str, n: int) -> list[str] | str:
    """A scenario subset cut to its first ``n`` scenarios."""
    if isinstance(subset, list):
        return subset[:n]
    if subset == "all" or int(subset.split(":", 1)[1]) > n:
        return f"first:{n}"
    return subset


def default_out(n: int | None = None, seed: int = 0, text_only: bool = False) -> Path:
    """runs/demo for the full demo; other options get their own directory, so runs never collide."""
    parts = ["demo", *([f"n{n}"] if n is not None else []), *([f"seed{seed}"] if seed else []),
             *(["text"] if text_only else [])]
    return Path("runs") / "-".join(parts)


def run_demo(out: Path | None, n: int | None = None, seed: int = 0, text_only: bool = False,
             report: bool = True) -> int:
    from .runner import RunDirError, read_run, run_grid

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
    rows = read_run(out)
    cells: dict[str, list] = {}
    for r in rows:
        c = r["cell"]
        label = " | ".join(x for x in (c["agent"], c["realization"], c["condition"],
                                       "" if c["intervention"] == "correct" else c["intervention"], c["renderer"]) if x)
        cells.setdefault(label, []).append(r["outcome"])
    print(format_table({k: summarize([o for o in v if o]) for k, v in cells.items()}, COLUMNS))
    print(f"\n{len(rows)} rollouts ({result['run']} run now, {result['skipped']} already in {out}) "
          f"in {time.perf_counter() - t0:.1f}s")
    if report:
        from .report import build_report

        built = build_report(out)
        print(f"report: {built['markdown']}\n        {built['html']}")
    print(f"total {time.perf_counter() - t0:.1f}s")
    return 0
