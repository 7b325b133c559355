"""Assemble the report of one run directory: tables, figures, viewer; write report.md and report.html."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import stats
from ..rundir import read_run
from . import figures, render, tables, viewer
from .tables import RUNG_NAMES

SHORT = {"prosody": "Prosody", "explicit": "Explicit"}


def build_report(run_dir: str | Path, out_dir: str | Path | None = None, *, n_scenarios: int = viewer.N_SCENARIOS,
                 audio: bool = True, n_resamples: int = stats.N_RESAMPLES) -> dict[str, Any]:
    """Build the report of ``run_dir`` into ``out_dir`` (default: the run directory); returns paths and counts."""
    run_dir = Path(run_dir)
    out = Path(out_dir) if out_dir is not None else run_dir
    rows = read_run(run_dir)
    rows.sort(key=lambda r: r["rollout_id"])  # shard files and resumes interleave; the report does not depend on it
    rows = _in_grid_order(rows, run_dir)

    tabs = [*tables.spoken_tables(rows)]
    for t in (tables.text_table(rows), tables.behaviour_table(rows), tables.ladder_table(tables.ladder_rungs(rows))):
        if t is not None:
            tabs.append(t)
    ci = tables.ci_table(tables.contrasts(rows, n_resamples=n_resamples), rows)
    if ci is not None:
        tabs.append(ci)
    tabs.append(tables.overview_table(rows))

    notes: list[str] = []
    try:
        figs = _figures(rows)
    except ImportError as e:  # a core install: tables, viewer and results.json still come
        figs = []
        notes.append(f"figures skipped: {e}")
    from ..results import write_results

    results_path = write_results(run_dir, rows, n_resamples=n_resamples)
    payload = viewer.build(rows, n_scenarios=n_scenarios, audio=audio)
    counts = viewer.summary(payload)
    failed = sum(1 for r in rows if r.get("failed"))
    grids = sorted({r["grid"] for r in rows})
    banks = sorted({r["bank_hash"] for r in rows})
    title = f"Hear2Act evaluation report: {', '.join(grids)}"
    facts = [f"{len(rows):,} rollouts ({failed:,} failed, never scored)", f"{len(tables.cells_of(rows))} cells",
             f"scenario bank {', '.join(banks)}", f"run directory {run_dir}"]
    intro = ("<p>" + " · ".join(html.escape(f) for f in facts) + ". A number in parentheses (brown) is the "
             "paper's published value for that cell (eval/paper_numbers.json).</p>")

    out.mkdir(parents=True, exist_ok=True)
    fig_dir = out / "figures"
    fig_dir.mkdir(exist_ok=True)
    md = [f"# {title}", "", " · ".join(facts) + ". Parenthesised numbers are the paper's published values.", ""]
    md += [render.table_md(t) for t in tabs]
    for key, caption, png in figs:
        (fig_dir / f"{key}.png").write_bytes(png)
        md += [f"![{caption}](figures/{key}.png)", "", f"*{caption}*", ""]
    md += ["", f"The trajectory viewer ({counts['viewer_scenarios']} scenarios, {counts['viewer_rollouts']} rollouts, "
               f"{counts['clips']} audio clips) is in report.html.",
           *[f"- note: {n}" for n in [*notes, *payload["notes"]]]]
    md_path = out / "report.md"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8", errors="backslashreplace")
    html_path = out / "report.html"
    html_path.write_text(render.page(title, intro, tabs, figs, payload), encoding="utf-8", errors="backslashreplace")
    return {"markdown": str(md_path), "html": str(html_path),
            "figures": [str(fig_dir / f"{k}.png") for k, _, _ in figs], "tables": [t.key for t in tabs],
            "rollouts": len(rows), "failed": failed, "results": str(results_path), "notes": notes, **counts}


def _in_grid_order(rows: list[dict[str, Any]], run_dir: Path) -> list[dict[str, Any]]:
    """Rows in the grid's expansion order when the run's grid.toml is there (so tables list cells as the grid
    does); otherwise by rollout id."""
    grid_file = run_dir / "grid.toml"
    if not grid_file.exists():
        return rows
    from ..grid import GridError, load_grid

    try:
        order = {r.rollout_id: i for i, r in enumerate(load_grid(grid_file).expand())}
    except (GridError, ValueError):
        return rows
    return sorted(rows, key=lambda r: order.get(r["rollout_id"], len(order)))


def _figures(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, bytes]]:
    out = []
    rungs = tables.ladder_rungs(rows)
    if rungs:
        out.append(("figure3-ladder", "Action composition and success by state-label condition (cf. the paper's "
                    "Figure 3), Prosody-mediated, label-fidelity subset",
                    figures.action_composition([(RUNG_NAMES[k], v) for k, v in rungs.items()],
                                               "Action composition by state label")))
    text = tables.cells_of(rows, "text")
    if text:
        groups = [(f"{a} · {SHORT[r]} · {c}" + ("" if iv == "correct" else f" {iv}"), v)
                  for (_, a, r, c, iv, _), v in text.items()]
        out.append(("figure4-actions", "Action composition of the text conditions (cf. the paper's Figure 4)",
                    figures.action_composition(groups, "Action composition, text conditions")))
        out.append(("figure5-disclosure", "Hidden needs disclosed per rollout (cf. the paper's Figure 5)",
                    figures.disclosure(groups, "Disclosure of the three hidden needs")))
    spoken = tables.cells_of(rows, "spoken")
    if spoken:
        groups = [(f"{a} · {SHORT[r]} · {c}", v) for (_, a, r, c, _, _), v in spoken.items()]
        out.append(("figure5-disclosure-spoken", "Hidden needs disclosed per rollout, spoken conditions",
                    figures.disclosure(groups, "Disclosure, spoken conditions")))
    return out
