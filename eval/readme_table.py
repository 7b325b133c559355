"""The README's "Success %, built-in agents" table, generated from a demo run's results.json.

``python -m hear2act.eval.readme_table RUN_DIR [--readme README.md] [--check]`` rewrites the part of the README
between ``<!-- demo-table:begin -->`` and ``<!-- demo-table:end -->``: the table (text-baselines rows:
every built-in agent under T and T+S; spoken rows, T+S_hat and T+affect of state-rule, when the run has
them), the label-fidelity ladder line, and the command and commit that produced the numbers. ``--check``
changes nothing and exits 1 when the README differs. The numbers come only from results.json.

``--table model`` writes the real-model table instead (between ``<!-- model-table:begin -->`` and
``<!-- model-table:end -->``), from a run of a model grid such as ``eval/grids/smollm2.toml``: every model
cell's Table 5 metrics, interaction measures and invalid-action share, beside the paper's Table 5 rows
(its five text LLMs' mean and range, from eval/paper_numbers.json).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hear2act_env.access import TRANSCRIPT, TRUE_STATE

from .results import read_results

MARKERS = {"demo": ("<!-- demo-table:begin -->", "<!-- demo-table:end -->"),
           "model": ("<!-- model-table:begin -->", "<!-- model-table:end -->")}
BEGIN, END = MARKERS["demo"]
README = Path(__file__).resolve().parent.parent / "README.md"
AGENT_NAMES = {"random": "random", "confirm": "confirm at once", "options-value": "options-value (never asks)",
               "transcript-rule": "transcript-rule (reads words only)", "state-rule": "state-rule",
               "oracle": "oracle (privileged)"}
TEXT_BLOCK = "text-baselines"
SPOKEN_ROWS = (("state-rule", "T+S_hat", "CPU perceiver on the audio"),
               ("state-rule", "T+affect", "generic affect label"))
LADDER = (("always_resolved", "always-resolved"), ("shuffled", "shuffled"), ("always_unresolved",
                                                                            "always-unresolved"))
HEAD = ["| agent | access | Prosody-mediated | Explicit lexical |", "| --- | --- | --- | --- |"]


def _success(cells: Sequence[Mapping[str, Any]], ci: bool = False, **match: str) -> tuple[str, int] | None:
    """Success% (one decimal; with ``ci`` its 95% bootstrap interval) and scenario count of the one cell
    matching ``match``, or None."""
    found = [c for c in cells if all(c.get(k) == v for k, v in match.items())]
    if not found:
        return None
    if len(found) > 1:
        raise ValueError(f"results.json: {len(found)} cells match {match}; expected one")
    success = found[0]["metrics"]["success"]
    value = success["value"]
    shown = "-" if value is None else f"{value:.1f}"
    if ci and value is not None and success.get("low") is not None:
        shown += f" [{success['low']:.1f}, {success['high']:.1f}]"
    return shown, int(found[0]["scenarios"])


def text_rows(results: Mapping[str, Any]) -> list[str]:
    """The table rows of the text-baselines block: each agent under T, then T+S, in the grid's agent order."""
    cells = [c for c in results["cells"] if c["block"] == TEXT_BLOCK and c["intervention"] == "correct"]
    agents = list(dict.fromkeys(c["agent"] for c in cells))
    out = []
    for agent in agents:
        for cond, note in ((TRANSCRIPT, ""), (TRUE_STATE, " (true tag)")):
            pair = [_success(cells, agent=agent, condition=cond, realization=r) for r in ("prosody", "explicit")]
            if pair[0] is None and pair[1] is None:
                continue
            out.append(f"| {AGENT_NAMES.get(agent, agent)} | {cond}{note} | "
                       + " | ".join("-" if p is None else p[0] for p in pair) + " |")
    return out


def spoken_rows(results: Mapping[str, Any]) -> list[str]:
    cells = [c for c in results["cells"] if c["kind"] == "spoken" and c["intervention"] == "correct"]
    out = []
    for agent, cond, what in SPOKEN_ROWS:
        pair = [_success(cells, ci=True, agent=agent, condition=cond, realization=r)
                for r in ("prosody", "explicit")]
        if pair[0] is None and pair[1] is None:
            continue
        n = max(p[1] for p in pair if p is not None)
        out.append(f"| {AGENT_NAMES.get(agent, agent)} | {cond} ({what}; {n} spoken scenarios; 95% CI) | "
                   + " | ".join("-" if p is None else p[0] for p in pair) + " |")
    return out


def ladder_line(results: Mapping[str, Any]) -> str:
    cells = [c for c in results["cells"] if c["kind"] == "label-fidelity" and c["agent"] == "state-rule"
             and c["realization"] == "prosody"]
    parts = []
    for iv, name in LADDER:
        found = _success(cells, intervention=iv)
        if found is not None:
            parts.append((name, *found))
    if not parts:
        return ""
    n = max(p[2] for p in parts)
    return ("Label-fidelity ladder, state-rule under Prosody `T+S` with a corrupted tag "
            f"({n} scenarios): " + ", ".join(f"{name} {v}" for name, v, _ in parts) + ".")


def block(results: Mapping[str, Any]) -> str:
    """The README text between the markers."""
    text = [c for c in results["cells"] if c["block"] == TEXT_BLOCK]
    if not text:
        raise ValueError(f"results.json has no {TEXT_BLOCK!r} cells: not a demo run")
    n_text = max(c["scenarios"] for c in text)
    commit = results["versions"].get("git_commit") or "unknown"
    lines = [f"Success %, built-in agents (text rows on {n_text} scenarios; "
             f"{results['rollouts']:,} rollouts, {results['failed']} failed):", "", *HEAD,
             *text_rows(results), *spoken_rows(results), ""]
    ladder = ladder_line(results)
    if ladder:
        lines += [ladder, ""]
    command = f"`{results['command']}`" if results.get("command") else "a run (command not recorded)"
    lines.append(f"Generated by `python -m hear2act.eval.readme_table RUN_DIR` from {command} at commit `{commit}`"
                 f" (hear2act {results['versions']['hear2act']}, scenario bank "
                 f"{', '.join(results['versions']['bank_hash'])}).")
    return "\n".join(lines)


