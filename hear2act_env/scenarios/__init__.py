"""Scenarios: the data model, the bundled bank, its generator and validator."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .errors import ScenarioError
from .generator import BANK_FILE, BANK_VERSION
from .model import Attribute, FrozenMap, Need, Option, Persona, Requirement, Scenario
from .validate import problems, read_jsonl, validate, validate_file

__all__ = [
    "BANK_FILE",
    "BANK_VERSION",
    "Attribute",
    "FrozenMap",
    "Need",
    "Option",
    "Persona",
    "Requirement",
    "Scenario",
    "ScenarioError",
    "load_scenarios",
    "problems",
    "validate",
    "validate_file",
]


@lru_cache(maxsize=4)
def _load(path: Path, mtime_ns: int) -> tuple[Scenario, ...]:
    scenarios, errors = read_jsonl(path)
    if errors:
        shown = "; ".join(str(e) for e in errors[:10])
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise ScenarioError(
            path.name, "<file>", f"{len(errors)} problem(s): {shown}{more}", line=errors[0].line
        )
    return tuple(scenarios)


def load_scenarios(path: str | Path | None = None) -> list[Scenario]:
    """Load and validate a JSONL scenario file (``None``: the bundled bank).

    Raises :class:`ScenarioError` naming the file, the first bad line and every
    problem found; an unreadable path raises ``FileNotFoundError``.
    """
    resolved = Path(BANK_FILE if path is None else path).resolve()
    return list(_load(resolved, resolved.stat().st_mtime_ns))
