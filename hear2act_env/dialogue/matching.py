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

Tables are assembled once per scenario object (:func:`table_for`) from layers:
an attribute's phrases from its own words and values (and the domain's topic
words) are one layer, computed once and shared by every scenario of the domain
that has the attribute, whatever its role there (:func:`_target_phrases`); a
need adds one small layer of its keywords and statement words
(:func:`_need_phrases`). Nothing else is built up front: the entries for a
question word (the phrases it starts, their weights after the sharing rule
over the scenario's attributes) are compiled the first time the scenario meets
that word and kept (:meth:`Table.phrases`), the same entries, in the same
order, as a table built whole. A question's words are stemmed through an LRU
cache.
Words, frames and a domain's topic come from :mod:`.words` (shared with the
learned router); the matcher registry (``MATCHERS``, ``resolve_matcher``) is
:mod:`.matchers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from ..scenarios import Scenario
from .stemmer import stem
from .words import (
    COST_STEMS,
    FAMILY_STEMS,
    STOP_STEMS,
    WEAK_STEMS,
    about_the_user,
    domain_attributes,
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


@lru_cache(maxsize=16384)
def target(attribute: str, kind: str, level: int | None) -> Target:
    """``Target(attribute, kind, level)``, one object per value (immutable: shared by the scenarios of a domain)."""
    return Target(attribute, kind, level)


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
_Phrases = dict[tuple[str, ...], tuple[float, bool]]  # stems -> (weight, primary), in first-added order
_Entry = tuple[tuple[str, ...], float, int, bool]  # (stems, weight, target index, is a cost phrase)


# Sets of phrases read only for membership are tuples: strings in tuples are not tracked by the garbage collector.
_Words = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, eq=False, slots=True)
class _Layer:
    """Phrases one source gives an attribute (its own words and values, a need's keywords, a need's
    statement): stems -> (weight, primary), the phrases by first stem, and its own single words."""

    entries: _Phrases
    by_first: dict[str, tuple[tuple[str, ...], ...]]
    named: _Words  # single-word phrases of its own words (not for visible attributes)


def _one_words(visible: bool, own_stems: list[tuple[str, ...]]) -> _Words:
    """An attribute's own single words, for the sole-owner rule (none for a visible attribute)."""
    return () if visible else tuple(st for st in own_stems if len(st) == 1)


def _layer(entries: _Phrases, named: _Words = ()) -> _Layer:
    by_first: dict[str, tuple[tuple[str, ...], ...]] = {}
    for st in entries:  # tuples of strings, not lists: the garbage collector stops tracking them
        got = by_first.get(st[0])
        by_first[st[0]] = (st,) if got is None else (*got, st)
    return _Layer(entries, by_first, named)


@dataclass(frozen=True, slots=True)
class Table:
    """One scenario's phrases: per target, its layers (an attribute's own layer is shared by the scenarios
    of its domain; a need adds a small one); :meth:`phrases` compiles a first stem's entries on use."""

    targets: tuple[Target, ...]
    domain: tuple[str, ...]  # the domain's name, stemmed: names the product category, not an attribute
    numeric: frozenset[str]  # visible attributes with numeric values (price, rating): the trade-off rule
    base: tuple[_Layer, ...]  # per target: its attribute's layer (shared by the domain's scenarios)
    extra: tuple[_Layer | None, ...]  # per target: its need's layer, if any
    named: tuple[_Words, ...]  # per target: its own single words (sole-owner rule)
    title: tuple[_Words, ...]  # per target: its name and label stems
    starts: frozenset[str]  # every stem a phrase starts with
    compiled: dict[str, tuple[_Entry, ...]] = field(default_factory=dict, compare=False, repr=False)

    def phrases(self, first: str) -> tuple[_Entry, ...]:
        """The phrases that start with the stem ``first``: (stems, weight, target index, is a cost phrase),
        longest first; compiled on first use and kept (only for the stems in :attr:`starts`: the scenario's
        phrases bound what is kept, not the questions)."""
        got = self.compiled.get(first)
        if got is None:
            if first not in self.starts:
                return ()
            got = self.compiled[first] = _compile(self, first)
        return got


def _merged(layers: tuple[_Layer, ...], stems: tuple[str, ...]) -> tuple[float, bool]:
    """A phrase's (weight, primary) over a target's layers: a primary claim beats a secondary one, then the
    higher weight wins (what adding the layers' phrases one by one with :func:`_add` keeps)."""
    best = (0.0, False)
    for layer in layers:
        v = layer.entries.get(stems)
        if v is not None and (best[1], best[0]) < (v[1], v[0]):
            best = v
    return best


def _compile(table: Table, first: str) -> tuple[_Entry, ...]:
    # A single word several attributes claim says little about which one is meant ("kids" in a
    # pediatrician scenario). Where some attributes own the word, they share it and the others'
    # secondary claims count half; where none owns it, the secondary claims share it.
    claims: list[tuple[int, tuple[str, ...], tuple[float, bool]]] = []
    for ti, (layer, more) in enumerate(zip(table.base, table.extra, strict=True)):
        if more is not None and first in more.by_first:
            if first in layer.by_first:  # both layers have phrases that start with it: merged
                pair = (layer, more)
                claims += [(ti, stems, _merged(pair, stems))
                           for stems in dict.fromkeys((*layer.by_first[first], *more.by_first[first]))]
                continue
            layer = more
        phrases = layer.by_first.get(first)  # one layer has them: its entries as they are
        if phrases is not None:
            entries = layer.entries
            claims += [(ti, stems, entries[stems]) for stems in phrases]
    if not claims:
        return ()
    single = (first,)
    n_own = sum(1 for _ti, stems, (_w, primary) in claims if primary and len(stems) == 1)
    n_other = sum(1 for _ti, stems, (_w, primary) in claims if not primary and len(stems) == 1)
    out: list[_Entry] = []
    for ti, stems, (weight, primary) in claims:
        if len(stems) == 1:
            if primary:
                if n_own == 1 and first in WEAK_STEMS and single in table.named[ti]:
                    # An attribute's own weak keyword, nobody else's; its name or label counts whole
                    # ("setting", "time" for a table time).
                    weight = 1.0 if single in table.title[ti] else SOLE_WEAK_WEIGHT
                weight /= n_own**OWNER_SHARE_POWER
            elif n_own:
                weight *= SECONDARY_FACTOR / n_own**SHARE_POWER
            else:
                weight /= (n_other or 1) ** SHARE_POWER
        out.append((stems, weight, ti, _is_cost(stems)))
    out.sort(key=lambda e: -len(e[0]))
    return tuple(out)


_FAMILY_WORDS = tuple(frozenset((w,) for w in fam) for fam in FAMILY_STEMS)  # each family's words, as phrases
_FAMILIES_OF: dict[str, tuple[int, ...]] = {}  # stem -> the concept families it belongs to
for _i, _fam in enumerate(FAMILY_STEMS):
    for _s in _fam:
        _FAMILIES_OF[_s] = (*_FAMILIES_OF.get(_s, ()), _i)


def _family_words(own: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """Every word of each concept family that one of the phrases' words belongs to."""
    families = {i for phrase in own for s in phrase for i in _FAMILIES_OF.get(s, ())}
    return set().union(*(_FAMILY_WORDS[i] for i in families))


def _add(entries: _Phrases, stems: tuple[str, ...], weight: float, primary: bool) -> None:
    """Keep a phrase's weight: a primary claim beats a secondary one, then the higher weight wins."""
    old = entries.get(stems)
    if stems and weight > 0 and (old is None or (old[1], old[0]) < (primary, weight)):
        entries[stems] = (weight, primary)


def _own_phrases(entries: _Phrases, own_stems: list[tuple[str, ...]], strong_cost: bool,
                 topic: frozenset[str]) -> None:
    for st in own_stems:
        weight = 1.0 if len(st) == 2 and st[0] == "how" else _phrase_weight(st, strong_cost)
        _add(entries, st, weight, True)
        for s in st if len(st) > 1 else ():  # one word of a label or key phrase
            _add(entries, (s,), TOPIC_WEIGHT if s in topic else VALUE_WORD_WEIGHT * _word_weight(s, strong_cost),
                 False)


def _price_like(entries: _Phrases, own_stems: list[tuple[str, ...]]) -> None:
    if COST_STEMS & {w for st in own_stems for w in st}:
        for w in COST_STEMS:  # a price-like visible attribute is reached by every cost word
            _add(entries, (w,), 1.0, False)


@lru_cache(maxsize=8192)
def _target_phrases(visible: bool, own: tuple[str, ...], values: tuple[str, ...], topic: frozenset[str]) -> _Layer:
    """An attribute's own layer, from its own words (keywords, label, name) and values: a pure function of
    its texts and whether it is visible, so the scenarios of a domain share it whatever role the attribute
    plays in each (a need's keywords, statement and hint are a layer of their own, :func:`_need_phrases`).
    Read-only."""
    # Primary phrases are the attribute's own words (name, label, keywords, a need's keywords, whole
    # values); secondary ones are single words taken from values, labels, statements and concept families.
    entries: _Phrases = {}
    own_stems = [text_stems(p.replace("_", " ")) for p in own]
    value_stems = [text_stems(v) for v in values]
    _own_phrases(entries, own_stems, visible, topic)
    for st in value_stems:
        _add(entries, st, _phrase_weight(st), True)  # the whole value, as written
        for s in st:  # and each of its words, the topic ones faintly
            _add(entries, (s,), TOPIC_WEIGHT if s in topic else VALUE_WORD_WEIGHT * _word_weight(s, False), False)
    for st in _family_words(own_stems + value_stems):
        _add(entries, st, _phrase_weight(st, visible), False)
    if visible and not values:
        _price_like(entries, own_stems)
    # its own single words, for the sole-owner rule (not for a visible attribute)
    return _layer(entries, _one_words(visible, own_stems))


@lru_cache(maxsize=4096)
def _title(attribute: str, label: str) -> _Words:
    """An attribute's name and label, stemmed (an absent attribute's label is not read: "")."""
    return text_stems(attribute.replace("_", " ")), text_stems(label)


def _need_phrases(visible: bool, keywords: tuple[str, ...], has_values: bool, said: tuple[str, ...],
                  topic: frozenset[str]) -> _Layer | None:
    """A need's layer: its keywords as its attribute's own words (the rules of :func:`_target_phrases`), and
    its statement and hint words (single, secondary); ``None`` when it adds nothing."""
    entries: _Phrases = {}
    own_stems = [text_stems(p.replace("_", " ")) for p in keywords]
    _own_phrases(entries, own_stems, visible, topic)
    for st in _family_words(own_stems):
        _add(entries, st, _phrase_weight(st, visible), False)
    if visible and not has_values:
        _price_like(entries, own_stems)
    for text in said:
        for s in set(text_stems(text)):
            if s not in STOP_STEMS and s not in WEAK_STEMS:
                _add(entries, (s,), TOPIC_WEIGHT if s in topic else STATEMENT_WEIGHT, False)
    if not entries:
        return None
    return _layer(entries, _one_words(visible, own_stems))


def _build(scenario: Scenario) -> Table:
    needs = {n.attribute: n for n in scenario.needs}
    topic = topic_stems(scenario)
    present = {a.name for a in scenario.attributes}
    targets: list[Target] = []
    base_layers: list[_Layer] = []
    extra_layers: list[_Layer | None] = []
    named: list[_Words] = []
    title: list[_Words] = []
    for a in scenario.attributes:
        need = needs.get(a.name)
        tgt = target(a.name, a.kind, need.level if need else None)
        visible = a.kind == "visible"
        base = _target_phrases(visible, (*a.keywords, a.label, a.name.replace("_", " ")), tuple(a.values), topic)
        extra = None if need is None else _need_phrases(visible, tuple(need.keywords), bool(a.values),
                                                         (need.statement, need.hint), topic)
        targets.append(tgt)
        base_layers.append(base)
        extra_layers.append(extra)
        more = extra is not None and extra.named  # a need's one-word keywords
        named.append(() if visible else base.named + extra.named if more else base.named)
        title.append(() if visible else _title(a.name, a.label))
    for raw_name, own_words, values in domain_attributes(scenario.domain):
        if raw_name in present:
            continue
        name = str(raw_name)
        base = _target_phrases(False, own_words, values, topic)
        targets.append(target(name, "absent", None))
        base_layers.append(base)
        extra_layers.append(None)
        named.append(base.named)
        title.append(_title(name, ""))
    numeric = frozenset(a.name for a in scenario.attributes if a.kind == "visible" and not a.values)
    domain = tuple(w for w in text_stems(scenario.domain) if w not in STOP_STEMS)
    starts = frozenset().union(*(layer.by_first for layer in (*base_layers, *extra_layers) if layer is not None))
    return Table(tuple(targets), domain, numeric, tuple(base_layers), tuple(extra_layers), tuple(named),
                 tuple(title), starts)


BUILDS = {"count": 0}  # how many tables were compiled (tests check reuse)


def _counted_build(scenario: Scenario) -> Table:
    BUILDS["count"] += 1
    return _build(scenario)


def table_for(scenario: Scenario) -> Table:
    """The scenario's phrase table, built on first use and kept on the scenario object
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
    phrases = table.phrases
    for i, w in enumerate(words):
        for stems, weight, ti, is_cost in phrases(w):
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
