"""The learned question router (``matcher="learned"``, the default): a linear model over words and lexical evidence.

The lexical matcher (:mod:`.matching`) knows each attribute's own words and
shared concept families; it cannot know that "Will you need a way to get to
work while they have your car?" is about a loaner, or that "How many people do
you usually cook for?" asks about the user, not the oven. Those are facts
about how assistants talk in each domain, and they are learned here from
questions written by separate processes that saw only what a user of the
benchmark sees (``training/data/routing/`` of a source checkout; the tool
``python -m hear2act.training.router_fit`` fits the weights, outside the simulator).

**Model.** For a question in a scenario the candidates are every attribute of
the scenario's domain (those the scenario lacks too) and *general*. Each
candidate's score is a sum of

- learned word weights: the question's features (Porter2 stems, stem bigrams
  and the frames of :mod:`.words`: open, preference, trade-off, about the
  user) dotted with the weights of the candidate's classes: the domain's
  attribute (``"<domain>/<attribute>"``), the attribute across domains for the
  visible price and rating (``"*/price"``), or general (``"*/general"`` and
  ``"<domain>/general"``);
- the lexical evidence, weighted by ``beta``: the lexical matcher's matched
  weight for the attribute, its cost part, whether the lexical matcher picks
  it, whether it reaches the lexical threshold, whether it is a numeric
  visible attribute (in a trade-off frame or not), how many content words the
  question shares with a need's statement and hint; for general whether the
  lexical matcher found nothing and how many content words it shares with the
  persona and the request.

General's score gets a fixed ``general_offset`` (stored with the weights;
chosen on the validation set ``tests/data/heldout_questions_v2.jsonl`` to
balance need-targeted and general accuracy, see ``training/router_fit.py``),
and a shown distractor's a ``distractor_offset`` (-1.0, chosen on v2 when env
-v4 showed 3-4 distractor columns: v2 need / general 0.948 / 0.948 -> 0.951 /
0.958; 695 of 697 questions about a shown distractor still route to it).
The highest score wins (ties: the order of the candidates, so deterministic);
an attribute the scenario lacks, or general, routes to ``None``. A domain with
no learned weights (a custom scenario) falls back on the lexical evidence and
the cross-domain weights alone.

Weights ship in ``hear2act_env/data/router.json.gz`` (numbers and words only,
read with the standard library) and are loaded once per process: one
feature -> weight dictionary per class, which every scenario of the domain
shares (the cross-domain classes every domain). The candidates (one object per
domain attribute and role) and each candidate's lookups of its classes are
shared by the scenarios of a domain; a router keeps, per scenario object, only
a plan (a tuple of those shared lookups) and the decisions it has made
(questions up to 512 characters, 1,024 per scenario), so a repeated question is
a dictionary lookup and a new one ~0.3 ms. A candidate adds its weights feature
by feature (sorted), class by class: the order of the per-scenario inverted
tables this replaced, so every score is the same float (``tests/test_router.py``
pins 28,821 decisions recorded with those tables). The first question on a
scenario also stems its needs' statements and the persona (the overlap
features) and assembles the lexical matcher's table for it
(:func:`.matching.table_for`: the domain's shared attribute layers plus a small
layer per need); ``benchmarks/routing.py`` prints cold and warm figures and the
memory after all 480 scenarios. No dependency beyond the core.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..scenarios import Scenario
from . import matching, words
from .matching import THRESHOLD, Target

WEIGHTS_PATH = Path(__file__).resolve().parent.parent / "data" / "router.json.gz"
GENERAL = "general"
# The lexical evidence per candidate, in ``beta``'s order.
PSI = ("lex_weight", "lex_cost", "lex_pick", "lex_reached", "numeric", "numeric_tradeoff", "lex_none",
       "need_text", "persona_text")
LEX_CAP = 4.0  # matched weights beyond this say nothing more
OVERLAP_CAP = 3.0  # shared content words beyond this say nothing more


def slug(domain: str) -> str:
    """The domain's file and weight-class name ("budget airline tickets" -> "budget-airline-tickets")."""
    return re.sub(r"[^a-z0-9]+", "-", domain.lower().replace("'", "")).strip("-")


