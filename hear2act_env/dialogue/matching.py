"""Is an ASK question *targeted* at an attribute? Weighted phrase matching over per-scenario tables.

Routing decides what the user engine answers, so every evaluation depends on
it. The default matcher is deterministic, dependency-free and fast:

1. **Words.** A question is lower-cased, split into words and each word
   reduced by the Porter2 stemmer (:mod:`.stemmer`), so "layovers",
   "cancelled" and "rebooking" meet "layover", "cancel" and "rebook".
2. **Phrases.** Each attribute of the scenario owns phrases: its name, label,
   keywords and values (whole, and their single words at lower weight) and
   a need's keywords; the concept families of :mod:`.lexicon` its words
   belong to add shared synonyms. (A need's statement words can be given a
   weight too, ``STATEMENT_WEIGHT``; off, as on the development set they
   made more general questions targeted than they won.) A phrase matches
   as a contiguous run of words. Its weight is the sum of its words' weights
   (stop words 0, weak words 0.5, others 1) with a bonus for multi-word
   phrases; words that are the domain's topic ("flight" in airline tickets)
   count little when they come from a value or a statement.
3. **Decision.** An attribute is targeted when its matched weight reaches
   ``THRESHOLD``: a single weak word is not enough, and how-phrases about
   the user's own plans are dropped first ("How long do you plan to keep
   it?" is general). A word several attributes claim without owning it is
   shared among them. The **trade-off rule**: next to another attribute,
   cost words ("pay more for") say what the user would give up, so they do
   not count for a numeric visible attribute (price), and the other
   attribute needs only ``TRADEOFF_THRESHOLD`` ("Would you pay more for a
   nonstop flight?" is about stops).
   Otherwise the highest weight wins; ties go to the higher-priority need,
   then visible, then distractor attributes. Words of an attribute the domain
   has but this scenario lacks can claim a question too; such a question is
   general.
4. **Frames** (regular expressions in :mod:`.lexicon`) set how much evidence
   is needed. A question about the user's own life, history or time outside
   an option frame is general (:func:`about_the_user`: "How many hours a week
   do you drive?", "Did you file last year?"; "Did you want a nonstop flight?"
   is not). An open question ("anything else?", "what matters most?") needs
   ``OPEN_THRESHOLD``. A preference frame ("Do you have a preference on how
   the tickets get to you?") is about an attribute by its form, so
   ``PREFERENCE_THRESHOLD`` is enough. In a trade-off frame ("worth paying a
   higher fee") a numeric visible attribute (price) is never the target when
   another attribute reaches ``TRADEOFF_THRESHOLD``. Set phrases are read as
   one word first ("up front" -> upfront, "after work" -> evening).

Tables are compiled once per scenario object (:func:`table_for`) and reused
for every question; an attribute's phrases from its own words and values,
and the domain's topic words, are computed once and shared by the scenarios
that have the same attribute (:func:`_target_phrases`), so a scenario adds
only its needs' statement words and the sharing rule; a question's words are
stemmed through an LRU cache.
Words, frames and a domain's topic come from :mod:`.words` (shared with the
learned router); the matcher registry (``MATCHERS``, ``resolve_matcher``) is
:mod:`.matchers`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..scenarios import Scenario
from .stemmer import stem
from .words import (
    COST_STEMS,
    FAMILY_STEMS,
    STOP_STEMS,
    WEAK_STEMS,
    about_the_user,
    domain_file,
    frames,
    normalize,
    question_stems,
    topic_stems,
)
from .words import stems as text_stems

__all__ = ["Matcher", "Table", "Target", "about_the_user", "decide", "match_question", "normalize", "raw_scores",
           "scores", "stem", "table_for"]

THRESHOLD = 0.8  # matched weight that makes a question targeted
PREFERENCE_THRESHOLD = 0.3  # in a preference frame ("any preference on how ..."), a weaker match names the attribute
OPEN_THRESHOLD = 2.0  # an open question ("anything else?", "what matters most?") must name an attribute fully
TRADEOFF_THRESHOLD = 0.5  # next to a cost word ("pay more for ..."), what the trade-off is about
WEAK_WEIGHT = 0.5
PHRASE_BONUS = 0.5  # per extra content word in a multi-word phrase
STATEMENT_WEIGHT = 0.0  # a content word of a need's statement or hint (off: on the dev set it cost
# more general questions than it won targeted ones)
TOPIC_WEIGHT = 0.25  # a domain-topic word inside a value or statement
SECONDARY_FACTOR = 0.5
SOLE_WEAK_WEIGHT = 0.75  # a weak keyword only one attribute owns: more than weak, still not alone
VALUE_WORD_WEIGHT = 0.7  # one word out of a value ("mobile" from "instant mobile transfer")
SHARE_POWER = 1.0  # a word k attributes claim (none owning it) weighs 1/k**SHARE_POWER for each
OWNER_SHARE_POWER = 0.0  # owners keep their word whole: a question naming it is targeted
_KIND_RANK = {"need": 0, "visible": 1, "distractor": 2, "absent": 3}


@dataclass(frozen=True)
class Target:
    attribute: str
    kind: str  # need / visible / distractor
    level: int | None  # need level when kind == "need"


def _word_weight(s: str, strong_cost: bool) -> float:
    if s in STOP_STEMS:
        return 0.0
    if s in WEAK_STEMS and not (strong_cost and s in COST_STEMS):
        return WEAK_WEIGHT
    return 1.0


@lru_cache(maxsize=65_536)
def _is_cost(stems: tuple[str, ...]) -> bool:
    """A phrase that only talks about cost ("pay", "pay more", "cost extra"): the trade-off rule's words."""
    content = [s for s in stems if s not in STOP_STEMS]
    return any(s in COST_STEMS for s in content) and all(s in COST_STEMS or s in WEAK_STEMS for s in content)


