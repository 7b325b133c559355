"""``RUN_DIR/results.json``: per cell the metrics with bootstrap CIs and counts, plus every version involved.

Written by ``hear2act eval`` (after a run) and ``hear2act report``, from the run directory's rows
(:func:`hear2act.eval.rundir.read_run`), so it is a pure function of them and the install. The file a leaderboard
or a paper table is built from::

    {"schema": "hear2act-results/1", "command": "hear2act eval ..." | null,
     "grid": ..., "grid_id": ..., "grid_hash": ..., "grid_seed": ...,
     "versions": {"hear2act": "0.1.0", "bank_hash": [...], "prompt_versions": [...], "renderers": {...},
                  "git_commit": "..." | null, "python": "3.12.3"},
     "bootstrap": {"unit": "scenario", "n_resamples": 2000, "confidence": 0.95, "seed": 0},
     "rollouts": N, "failed": K,
     "cells": [{"block", "kind", "agent", "agent_spec", "realization", "condition", "access", "intervention",
                "renderer", "renderer_spec", "label", "n" (scored), "failed", "scenarios", "prompt_version",
                "metrics": {"success": {"value", "low", "high"}, "accept": ..., ...}}, ...]}

Values are in points (percent) but ``turns`` (a mean); ``null`` where a metric has no denominator.
``read_results`` reads the file back; :func:`format_results` is the table ``eval`` prints.
"""

from __future__ import annotations

import contextlib
import json
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import stats
from .metrics import HEADLINE

SCHEMA = "hear2act-results/1"
# The paper's Table 5 metrics (the command-line tables' columns), then the interaction measures: action shares
# (the paper counts invalid actions: a reply the parser cannot read as an action is one). Names of
# hear2act.eval.metrics.TABLE.
METRICS = (*HEADLINE, "share_ask", "share_clarify", "share_recommend", "share_confirm", "share_invalid")
CELL_KEYS = ("block", "kind", "agent", "agent_spec", "realization", "condition", "access", "intervention",
             "renderer", "renderer_spec")
ROOT = Path(__file__).resolve().parent.parent


def cell_label(cell: Mapping[str, Any]) -> str:
    """``block | agent | realization | condition [| intervention] [| renderer]``."""
    iv = "" if cell["intervention"] == "correct" else cell["intervention"]
    return " | ".join(x for x in (cell["block"], cell["agent"], cell["realization"], cell["condition"], iv,
                                  cell["renderer"]) if x)


def git_commit(root: Path = ROOT) -> str | None:
    """The checkout's commit (``+dirty`` when tracked files changed), or None outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def renderer_versions(specs: Sequence[str]) -> dict[str, str | None]:
    """Each renderer's ``version`` as installed now (None when its extra is not installed)."""
    out: dict[str, str | None] = {}
    for spec in sorted(set(specs)):
        try:
            from hear2act_env.speech.renderers import make_renderer

            out[spec] = str(make_renderer(spec).version)
        except (ImportError, ValueError, OSError, LookupError):
            out[spec] = None
    return out


def _num(x: float) -> float | None:
    return None if x != x else round(x, 6)


