"""Rule-based assistants that read only what the observation shows.

Both agents walk the options in the order the request implies (the column the
standardised opening leads on, e.g. cheapest first), rule out an option when
the user signals a problem with it, ask one general question about each
problem option (which makes the user state the need behind it), and confirm
when nothing signals a problem.

* :class:`TranscriptRuleAgent` reads the words only: a problem is a refusal,
  a "but", a stated need. Under Prosody-mediated responses an unmet L2/L3 need
  comes with plain assent, so this agent confirms too early.
* :class:`StateAwareRuleAgent` also reads the ``state`` tag (access ``T+S``)
  and keeps going while it says ``unresolved``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from hear2act_env.dialogue.actions import format_action, parse_action

# Words that, in a user's reply, signal that the current option is not right.
PROBLEM_CUES = re.compile(
    r"\b(no|not|won't|can't|cannot|but|though|however|prefer|rather|need|needs|must|have to|has to|"
    r"wish|instead|worried|too|actually|important|dealbreaker|honest)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
GENERAL_QUESTION = "Is there anything about this option that doesn't work for you?"
_HIGH_FIRST = re.compile(r"\b(best|highest|top)[- ](rated|reviewed|rating)|\bbest reviews\b", re.IGNORECASE)
_LOW_FIRST = re.compile(r"\b(cheapest|lowest|least expensive|most affordable)\b", re.IGNORECASE)
UNRESOLVED = re.compile(r"\bunresolved\b", re.IGNORECASE)
NEGATIVE_AFFECT = frozenset({"sad", "angry"})


@dataclass(frozen=True)
class Catalog:
    """The options as an agent can read them from the ``options`` text."""

    names: dict[int, str]
    order: tuple[int, ...]  # option numbers, best first on the inferred priority

    @classmethod
    def parse(cls, options_text: str, opening: int, request: str = "") -> Catalog:
        names, columns = numeric_columns(options_text)
        return cls(names, _priority_order([col for _, col in columns], opening, sorted(names), request))


def numeric_columns(
    options_text: str, among: Collection[int] | None = None
) -> tuple[dict[int, str], list[tuple[str, dict[int, float]]]]:
    """Option names, and the numeric facts every description ends with, as columns.

    A column is ``(the first option's cell text, {option number: value})`` over the
    options ``among`` (default: all); columns are read from the last fact backwards
    until one is not numeric for every one of them.

    >>> numeric_columns("1. A: x, $10, rated 4.0/5\\n2. B: y, $20, rated 4.9/5")
    ({1: 'A', 2: 'B'}, [('rated 4.0/5', {1: 4.0, 2: 4.9}), ('$10', {1: 10.0, 2: 20.0})])
    """
    names, tails = {}, {}
    for line in options_text.splitlines():
        number, _, rest = line.partition(". ")
        if not number.strip().isdigit():
            continue
        name, _, features = rest.partition(": ")
        names[int(number)] = name
        if among is None or int(number) in among:
            tails[int(number)] = features.split(", ")[::-1]  # visible facts come last
    columns = []
    for j in range(min((len(t) for t in tails.values()), default=0)):
        found = {n: _NUMBER.search(tail[j]) for n, tail in tails.items()}
        if any(m is None for m in found.values()):
            break
        first = next(iter(tails.values()))[j]
        columns.append((first, {n: float(m.group().replace(",", "")) for n, m in found.items()}))
    return names, columns


def _priority_order(
    columns: list[dict[int, float]], opening: int, numbers: list[int], request: str = ""
) -> tuple[int, ...]:
    """Order options by the numeric column the opening leads on (the request's ranking).

    When the opening leads on two columns at once (cheapest *and* best-rated), the
    request's own words break the tie: "best-rated" ranks high-first, "cheapest" low-first.
    """
    wants = 0
    if _HIGH_FIRST.search(request):
        wants = -1
    elif _LOW_FIRST.search(request):
        wants = 1
    best: tuple[float, int, int, list[int]] | None = None
    for col in columns:
        distinct = len(set(col.values()))
        for sign in (1, -1):
            ranked = sorted(numbers, key=lambda n, c=col, s=sign: (s * c[n], n))
            rank = ranked.index(opening)
            key = (rank, int(wants != 0 and sign != wants), -distinct)
            if best is None or key < best[:3]:
                best = (*key, ranked)
    return tuple(best[3]) if best else tuple(numbers)


def _last_recommended(lines: list[str]) -> int | None:
    for line in reversed(lines):
        if line.startswith("Assistant: "):
            action = parse_action(line[len("Assistant: "):])
            if action.kind == "recommend":
                return action.option
    return None


@dataclass
class TranscriptRuleAgent:
    """Reads the words: confirms assent, asks when words signal a problem."""

    name: str = "transcript-rule"
    catalog: Catalog | None = None
    ruled_out: set[int] = field(default_factory=set)
    asked: set[int] = field(default_factory=set)
    max_turns: int = 20

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        lines = observation.get("transcript", "").splitlines()
        opening = _last_recommended(lines) or 1
        request = lines[0][len("User: "):] if lines else ""
        self.catalog = Catalog.parse(observation["options"], opening, request)
        self.ruled_out, self.asked = set(), set()

    def problem(self, observation: dict[str, str], user_words: str) -> bool:
        return bool(PROBLEM_CUES.search(user_words))

    def _next(self, current: int | None) -> int | None:
        assert self.catalog is not None
        return next((n for n in self.catalog.order if n not in self.ruled_out and n != current), None)

    def _recommend(self, number: int | None) -> str:
        if number is None:
            return format_action("confirm", "Let's go with this one.")
        assert self.catalog is not None
        return format_action("recommend", f"How about {self.catalog.names[number]}?", number)

    def act(self, observation: dict[str, str]) -> str:
        lines = observation.get("transcript", "").splitlines()
        if self.catalog is None:
            self.reset(observation, {})
        current = _last_recommended(lines)
        assistant_turns = sum(line.startswith("Assistant: ") for line in lines)
        last = parse_action(lines[-2][len("Assistant: "):]) if len(lines) >= 2 else None
        user_words = lines[-1][len("User: "):] if lines else ""
        if assistant_turns >= self.max_turns - 1:
            return format_action("confirm", "Let's go with this one.")
        if last is None or last.kind in ("ask", "clarify", "invalid"):
            return self._recommend(self._next(current))
        if last.kind == "confirm":  # refused
            self.ruled_out.add(current or 0)
            return self._recommend(self._next(current))
        if not self.problem(observation, user_words):
            return format_action("confirm", "Great, let's go with that one.")
        self.ruled_out.add(current or 0)
        if current not in self.asked:
            self.asked.add(current or 0)
            return format_action("ask", GENERAL_QUESTION)
        return self._recommend(self._next(current))


@dataclass
class StateAwareRuleAgent(TranscriptRuleAgent):
    """The same, but also treats a state channel that says "unresolved" as a problem.

    Reads whichever channel the access condition provides: the ground-truth
    tag (``T+S``), the perceiver's inferred-state sentence (``T+S_hat``), or a
    generic affect label (``T+affect``: *sad* or *angry* count as a problem).
    """

    name: str = "state-rule"

    def problem(self, observation: dict[str, str], user_words: str) -> bool:
        channel = observation.get("state", "") + " " + observation.get("inferred_state", "")
        unresolved = bool(UNRESOLVED.search(channel)) or observation.get("affect") in NEGATIVE_AFFECT
        return unresolved or super().problem(observation, user_words)
