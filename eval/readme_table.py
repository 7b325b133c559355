"""The README's "Success %, built-in agents" table, generated from a demo run's results.json.

``python -m hear2act.eval.readme_table RUN_DIR [--readme README.md] [--check]`` rewrites the part of the README
between ``<!-- demo-table:begin -->`` and ``<!-- demo-table:end -->``: the table (text-baselines rows:
every built-in agent under T and T+S; spoken rows, T+S_hat and T+affect of state-rule, when the run has
them), the label-fidelity ladder line, and the command and commit that produced the numbers. ``--check``
changes nothing and exits 1 when the README differs. The numbers come only from results.json.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .results import read_results

BEGIN, END = "<!-- demo-table:begin -->", "<!-- demo-table:end -->"
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
        for cond, note in (("T", ""), ("T+S", " (true tag)")):
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


def rewrite(readme: str, results: Mapping[str, Any]) -> str:
    """``readme`` with the part between the markers replaced."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError(f"the README needs exactly one {BEGIN} ... {END} pair")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{block(results)}\n{END}{tail}"


def readme_block(readme: str) -> str:
    """The README text between the markers."""
    return readme.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hear2act.eval.readme_table", description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path, help="a demo run directory (or its results.json)")
    p.add_argument("--readme", type=Path, default=README)
    p.add_argument("--check", action="store_true", help="exit 1 if the README's table differs; write nothing")
    args = p.parse_args(argv)
    try:
        results = read_results(args.run_dir)
        text = args.readme.read_text(encoding="utf-8")
        new = rewrite(text, results)
    except (OSError, ValueError) as e:
        print(f"readme_table: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            print(f"{args.readme}: the demo table differs from {args.run_dir}", file=sys.stderr)
            return 1
        print(f"{args.readme}: the demo table matches {args.run_dir}")
        return 0
    args.readme.write_text(new, encoding="utf-8")
    print(f"rewrote the demo table of {args.readme} from {args.run_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
