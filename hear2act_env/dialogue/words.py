"""A question's words, frames and a domain's topic: what the lexical matcher and the learned router both read.

Shared by :mod:`.matching` and :mod:`.router` (neither imports the other for
these), all public: :func:`stems` (Porter2 stems of lower-cased words, set
phrases read as one word first), :func:`question_stems` (without how-phrases
about the user's own habits), :func:`frames` and :func:`about_the_user` (the
frames of :mod:`.lexicon`), the stop/weak/cost stem sets and a domain's
content file, its attributes and topic words (:func:`domain_file`, :func:`domain_attributes`,
:func:`topic_stems`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..scenarios import Scenario
from .lexicon import (
    COMPARATIVES,
    COST,
    FAMILIES,
    IDIOMS,
    OPEN_FRAME,
    OPTION_FRAME,
    PREFERENCE_FRAME,
    PROTECTED,
    STOP,
    TRADEOFF_FRAME,
    USER_FRAME,
    USER_FRAMES,
    USER_LIFE,
    WEAK,
)
from .stemmer import stem

_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
DOMAINS_DIR = Path(__file__).resolve().parent.parent / "data" / "domains"

_IDIOMS = re.compile("|".join(f"(?:{p})" for p in IDIOMS))
_IDIOM_PATTERNS = tuple((re.compile(p), w) for p, w in IDIOMS.items())


def _idiom(match: re.Match[str]) -> str:
    return next(w for p, w in _IDIOM_PATTERNS if p.fullmatch(match.group(0)))


def words(text: str) -> list[str]:
    """Lower-case words; hyphenated words also yield their parts ("carry-on" -> carry, on)."""
    text = _IDIOMS.sub(_idiom, text.lower().replace("'", "").replace("\u2019", ""))
    tokens = _TOKEN.findall(text)
    if "-" in text:
        tokens = [part for tok in tokens for part in tok.split("-")]
    return list(map(COMPARATIVES.get, tokens, tokens))


@lru_cache(maxsize=65_536)
def _stem_word(word: str) -> str:
    return word if word in PROTECTED else stem(word)


@lru_cache(maxsize=8192)
def stems(text: str) -> tuple[str, ...]:
    """The stems of :func:`words` (protected words kept whole)."""
    return tuple(map(_stem_word, words(text)))


_USER_FRAME = re.compile(USER_FRAME)
_USER_PHRASES = re.compile("|".join(USER_FRAMES))
_USER_LIFE = re.compile(USER_LIFE)
_OPTION_FRAME = re.compile(OPTION_FRAME)
_PREFERENCE_FRAME = re.compile(PREFERENCE_FRAME)
_TRADEOFF_FRAME = re.compile(TRADEOFF_FRAME)
_OPEN_FRAME = re.compile(OPEN_FRAME)


@lru_cache(maxsize=8192)
def frames(question: str) -> tuple[bool, bool, bool]:
    """(open, preference, trade-off): the frames a question is put in, read once per question."""
    text = question.lower().replace("\u2019", "'")
    return bool(_OPEN_FRAME.search(text)), bool(_PREFERENCE_FRAME.search(text)), bool(_TRADEOFF_FRAME.search(text))


@lru_cache(maxsize=8192)
def about_the_user(question: str) -> bool:
    """A question about the user's own life, history or time, not put in an option frame."""
    text = question.lower().replace("\u2019", "'")
    return bool(_USER_LIFE.search(text)) and not _OPTION_FRAME.search(text)


@lru_cache(maxsize=8192)
def question_stems(question: str) -> tuple[str, ...]:
    """A question's stems, with how-phrases about the user's own habits and plans dropped."""
    text = _USER_FRAME.sub("how", question.lower().replace("\u2019", "'"))
    return stems(_USER_PHRASES.sub(" ", text))


def normalize(text: str) -> str:
    """Lower-case, unpunctuated, stemmed words joined by single spaces."""
    return " ".join(stems(text))


STOP_STEMS = frozenset(stem(w) for w in STOP for w in words(w))
WEAK_STEMS = frozenset(stem(w) for w in WEAK for w in words(w)) - STOP_STEMS
COST_STEMS = frozenset(stem(w) for w in COST for w in words(w))
FAMILY_STEMS: tuple[frozenset[str], ...] = tuple(
    frozenset(s for w in fam for s in stems(w)) - STOP_STEMS for fam in FAMILIES
)


# -- a domain's content file and topic ----------------------------------------------------------
@lru_cache(maxsize=64)
def domain_file(domain: str) -> dict[str, Any] | None:
    """The domain's content file (for attributes this scenario lacks and topic words), if bundled."""
    return _read_domain_file(domain)


def _read_domain_file(domain: str) -> dict[str, Any] | None:
    slug = re.sub(r"[^a-z0-9]+", "-", domain.lower().replace("'", "")).strip("-")
    path = DOMAINS_DIR / f"{slug}.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# (name as written, own words: keywords, label and name, values) of one attribute of a domain's content file
DomainAttribute = tuple[Any, tuple[str, ...], tuple[str, ...]]


@lru_cache(maxsize=64)
def _domain_digest(domain: str) -> tuple[tuple[DomainAttribute, ...], tuple[str, ...]]:
    """What the matchers read from a domain's content file, read once and kept as strings in tuples (not the
    parsed file: its lists and dicts would be tracked by the garbage collector for the life of the process)."""
    data = _read_domain_file(domain)
    if data is None:
        return (), ()
    attributes = tuple(
        (raw.get("name"), tuple(str(w) for w in (*raw.get("keywords", []), raw.get("label", ""),
                                                  str(raw.get("name", "")))),
         tuple(str(v) for v in raw.get("values", [])))
        for raw in data.get("attributes", []) if isinstance(raw, dict))
    requests = tuple(str(p.get("request", "")) for p in data.get("personas", []) if isinstance(p, dict))
    return attributes, requests


def domain_attributes(domain: str) -> tuple[DomainAttribute, ...]:
    """The attributes of the domain's content file (none when it is not bundled): (name as written, own words
    (keywords, label, name), values)."""
    return _domain_digest(domain)[0]


def topic_stems(scenario: Scenario) -> frozenset[str]:
    """Words that name the domain's subject: the domain name and words common to its requests."""
    if _persona_requests(scenario.domain):  # the domain's personas, not this scenario's: once per domain
        return _domain_topic(scenario.domain)
    return _topic_from(scenario.domain, (scenario.request,))


def _persona_requests(domain: str) -> tuple[str, ...]:
    return _domain_digest(domain)[1]


@lru_cache(maxsize=64)
def _domain_topic(domain: str) -> frozenset[str]:
    return _topic_from(domain, _persona_requests(domain))


def _topic_from(domain: str, texts: tuple[str, ...]) -> frozenset[str]:
    counts: dict[str, int] = {}
    for t in texts:
        for s in set(stems(t)):
            counts[s] = counts.get(s, 0) + 1
    common = {s for s, c in counts.items() if c >= max(2, len(texts) // 4)}
    return frozenset((set(stems(domain)) | common) - STOP_STEMS)