def build_results(rows: Sequence[Mapping[str, Any]], grid_source: str | None = None, *,
                  n_resamples: int = stats.N_RESAMPLES, seed: int = 0, command: str | None = None) -> dict[str, Any]:
    """The results of a run's rows (in the order their cells first appear)."""
    import hashlib

    import hear2act_env

    cells: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for r in rows:
        c = r["cell"]
        cells.setdefault(tuple(str(c.get(k, "")) for k in CELL_KEYS), []).append(r)
    out_cells = []
    for key, rs in cells.items():
        cell = dict(zip(CELL_KEYS, key, strict=True))
        failed = sum(1 for r in rs if r.get("failed"))
        metrics = {}
        for m in METRICS:
            value, low, high, _ = stats.cell_interval(rs, m, n_resamples=n_resamples, seed=seed)
            metrics[m] = {"value": _num(value), "low": _num(low), "high": _num(high)}
        prompts = sorted({str((r.get("trajectory") or {}).get("prompt_version", "")) for r in rs} - {""})
        out_cells.append({**cell, "label": cell_label(cell), "n": len(rs) - failed, "failed": failed,
                          "scenarios": len({r["scenario_id"] for r in rs}), "prompt_version": ",".join(prompts),
                          "metrics": metrics})
    first = rows[0] if rows else {}
    return {
        "schema": SCHEMA,
        "command": command,
        "grid": first.get("grid"), "grid_id": first.get("grid_id"), "grid_seed": first.get("grid_seed"),
        "grid_hash": hashlib.sha256(grid_source.encode()).hexdigest()[:16] if grid_source is not None else None,
        "versions": {
            "hear2act": hear2act_env.__version__,
            "bank_hash": sorted({str(r.get("bank_hash")) for r in rows}),
            "prompt_versions": sorted({c["prompt_version"] for c in out_cells} - {""}),
            "renderers": renderer_versions([c["renderer_spec"] for c in out_cells if c["renderer_spec"]]),
            "git_commit": git_commit(),
            "python": platform.python_version(),
        },
        "bootstrap": {"unit": "scenario", "n_resamples": n_resamples, "confidence": stats.CONFIDENCE, "seed": seed},
        "rollouts": len(rows), "failed": sum(1 for r in rows if r.get("failed")),
        "cells": out_cells,
    }


def write_results(run_dir: str | Path, rows: Sequence[Mapping[str, Any]] | None = None, **kwargs: Any) -> Path:
    """Write ``RUN_DIR/results.json`` (rows default to :func:`hear2act.eval.rundir.read_run`); returns its path."""
    from .rundir import read_run

    run_dir = Path(run_dir)
    if rows is None:
        rows = read_run(run_dir)
    saved = run_dir / "grid.toml"
    source = saved.read_text(encoding="utf-8") if saved.exists() else None
    path = run_dir / "results.json"
    if kwargs.get("command") is None and path.exists():  # `hear2act report` keeps the command that ran
        with contextlib.suppress(ValueError):
            kwargs["command"] = read_results(path).get("command")
    results = build_results(_in_grid_order(list(rows), source), source, **kwargs)
    tmp = path.with_name("results.json.tmp")
    tmp.write_text(json.dumps(results, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _in_grid_order(rows: list[Mapping[str, Any]], source: str | None) -> list[Mapping[str, Any]]:
    rows.sort(key=lambda r: r["rollout_id"])
    if source is None:
        return rows
    from .grid import GridError, parse_grid

    try:
        order = {r.rollout_id: i for i, r in enumerate(parse_grid(source).expand())}
    except (GridError, ValueError):
        return rows
    return sorted(rows, key=lambda r: order.get(r["rollout_id"], len(order)))


def read_results(path: str | Path) -> dict[str, Any]:
    """A results.json (a file, or the run directory holding one), checked for its schema."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    data = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise ValueError(f"{p}: not a {SCHEMA} file (schema {schema!r})")
    return data


def format_results(results: Mapping[str, Any], metrics: Sequence[str] = ("success", "accept", "fullfit",
                                                                           "premature_closure", "turns")) -> str:
    """A fixed-width table: one line per cell, each metric as value [low, high]."""
    cells = results["cells"]
    width = max([len(c["label"]) for c in cells] + [4])

    def fmt(m: Mapping[str, Any]) -> str:
        if m["value"] is None:
            return f"{'-':>18}"
        return f"{m['value']:5.1f} [{m['low']:5.1f},{m['high']:5.1f}]"

    head = f"{'cell':<{width}}  {'n':>5} {'fail':>4}  " + "  ".join(f"{m:>18}" for m in metrics)
    lines = [head, "-" * len(head)]
    for c in cells:
        lines.append(f"{c['label']:<{width}}  {c['n']:>5} {c['failed']:>4}  "
                     + "  ".join(fmt(c["metrics"][m]) for m in metrics))
    b = results["bootstrap"]
    lines.append(f"(value [{100 * b['confidence']:.0f}% CI]: scenario bootstrap, {b['n_resamples']:,} resamples, "
                 f"seed {b['seed']})")
    return "\n".join(lines)
