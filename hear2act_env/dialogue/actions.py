"""Parsing assistant turns in the paper's text format (card P6a, plus CLARIFY).

``[ACTION: RECOMMEND] [OPTION: 3] How about ...?``, ``[ACTION: ASK] ...``,
``[ACTION: CLARIFY] ...``, ``[ACTION: CONFIRM] ...``. The parser never raises:
anything it cannot read becomes an ``invalid`` action whose ``error`` says why,
in a few words (a hostile input is never echoed in full).

The grammar (published in docs/protocol-choices.md, "Reading an action"):

1. **Scope.** ``<think>...</think>`` blocks are never read (an unclosed one
   hides the rest of the reply; a leading ``...</think>`` with no opening
   tag is reasoning too). If the reply holds an ``<answer>`` block, only
   the last one is read (an unclosed one runs to the end); otherwise the whole
   reply is read.
2. **The tag is the action.** A tag is ``[`` ``ACTION`` an optional ``:``,
   ``=`` or ``-`` a kind ``]``, where the kind is RECOMMEND, ASK, CLARIFY or
   CONFIRM as a whole word. Case, whitespace and markdown emphasis
   (``*``, ``_``, backticks) inside or around the brackets are tolerated. A
   tag enclosed in quotation marks (``"[ACTION: X]"``, ``'...'``, curly
   quotes) is a mention, not a tag.
3. **Several tags: the last one counts**, and ``Action.note`` records how many
   tags were seen (the env copies it to ``info["action_note"]``).
4. **Fallback, only when the scope holds no tag:** a line that *starts*
   with the label ``Action:`` (markdown emphasis, ``#``, ``>``, ``-`` allowed
   before it) followed by a kind word, e.g. ``**Action:** ASK``. The last
   such line counts. Nothing else makes an action: prose words ("take
   action: confirm", "reaction: ask", "best action = recommend option 5")
   never do.
5. **After the tag.** RECOMMEND needs an option right after it:
   ``[OPTION: n]`` (brackets, ``:``/``=``/``#``/``no.``/``number`` optional),
   ``n`` an ASCII integer in range (``3``, ``03``; ``3.5``, ``1e1``, ``٣`` or
   ``３`` are not numbers). The utterance is the text after the tag (and
   option) to the end of the scope; ASK needs a non-empty one.

Parsing is linear in the length of the input: every repetition in the
patterns is possessive (``*+``), tags are only tried where a ``[`` stands and
the fallback only at line starts, so nothing is rescanned; a 1 MB reply is
parsed in a few milliseconds (``benchmarks/parser.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("recommend", "ask", "clarify", "confirm")
INVALID = "invalid"

_D = r"[\s*_`]*+"  # whitespace and markdown emphasis, never given back
# Keywords match ASCII letters in any case, and only those ("actıon" with a dotless i is no tag).
_KIND = r"(?ai:(recommend|ask|clarify|confirm))(?![A-Za-z0-9]|_[A-Za-z0-9])"
_REST = rf"{_D}(?ai:action){_D}(?:[:=\-]{_D})?{_KIND}{_D}\]"  # a tag after its "["
_BODY = rf"\[{_REST}"
_OPEN_QUOTES = "\"'\u201c\u2018\u00ab"
_CLOSE_QUOTES = "\"'\u201d\u2019\u00bb"
_QUOTED = re.compile(rf"[{_OPEN_QUOTES}]{_BODY}[{_CLOSE_QUOTES}]")
_UNQUOTED_REST = rf"(?:(?<=[{_OPEN_QUOTES}]\[){_REST}(?![{_CLOSE_QUOTES}])|(?<![{_OPEN_QUOTES}]\[){_REST})"
_UNQUOTED = re.compile(rf"\[{_UNQUOTED_REST}")
# A greedy run to the end, given back (by sre's literal fast path) to each "[" in turn, finds the LAST
# tag in one pass; the "[" must follow ".*" directly for that fast path. Group 1 (or 2) is the kind.
_LAST_TAG = re.compile(rf"(?s:.*)\[{_REST}")
_LAST_UNQUOTED = re.compile(rf"(?s:.*)\[{_UNQUOTED_REST}")
# The fallback: "Action:" as a label at the start of a line (the last one: after the last "\n" that starts one).
_LABEL_LINE = rf"[ \t>#\-*_`]*+(?ai:action){_D}[:=]{_D}{_KIND}"
_LABEL = re.compile(rf"(?:^|(?<=\n)){_LABEL_LINE}")
_LAST_LABEL = re.compile(rf"(?s:.*)\n{_LABEL_LINE}")
_FIRST_LABEL = re.compile(_LABEL_LINE)
# The option label, then the token that should be its number (everything up to a space or "]").
_OPTION = re.compile(
    rf"{_D}\[?{_D}(?ai:option){_D}(?:[:=#\-]|(?ai:no)\.?|(?ai:number))?{_D}#?{_D}([^\s\]]*+){_D}\]?"
)
_NUMBER = re.compile(r"(-?)([0-9]++)[.,;:)!?]?")  # ASCII digits; one trailing punctuation mark allowed
_THINK_BLOCK = re.compile(r"(?ai:<think>)(?s:.*?)(?ai:</think>)")  # only run where every block is closed
_LAST_THINK_CLOSE = re.compile(r"(?s:.*)(?ai:</think>)")
_FIRST_THINK_OPEN = re.compile(r"(?ai:<think>)")
_FIRST_THINK_CLOSE = re.compile(r"(?ai:</think>)")
_LAST_ANSWER = re.compile(r"(?s:.*)(?ai:<answer>)")
_ANSWER_CLOSE = re.compile(r"(?ai:</answer>)")
_EMPHASIS = "*_` \t\r\n"
_COUNTED = 10  # tags counted exactly in a note; more are "more than 10"
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
    note: str = ""  # how the action was read when that was not unambiguous (several tags, fallback)

    @property
    def valid(self) -> bool:
        return self.kind != INVALID


def parse_action(raw: object, n_options: int = 11) -> Action:
    """Parse one assistant output by the grammar above; never raises, linear time in ``len(raw)``."""
    if not isinstance(raw, str):
        return Action(INVALID, error=f"action must be a string, got {type(raw).__name__}")
    scope = _scope(raw)
    # Every tag and label holds the ASCII word "action"; lower() never makes it from other letters.
    if "action" not in scope.lower():
        return _no_action(scope)
    notes = []
    last = _LAST_TAG.match(scope)
    if last is not None and _is_quoted(scope, _tag_start(scope, last), last.end()):
        notes.append("quoted tags ignored")
        last = _LAST_UNQUOTED.match(scope, 0, _tag_start(scope, last))
    if last is None:
        return _fallback(scope, n_options)
    kind = next(g for g in last.groups() if g is not None).lower()
    start = _tag_start(scope, last)
    if _UNQUOTED.search(scope, 0, start) is not None:
        notes.insert(0, f"{_count(_UNQUOTED, scope)} action tags; the last counts")
    if not notes and any(q in scope for q in _OPEN_QUOTES) and _QUOTED.search(scope, 0, start):
        notes.append("quoted tags ignored")
    return _after_tag(kind, scope[last.end():], n_options, "; ".join(notes))


def _tag_start(scope: str, m: re.Match[str]) -> int:
    """Where the tag that ``m`` (a ``_LAST_*`` match, which starts at 0) ends with begins: its "["."""
    kind = next(i for i in range(1, len(m.groups()) + 1) if m.group(i) is not None)
    return scope.rfind("[", 0, m.start(kind))  # only emphasis, "action" and a separator lie between


def _is_quoted(scope: str, start: int, end: int) -> bool:
    """Whether the tag ``scope[start:end]`` stands between quotation marks."""
    return start > 0 and end < len(scope) and scope[start - 1] in _OPEN_QUOTES and scope[end] in _CLOSE_QUOTES


def _no_action(scope: str) -> Action:
    return Action(INVALID, _clip(scope), error="no [ACTION: RECOMMEND|ASK|CLARIFY|CONFIRM] tag found")


def _scope(raw: str) -> str:
    """The part of a reply the grammar reads: think blocks removed, the last answer block if any.

    ``lower()`` only decides whether to look (it is cheap); a match it suggests may not exist (U+212A, the
    Kelvin sign, lowers to an ASCII "k"), so every search result is checked.
    """
    close = _FIRST_THINK_CLOSE.search(raw) if "</think>" in raw.lower() else None
    if close is not None and _FIRST_THINK_OPEN.search(raw, 0, close.start()) is None:
        raw = raw[close.end():]  # "R</think> A": the chat template opened the think block
    if "<think>" in raw.lower():
        last_close = _LAST_THINK_CLOSE.match(raw)
        head, tail = (raw[:last_close.end()], raw[last_close.end():]) if last_close else ("", raw)
        # Every <think> in head has a </think> after it, so each lazy scan ends and none is rescanned.
        head = _THINK_BLOCK.sub(" ", head)
        opened = _FIRST_THINK_OPEN.search(tail)
        raw = head + (tail[:opened.start()] if opened is not None else tail)  # an unclosed block hides the rest
    last = _LAST_ANSWER.match(raw) if "<answer>" in raw.lower() else None
    if last is None:
        return raw
    close = _ANSWER_CLOSE.search(raw, last.end())
    return raw[last.end(): close.start() if close is not None else len(raw)]


def _count(pattern: re.Pattern[str], text: str) -> str:
    n = sum(1 for _ in zip(range(_COUNTED + 1), pattern.finditer(text), strict=False))
    return f"more than {_COUNTED}" if n > _COUNTED else str(n)


def _fallback(scope: str, n_options: int) -> Action:
    """Rule 4: the last line that starts with the label ``Action:`` and a kind."""
    last = _LAST_LABEL.match(scope) or _FIRST_LABEL.match(scope)
    if last is None:
        return _no_action(scope)
    note = "read from an 'Action:' line (no bracketed tag)"
    line_start = scope.rfind("\n", 0, last.start(1)) + 1
    if _LABEL.search(scope, 0, line_start) is not None:
        note += f"; {_count(_LABEL, scope)} such lines, the last counts"
    return _after_tag(last.group(1).lower(), scope[last.end():], n_options, note)


def _after_tag(kind: str, rest: str, n_options: int, note: str) -> Action:
    if kind == "recommend":
        om = _OPTION.match(rest)
        if om is None:
            return Action(INVALID, _clip(rest), error="RECOMMEND needs [OPTION: n]", note=note)
        text = _clip(rest[om.end():])
        token = om.group(1).strip("*_`")
        number = _option_number(token)
        if number is None:
            return Action(INVALID, text, note=note,
                          error=f"RECOMMEND needs [OPTION: n] with n a whole number, got {_quote(token)}")
        if not 1 <= number <= n_options:
            return Action(INVALID, text, error=f"option {_quote(token)} out of range 1..{n_options}", note=note)
        return Action(kind, text, option=number, note=note)
    text = _clip(rest)
    if kind == "ask" and not text:
        return Action(INVALID, error="ASK needs a question", note=note)
    return Action(kind, text, note=note)


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
    """Whitespace collapsed, leading emphasis marks dropped, at most ``_MAX_TEXT`` characters.

    Only a bounded prefix is split (linear in the input, cheap for a 1 MB string).
    """
    words = text.split(maxsplit=_MAX_TEXT)
    if len(words) > _MAX_TEXT:  # the unsplit remainder lies past the kept prefix anyway
        words.pop()
    return " ".join(words)[:_MAX_TEXT].lstrip(_EMPHASIS)
