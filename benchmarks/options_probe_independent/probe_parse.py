"""Read the exported JSONL files and split each option's text into columns.

An option reads ``"Name: value, value, ..., value"``. Splitting on the first ``": "`` and then on
``", "`` gives the same number of columns for every option of a scenario; a column is *numeric*
when every value carries a number written with one template (``"$# round trip"``, ``"rated #/5"``)
and the values are varied enough, otherwise *categorical*. Only the visible text is used.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?")
# A column whose one template names a unit or scale is numeric with only four distinct values.
NUMERIC_UNIT = re.compile(r"rated|/5|APR|ratio|score|employed|opening|miles|battery|\$")


@dataclass(frozen=True)
class OptionRow:
    """One option: its number, its name (before ``": "``) and its column values."""

    number: int
    name: str
    values: list[str]


@dataclass(frozen=True)
class Column:
    """Column ``index`` across the options: its values (option order), kind, and number template."""

    index: int
    values: list[str]
    numeric: bool
    template: str | None  # the value with every number replaced by '#', when all options share one


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Every non-blank line of a JSONL file, parsed."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_export(visible_path: str | Path, labels_path: str | Path) -> tuple[list[dict[str, Any]], dict[str, dict]]:
    """The visible scenarios (file order) and the labels keyed by scenario id."""
    visible = read_jsonl(visible_path)
    labels = {d["id"]: d for d in read_jsonl(labels_path)}
    return visible, labels


def number_template(text: str) -> str:
    """``text`` with every number (``$1,200``, ``3.4``) replaced by ``#``."""
    return NUMBER.sub("#", text)


def first_number(text: str) -> float:
    """The first number in ``text`` (``"$1,209 round trip"`` -> 1209.0)."""
    return float(NUMBER.findall(text)[0].replace("$", "").replace(",", ""))


def parse_options(scenario: dict[str, Any]) -> tuple[list[OptionRow], list[Column]]:
    """Rows (one per option) and columns of a visible scenario's options."""
    rows = []
    for option in scenario["options"]:
        name, rest = option["text"].split(": ", 1)
        rows.append(OptionRow(option["number"], name, rest.split(", ")))
    columns = []
    for j in range(len(rows[0].values)):
        values = [row.values[j] for row in rows]
        templates = {number_template(x) for x in values}
        all_have_number = all(NUMBER.search(x) for x in values)
        distinct = len(set(values))
        template = next(iter(templates)) if len(templates) == 1 else None
        numeric = (
            all_have_number
            and template is not None
            and (distinct >= 5 or (bool(NUMERIC_UNIT.search(template)) and distinct >= 4))
        )
        columns.append(Column(j, values, numeric, template))
    return rows, columns
