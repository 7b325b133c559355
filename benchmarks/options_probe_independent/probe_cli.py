"""The command line the options-only probes share (``run.py`` here and ``../options_probe_siblings/run.py``).

Each probe exports the bank with ``export.py`` in a child process (the only code that imports the repository),
then reads only the exported files, single-threaded. This module imports nothing of the repository either.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXPORT = Path(__file__).resolve().parent / "export.py"  # run, never imported: it imports the repo


def run_export(work: Path, bank: str | None) -> None:
    """Write ``work/visible.jsonl`` and ``work/labels.jsonl`` with export.py in a child process."""
    cmd = [sys.executable, str(EXPORT), str(work)] + (["--bank", bank] if bank else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def cli(argv: list[str] | None, description: str, prefix: str,
        compute: Callable[[Path, argparse.Namespace, str], dict[str, Any]],
        show: Callable[[str, dict[str, Any]], None],
        options: Callable[[argparse.ArgumentParser], None] | None = None) -> int:
    """Parse ``--bank / --work / --skip-export / --out`` (and what ``options`` adds), export the bank unless
    told not to, run ``compute(work, args, label)`` with one BLAS thread, print with ``show(label, result)``
    and write the result (with the bank's label and the seconds taken) to ``--out``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bank", help="scenario JSONL file (default: the bundled bank)")
    ap.add_argument("--work", type=Path, help="folder for visible.jsonl / labels.jsonl (default: a temporary one)")
    ap.add_argument("--skip-export", action="store_true", help="use the files already in --work")
    ap.add_argument("--out", type=Path, help="write every figure as JSON here")
    if options is not None:
        options(ap)
    args = ap.parse_args(argv)
    if importlib.util.find_spec("sklearn") is None:
        print("error: scikit-learn is required: pip install scikit-learn", file=sys.stderr)
        return 2
    if args.skip_export and args.work is None:
        ap.error("--skip-export needs --work")
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    start = time.time()
    label = f"{args.work} (existing export)" if args.skip_export else (args.bank or "bundled")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        work = args.work or Path(tmp)
        if not args.skip_export:
            run_export(work, args.bank)
        with threadpool_limits(limits=1):
            result = compute(work, args, label)
    result = {"bank": label, **result, "seconds": round(time.time() - start, 1)}
    show(label, result)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0