MODEL_METRICS = (("success", "Success"), ("accept", "Accept"), ("fullfit", "Full-fit"),
                 ("full_disclosure", "full disclosure"), ("premature_closure", "premature closure"),
                 ("share_ask", "ask"), ("share_recommend", "recommend"), ("share_confirm", "confirm"),
                 ("share_invalid", "invalid"), ("turns", "turns"))
REALIZATION_NAMES = {"prosody": "Prosody", "explicit": "Explicit"}


def _fmt(metric: Mapping[str, Any] | None) -> str:
    value = None if metric is None else metric.get("value")
    return "-" if value is None else f"{value:.1f}"


def _paper_rows() -> list[str]:
    """The paper's Table 5: the five text LLMs' mean and their range, per realization and condition."""
    from .report.tables import paper_entries

    entries = [e for e in paper_entries() if e["table"] == "5"]
    out = []
    for r in ("prosody", "explicit"):
        for cond in (TRANSCRIPT, TRUE_STATE):  # Table 5's two conditions
            vals = []
            for m, _ in MODEL_METRICS:
                found = [e for e in entries if (e["realization"], e["condition"], e["metric"]) == (r, cond, m)]
                mean = [e["value"] for e in found if e["agent"] == "mean"]
                models = [e["value"] for e in found if e["agent"] != "mean"]
                vals.append(f"{mean[0]:.1f} ({min(models):.1f}-{max(models):.1f})" if mean and models else "")
            out.append(f"| paper: five text LLMs, mean (range) | {REALIZATION_NAMES[r]} | {cond} | 480 x 2 | "
                       + " | ".join(vals) + " |")
    return out


def model_block(results: Mapping[str, Any]) -> str:
    """The real-model table: every model cell (spec not a built-in agent), then the paper's Table 5 rows."""
    from hear2act.agents import AGENTS

    cells = [c for c in results["cells"] if c["intervention"] == "correct" and c["agent_spec"] not in AGENTS]
    if not cells:
        raise ValueError("results.json has no model cells (every agent is a built-in rule agent)")
    head = ["| model | realization | access | scenarios x runs | "
            + " | ".join(name for _, name in MODEL_METRICS) + " |",
            "| --- | --- | --- | --- | " + " | ".join("---" for _ in MODEL_METRICS) + " |"]
    rows = []
    for c in cells:
        runs = c["n"] // max(1, c["scenarios"])
        rows.append(f"| {c['agent']} | {REALIZATION_NAMES.get(c['realization'], c['realization'])} | "
                    f"{c['condition']} | {c['scenarios']} x {runs} | "
                    + " | ".join(_fmt(c["metrics"].get(m)) for m, _ in MODEL_METRICS) + " |")
    commit = results["versions"].get("git_commit") or "unknown"
    command = f"`{results['command']}`" if results.get("command") else "a run (command not recorded)"
    specs = ", ".join(sorted({f"`{c['agent']}` = `{c['agent_spec']}`" for c in cells}))
    lines = [f"Percent (turns: mean per episode); {specs}; {results['rollouts']:,} rollouts, "
             f"{results['failed']} failed. Action shares are of all actions taken; *invalid* is a reply the "
             "parser could not read as an action (the paper counts those). The paper's rows give only its "
             "Table 5 metrics.", "", *head, *rows, *_paper_rows(), "",
             f"Generated by `python -m hear2act.eval.readme_table RUN_DIR --table model` from {command} at commit "
             f"`{commit}` (hear2act {results['versions']['hear2act']}, scenario bank "
             f"{', '.join(results['versions']['bank_hash'])})."]
    return "\n".join(lines)


BLOCKS = {"demo": block, "model": model_block}


def rewrite(readme: str, results: Mapping[str, Any], table: str = "demo") -> str:
    """``readme`` with the part between ``table``'s markers replaced."""
    begin, end = MARKERS[table]
    if readme.count(begin) != 1 or readme.count(end) != 1 or readme.index(begin) > readme.index(end):
        raise ValueError(f"the README needs exactly one {begin} ... {end} pair")
    head, rest = readme.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{BLOCKS[table](results)}\n{end}{tail}"


def readme_block(readme: str, table: str = "demo") -> str:
    """The README text between ``table``'s markers."""
    begin, end = MARKERS[table]
    return readme.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hear2act.eval.readme_table", description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path, help="a demo run directory (or its results.json)")
    p.add_argument("--readme", type=Path, default=README)
    p.add_argument("--check", action="store_true", help="exit 1 if the README's table differs; write nothing")
    p.add_argument("--table", choices=sorted(BLOCKS), default="demo",
                   help="demo: the built-in agents (a demo run); model: a model grid's run (e.g. grids/smollm2)")
    args = p.parse_args(argv)
    try:
        results = read_results(args.run_dir)
        text = args.readme.read_text(encoding="utf-8")
        new = rewrite(text, results, args.table)
    except (OSError, ValueError) as e:
        print(f"readme_table: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            print(f"{args.readme}: the {args.table} table differs from {args.run_dir}", file=sys.stderr)
            return 1
        print(f"{args.readme}: the {args.table} table matches {args.run_dir}")
        return 0
    args.readme.write_text(new, encoding="utf-8")
    print(f"rewrote the {args.table} table of {args.readme} from {args.run_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
