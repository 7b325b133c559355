"""A reader of the observation text: what the user has said, and which options still fit it.

The discrete wrappers need "the options that fit what has been disclosed"
without looking at anything an agent cannot see. This module reads only the
``options`` and ``transcript`` text (through the public observation grammar,
:mod:`hear2act_env.protocol`: the language every user speaks) -- never a scenario's hidden fields and never
``info``. It is the reader a careful person of the transcript would be,
reduced to rules:

* **Statements.** A user turn that states something (a need, a requirement,
  a refusal reason) is split into its opener ("No, that won't work.", "Good
  question.", ...) and the statement. Each distinct statement is one
  disclosure.
* **Evidence.** A statement counts *against* an option when it is the user's
  reaction to recommending that option, the answer to a general question
  about it (the user names a need the current option misses), or the reason
  for refusing to confirm it. A directional hint after a general question and
  the safe option's drawback also count against the option.
* **Columns.** The options text lists each option's values in the same order
  (``Name: v1, v2, ..., price, rating``). A statement is about the column the
  assistant asked about (targeted question), else about the column whose
  values share the most content words with it, else, for a statement with a
  number, the numeric column whose values straddle it.
* **Fit.** An option fits a statement unless it carries a value, in the
  statement's column, that an option counted against the statement carries
  (for a number: a value on the wrong side of it). Options counted against
  any statement never fit. Only evidence rules out: a value the statement
  seems to name is not trusted ("one stop at most" names two values).

This reader is not perfect: a statement in words that share nothing with
the option values ("land during the day" vs "afternoon departure") is only
known to rule out the options it was said about. ``benchmarks/ppo_results.py``
measures its precision against the hidden fields; the wrappers never need it
to be perfect, because the macro RECOMMEND falls back to untried options in
the request's order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from hear2act_env.dialogue.actions import parse_action
from hear2act_env.dialogue.lexicon import STOP
from hear2act_env.dialogue.stemmer import stem
from hear2act_env.protocol import TURN_FORMS, parse_turn

# Category of a user turn (what the words say), in a fixed order: the observation's one-hot.
CATEGORIES = ("request", "assent", "qualified", "direct", "reject", "answer", "restate", "irrelevant", "covers",
              "safe", "hint", "refuse", "accept", "rephrase", "priority")
# Every category the grammar reads a turn as has a slot in the one-hot (checked at import, not mid-training).
_UNKNOWN = {category for category, _, _ in TURN_FORMS} - set(CATEGORIES)
if _UNKNOWN:
    raise ImportError(f"hear2act.training.reader: grammar turn categories {sorted(_UNKNOWN)} "
                      "have no slot in CATEGORIES")
# Words that count against the current option whatever the assistant did (a general question's answer too).
_AGAINST = frozenset({"reject", "qualified", "direct", "safe", "refuse"})
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z0-9]+")


def normalize(text: str) -> list[str]:
    """Lower-case words without apostrophes, stemmed by the project's one stemmer (Porter2)."""
    return [stem(t) for t in _TOKEN.findall(text.lower().replace("'", ""))]


# Words that say nothing about an option value: the stopwords (hear2act_env.dialogue.lexicon.STOP, the one list)
# and the words of wanting and judging below; stemmed like the text they are compared with.
_STOP = frozenset(w for raw in (*STOP, *"""
    important long matter matters need needs one option options want wants good nice work works prefer wed least
    since only get got go going""".split()) for w in normalize(raw))


@lru_cache(maxsize=65_536)
def _content(text: str) -> frozenset[str]:
    """Stemmed content words of a text (numbers dropped)."""
    return frozenset(w for w in normalize(text) if w not in _STOP and not w[0].isdigit())


def _number(text: str) -> float | None:
    m = _NUMBER.search(text)
    return float(m.group().replace(",", "")) if m else None


def _units(text: str) -> tuple[bool, bool]:
    """(money, percent): how the first number of a text is written."""
    m = _NUMBER.search(text)
    if m is None:
        return False, False
    return text[max(0, m.start() - 1):m.start()] == "$", text[m.end():m.end() + 1] == "%"


def split_opener(words: str) -> tuple[str, str]:
    """(category, statement) of one user turn, read by the grammar (:func:`hear2act_env.protocol.parse_turn`).

    The grammar is the one the realizer writes with, looked up at each call, so a phrase changed there is read
    here; a form naming a pool the grammar lacks is an error when the grammar is built, never an empty reading.
    """
    return parse_turn(words)


@dataclass(frozen=True)
class Options:
    """The options text as columns of values."""

    names: dict[int, str]
    values: dict[int, tuple[str, ...]]  # option number -> its values in column order

    @classmethod
    @lru_cache(maxsize=1024)  # one options text per episode, read every step (the result is never mutated)
    def parse(cls, text: str) -> Options:
        names, values = {}, {}
        for line in text.splitlines():
            number, _, rest = line.partition(". ")
            name, _, facts = rest.partition(": ")
            names[int(number)] = name
            values[int(number)] = tuple(facts.split(", "))
        width = min(len(v) for v in values.values())
        return cls(names, {n: v[:width] for n, v in values.items()})

    @property
    def numbers(self) -> list[int]:
        return sorted(self.names)

    @property
    def width(self) -> int:
        return len(next(iter(self.values.values())))

    def column(self, j: int) -> dict[int, str]:
        return {n: v[j] for n, v in self.values.items()}

    def numeric(self, j: int) -> dict[int, float] | None:
        col = {n: _number(v) for n, v in self.column(j).items()}
        return None if any(x is None for x in col.values()) else col  # type: ignore[return-value]


