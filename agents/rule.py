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
        names, tails = {}, {}
        for line in options_text.splitlines():
            number, _, rest = line.partition(". ")
            name, _, features = rest.partition(": ")
            names[int(number)] = name
            tails[int(number)] = features.split(", ")[::-1]  # visible facts come last
        columns = []
        depth = min(len(t) for t in tails.values())
        for j in range(depth):
            col = {}
            for n, tail in tails.items():
                m = _NUMBER.search(tail[j])
                if m is None:
                    break
                col[n] = float(m.group().replace(",", ""))
            else:
                columns.append(col)
                continue
            break
        return cls(names, _priority_order(columns, opening, sorted(names), request))


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
