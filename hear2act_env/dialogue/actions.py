"""Parsing assistant turns in the paper's text format (card P6a, plus CLARIFY).

``[ACTION: RECOMMEND] [OPTION: 3] How about ...?``, ``[ACTION: ASK] ...``,
``[ACTION: CLARIFY] ...``, ``[ACTION: CONFIRM] ...``. The parser is tolerant
of case, spacing, missing brackets and a preamble before the tag, and never
raises: anything it cannot read becomes an ``invalid`` action whose
``error`` says why, in a few words (a hostile input is never echoed in full).

Parsing is linear in the length of the input: every repetition in the
patterns is possessive (``*+``), so no run of spaces or digits is rescanned,
and a 1 MB string is parsed in about a millisecond. An option number is an
ASCII integer only (``3``, ``03``); ``3.5``, ``1e1``, ``٣`` or ``３`` are
invalid actions, not option 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("recommend", "ask", "clarify", "confirm")
INVALID = "invalid"

# The tag is searched from the word "action", so a long preamble costs one pass;
# the possessive quantifiers never give back what they matched (no backtracking).
_ACTION = re.compile(r"action\s*+(?:[:=\-]\s*+)?(recommend|ask|clarify|confirm)\b\s*+\]?", re.IGNORECASE)
# The option label, then the token that should be its number (everything up to a space or "]").
_OPTION = re.compile(
    r"\s*+\[?\s*+option\s*+(?:[:=#\-]|no\.?|number)?\s*+#?\s*+([^\s\]]*+)\s*+\]?", re.IGNORECASE
)
_NUMBER = re.compile(r"(-?)([0-9]++)[.,;:)!?]?")  # ASCII digits; one trailing punctuation mark allowed
_MAX_TEXT = 2000
_MAX_DIGITS = 6  # longer (after leading zeros) is out of range without converting it
_SHOWN = 12  # characters of an offending token quoted in an error


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
    """Parse one assistant output; never raises, linear time in ``len(raw)``."""
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
        text = _clip(rest[om.end():])
        token = om.group(1)
        number = _option_number(token)
        if number is None:
            return Action(
                INVALID, text, error=f"RECOMMEND needs [OPTION: n] with n a whole number, got {_quote(token)}"
            )
        if not 1 <= number <= n_options:
            return Action(INVALID, text, error=f"option {_quote(token)} out of range 1..{n_options}")
        return Action(kind, text, option=number)
    text = _clip(rest)
    if kind == "ask" and not text:
        return Action(INVALID, error="ASK needs a question")
    return Action(kind, text)


def _option_number(token: str) -> int | None:
    """The value of an ASCII integer token; -1 for one too long to be an option; None if not an integer."""
    m = _NUMBER.fullmatch(token)
    if m is None:
        return None
    digits = m.group(2).lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        return -1
    return -int(digits) if m.group(1) else int(digits)


def _quote(token: str) -> str:
    """A short, printable rendering of an offending token (never the whole of a hostile input)."""
    if not token:
        return "nothing"
    shown = token if len(token) <= _SHOWN else token[:_SHOWN] + f"... ({len(token)} characters)"
    return ascii(shown) if not shown.isascii() or not shown.isprintable() else repr(shown)


def format_action(kind: str, text: str = "", option: int | None = None) -> str:
    """The canonical text form of an action (what agents should emit)."""
    tag = f"[ACTION: {kind.upper()}]"
    if kind == "recommend":
        tag += f" [OPTION: {option}]"
    return f"{tag} {text}".strip()


def _clip(text: str) -> str:
    """Whitespace collapsed, at most ``_MAX_TEXT`` characters; only a bounded prefix is split."""
    words = text.split(maxsplit=_MAX_TEXT)
    if len(words) > _MAX_TEXT:  # the unsplit remainder lies past the kept prefix anyway
        words.pop()
    return " ".join(words)[:_MAX_TEXT]
