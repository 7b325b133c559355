"""Labelled question sets and how a matcher is scored on them (tests, benchmarks, the router's fitting).

A row is ``{"scenario_id", "question", "expect", "attribute", "style"}``. It is routed right when:
``L1``/``L2``/``L3`` -> to that need; ``general`` -> nowhere; ``other`` (an attribute no need depends
on) -> not to a need.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..scenarios import Scenario
from .matching import Matcher, Target


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL question set (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def routed_right(target: Target | None, expect: str) -> bool:
    """Whether a routing decision is what the row expects (see the module docstring)."""
    if expect == "general":
        return target is None
    if expect == "other":
        return target is None or target.kind != "need"
    return target is not None and target.kind == "need" and target.level == int(expect[1])


def tally(rows: Iterable[Mapping[str, Any]], scenarios: Mapping[str, Scenario],
          matcher: Matcher) -> dict[tuple[str, str], tuple[int, int]]:
    """(style or "all", "need"/"general"/"other") -> (right, total)."""
    out: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        ok = routed_right(matcher(scenarios[r["scenario_id"]], r["question"]), r["expect"])
        kind = "need" if r["expect"].startswith("L") else r["expect"]
        for style in (r["style"], "all"):
            t = out.setdefault((style, kind), [0, 0])
            t[0] += ok
            t[1] += 1
    return {k: (right, total) for k, (right, total) in out.items()}