@lru_cache(maxsize=16384)
def question_features(question: str) -> tuple[str, ...]:
    """A question's binary features: stems (``u:``), stem bigrams (``b:``), frames (``f:``) and a bias."""
    stems = words.stems(question)
    feats = {"bias"}
    feats.update("u:" + s for s in stems)
    feats.update(f"b:{a}_{b}" for a, b in itertools.pairwise(stems))
    is_open, preference, tradeoff = words.frames(question)
    for name, on in (("open", is_open), ("preference", preference), ("tradeoff", tradeoff),
                     ("user", words.about_the_user(question))):
        if on:
            feats.add("f:" + name)
    return tuple(sorted(feats))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One thing a question may be about: an attribute (present or absent) or general."""

    name: str  # attribute name, or GENERAL
    keys: tuple[str, ...]  # the weight classes whose weights add up to its score
    target: Target | None  # where it routes (None: general, or an attribute the scenario lacks)


# Per candidate index, the ``dict.get`` of each of its weight classes, in its ``keys`` order.
_Plan = tuple[tuple[int, tuple[Any, ...]], ...]


@dataclass(frozen=True, slots=True)
class _ScenarioTexts:
    candidates: tuple[Candidate, ...]
    # Sorted tuples, not sets: kept per scenario, and tuples of strings are not tracked by the garbage collector.
    need_words: dict[str, tuple[str, ...]]  # need attribute -> content stems of its statement and hint
    persona_words: tuple[str, ...]  # content stems of the persona's situation and the request


def _content(text: str, topic: frozenset[str]) -> frozenset[str]:
    return frozenset(words.stems(text)) - words.STOP_STEMS - words.WEAK_STEMS - topic


def _texts(scenario: Scenario) -> _ScenarioTexts:
    return scenario.derived("router_texts", _build_texts)


def _build_texts(scenario: Scenario) -> _ScenarioTexts:
    topic = words.topic_stems(scenario)
    return _ScenarioTexts(
        _candidates(scenario),
        # f"{statement} " has the statement's words: its stems come from the lexical matcher's cache
        {n.attribute: tuple(sorted(_content(f"{n.statement} {n.hint}" if n.hint else n.statement, topic)))
         for n in scenario.needs},
        tuple(sorted(_content(f"{scenario.persona.situation} {scenario.request}", topic))),
    )


def candidates(scenario: Scenario) -> tuple[Candidate, ...]:
    """The scenario's candidates, in a fixed order: its attributes, the domain's others, general."""
    return _texts(scenario).candidates


def _candidates(scenario: Scenario) -> tuple[Candidate, ...]:
    d = slug(scenario.domain)
    needs = {n.attribute: n.level for n in scenario.needs}
    out = [_candidate(d, a.name, a.kind, needs.get(a.name)) for a in scenario.attributes]
    present = {a.name for a in scenario.attributes}
    out += [_candidate(d, name, None, None) for name in _domain_attributes(scenario.domain) if name not in present]
    out.append(_general(d))
    return tuple(out)


@lru_cache(maxsize=64)
def _domain_attributes(domain: str) -> tuple[str, ...]:
    return tuple(name for name in (str(raw) for raw, _own, _values in words.domain_attributes(domain)) if name)


@lru_cache(maxsize=256)
def _general(d: str) -> Candidate:
    return Candidate(GENERAL, ("*/general", f"{d}/general"), None)


@lru_cache(maxsize=16384)
def _candidate(d: str, name: str, kind: str | None, level: int | None) -> Candidate:
    """One candidate of a domain (slug ``d``): an attribute the scenario has (``kind``) or one it lacks
    (``None``); immutable, so shared by the domain's scenarios."""
    if kind is None:
        return Candidate(name, (f"{d}/{name}",), None)
    keys = (f"{d}/{name}", f"*/{name}") if kind == "visible" else (f"{d}/{name}",)
    return Candidate(name, keys, matching.target(name, kind, level))


def lexical_evidence(scenario: Scenario, question: str, cands: tuple[Candidate, ...]) -> list[tuple[float, ...]]:
    """Per candidate, the lexical features named in :data:`PSI`."""
    table = matching.table_for(scenario)
    texts = _texts(scenario)
    said = _content(question, frozenset())
    scored = matching.raw_scores(table, question)
    raw = {t.attribute: wc for t, wc in scored.items()}
    pick = matching.decide(table, question, scored)
    tradeoff = words.frames(question)[2]
    numeric = table.numeric
    out = []
    for c in cands:
        if c.name == GENERAL:
            persona = min(len(said.intersection(texts.persona_words)), OVERLAP_CAP)
            out.append((0.0, 0.0, 0.0, 0.0, 0.0, 0.0, float(pick is None), 0.0, persona))
            continue
        w, cost = raw.get(c.name, (0.0, 0.0))
        is_num = float(c.name in numeric)
        out.append((min(w, LEX_CAP), min(cost, LEX_CAP), float(pick is not None and pick.attribute == c.name),
                    float(w >= THRESHOLD), is_num, is_num * float(tradeoff), 0.0,
                    min(len(said.intersection(texts.need_words.get(c.name, ()))), OVERLAP_CAP), 0.0))
    return out


