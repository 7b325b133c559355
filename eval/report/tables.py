"""The report's tables, laid out like the paper's Tables 3/4 (spoken), 5 (text), 9 (paired CIs) and the
label-fidelity ladder, each cell carrying our value and, where the paper ran that cell, its published number.

Pure data in, :class:`Table` out; :mod:`hear2act.eval.report.render` turns tables into Markdown and HTML.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import stats

PAPER_NUMBERS = Path(__file__).resolve().parent.parent / "paper_numbers.json"
HEADLINE = ("success", "accept", "fullfit")
METRIC_NAMES = {"success": "Success%", "accept": "Accept%", "fullfit": "FullFit%", "full_disclosure": "Disclosure%",
                "premature_closure": "Premature%", "turns": "Turns", "asks": "Ask+Clarify", "disclosed": "Needs",
                "share_ask": "Ask share%"}
REALIZATION_NAMES = {"prosody": "Prosody-mediated", "explicit": "Explicit lexical"}
RUNG_NAMES = {"none": "no state (T)", "always_resolved": "always-resolved", "shuffled": "shuffled",
              "always_unresolved": "always-unresolved", "correct": "correct (T+S)"}


# The paper's names for the access conditions (Tables 3/4), and its two groups of them.
CONDITION_NAMES = {"T": "Transcript only (T)", "A": "Audio only (A)", "A+T": "Audio + transcript (A+T)",
                   "T+S_hat": "Audio-inferred state (T+Ŝ)", "T+S": "Ground-truth state (T+S)"}
DIRECT = frozenset({"T", "A", "A+T"})
# metric -> which way is better, for the best / second-best marks (Turns: neither)
BETTER = {"success": "max", "accept": "max", "fullfit": "max", "full_disclosure": "max",
          "premature_closure": "min"}


def condition_name(condition: str, access: str = "") -> str:
    """The paper's label for a condition: ``T+S_hat`` -> "Audio-inferred state (T+Ŝ)", a T+affect condition
    ``HuBERT`` -> "Generic affect (HuBERT)" (the built-in rule: "Generic affect (rule)"); others unchanged."""
    access = access or condition
    if access == "T+affect":
        return f"Generic affect ({'rule' if condition == 'T+affect' else condition})"
    if condition == access and condition in CONDITION_NAMES:
        return CONDITION_NAMES[condition]
    return condition


@dataclass
class Value:
    ours: float | None
    paper: float | None = None
    n: int = 0
    text: str = ""  # preformatted (CIs)
    mark: str = ""  # "best" / "second": the column's best and second-best of ours (bold / underlined)


def mark_best(t: Table, columns: Mapping[int, str]) -> None:
    """Mark, per value column (index into a row's values) the best and second-best of our values, as the
    paper's tables do (bold / underline); ``columns`` maps a column to "max" or "min". Ties share a mark; a
    column with fewer than two distinct values gets none."""
    for col, way in columns.items():
        vals = [vs[col].ours for _, vs in t.rows if col < len(vs) and vs[col].ours is not None]
        distinct = sorted(set(vals), reverse=way == "max")
        if len(distinct) < 2:
            continue
        for _, vs in t.rows:
            v = vs[col] if col < len(vs) else None
            if v is not None and v.ours is not None:
                v.mark = "best" if v.ours == distinct[0] else "second" if v.ours == distinct[1] else ""


@dataclass
class Table:
    key: str
    title: str
    caption: str
    header: list[str]  # one label per column, the first for the row labels
    groups: list[tuple[str, int]] = field(default_factory=list)  # (group label, span) above the header
    rows: list[tuple[str, list[Value]]] = field(default_factory=list)
    section_rows: dict[int, str] = field(default_factory=dict)  # row index -> section label before it


@lru_cache(maxsize=1)
def paper_entries() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(PAPER_NUMBERS.read_text(encoding="utf-8"))["entries"])


def paper_value(table: str, **keys: str) -> float | None:
    for e in paper_entries():
        if e["table"] == table and all(e.get(k) == v for k, v in keys.items()):
            return float(e["value"])
    return None


# ---------------------------------------------------------------- grouping


def cells_of(rows: Iterable[Mapping[str, Any]], kind: str | None = None) -> dict[tuple[str, ...], list[dict]]:
    """Rows grouped by cell (block, agent, realization, condition, intervention, renderer), in run order."""
    out: dict[tuple[str, ...], list[dict]] = {}
    for r in rows:
        c = r["cell"]
        if kind is None or c["kind"] == kind:
            key = (c["block"], c["agent"], c["realization"], c["condition"], c["intervention"], c["renderer"])
            out.setdefault(key, []).append(r)  # type: ignore[arg-type]
    return out


def _uniq(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def failed_note(rows: Iterable[Mapping[str, Any]]) -> str:
    """The sentence every rate-reporting table ends its caption with: how many of its rollouts failed."""
    rows = list(rows)
    failed = sum(1 for r in rows if r.get("failed"))
    return (f" Failed rollouts (infrastructure errors after retries, never scored): {failed:,} of {len(rows):,}; "
            "a reply with no text is scored as an invalid action.")


def _v(rows: Sequence[Mapping[str, Any]], metric: str, paper: float | None = None) -> Value:
    scored = [r for r in rows if not r.get("failed") and r.get("outcome") is not None]
    value = stats.pooled_value(scored, metric) if scored else None
    return Value(None if value is None or value != value else value, paper, len(scored))


# ---------------------------------------------------------------- layouts


def spoken_tables(rows: Sequence[Mapping[str, Any]]) -> list[Table]:
    """One table per (realization, renderer) of the spoken blocks: rows = conditions, columns = agents x metrics,
    then the average over agents, then the paper's own average for the same condition (its two audio LLMs)."""
    cells = cells_of(rows, "spoken")
    tables = []
    for realization in _uniq(k[2] for k in cells):
        for renderer in _uniq(k[5] for k in cells if k[2] == realization):
            keys = [k for k in cells if k[2] == realization and k[5] == renderer]
            agents = _uniq(k[1] for k in keys)
            conditions = _uniq(k[3] for k in keys)
            number = "3" if realization == "prosody" else "4"
            header = ["Condition"] + [METRIC_NAMES[m] for _ in (*agents, "avg", "paper") for m in HEADLINE]
            groups = [("", 1)] + [(a, 3) for a in agents] + [("Average", 3), ("Paper avg (Qwen3-TTS)", 3)]
            t = Table(f"spoken-{realization}-{renderer}", f"Spoken conditions, {REALIZATION_NAMES[realization]} "
                      f"responses, renderer {renderer or 'default'} (layout of the paper's Table {number})",
                      "Per agent and averaged over agents (equal weight). A number in parentheses is the paper's "
                      "for the same agent and condition; the last group is the paper's average over its two audio "
                      "LLMs, for reference." + failed_note(r for k in keys for r in cells[k]), header, groups)
            access_of = {k[3]: cells[k][0]["cell"]["access"] for k in keys}
            for cond in conditions:
                if access_of[cond] in DIRECT and not any(access_of[c] in DIRECT for c in conditions[
                        :conditions.index(cond)]):
                    t.section_rows[len(t.rows)] = "Direct input"
                elif access_of[cond] not in DIRECT and not any(access_of[c] not in DIRECT for c in conditions[
                        :conditions.index(cond)]):
                    t.section_rows[len(t.rows)] = "Textualized prosodic representations"
                values: list[Value] = []
                for a in agents:
                    rs = [r for k in keys if k[1] == a and k[3] == cond for r in cells[k]]
                    for m in HEADLINE:
                        values.append(_v(rs, m, paper_value(number, realization=realization, renderer=renderer,
                                                             agent=a, condition=cond, metric=m)))
                rs = [r for k in keys if k[3] == cond for r in cells[k]]
                values += [_v(rs, m) for m in HEADLINE]
                values += [Value(None, paper_value(number, agent="Average", condition=cond, metric=m))
                           for m in HEADLINE]
                t.rows.append((condition_name(cond, access_of[cond]), values))
            mark_best(t, {i: "max" for i in range(3 * (len(agents) + 1))})
            tables.append(t)
    return tables


def text_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    """The paper's Table 5 layout: rows = agents, columns = realization x metric x (T, T+S)."""
    cells = cells_of(rows, "text")
    if not cells:
        return None
    agents = _uniq(k[1] for k in cells)
    realizations = _uniq(k[2] for k in cells)
    conditions = _uniq(k[3] for k in cells)
    header = ["Agent"] + [c for _ in realizations for _ in HEADLINE for c in conditions]
    groups = [("", 1)] + [(f"{REALIZATION_NAMES[r]} {METRIC_NAMES[m]}", len(conditions))
                          for r in realizations for m in HEADLINE]
    t = Table("text", "Text conditions (layout of the paper's Table 5)",
              "Success% per rollout; Accept% and FullFit% per agent recommendation turn. A number in parentheses "
              "is the paper's for the same model and cell; the last row is the paper's five-model mean."
              + failed_note(r for v in cells.values() for r in v), header, groups)
    for a in agents:
        values = []
        for r in realizations:
            for m in HEADLINE:
                for c in conditions:
                    rs = [x for k, v in cells.items() if k[1:4] == (a, r, c) for x in v]
                    values.append(_v(rs, m, paper_value("5", realization=r, agent=a, condition=c, metric=m)))
        t.rows.append((a, values))
    t.rows.append(("Paper: five-model mean", [Value(None, paper_value("5", realization=r, agent="mean", condition=c,
                                                                metric=m))
                                              for r in realizations for m in HEADLINE for c in conditions]))
    return t


def ladder_rungs(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[dict]]:
    """Rows of each ladder rung: the label-fidelity blocks' interventions, with "none" and "correct" taken from
    the same agents' T and T+S text cells (Prosody-mediated) when the blocks do not run them, as in the paper."""
    lf = [r for r in rows if r["cell"]["kind"] == "label-fidelity"]
    if not lf:
        return {}
    agents = {r["cell"]["agent"] for r in lf}
    scenarios = {r["scenario_id"] for r in lf}
    rungs: dict[str, list[dict]] = {}
    for r in lf:
        iv = r["cell"]["intervention"]
        rungs.setdefault("none" if iv == "none" else iv, []).append(r)  # type: ignore[arg-type]
    for r in rows:
        c = r["cell"]
        if c["kind"] != "text" or c["agent"] not in agents or c["realization"] != "prosody" or c["renderer"]:
            continue
        if r["scenario_id"] not in scenarios:
            continue
        if c["access"] == "T" and "none" not in {x["cell"]["intervention"] for x in lf}:
            rungs.setdefault("none", []).append(r)  # type: ignore[arg-type]
        elif c["access"] == "T+S" and c["intervention"] == "correct" and not any(
                x["cell"]["intervention"] == "correct" for x in lf):
            rungs.setdefault("correct", []).append(r)  # type: ignore[arg-type]
    return {k: rungs[k] for k in stats.LADDER if k in rungs}


def ladder_table(rungs: Mapping[str, Sequence[Mapping[str, Any]]]) -> Table | None:
    if not rungs:
        return None
    metrics = ("success", "share_ask", "premature_closure", "full_disclosure", "turns")
    t = Table("ladder", "State-label fidelity (the paper's Figure 3 conditions), Prosody-mediated",
              "Agents pooled with equal weight over the label-fidelity subset. Parenthesised: the paper's value "
              "(five text LLMs, quoted in §5.3)." + failed_note(r for rs in rungs.values() for r in rs),
              ["State label"] + [METRIC_NAMES[m] for m in metrics])
    for rung, rs in rungs.items():
        cond = "T" if rung == "none" else "T+S"
        t.rows.append((RUNG_NAMES[rung], [_v(rs, m, paper_value("figure3", condition=cond, intervention=rung,
                                                                 metric=m)) for m in metrics]))
    return t


def behaviour_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    """Interaction measures of the text cells (paper §4.3 / §5.3): disclosure, premature closure, asks, turns."""
    cells = cells_of(rows, "text")
    if not cells:
        return None
    metrics = ("full_disclosure", "disclosed", "premature_closure", "asks", "turns")
    t = Table("behaviour", "Interaction behaviour of the text conditions",
              "Full disclosure: all three hidden needs revealed; premature closure: confirmed a non-gold option; "
              "Ask+Clarify per dialogue. Parenthesised: the paper's five-text-model mean (§5.3, Prosody-mediated)."
              + failed_note(r for v in cells.values() for r in v),
              ["Agent", "Realization", "Condition"] + [METRIC_NAMES[m] for m in metrics])
    for (_, agent, real, cond, iv, _), rs in cells.items():
        label = cond if iv == "correct" else f"{cond} {iv}"
        t.rows.append((agent, [Value(None, text=REALIZATION_NAMES[real]), Value(None, text=label),
                               *[_v(rs, m) for m in metrics]]))
    for cond in ("T", "T+S"):  # the paper's reference rows (its five text LLMs), not a cell of this run
        t.rows.append(("Paper: five-model mean", [Value(None, text=REALIZATION_NAMES["prosody"]),
                                                  Value(None, text=cond)]
                       + [Value(None, paper_value("5.3", realization="prosody", condition=cond, metric=m))
                          for m in metrics]))
    return t


def contrasts(rows: Sequence[Mapping[str, Any]], n_resamples: int = stats.N_RESAMPLES,
              seed: int = 0) -> list[tuple[str, str, str, stats.Contrast]]:
    """The Table 9 contrasts this run supports: (family, A, B, contrast) pooled over the agents of the family."""
    out: list[tuple[str, str, str, stats.Contrast]] = []

    def add(family: str, a_label: str, b_label: str, a: Sequence, b: Sequence, metrics: Sequence[str]) -> None:
        for m in metrics:
            try:
                out.append((family, a_label, b_label, stats.paired_contrast(a, b, m, n_resamples=n_resamples,
                                                                            seed=seed)))
            except ValueError:
                continue  # nothing paired (e.g. disjoint scenarios): the contrast does not apply

    text = cells_of(rows, "text")
    for real in _uniq(k[2] for k in text):
        pick = {c: [r for k, v in text.items() if k[2] == real and k[3] == c and k[4] == "correct" for r in v]
                for c in ("T", "T+S")}
        if pick["T"] and pick["T+S"]:
            add(f"Text, {REALIZATION_NAMES[real]}", "T", "T+S", pick["T"], pick["T+S"], HEADLINE)
    spoken = cells_of(rows, "spoken")
    steps = [("T", "A"), ("T", "A+T"), ("A+T", "T+S_hat"), ("T+S_hat", "T+S")]
    conds = _uniq(k[3] for k in spoken)
    steps += [("A+T", c) for c in conds if c not in {"T", "A", "A+T", "T+S_hat", "T+S"}]
    for real in _uniq(k[2] for k in spoken):
        for rend in _uniq(k[5] for k in spoken if k[2] == real):
            sel = {c: [r for k, v in spoken.items() if k[2] == real and k[5] == rend and k[3] == c for r in v]
                   for c in conds}
            for a, b in steps:
                if sel.get(a) and sel.get(b):
                    add(f"Spoken, {REALIZATION_NAMES[real]}, {rend or 'default'}", a, b, sel[a], sel[b],
                        ("success",))
    for x, y, c in stats.ladder(ladder_rungs(rows), "success", n_resamples=n_resamples, seed=seed):
        out.append(("Label fidelity, Prosody-mediated", RUNG_NAMES[x], RUNG_NAMES[y], c))
    return out


def ci_table(found: Sequence[tuple[str, str, str, stats.Contrast]],
             rows: Sequence[Mapping[str, Any]] = ()) -> Table | None:
    if not found:
        return None
    t = Table("ci", "Paired 95% confidence intervals (layout of the paper's Table 9)",
              f"B - A in points; paired scenario-level bootstrap, {stats.N_RESAMPLES:,} resamples, percentile "
              "interval, seed 0; agents pooled with equal weight." + failed_note(rows),
              ["Contrast", "Metric", "A", "B", "B - A", "95% CI", "Scenarios", "Agents"])
    for family, a, b, c in found:
        t.rows.append((f"{family}: {a} → {b}", [
            Value(None, text=METRIC_NAMES.get(c.metric, c.metric)), Value(c.a), Value(c.b), Value(c.diff),
            Value(None, text=f"[{c.low:+.1f}, {c.high:+.1f}]"), Value(None, text=str(c.n_scenarios)),
            Value(None, text=str(c.n_models))]))
    return t


def overview_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """Every cell with every headline metric and its failure count; the paper's condition names; the best and
    second-best value of each column marked."""
    metrics = ("success", "accept", "fullfit", "full_disclosure", "premature_closure", "turns")
    t = Table("cells", "All cells", "n: scored rollouts (failed ones are listed, never scored). Bold: the best "
              "value of a column, underlined: the second best (Premature%: the lowest)." + failed_note(rows),
              ["Block", "Agent", "Responses", "Condition", "n", "failed"] + [METRIC_NAMES[m] for m in metrics])
    for (block, agent, real, cond, iv, rend), rs in cells_of(rows).items():
        access = rs[0]["cell"].get("access", cond)
        name = condition_name(cond, access) + ("" if iv == "correct" else f", {RUNG_NAMES.get(iv, iv)} tag") \
            + (f", {rend}" if rend else "")
        failed = sum(1 for r in rs if r.get("failed"))
        t.rows.append((block, [Value(None, text=agent), Value(None, text=REALIZATION_NAMES.get(real, real)),
                               Value(None, text=name), Value(None, text=str(len(rs) - failed)),
                               Value(None, text=str(failed)), *[_v(rs, m) for m in metrics]]))
    mark_best(t, {5 + i: BETTER[m] for i, m in enumerate(metrics) if m in BETTER})
    return t