@lru_cache(maxsize=65_536)
def _phrase_weight(stems: tuple[str, ...], strong_cost: bool = False) -> float:
    weights = [_word_weight(s, strong_cost) for s in stems]
    content = sum(w > 0 for w in weights)
    return sum(weights) + PHRASE_BONUS * max(0, content - 1)


# -- per-scenario tables -----------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    """One scenario's compiled phrases: first stem -> [(stems, weight, target index)]."""

    targets: tuple[Target, ...]
    domain: tuple[str, ...]  # the domain's name, stemmed: names the product category, not an attribute
    numeric: frozenset[str]  # visible attributes with numeric values (price, rating): the trade-off rule
    # first stem -> [(stems, weight, target index, is a cost phrase)]
    index: dict[str, tuple[tuple[tuple[str, ...], float, int, bool], ...]]


def _family_words(own: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
    words = {s for phrase in own for s in phrase}
    out: set[tuple[str, ...]] = set()
    for fam in FAMILY_STEMS:
        if fam & words:
            out.update((s,) for s in fam)
    return out


_Phrases = dict[tuple[str, ...], tuple[float, bool]]  # stems -> (weight, primary), in first-added order


def _add(entries: _Phrases, stems: tuple[str, ...], weight: float, primary: bool) -> None:
    """Keep a phrase's weight: a primary claim beats a secondary one, then the higher weight wins."""
    old = entries.get(stems)
    if stems and weight > 0 and (old is None or (old[1], old[0]) < (primary, weight)):
        entries[stems] = (weight, primary)


@lru_cache(maxsize=8192)
def _target_phrases(kind: str, attribute: str, label: str, own: tuple[str, ...], values: tuple[str, ...],
                    topic: frozenset[str]) -> tuple[_Phrases, frozenset[tuple[str, ...]], frozenset[tuple[str, ...]],
                                                    tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]]:
    """One attribute's phrases from its own words and values (a need's statement and hint come after, in
    :func:`_said_phrases`), its own single words and its title (name and label) stems: a pure function
    of its texts, so the scenarios of a domain share it, and its single words (:func:`_singles`).
    Read-only: callers copy the phrases."""
    # Primary phrases are the attribute's own words (name, label, keywords, a need's keywords, whole
    # values); secondary ones are single words taken from values, labels, statements and concept families.
    entries: _Phrases = {}

    def add(stems: tuple[str, ...], weight: float, primary: bool) -> None:
        _add(entries, stems, weight, primary)

    strong_cost = kind == "visible"
    own_stems = [text_stems(p.replace("_", " ")) for p in own]
    value_stems = [text_stems(v) for v in values]
    for st in own_stems:
        weight = 1.0 if len(st) == 2 and st[0] == "how" else _phrase_weight(st, strong_cost)
        add(st, weight, True)
        for s in st if len(st) > 1 else ():  # one word of a label or key phrase
            add((s,), TOPIC_WEIGHT if s in topic else VALUE_WORD_WEIGHT * _word_weight(s, strong_cost), False)
    named: frozenset[tuple[str, ...]] = frozenset()
    title: frozenset[tuple[str, ...]] = frozenset()
    if kind != "visible":  # its own single words, for the sole-owner rule
        named = frozenset(st for st in own_stems if len(st) == 1)
        title = frozenset({text_stems(attribute.replace("_", " ")), text_stems(label)})
    for st in value_stems:
        add(st, _phrase_weight(st), True)  # the whole value, as written
        for s in st:  # and each of its words, the topic ones faintly
            add((s,), TOPIC_WEIGHT if s in topic else VALUE_WORD_WEIGHT * _word_weight(s, False), False)
    for st in _family_words(own_stems + value_stems):
        add(st, _phrase_weight(st, strong_cost), False)
    if kind == "visible" and not values and COST_STEMS & {w for st in own_stems for w in st}:
        for w in COST_STEMS:  # a price-like visible attribute is reached by every cost word
            add((w,), 1.0, False)
    return entries, named, title, _singles(entries)


