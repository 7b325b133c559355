"""``hear2act eval --wandb``: the run's config, per-cell summaries and the report tables to Weights & Biases.

Offline unless the user asks otherwise: ``WANDB_MODE`` defaults to ``offline`` (files under
``RUN_DIR/wandb``; ``wandb sync`` uploads them later). Set ``WANDB_MODE=online`` and ``WANDB_PROJECT``
to log live.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .grid import Grid
from .metrics import HEADLINE, summarize


def log_run(run_dir: str | Path, grid: Grid) -> str:
    """Log one run directory; returns the wandb run directory."""
    try:
        import wandb
    except ImportError:
        raise ImportError('--wandb needs wandb: pip install "hear2act[train]" (or pip install wandb)') from None
    from .report.tables import cells_of, ci_table, contrasts
    from .rundir import read_run

    run_dir = Path(run_dir)
    rows = read_run(run_dir)
    os.environ.setdefault("WANDB_MODE", "offline")
    run = wandb.init(project=os.environ.get("WANDB_PROJECT", "hear2act-eval"), name=f"{grid.name}-{grid.hash}",
                     dir=str(run_dir), config={"grid": grid.name, "grid_hash": grid.hash, "seed": grid.seed,
                                               "grid_toml": grid.source, "rollouts": len(rows)})
    try:
        columns = ["block", "agent", "realization", "condition", "intervention", "renderer"]
        metrics = ["n", *HEADLINE]
        table = wandb.Table(columns=columns + metrics)
        for key, cell_rows in cells_of(rows).items():
            s: dict[str, Any] = summarize([r["outcome"] for r in cell_rows if r.get("outcome")])
            table.add_data(*key, *(s[m] for m in metrics))
        run.log({"cells": table})
        ci = ci_table(contrasts(rows))
        if ci is not None:
            t = wandb.Table(columns=ci.header)
            for label, values in ci.rows:
                t.add_data(label, *[v.text or (None if v.ours is None else round(v.ours, 2)) for v in values])
            run.log({"contrasts": t})
        report = run_dir / "report.html"
        if report.exists():
            run.log({"report": wandb.Html(report.read_text(encoding="utf-8"))})
        return str(run.dir)
    finally:
        run.finish()
