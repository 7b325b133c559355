"""Text-quality checks shared by the content checker, validator and tests."""

from __future__ import annotations

import re

from ..dialogue.lexicon import STOP
from ..dialogue.stemmer import stem

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


# -- does a text state a hidden need? ------------------------------------------------
# Lower-case words, Porter2-stemmed (:func:`hear2act_env.dialogue.stemmer.stem`, the project's one stemmer),
# so "PTSD", "photos"/"photo", "backpacking"/"backpack", "inherited"/"inheritance" meet. Single words too generic
# to name a need on their own never count: the stopwords (:data:`hear2act_env.dialogue.lexicon.STOP`, the one
# list) and the generic words below.
_WORD = re.compile(r"[a-z0-9]+")
_GENERIC = STOP | frozenset(
    """
    important long matter matters need needs one option options want good work works get make take go new best
    """.split()
    # Units of a visible bound ("$150 an hour", "$11 a serving"): part of the request's numbers.
    + """hour day week month year night visit serving session person head ticket shipment mile""".split()
)


def words(text: str) -> str:
    """Normalised words joined by spaces, padded so phrases match on word boundaries."""
    return " " + " ".join(stem(w) for w in _WORD.findall(text.lower().replace("'", " "))) + " "


def phrases_in(text: str, phrases: list[str] | tuple[str, ...]) -> list[str]:
    """The phrases (keywords, values) that occur in ``text`` as whole words, generic words excepted."""
    norm = words(text)
    found = []
    for phrase in phrases:
        p = words(phrase).strip()
        if p and not (" " not in p and p in _GENERIC_STEMS) and f" {p} " in norm:
            found.append(phrase)
    return found


_GENERIC_STEMS = frozenset(stem(w) for w in _GENERIC)


# How a request words a numeric bound (PROTOCOL.md "Scenario": words of a bound mean
# what they say). Before the number: "under $200", "at least 4.5"; after it: "$90 or less".
_STRICT_BEFORE = re.compile(
    r"\b(under|below|less than|fewer than|over|above|more than|cheaper than|lower than|higher than|"
    r"greater than|better than)\s+(?:\S+\s+)?$", re.I)
_INCLUSIVE_BEFORE = re.compile(
    r"\b(at most|no more than|up to|at least|no less than|within|max(?:imum)?|minimum|not over|"
    r"not more than|capped at|limit is|ceiling|go past|go over|go above)\s+(?:\S+\s+)?$", re.I)
_INCLUSIVE_AFTER = re.compile(
    r"^\S*(?:\s+\S+){0,3}?\s+(or less|or under|or lower|or below|or more|or higher|or better|or above|"
    r"or cheaper|tops|at most|at the most|max|as my ceiling|or so)\b", re.I)
_AMOUNT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(k\b)?", re.I)


def bound_words(request: str, value: float) -> str | None:
    """How the request words the bound on ``value``: ``"strict"``, ``"inclusive"`` or None.

    The first occurrence of the number in the request decides; None when the number
    is absent or no bound word stands next to it ("I only have $200").

    >>> bound_words("What's the cheapest flight under $200?", 200)
    'strict'
    >>> bound_words("Which is the best-rated one at $150 or less per shipment?", 150)
    'inclusive'
    >>> bound_words("rated at least 4.2, under $1,200", 4.2), bound_words("rated at least 4.2, under $1,200", 1200)
    ('inclusive', 'strict')
    >>> bound_words("I only have $200.", 200) is None
    True
    """
    for m in _AMOUNT.finditer(request):
        number = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
        if abs(number - value) > 1e-9:
            continue
        before = request[max(0, m.start() - 40): m.start()].rstrip("$ ")
        before = before + " " if before else before
        after = request[m.start(): m.start() + 48]
        if _INCLUSIVE_AFTER.search(after) or _INCLUSIVE_BEFORE.search(before):
            return "inclusive"
        if _STRICT_BEFORE.search(before):
            return "strict"
        return None
    return None


# -- does the request state the premise behind a hidden need? ------------------------
# The assistant sees the request, never the persona: a content word the request shares
# with a need's statement or hint ("with our toddler" and "my toddler climbs stairs")
# hands the assistant the reason for the need. Function words (the stopwords, through
# _GENERIC), everyday words, day and number words and the domain's own topic words never count.
_PREMISE_GENERIC = frozenset(
    """
    short time times early late big small large size great high higher low lower free extra plan keep use using
    used working home people family find look looking right left top side level amount number enough least part
    whole main basic standard regular simple total overall type style place around near far away back ahead next
    pay paid spend cost price money fee fees charge cheap cheapest expensive budget afford save feel think know
    love hate mind worry worried bother comfortable happy sit stay live come someone everyone everything support
    feature features mostly usually certain specific particular fit give now run see anymore turn show check buy
    build handle job company business product local hard soon last say said one two three four five six seven
    eight nine ten eleven twelve twenty thirty forty fifty sixty got planned planning first every only old start
    help since going getting making taking weekend weekends tonight today tomorrow monday tuesday wednesday
    thursday friday saturday sunday spring summer fall winter january february march april may june july august
    september october november december minute minutes hours days weeks months years rated rating reviews
    don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn
    """.split()
)
_PREMISE_STOP = _GENERIC_STEMS | frozenset(stem(w) for w in _PREMISE_GENERIC)


def content_stems(text: str) -> frozenset[str]:
    """The stems of ``text`` that can carry a premise (generic words, numbers, short words excepted)."""
    found = {stem(w) for w in _WORD.findall(text.lower().replace("'", " "))}
    return frozenset(s for s in found if len(s) > 2 and not s.isdigit() and s not in _PREMISE_STOP)


def shared_premise(request: str, need_text: str, topic: frozenset[str] = frozenset()) -> list[str]:
    """The content stems a request shares with a need's statement and hint, topic words excepted.

    >>> shared_premise("A week at the beach with our toddler, under $250 a night?",
    ...                "My toddler climbs everything, so the stairs need gates.")
    ['toddler']
    >>> shared_premise("The cheapest rental under $250 a night?", "My toddler climbs everything.")
    []
    """
    return sorted((content_stems(request) & content_stems(need_text)) - topic)