@dataclass
class Statement:
    """One distinct thing the user said, and the options it was said against."""

    text: str
    against: set[int] = field(default_factory=set)
    column: int | None = None  # known from a targeted question


@dataclass
class Reading:
    """Everything the reader concludes from one observation."""

    options: Options
    current: int | None
    tried: set[int]
    flagged: set[int]  # options the words have counted against
    covered: set[int]  # options the user said cover everything
    statements: list[Statement]
    category: str  # of the last user turn
    last_action: str  # recommend / ask / clarify / confirm / invalid ("recommend" for the opening)
    hint_heard: bool
    turn: int  # assistant turns so far (the opening is turn 1)
    fit: dict[int, bool]


def read(options_text: str, transcript: str, asked_columns: dict[int, int] | None = None) -> Reading:
    """Read one observation. ``asked_columns`` maps an assistant turn number to the column it asked about
    (the full action set's targeted questions; the wrapper knows what it rendered)."""
    opts = Options.parse(options_text)
    lines = transcript.splitlines()
    asked_columns = asked_columns or {}
    current: int | None = None
    tried: set[int] = set()
    flagged: set[int] = set()
    covered: set[int] = set()
    statements: dict[str, Statement] = {}
    category, last_action, hint_heard, turn = "request", "recommend", False, 0
    action = None
    for line in lines[1:]:
        if line.startswith("Assistant: "):
            turn += 1
            action = parse_action(line[len("Assistant: "):], len(opts.names))
            last_action = action.kind
            if action.kind == "recommend":
                current = action.option
                tried.add(current)  # type: ignore[arg-type]
            continue
        if not line.startswith("User: ") or action is None:
            continue
        category, text = split_opener(line[len("User: "):])
        kind = action.kind
        targeted = kind == "ask" and turn in asked_columns
        if text and category != "safe":
            st = statements.setdefault(text, Statement(text))
            if targeted:
                st.column = asked_columns[turn]
            elif current is not None and (kind in ("recommend", "confirm") or (kind == "ask" and category in (
                    "answer", "restate"))):
                st.against.add(current)
        if current is not None and not targeted:
            if category in _AGAINST or (kind == "ask" and category in ("hint", "answer", "restate")):
                flagged.add(current)
            if category == "covers":
                covered.add(current)
        hint_heard |= category == "hint"
    fit = {n: n not in flagged for n in opts.numbers}
    domain = _content(lines[0]) if lines else frozenset()
    for st in statements.values():
        for n, ok in _fits(options_text, st.text, st.column, frozenset(st.against), domain):
            fit[n] = fit[n] and ok
    return Reading(opts, current, tried, flagged, covered, list(statements.values()), category, last_action,
                   hint_heard, turn, fit)


def _numeric_column(opts: Options, st: Statement) -> int | None:
    """For a statement with a number: the numeric column whose values straddle it, the evidence on one side."""
    x = _number(st.text)
    if x is None or not st.against:
        return None
    for j in range(opts.width):
        col = opts.numeric(j)
        units = {_units(v) for v in opts.column(j).values()}
        if col is not None and units == {_units(st.text)} and min(col.values()) <= x <= max(col.values()):
            bad = [col[n] for n in st.against]
            if all(b > x for b in bad) or all(b < x for b in bad):
                return j
    return None


@lru_cache(maxsize=65_536)
def _fits(options_text: str, text: str, column: int | None, against: frozenset[int],
          domain: frozenset[str]) -> tuple[tuple[int, bool], ...]:
    """:func:`fits_statement` on hashable inputs, memoised: the same evidence is re-read every step."""
    st = Statement(text, set(against), column)
    return tuple(fits_statement(Options.parse(options_text), st, domain).items())


def statement_column(opts: Options, st: Statement, domain: frozenset[str] = frozenset()) -> int | None:
    """The column a statement is about: asked about, else a number's column, else most shared content words.

    ``domain`` holds words that say nothing about a column (the request's words: the request never states a
    hidden need, so its vocabulary is the domain's, e.g. "home", "ticket").
    """
    if st.column is not None:
        return st.column
    j = _numeric_column(opts, st)
    if j is not None:
        return j
    words = _content(st.text) - domain
    best, best_score = None, 0
    for j in range(opts.width):
        values = set(opts.column(j).values())
        if len(values) < 2:
            continue
        score = max(len(words & _content(v)) for v in values)
        if score > best_score:
            best, best_score = j, score
    return best


def fits_statement(opts: Options, st: Statement, domain: frozenset[str] = frozenset()) -> dict[int, bool]:
    """Which options can meet one statement, from the evidence the transcript holds.

    Only evidence rules an option out (a value an option the statement was said against carries); values the
    statement seems to name are not trusted ("one stop at most" names "one stop" and "two stops").
    """
    fit = {n: n not in st.against for n in opts.numbers}
    j = statement_column(opts, st, domain)
    if j is None or not st.against:
        return fit
    col = opts.column(j)
    numeric = opts.numeric(j)
    x = _number(st.text)
    if st.column is None and j == _numeric_column(opts, st) and numeric is not None and x is not None:
        above = all(numeric[n] > x for n in st.against)
        return {n: fit[n] and (numeric[n] <= x if above else numeric[n] >= x) for n in opts.numbers}
    bad = {col[n] for n in st.against}
    return {n: fit[n] and col[n] not in bad for n in opts.numbers}