def _singles(entries: _Phrases) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """The single-word phrases, claimed as the attribute's own (primary) and otherwise."""
    return (tuple(st for st, (_w, p) in entries.items() if len(st) == 1 and p),
            tuple(st for st, (_w, p) in entries.items() if len(st) == 1 and not p))


def _said_phrases(phrases: _Phrases, said: tuple[str, ...], topic: frozenset[str]) -> _Phrases:
    """An attribute's phrases with its need's statement and hint words added (last, as single words)."""
    if not said:
        return phrases
    entries = dict(phrases)
    for text in said:
        for s in set(text_stems(text)):
            if s not in STOP_STEMS and s not in WEAK_STEMS:
                _add(entries, (s,), TOPIC_WEIGHT if s in topic else STATEMENT_WEIGHT, False)
    return entries


def _build(scenario: Scenario) -> Table:
    needs = {n.attribute: n for n in scenario.needs}
    topic = topic_stems(scenario)
    targets: list[Target] = []

    present = {a.name for a in scenario.attributes}
    data = domain_file(scenario.domain)
    absent: list[dict[str, Any]] = []
    if data is not None:
        absent = [a for a in data.get("attributes", []) if isinstance(a, dict) and a.get("name") not in present]

    named: dict[int, frozenset[tuple[str, ...]]] = {}
    title: dict[int, frozenset[tuple[str, ...]]] = {}  # the attribute's name and label
    labels = {a.name: a.label for a in scenario.attributes}
    sources: list[tuple[Target, list[str], list[str], list[str]]] = []
    for a in scenario.attributes:
        need = needs.get(a.name)
        target = Target(a.name, a.kind, need.level if need else None)
        own = [*a.keywords, a.label, a.name.replace("_", " ")]
        said = [need.statement, need.hint] if need is not None else []
        own += list(need.keywords) if need is not None else []
        sources.append((target, own, list(a.values), said))
    for raw in absent:
        words = [str(w) for w in (*raw.get("keywords", []), raw.get("label", ""), str(raw.get("name", "")))]
        values = [str(v) for v in raw.get("values", [])]
        sources.append((Target(str(raw.get("name")), "absent", None), words, values, []))

    phrases: list[_Phrases] = []  # per target, stems -> (weight, primary), in first-added order
    owners: Counter[tuple[str, ...]] = Counter()  # single words: how many targets own them (primary)
    others: Counter[tuple[str, ...]] = Counter()  # ... and how many claim them secondarily
    for ti, (target, own, values, said) in enumerate(sources):
        targets.append(target)
        base, own_words, names, singles = _target_phrases(target.kind, target.attribute,
                                                          labels.get(target.attribute, ""), tuple(own),
                                                          tuple(values), topic)
        entries = _said_phrases(base, tuple(said), topic)
        if entries is not base:
            singles = _singles(entries)
        phrases.append(entries)
        owners.update(singles[0])
        others.update(singles[1])
        if target.kind != "visible":
            named[ti] = own_words
            title[ti] = names
    # A single word several attributes claim says little about which one is meant ("kids" in a
    # pediatrician scenario). Where some attributes own the word, they share it and the others'
    # secondary claims count half; where none owns it, the secondary claims share it.
    index: dict[str, list[tuple[tuple[str, ...], float, int, bool]]] = {}
    for ti, entries in enumerate(phrases):
        for stems, (weight, primary) in entries.items():
            if len(stems) == 1:
                n_own = owners.get(stems, 0)
                if primary:
                    if n_own == 1 and stems[0] in WEAK_STEMS and stems in named.get(ti, ()):
                        # An attribute's own weak keyword, nobody else's; its name or label counts whole
                        # ("setting", "time" for a table time).
                        weight = 1.0 if stems in title.get(ti, ()) else SOLE_WEAK_WEIGHT
                    weight /= n_own**OWNER_SHARE_POWER
                elif n_own:
                    weight *= SECONDARY_FACTOR / n_own**SHARE_POWER
                else:
                    weight /= others.get(stems, 1) ** SHARE_POWER
            entry = (stems, weight, ti, _is_cost(stems))
            listed = index.get(stems[0])
            if listed is None:
                index[stems[0]] = [entry]
            else:
                listed.append(entry)
    frozen = {k: (v[0],) if len(v) == 1 else tuple(sorted(v, key=lambda e: -len(e[0]))) for k, v in index.items()}
    numeric = frozenset(a.name for a in scenario.attributes if a.kind == "visible" and not a.values)
    domain = tuple(w for w in text_stems(scenario.domain) if w not in STOP_STEMS)
    return Table(tuple(targets), domain, numeric, frozen)


