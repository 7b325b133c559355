"""Read the export; option text -> name, categorical and numeric columns; the request's numeric bounds and violators."""
from __future__ import annotations

import collections
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

VISIBLE, LABELS = "visible.jsonl", "labels.jsonl"


@dataclass
class Bank:
    """The export: scenarios as shown (``visible``), labels by id, and each domain's numeric column indices."""

    visible: list[dict[str, Any]]
    labels: dict[str, dict[str, Any]]
    numcols: dict[str, set[int]]


def load(data_dir: str | Path) -> Bank:
    """Read ``data_dir/visible.jsonl`` and ``data_dir/labels.jsonl``."""
    data_dir = Path(data_dir)
    with open(data_dir / VISIBLE, encoding="utf-8") as fh:
        visible = [json.loads(line) for line in fh]
    with open(data_dir / LABELS, encoding="utf-8") as fh:
        labels = {d["id"]: d for d in (json.loads(line) for line in fh)}
    return Bank(visible, labels, numeric_columns(visible))


def num(s):
    m = re.search(r"(\d[\d,]*\.?\d*)", s)
    return float(m.group(1).replace(",", "")) if m else None


def templ(s):
    return re.sub(r"\d[\d,]*\.?\d*", "#", s)


def numeric_columns(visible):
    """Per domain, the columns with more than 4.5 distinct values per scenario on average."""
    dom_cols = collections.defaultdict(lambda: collections.defaultdict(list))
    for v in visible:
        fields = [o["text"].split(": ", 1)[1].split(", ") for o in v["options"]]
        for j in range(len(fields[0])):
            col = [f[j] for f in fields]
            dom_cols[v["domain"]][j].append(len(set(col)))
    return {d: {j for j, ks in c.items() if np.mean(ks) > 4.5} for d, c in dom_cols.items()}


def parse(v, numcols):
    fields = [o["text"].split(": ", 1)[1].split(", ") for o in v["options"]]
    names = [o["text"].split(": ", 1)[0] for o in v["options"]]
    nc = sorted(numcols[v["domain"]])
    cats = [j for j in range(len(fields[0])) if j not in nc]
    cat = [[f[j] for j in cats] for f in fields]
    nums = {templ(fields[0][j]): [num(f[j]) for f in fields] for j in nc}
    return names, cat, nums, cats


NUMRE = re.compile(r"(?<![A-Za-z0-9])(\$?)(\d[\d,]*\.?\d*)\s*(%|k\b)?")


def constraints(v, nums):
    """returns list of (colkey, op, value, strict) from request"""
    r = v["request"]
    keys = list(nums)
    out = []
    for m in NUMRE.finditer(r):
        dollar, val, pct = m.group(1), float(m.group(2).replace(",", "")), m.group(3)
        pre = r[max(0, m.start() - 40) : m.start()].lower()
        post = r[m.end() : m.end() + 40].lower()
        # pick column
        col = None
        if dollar:
            col = [k for k in keys if "$" in k]
        elif pct == "%":
            col = [k for k in keys if "%" in k]
        elif "mile" in post[:10]:
            col = [k for k in keys if "mile" in k]
        elif "day" in post[:10]:
            col = [k for k in keys if "day" in k]
        elif re.search(r"score|critic|rated|rating|star", pre + post):
            col = [k for k in keys if re.search("rated|score", k)]
        if not col:
            continue
        if re.search("rated|score", col[0]) and not re.search(r"rat|score|star|review|critic", pre[-25:] + post[:15]):
            continue
        col = col[0]
        op = ">=" if re.search(r"rated|score|employ|battery", col) else "<="
        strict = bool(re.search(r"(under|less than|below)\s*$", pre[-15:]))
        out.append((col, op, val, strict))
    return out


def violators(v, nums, cons):
    n = len(v["options"])
    bad = set()
    for col, op, val, strict in cons:
        x = nums[col]
        for i in range(n):
            if op == "<=" and (x[i] > val or (strict and x[i] >= val)):
                bad.add(i)
            if op == ">=" and x[i] < val:
                bad.add(i)
    return bad
