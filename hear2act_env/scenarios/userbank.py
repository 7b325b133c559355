"""User scenario banks: new domains, built from domain files by the paper bank's generator.

A user bank is a JSONL file like the bundled one, generated from the user's
own domain content files (same format as ``hear2act_env/data/domains/``; see
``docs/new-domain.md``). The paper bank stays strict (its 48 Table 6 domains,
byte-identical on regeneration); a user domain takes a name of its own.

>>> # hear2act scenarios build --domains my_domains/ --out my_bank.jsonl
>>> # gym.make("Hear2Act-Prosody-v5", scenarios="my_bank.jsonl")

Every rule a domain file can break is reported with the file, the field and
the value (:func:`read_user_domains` reports every file's first problem, then
the rules that span files); the generated scenarios are then checked by the
same validator as the paper bank (:func:`hear2act_env.scenarios.validate.problems`
and, for banks of 100 or more scenarios, the bank-wide shortcut rules).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from .content import DomainContent, load_domain
from .errors import ScenarioError
from .model import Scenario

# `load_scenarios()` with no path (every tool's default bank) reads this file when the variable is set.
BANK_ENV = "HEAR2ACT_SCENARIOS"


def domain_files(paths: Sequence[str | Path]) -> list[Path]:
    """The ``*.json`` files named by ``paths``: files as given, folders' ``*.json`` in name order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise ScenarioError(str(path), "<folder>", "holds no *.json domain file")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(2, "No such file or folder", str(path))
    return files


def read_user_domains(paths: Sequence[str | Path]) -> tuple[list[DomainContent], list[str]]:
    """Parse every user domain file; (domains in slug order, every problem found as one line each)."""
    from .content_check import bank_problems

    domains: list[DomainContent] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    for path in domain_files(paths):
        try:
            d = load_domain(path, paper=False)
        except ScenarioError as exc:
            problems.append(str(exc))
            continue
        if d.slug in seen:
            problems.append(f"{path.name}: domain: {d.domain!r} is also the domain of {seen[d.slug].name} "
                            f"(scenario ids {d.slug}-NN would clash)")
            continue
        seen[d.slug] = path
        domains.append(d)
    problems += bank_problems(domains)
    return sorted(domains, key=lambda d: d.slug), problems


def build_user_bank(paths: Sequence[str | Path]) -> list[Scenario]:
    """The scenarios of the user domain files at ``paths``, validated; raises on the first problem.

    A ScenarioError names the file (or scenario), the field and the rule; its
    ``problems`` attribute lists every problem found.
    """
    from .generator import build_bank

    domains, problems = read_user_domains(paths)
    if not problems:
        scenarios = build_bank(domains)
        problems = [str(e) for e in scenario_problems(scenarios)]
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        exc = ScenarioError("user bank", "<domains>", f"{problems[0]}{more}")
        exc.problems = problems  # type: ignore[attr-defined]
        raise exc
    return scenarios


def scenario_problems(scenarios: list[Scenario]) -> list[ScenarioError]:
    """Every rule the generated scenarios break (the paper bank's validator, unchanged)."""
    from .validate import bank_problems, problems

    return [e for s in scenarios for e in problems(s)] or bank_problems(scenarios)


def default_bank_path() -> Path:
    """The file every tool plays when given no scenarios: ``$HEAR2ACT_SCENARIOS``, else the paper bank."""
    from .generator import BANK_FILE

    chosen = os.environ.get(BANK_ENV, "").strip()
    return Path(chosen).expanduser() if chosen else BANK_FILE


def write_user_bank(paths: Iterable[str | Path], out: str | Path) -> tuple[Path, list[Scenario]]:
    """Build from the domain files and write the JSONL bank atomically; (path, scenarios)."""
    from .generator import write_bank

    scenarios = build_user_bank(list(paths))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_bank(out, scenarios), scenarios