BUILDS = {"count": 0}  # how many tables were compiled (tests check reuse)


def _counted_build(scenario: Scenario) -> Table:
    BUILDS["count"] += 1
    return _build(scenario)


def table_for(scenario: Scenario) -> Table:
    """The scenario's compiled phrase table, built on first use and kept on the scenario object
    (:meth:`Scenario.derived`: it lives and dies with the scenario)."""
    return scenario.derived("lexical_table", _counted_build)


# -- scoring -----------------------------------------------------------------------------------
def scores(scenario: Scenario, question: str) -> dict[Target, float]:
    """Matched weight per attribute (before the threshold and the trade-off rule)."""
    return {t: w for t, (w, _cost) in raw_scores(table_for(scenario), question).items()}


def raw_scores(table: Table, question: str) -> dict[Target, tuple[float, float]]:
    """Per attribute: (matched weight, the part of it from cost phrases such as "pay more")."""
    words = question_stems(question)
    dom = table.domain
    if dom and len(words) >= len(dom):  # "when choosing budget airline tickets": the category, not the budget
        n = len(dom)
        hits_at = [i for i in range(len(words) - n + 1) if words[i : i + n] == dom]
        if hits_at:
            masked = list(words)
            for i in hits_at:
                masked[i : i + n] = [""] * n
            words = tuple(masked)
    found: list[tuple[float, int, int, int, tuple[str, ...], bool]] = []  # (weight, target, start, end, ...)
    index = table.index
    for i, w in enumerate(words):
        for stems, weight, ti, is_cost in index.get(w, ()):
            if words[i : i + len(stems)] == stems:
                found.append((weight, ti, i, i + len(stems), stems, is_cost))
    # Per attribute, the heaviest matches first; a match overlapping one already counted ("what time"
    # and "time") or repeating one ("day to day") adds nothing.
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    covered: dict[int, set[int]] = {}
    counted: set[tuple[tuple[str, ...], int]] = set()
    total: dict[int, float] = {}
    cost: dict[int, float] = {}
    for weight, ti, start, end, stems, is_cost in found:
        seen = covered.setdefault(ti, set())
        span = set(range(start, end))
        if span & seen or (stems, ti) in counted:
            continue
        seen |= span
        counted.add((stems, ti))
        total[ti] = total.get(ti, 0.0) + weight
        if is_cost:
            cost[ti] = cost.get(ti, 0.0) + weight
    return {table.targets[ti]: (w, cost.get(ti, 0.0)) for ti, w in total.items()}


def match_question(scenario: Scenario, question: str) -> Target | None:
    """The attribute a question is targeted at, or ``None`` for a general question."""
    table = table_for(scenario)
    return decide(table, question, raw_scores(table, question))


def decide(table: Table, question: str, raw: dict[Target, tuple[float, float]]) -> Target | None:
    """The lexical decision from a question's scores (:func:`raw_scores`): thresholds, frames, the trade-off rule."""
    numeric = table.numeric
    tradeoff = any(c > 0 for t, (_w, c) in raw.items() if t.attribute in numeric and t.kind == "visible")
    is_open, preference, tradeoff_frame = frames(question)
    floor = OPEN_THRESHOLD if is_open else PREFERENCE_THRESHOLD if preference else THRESHOLD
    tradeoff_floor = OPEN_THRESHOLD if is_open else TRADEOFF_THRESHOLD
    hits = {
        t: w for t, (w, _c) in raw.items()
        if w >= floor or (tradeoff and w >= tradeoff_floor and t.kind != "visible")
    }
    if not hits or about_the_user(question):  # the user's own life, history or time: general
        return None
    if tradeoff_frame:
        named = {t: w for t, w in hits.items() if not (t.kind == "visible" and t.attribute in numeric)}
        hits = {t: w for t, w in named.items() if w >= TRADEOFF_THRESHOLD} or hits
    if any(t.kind != "visible" or t.attribute not in numeric for t in hits):
        # The trade-off rule: next to another attribute, cost words ("pay more for") say what the
        # user would give up, not what the question is about.
        hits = {t: w - raw[t][1] if t.attribute in numeric and t.kind == "visible" else w for t, w in hits.items()}
        hits = {t: w for t, w in hits.items() if w >= (TRADEOFF_THRESHOLD if tradeoff else floor)}
    if not hits:
        return None
    best = min(hits, key=lambda t: (-hits[t], _KIND_RANK[t.kind], t.level or 0, t.attribute))
    return None if best.kind == "absent" else best


Matcher = Callable[[Scenario, str], "Target | None"]
