"""``hear2act report RUN_DIR``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="write report.md and a self-contained report.html for an evaluation run",
        description="Tables like the paper's Tables 3/4/5/9 with its published numbers beside ours, figures "
                    "(action composition, disclosure), and a trajectory viewer with audio.",
    )
    p.add_argument("run_dir", type=Path, help="directory written by `hear2act eval`")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: RUN_DIR)")
    p.add_argument("--scenarios", type=int, default=4, help="scenarios in the trajectory viewer (default 4)")
    p.add_argument("--no-audio", action="store_true", help="viewer without audio (no speech rendering)")
    p.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from ..rundir import RunDirError
    from . import build_report

    t0 = time.perf_counter()
    try:
        result = build_report(args.run_dir, args.out, n_scenarios=args.scenarios, audio=not args.no_audio)
    except (RunDirError, ValueError, ImportError, OSError) as e:
        print(f"hear2act report: error: {e}", file=sys.stderr)
        return 2
    for note in result["notes"]:
        print(f"note: {note}")
    print(f"{result['markdown']}\n{result['html']}\n{result['results']}")
    for f in result["figures"]:
        print(f)
    print(f"{result['rollouts']:,} rollouts ({result['failed']} failed); tables: {', '.join(result['tables'])}; "
          f"viewer: {result['viewer_scenarios']} scenarios, {result['viewer_rollouts']} rollouts, "
          f"{result['clips']} audio clips; {time.perf_counter() - t0:.1f}s")
    return 0