class Router:
    """Routes a question with learned weights; call it as ``router(scenario, question)``."""

    DECISIONS_PER_SCENARIO = 1024  # a scenario's remembered decisions (rule agents repeat their questions)
    MEMO_MAX_CHARS = 512  # longer questions are routed afresh each time, not kept
    STEPS_KEPT = 65_536  # (candidate index, classes) lookups kept (the bank's 480 scenarios need ~3,000)

    def __init__(self, weights: dict[str, Any]) -> None:
        if list(weights.get("psi", [])) != list(PSI):
            raise ValueError(f"router weights: 'psi' must be {list(PSI)}, got {weights.get('psi')!r}")
        self.beta = tuple(float(b) for b in weights["beta"])
        self.general_offset = float(weights.get("general_offset", 0.0))
        # Added to a shown distractor's score: misrouting a need question there tells the agent the need does not
        # matter, a worse error than a general answer (chosen on the validation set v2 with env -v4's bank).
        self.distractor_offset = float(weights.get("distractor_offset", 0.0))
        self.classes: dict[str, dict[str, float]] = weights["weights"]
        self.version = str(weights.get("version", ""))
        self._steps: dict[tuple[int, tuple[str, ...]], tuple[int, tuple[Any, ...]]] = {}  # see _step
        self._gets: dict[tuple[str, ...], tuple[Any, ...]] = {}  # a candidate's classes -> their lookups
        # Per scenario object (Scenario.derived_for, kept on the scenario for this router): each candidate's
        # weight classes (the shared dictionaries of ``classes``, no copies) and a decision memo. Nothing is
        # built per scenario beyond these few references.

    @classmethod
    def load(cls, path: Path | str = WEIGHTS_PATH) -> Router:
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"router weights {path}: unreadable ({exc})") from exc
        if not isinstance(data, dict) or not {"psi", "beta", "weights"} <= data.keys():
            raise ValueError(f"router weights {path}: expected an object with 'psi', 'beta' and 'weights'")
        return cls(data)

    def _table(self, scenario: Scenario) -> tuple[_Plan, dict[str, Target | None]]:
        """The scenario's plan (per candidate, its classes' lookups) and its decision memo; microseconds."""
        return scenario.derived_for(self, "router_plan", self._build_table)

    def _build_table(self, scenario: Scenario) -> tuple[_Plan, dict[str, Target | None]]:
        plan = tuple(self._step(i, c.keys) for i, c in enumerate(candidates(scenario)))
        return plan, {}

    def _step(self, i: int, keys: tuple[str, ...]) -> tuple[int, tuple[Any, ...]]:
        """Candidate ``i``'s lookups (``dict.get`` of each of its weight classes), shared by the scenarios."""
        step = self._steps.get((i, keys))
        if step is None:
            if len(self._steps) >= self.STEPS_KEPT:
                self._steps.clear()
            gets = self._gets.get(keys)
            if gets is None:
                gets = self._gets[keys] = tuple(self.classes[k].get for k in keys if k in self.classes)
            step = self._steps[(i, keys)] = (i, gets)
        return step

    def scores(self, scenario: Scenario, question: str) -> list[tuple[Candidate, float]]:
        """Every candidate with its score, in candidate order."""
        plan, _memo = self._table(scenario)
        cands = candidates(scenario)
        psi = lexical_evidence(scenario, question, cands)
        totals = [sum(b * x for b, x in zip(self.beta, p, strict=True)) for p in psi]
        totals[-1] += self.general_offset  # general is always the last candidate
        if self.distractor_offset:
            for i, c in enumerate(cands):
                if c.target is not None and c.target.kind == "distractor":
                    totals[i] += self.distractor_offset
        feats = question_features(question)
        # Each candidate adds its weights feature by feature (sorted), class by class within a feature:
        # the order the former per-scenario inverted tables added them in, so every score is the same float.
        for i, gets in plan:
            total = totals[i]
            for f in feats:
                for get in gets:
                    w = get(f)
                    if w is not None:
                        total += w
            totals[i] = total
        return list(zip(cands, totals, strict=True))

    def best(self, scenario: Scenario, question: str) -> Candidate:
        """The highest-scoring candidate (ties: the earlier one)."""
        scored = self.scores(scenario, question)
        return scored[max(range(len(scored)), key=lambda i: (scored[i][1], -i))][0]

    def __call__(self, scenario: Scenario, question: str) -> Target | None:
        _table, memo = self._table(scenario)
        if question in memo:
            return memo[question]
        target = self.best(scenario, question).target
        if len(question) <= self.MEMO_MAX_CHARS:
            if len(memo) >= self.DECISIONS_PER_SCENARIO:
                memo.clear()
            memo[question] = target
        return target


@lru_cache(maxsize=1)
def default_router() -> Router:
    """The shipped router, loaded once per process."""
    return Router.load()


def route(scenario: Scenario, question: str) -> Target | None:
    """The learned router's decision with the shipped weights."""
    return default_router()(scenario, question)
