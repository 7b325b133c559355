"""Parsing assistant turns in the paper's text format (card P6a, plus CLARIFY).

``[ACTION: RECOMMEND] [OPTION: 3] How about ...?``, ``[ACTION: ASK] ...``,
``[ACTION: CLARIFY] ...``, ``[ACTION: CONFIRM] ...``. The parser is tolerant
of case, spacing, missing brackets and a preamble before the tag, and never
raises: anything it cannot read becomes an ``invalid`` action whose
``error`` says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("recommend", "ask", "clarify", "confirm")
INVALID = "invalid"

_ACTION = re.compile(
    r"\[?\s*action\s*[:=\-]?\s*(recommend|ask|clarify|confirm)\b\s*\]?", re.IGNORECASE
)
_OPTION = re.compile(r"^\s*\[?\s*option\s*(?:[:=#\-]|no\.?|number)?\s*#?\s*(-?\d+)\s*\]?", re.IGNORECASE)
_MAX_TEXT = 2000


@dataclass(frozen=True)
class Action:
    """One parsed assistant turn."""

    kind: str  # one of KINDS, or "invalid"
    text: str = ""  # the utterance after the tags
    option: int | None = None  # RECOMMEND only
    error: str = ""  # why the turn is invalid (empty when valid)

    @property
    def valid(self) -> bool:
        return self.kind != INVALID


def parse_action(raw: object, n_options: int = 11) -> Action:
    """Parse one assistant output; never raises."""
    if not isinstance(raw, str):
        return Action(INVALID, error=f"action must be a string, got {type(raw).__name__}")
    m = _ACTION.search(raw)
    if m is None:
        return Action(INVALID, _clip(raw), error="no [ACTION: RECOMMEND|ASK|CLARIFY|CONFIRM] tag found")
    kind = m.group(1).lower()
    rest = raw[m.end():]
    if kind == "recommend":
        om = _OPTION.match(rest)
        if om is None:
            return Action(INVALID, _clip(rest), error="RECOMMEND needs [OPTION: n]")
        number = int(om.group(1)) if len(om.group(1)) < 6 else -1
        text = _clip(rest[om.end():])
        if not 1 <= number <= n_options:
            return Action(INVALID, text, error=f"option {om.group(1)} out of range 1..{n_options}")
        return Action(kind, text, option=number)
    text = _clip(rest)
    if kind == "ask" and not text:
        return Action(INVALID, error="ASK needs a question")
    return Action(kind, text)


def format_action(kind: str, text: str = "", option: int | None = None) -> str:
    """The canonical text form of an action (what agents should emit)."""
    tag = f"[ACTION: {kind.upper()}]"
    if kind == "recommend":
        tag += f" [OPTION: {option}]"
    return f"{tag} {text}".strip()


def _clip(text: str) -> str:
    return " ".join(text.split())[:_MAX_TEXT]
