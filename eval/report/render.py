"""Tables to Markdown and HTML, and the self-contained HTML page (figures as base64 PNG, the viewer's data
and audio inline; no network, no external files)."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .tables import Table, Value

ASSETS = Path(__file__).resolve().parent / "assets"


def _num(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x:.1f}"


def md_escape(text: str) -> str:
    """A Markdown table cell: ``|`` escaped, no line break."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def md_cell(v: Value) -> str:
    if v.text:
        return md_escape(v.text)
    if v.ours is None and v.paper is not None:
        return f"({_num(v.paper)})"
    ours = _num(v.ours)
    ours = f"**{ours}**" if v.mark == "best" else f"<u>{ours}</u>" if v.mark == "second" else ours
    return ours + (f" ({_num(v.paper)})" if v.paper is not None else "")


def html_cell(v: Value) -> str:
    if v.text:
        return f"<td>{html.escape(v.text)}</td>"
    ours = "" if v.ours is None and v.paper is not None else html.escape(_num(v.ours))
    if v.mark and ours:
        ours = f"<strong>{ours}</strong>" if v.mark == "best" else f"<u>{ours}</u>"
    paper = f'<span class="paper" title="paper">{_num(v.paper)}</span>' if v.paper is not None else ""
    return f"<td>{ours}{paper}</td>"


def table_md(t: Table) -> str:
    head = list(t.header)
    if t.groups:  # fold the group label into the column label (Markdown has one header row)
        labels: list[str] = []
        for g, span in t.groups:
            labels += [g] * span
        head = [f"{g} {h}".strip() if g else h for g, h in zip(labels, head, strict=True)]
    out = [f"### {t.title}", "", t.caption, "", "| " + " | ".join(md_escape(h) for h in head) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for i, (label, values) in enumerate(t.rows):
        if i in t.section_rows:
            out.append("| " + " | ".join([f"*{md_escape(t.section_rows[i])}*"] + [""] * (len(head) - 1)) + " |")
        out.append("| " + " | ".join([md_escape(label), *(md_cell(v) for v in values)]) + " |")
    return "\n".join(out) + "\n"


def table_html(t: Table) -> str:
    parts = [f'<section class="table" id="t-{html.escape(t.key)}"><h3>{html.escape(t.title)}</h3>',
             f'<p class="caption">{html.escape(t.caption)}</p><div class="scroll"><table>']
    if t.groups:
        parts.append("<tr>" + "".join(f'<th colspan="{s}" class="group">{html.escape(g)}</th>' for g, s in t.groups)
                     + "</tr>")
    parts.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in t.header) + "</tr>")
    for i, (label, values) in enumerate(t.rows):
        if i in t.section_rows:
            parts.append(f'<tr><th class="section" colspan="{len(t.header)}">{html.escape(t.section_rows[i])}'
                         "</th></tr>")
        parts.append(f'<tr><th class="row">{html.escape(label)}</th>' + "".join(html_cell(v) for v in values)
                     + "</tr>")
    parts.append("</table></div></section>")
    return "".join(parts)


def page(title: str, intro_html: str, tables: Sequence[Table], figures: Sequence[tuple[str, str, bytes]],
         viewer: Mapping[str, Any]) -> str:
    """The whole report as one HTML document."""
    figs = "".join(
        f'<figure id="f-{html.escape(key)}"><img alt="{html.escape(caption)}" src="data:image/png;base64,'
        f'{base64.b64encode(png).decode("ascii")}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        for key, caption, png in figures)
    data = json.dumps(viewer, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    js = (ASSETS / "viewer.js").read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><link rel="icon" href="data:,"><style>{css}</style></head>
<body><header><h1>{html.escape(title)}</h1>{intro_html}
<nav><a href="#tables">Tables</a> · <a href="#figures">Figures</a> · <a href="#viewer">Trajectory viewer</a></nav>
</header>
<main><h2 id="tables">Tables</h2>{"".join(table_html(t) for t in tables)}
<h2 id="figures">Figures</h2>{figs or "<p>No figure applies to this run.</p>"}
<h2 id="viewer">Trajectory viewer</h2>
<p class="caption">Pick a scenario: its matched rollouts (same scenario and seed, repeat 0) side by side. User turns
carry the true state and delivery chips (what the agent saw depends on its condition); the needs a turn disclosed
are marked; the gold option is marked wherever it is recommended; spoken turns have the audio the agent heard
(rendered again from the recorded words, delivery and seed).</p>
<div id="viewer-controls"><label>Scenario <select id="scenario"></select></label>
<label>Realization <select id="realization"></select></label><label>Block <select id="block"></select></label>
<span id="viewer-count"></span></div>
<div id="scenario-info"></div><div id="cards"></div><ul id="viewer-notes"></ul>
</main>
<script type="application/json" id="viewer-data">{data}</script>
<script>{js}</script></body></html>
"""
