"""Check domain content files: ``python -m hear2act_env.scenarios.content_check FILE...``.

With no arguments, checks every bundled domain file and the bank-wide rules
(distinct requests and need statements, no template artefacts).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from .content import DOMAINS_DIR, DomainContent, load_domain
from .errors import ScenarioError
from .quality import artefacts, phrases_in
from .validate import need_phrases


def bank_problems(domains: list[DomainContent]) -> list[str]:
    """Rules that span files: duplicates across the bank, artefacts in any text."""
    problems = []
    requests = Counter(p.request for d in domains for p in d.personas)
    statements = Counter(n.statement for d in domains for p in d.personas for n in p.needs)
    problems += [f"request used more than once: {t!r}" for t, k in requests.items() if k > 1]
    problems += [f"need statement used more than once: {t!r}" for t, k in statements.items() if k > 1]
    for d in domains:
        texts = [*d.names, *(a.label for a in d.attributes), *(v for a in d.attributes for v in a.values)]
        for p in d.personas:
            texts += [p.persona.situation, p.request, *(r.statement for r in p.requirements)]
            texts += [t for n in p.needs for t in (n.statement, n.hint) if t]
        problems += [f"{d.slug}: {msg}" for t in texts for msg in artefacts(t)]
        for i, p in enumerate(d.personas):
            for n in p.needs:
                found = phrases_in(p.request, need_phrases(n, d.attribute(n.attribute)))
                if found:
                    problems.append(f"{d.slug}: personas[{i}].request states hidden need L{n.level} through {found}")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or sorted(DOMAINS_DIR.glob("*.json"))
    domains, failed = [], 0
    for path in paths:
        try:
            domains.append(load_domain(path))
        except ScenarioError as exc:
            failed += 1
            print(f"FAIL {exc}")
    problems = bank_problems(domains)
    for msg in problems:
        print(f"FAIL {msg}")
    print(f"{len(domains)} domain file(s) ok, {failed + len(problems)} problem(s)")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
