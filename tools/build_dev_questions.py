"""Regenerate ``tests/data/dev_questions.jsonl`` (the lexical matcher's development set) from the domain-level
questions of ``training/data/routing/dev_questions_src/`` (the router's ``dev_sources`` training rows).

Each ``dev_*.txt`` line is ``attribute: S:question | S:question`` under a ``# domain-slug`` header
(S: D direct, P preference, T trade-off, R paraphrase). A question is expanded over the domain's
scenarios: every scenario whose need is on that attribute (expect ``L1``/``L2``/``L3``), up to two
where the attribute is not a need (``other``), three per general question (``general``); and the
generic assistant questions of ``general_templates.txt`` (``{thing}``: the domain) once per domain.
Run after the bank is regenerated: ``python tools/build_dev_questions.py``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from hear2act_env import load_scenarios
from hear2act_env.scenarios.content import slugify

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "training" / "data" / "routing" / "dev_questions_src"
OUT = ROOT / "tests" / "data" / "dev_questions.jsonl"
STYLE = {"D": "direct", "P": "preference", "T": "trade-off", "R": "paraphrase"}


def expand(by_domain: dict, slug: str, attr: str, i: int, style: str, q: str) -> list[dict]:
    scen = by_domain[slug]
    if attr == "general":
        k = (i * 3) % len(scen)
        picks = [scen[(k + j) % len(scen)] for j in range(3)]
        return [dict(scenario_id=s.id, question=q, expect="general", attribute=None, style=style) for s in picks]
    rows = [dict(scenario_id=s.id, question=q, expect=f"L{n.level}", attribute=attr, style=style)
            for s in scen for n in s.needs if n.attribute == attr]
    has = [s for s in scen if attr in {a.name for a in s.attributes}]
    others = [s for s in has if all(n.attribute != attr for n in s.needs)]
    absent = [s for s in scen if s not in has]
    picks = others[i::3][:2] or (absent[i : i + 1] if absent else [])
    rows += [dict(scenario_id=s.id, question=q, expect="other", attribute=attr, style=style) for s in picks]
    return rows


def main() -> None:
    by_domain = defaultdict(list)
    for s in load_scenarios():
        by_domain[slugify(s.domain)].append(s)
    rows: list[dict] = []
    for path in sorted(SOURCES.glob("dev_*.txt")):
        slug = ""
        for line in path.read_text().splitlines():
            if line.startswith("# "):
                slug = line[2:].strip()
            elif line.strip():
                attr, rest = line.split(":", 1)
                for i, item in enumerate(rest.split(" | ")):
                    code, question = item.strip().split(":", 1)
                    rows += expand(by_domain, slug, attr, i, STYLE[code], question.strip())
    # Generic questions an assistant asks about the person or the decision (general), one scenario each.
    templates = (SOURCES / "general_templates.txt").read_text().splitlines()
    for d, slug in enumerate(sorted(by_domain)):
        scen = by_domain[slug]
        thing = scen[0].domain
        for i, t in enumerate(x for x in templates if x.strip()):
            s = scen[(i + d) % len(scen)]
            rows.append(dict(scenario_id=s.id, question=t.format(thing=thing), expect="general", attribute=None,
                             style="direct"))
    rows.sort(key=lambda r: (r["scenario_id"], r["expect"], r["question"]))
    OUT.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
