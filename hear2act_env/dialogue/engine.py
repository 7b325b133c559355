"""The deterministic user engine (PROTOCOL.md "Actions" and "User reaction").

Given the scenario, the dialogue so far and the assistant's action, the engine
decides *what* the user does: the graded state of the current recommendation,
the delivery label, which need (if any) the words state, and what becomes
disclosed. It decides no wording; :mod:`.realizer` does.

The reaction is the same under both realizations except for ``lexical``
(whether the words state an L2/L3 need) and therefore for what becomes
disclosed. Random choices (delivery labels) use :class:`Draws`, a keyed
function of the episode seed: a delivery depends only on (seed, scenario,
turn, state), so matched rollouts hear the same delivery.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

from ..scenarios import Scenario
from .actions import Action
from .matchers import default_matcher
from .matching import Matcher, Target

RESOLVED, RELUCTANT, CONCERN, REJECTION = "resolved", "reluctant", "concern", "rejection"
STATES = (RESOLVED, RELUCTANT, CONCERN, REJECTION)
NEUTRAL = "neutral"
# The paper's Table 12: state -> delivery labels.
DELIVERY: dict[str, tuple[str, ...]] = {
    RESOLVED: ("satisfied", "warm", "enthusiastic", "relieved"),
    RELUCTANT: ("underwhelmed", "lukewarm", "hesitant", "flat"),
    CONCERN: ("concerned",),
    REJECTION: ("frustrated", "disappointed", "impatient", "firm"),
}
LABELS = tuple(label for labels in DELIVERY.values() for label in labels)
REALIZATIONS = ("prosody", "explicit")
_U64 = struct.Struct("<Q").unpack


def collapsed(state: str) -> str:
    """Resolved vs unresolved (every state but ``resolved``)."""
    return "resolved" if state == RESOLVED else "unresolved"


class Draws:
    """Keyed, reproducible choices derived from one episode seed.

    ``pick(n, *key)`` is a pure function of (seed, key): unlike drawing from a
    shared stream, the answer does not depend on how many draws came before,
    which is what lets matched rollouts (same seed, different realization or
    access condition) share deliveries and phrasings turn by turn.
    """

    __slots__ = ("_base", "seed")

    def __init__(self, seed: int) -> None:
        self.seed = seed
        # blake2b-64 of b"<seed>:" + repr(key): the seed prefix is absorbed once here and each
        # draw continues a copy of that state, which gives the same digest for less work.
        self._base = hashlib.blake2b(f"{seed}:".encode(), digest_size=8)

    def __reduce__(self) -> tuple[type[Draws], tuple[int]]:  # hash states do not pickle; the seed does
        return Draws, (self.seed,)

    def pick(self, n: int, *key: object) -> int:
        h = self._base.copy()
        h.update(repr(key).encode())
        return _U64(h.digest())[0] % n


@dataclass(frozen=True)
class Assessment:
    """How the user sees one option: its graded state and the issue behind it."""

    state: str
    issue: str  # "requirement", "L1", "L2", "L3", "safe" or "none"
    requirement: int | None = None  # index of the violated request requirement
    level: int | None = None  # need level behind the issue


def assess(scenario: Scenario, number: int) -> Assessment:
    """The user's graded state for option ``number`` (PROTOCOL.md table).

    Computed once per scenario object for all its options (a step asks twice), so a
    step costs the same whatever the option's role.
    """
    table = scenario.derived("assessments", _assess_all)
    if not 1 <= number <= len(table):
        scenario.option(number)  # raises ScenarioError naming the scenario and the number
    return table[number - 1]


def _assess_all(scenario: Scenario) -> tuple[Assessment, ...]:
    return tuple(_assess(scenario, n) for n in range(1, len(scenario.options) + 1))


def _assess(scenario: Scenario, number: int) -> Assessment:
    opt = scenario.option(number)
    if not opt.meets_request:
        idx = next(i for i, r in enumerate(scenario.requirements) if not r.holds(opt.values[r.attribute]))
        return Assessment(REJECTION, "requirement", requirement=idx)
    sat = opt.satisfies
    if not sat[0]:
        return Assessment(REJECTION, "L1", level=1)
    if not sat[1]:
        return Assessment(CONCERN, "L2", level=2)
    if not sat[2]:
        return Assessment(RELUCTANT, "L3", level=3)
    if number != scenario.gold:
        return Assessment(RELUCTANT, "safe")
    return Assessment(RESOLVED, "none")


@dataclass(frozen=True)
class Reaction:
    """What the user does in one turn, before wording.

    ``act``: ``react`` (to a recommendation), ``answer`` (to ASK), ``hint``
    (to CLARIFY), ``accept`` / ``refuse`` (to CONFIRM), ``rephrase`` (to an
    invalid action). ``topic`` says what the words are about: ``requirement``,
    ``need``, ``safe``, ``assent``, ``covers`` (the option covers everything),
    ``priority`` (the visible ranking), ``irrelevant``, ``hint``, ``accept``,
    ``rephrase``.
    """

    act: str
    state: str  # graded state of the current recommendation after this turn
    delivery: str  # how this utterance is delivered (neutral for answers)
    topic: str
    level: int | None = None  # need the words are about
    requirement: int | None = None  # request requirement the words are about
    attribute: str | None = None  # attribute of a targeted question
    lexical: bool = True  # False: an L2/L3 problem voiced only through delivery
    restated: bool = False  # the words repeat something already disclosed
    disclosed: int | None = None  # need newly disclosed by this turn
    rec_delivery: str = NEUTRAL  # the current recommendation's delivery label (for the tag)
    question: Target | None = None  # ASK only: the attribute the question was routed to (None: general)

    @property
    def resolved(self) -> bool:
        return self.state == RESOLVED


@dataclass
class UserEngine:
    """One episode's user. Call :meth:`open` once, then :meth:`respond` per turn."""

    scenario: Scenario
    realization: str
    draws: Draws
    current: int = 0
    turn: int = 0
    disclosed: set[int] = field(default_factory=set)
    rec_delivery: str = NEUTRAL
    done: bool = False
    matcher: Matcher = field(default_factory=default_matcher)  # routes ASK questions (.matching, .router)

    def __post_init__(self) -> None:
        if self.realization not in REALIZATIONS:
            raise ValueError(f"realization must be one of {REALIZATIONS}, got {self.realization!r}")

    def _delivery(self, state: str) -> str:
        labels = DELIVERY[state]
        return labels[self.draws.pick(len(labels), "delivery", self.scenario.id, self.turn, state)]

    def _disclose(self, level: int | None) -> tuple[int | None, bool]:
        """Record that the words state need ``level``: (newly disclosed, restated)."""
        if level is None:
            return None, False
        if level in self.disclosed:
            return None, True
        self.disclosed.add(level)
        return level, False

    def open(self) -> Reaction:
        """The standardised opening: the assistant recommends the opening option (turn 1)."""
        self.turn = 1
        return self._react(self.scenario.opening)

    def _react(self, number: int) -> Reaction:
        self.current = number
        a = assess(self.scenario, number)
        delivery = self._delivery(a.state)
        self.rec_delivery = delivery
        # Visible requirements and L1 are always said in words; L2/L3 only when explicit.
        lexical = a.issue in ("requirement", "L1", "safe") or self.realization == "explicit"
        new, restated = self._disclose(a.level if lexical else None)
        topic = {"requirement": "requirement", "safe": "safe", "none": "assent"}.get(a.issue, "need")
        if topic == "need" and not lexical:
            topic = "assent"
        return Reaction(
            "react", a.state, delivery, topic, level=a.level, requirement=a.requirement,
            lexical=lexical, restated=restated, disclosed=new, rec_delivery=delivery,
        )

    def _neutral(self, act: str, topic: str, **kw: object) -> Reaction:
        state = assess(self.scenario, self.current).state
        return Reaction(act, state, NEUTRAL, topic, rec_delivery=self.rec_delivery, **kw)  # type: ignore[arg-type]

    def _answer_general(self) -> Reaction:
        a = assess(self.scenario, self.current)
        if a.issue == "requirement":
            return self._neutral("answer", "requirement", requirement=a.requirement, restated=True)
        if a.issue == "L1":
            # Paper G.6: an unmet L1 is answered with its directional hint, as CLARIFY is
            # (not a disclosure; L1 is said in words when the option is recommended or confirmed).
            return self._neutral("answer", "hint", level=1)
        violated = [lv for lv, ok in zip((1, 2, 3), self.scenario.option(self.current).satisfies, strict=True)
                    if not ok]
        if not violated:
            topic = "safe" if a.issue == "safe" else "covers"
            return self._neutral("answer", topic)
        fresh = [lv for lv in violated if lv not in self.disclosed]
        level = fresh[0] if fresh else violated[0]
        new, restated = self._disclose(level)
        return self._neutral("answer", "need", level=level, disclosed=new, restated=restated)

    def _answer_targeted(self, question: str) -> Reaction:
        target = self.matcher(self.scenario, question)
        if target is None:
            return self._answer_general()
        if target.kind == "need":
            new, restated = self._disclose(target.level)
            return self._neutral(
                "answer", "need", level=target.level, attribute=target.attribute,
                disclosed=new, restated=restated, question=target,
            )
        if target.kind == "visible":
            for i, r in enumerate(self.scenario.requirements):
                if r.attribute == target.attribute:
                    return self._neutral(
                        "answer", "requirement", requirement=i, attribute=target.attribute, question=target
                    )
            if target.attribute == self.scenario.priority:
                return self._neutral("answer", "priority", attribute=target.attribute, question=target)
        return self._neutral("answer", "irrelevant", attribute=target.attribute, question=target)

    def respond(self, action: Action) -> Reaction:
        """The user's turn after one assistant action (turn counter advances)."""
        if self.done:
            raise RuntimeError("the episode has ended; reset before stepping again")
        self.turn += 1
        if action.kind == "recommend":
            assert action.option is not None
            return self._react(action.option)
        if action.kind == "ask":
            return self._answer_targeted(action.text)
        if action.kind == "clarify":
            return self._neutral("hint", "hint", level=1)
        if action.kind == "confirm":
            a = assess(self.scenario, self.current)
            if a.state == REJECTION:
                level = a.level
                new, _ = self._disclose(level)
                return Reaction(
                    "refuse", a.state, self._delivery(a.state), a.issue if a.issue == "requirement"
                    else "need", level=level, requirement=a.requirement, restated=new is None,
                    disclosed=new, rec_delivery=self.rec_delivery,
                )
            self.done = True
            return Reaction("accept", a.state, self.rec_delivery, "accept", rec_delivery=self.rec_delivery)
        return self._neutral("rephrase", "rephrase")
