"""Is an ASK question *targeted* at an attribute? Robust keyword matching.

A question is targeted at an attribute when one of the attribute's phrases
(its keywords, label and values, and for a need attribute the need's own
keywords) occurs in it as a contiguous run of words, after lower-casing,
dropping punctuation and light stemming (plurals, -ing, -ed). So "Do you mind
layovers?" matches the keyword "layover" and "Any time-of-day preference?"
matches "time of day". When several attributes match, the one whose matched
phrases cover the most words wins; ties go to the higher-priority need, then
visible, then distractor attributes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..scenarios import Scenario

# Single words too generic to make a question targeted on their own.
GENERIC = frozenset(
    """
    a an and any anything are be can do does else for have how i if important in is it like
    long matter matters me more much my need needs of on one option options or other that the
    there this to want what when which will with would you your good work works
    """.split()
)
_TOKEN = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A deliberately small stemmer, consistent across inflections of one word.

    Plural first, then -ing/-ed, then a final -e, so "rate", "rates", "rated",
    "rating" and "ratings" all become "rat", and "change"/"changed"/"changing"
    become "chang".
    """
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes", "uses")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def normalize(text: str) -> str:
    """Lower-case, unpunctuated, stemmed words joined by single spaces."""
    return " ".join(stem(t) for t in _TOKEN.findall(text.lower().replace("'", "")))


@dataclass(frozen=True)
class Target:
    attribute: str
    kind: str  # need / visible / distractor
    level: int | None  # need level when kind == "need"


@lru_cache(maxsize=1024)
def _phrases(scenario: Scenario) -> tuple[tuple[str, int, Target], ...]:
    """(normalized phrase, word count, target) for every attribute phrase."""
    levels = {n.attribute: n for n in scenario.needs}
    out = []
    for a in scenario.attributes:
        need = levels.get(a.name)
        target = Target(a.name, a.kind, need.level if need else None)
        raw = [*a.keywords, a.label, a.name.replace("_", " "), *a.values]
        if need is not None:
            raw += list(need.keywords)
        for phrase in {normalize(p) for p in raw}:
            if phrase and not (" " not in phrase and phrase in GENERIC):
                out.append((phrase, phrase.count(" ") + 1, target))
    return tuple(out)


_KIND_RANK = {"need": 0, "visible": 1, "distractor": 2}


def match_question(scenario: Scenario, question: str) -> Target | None:
    """The attribute a question is targeted at, or ``None`` for a general question."""
    text = f" {normalize(question)} "
    scores: dict[Target, int] = {}
    for phrase, words, target in _phrases(scenario):
        if f" {phrase} " in text:
            scores[target] = scores.get(target, 0) + words
    if not scores:
        return None
    return min(
        scores,
        key=lambda t: (-scores[t], _KIND_RANK[t.kind], t.level or 0, t.attribute),
    )
