"""Text-quality checks shared by the content checker, validator and tests."""

from __future__ import annotations

import re

# Things that betray a template or an unfinished draft in user-facing text.
_ARTEFACTS = (
    (re.compile(r"[{}<>\[\]]"), "contains a bracket or brace"),
    (re.compile(r"\b(TODO|TBD|FIXME|XXX|lorem|ipsum|N/A|None|null|undefined|placeholder)\b", re.I),
     "contains a placeholder word"),
    (re.compile(r"\s{2,}"), "contains a double space"),
    (re.compile(r"^\s|\s$"), "has leading or trailing whitespace"),
    (re.compile(r"\$\s*\d+\.\d{3,}"), "has a badly formatted amount"),
    (re.compile(r"\b(\w+) \1\b", re.I), "repeats a word"),
)


def artefacts(text: str) -> list[str]:
    """Human-readable problems found in one user-facing text (empty when clean)."""
    found = [f"{why}: {text!r}" for pattern, why in _ARTEFACTS if pattern.search(text)]
    if not text.strip():
        found.append("is empty")
    return found


# The safe option's drawback is its own (PROTOCOL.md): the words never compare it
# with other options, which would tell the agent a better full fit exists.
_COMPARES = re.compile(r"\b(other|others|another|alternatives?|options?|the rest)\b|\bone that\b", re.I)


def compares_options(text: str) -> bool:
    """True when a drawback text refers to other options ("than the other one that works")."""
    return bool(_COMPARES.search(text))


_BARE_ANSWERS = frozenset({"yes", "no", "y", "n", "yeah", "nope", "yep"})


def is_bare_answer(text: str) -> bool:
    """A bare yes/no: never a keyword or a value (any reply would match it)."""
    return re.sub(r"[^a-z]", "", text.lower()) in _BARE_ANSWERS
