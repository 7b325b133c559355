"""report.md's tables: every row has as many cells as the header (labels' ``|`` escaped), the paper's
condition names, and the best / second-best value of a column marked as the paper marks them."""

from __future__ import annotations

import re

from hear2act.eval.report.render import table_md
from hear2act.eval.report.tables import condition_name, overview_table, spoken_tables


def _row(agent: str, block: str, kind: str, condition: str, access: str, success: bool, sid: str,
         renderer: str = "") -> dict:
    outcome = {"success": success, "recommendations": 2, "accepts": int(success), "fullfits": int(success),
               "full_disclosure": success, "premature_closure": not success, "n_disclosed": 3 * success,
               "turns": 5, "action_counts": {"recommend": 2, "ask": 1, "clarify": 0, "confirm": 1, "invalid": 0}}
    cell = {"block": block, "kind": kind, "agent": agent, "realization": "prosody", "condition": condition,
            "access": access, "intervention": "correct", "renderer": renderer}
    return {"cell": cell, "scenario_id": sid, "repeat": 0, "outcome": outcome, "failed": None}


def _cells(line: str) -> list[str]:
    """A Markdown table row split on unescaped pipes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_all_cells_table_is_well_formed_named_and_marked():
    rows = []
    for agent, wins in [("my|model", 3), ("b", 2), ("c", 1)]:
        for j in range(4):
            rows.append(_row(agent, "text | main", "text", "T+S_hat", "T+S_hat", j < wins, f"s{j}"))
    rows.append(_row("b", "text | main", "text", "HuBERT", "T+affect", False, "s0"))
    md = table_md(overview_table(rows)).splitlines()
    table = [line for line in md if line.startswith("|")]
    width = len(_cells(table[0]))
    assert all(len(_cells(line)) == width for line in table), table
    body = {(_cells(line)[1], _cells(line)[3]): _cells(line) for line in table[2:]}
    assert ("my\\|model", "Audio-inferred state (T+Ŝ)") in body
    assert ("b", "Generic affect (HuBERT)") in body
    success = {k: v[6] for k, v in body.items()}
    assert success[("my\\|model", "Audio-inferred state (T+Ŝ)")] == "**75.0**"
    assert success[("b", "Audio-inferred state (T+Ŝ)")] == "<u>50.0</u>"
    assert success[("c", "Audio-inferred state (T+Ŝ)")] == "25.0"
    premature = {k: v[10] for k, v in body.items()}  # lower is better
    assert premature[("my\\|model", "Audio-inferred state (T+Ŝ)")] == "**25.0**"
    assert premature[("b", "Generic affect (HuBERT)")] == "100.0"


def test_condition_names_follow_the_paper():
    assert condition_name("T") == "Transcript only (T)"
    assert condition_name("A+T") == "Audio + transcript (A+T)"
    assert condition_name("T+affect", "T+affect") == "Generic affect (rule)"
    assert condition_name("SpeechBrain", "T+affect") == "Generic affect (SpeechBrain)"
    assert condition_name("mine", "T+S") == "mine"  # a grid's own label is kept


def test_spoken_table_rows_have_header_width():
    rows = [_row("a", "spoken", "spoken", c, c, k % 2 == 0, f"s{k}", "hibari")
            for c in ("T", "A+T", "T+affect", "T+S") for k in range(2)]
    (t,) = spoken_tables(rows)
    table = [line for line in table_md(t).splitlines() if line.startswith("|")]
    assert len({len(_cells(line)) for line in table}) == 1
    assert any("*Direct input*" in line for line in table)
