"""The privileged oracle: reads the hidden scenario (opt-in, by name) and reaches the gold.

It asks one targeted question per hidden need, then recommends the gold and
confirms. It is an upper bound and an integration check of the protocol
(disclosure via targeted questions, gold reachable), not a fair baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hear2act_env import Scenario, load_scenarios
from hear2act_env.dialogue.actions import format_action
from hear2act_env.dialogue.matchers import Matcher, default_matcher


def targeted_question(scenario: Scenario, level: int, matcher: Matcher | None = None) -> str:
    """A question the user engine (with the default matcher, or ``matcher``) reads as targeted at need ``level``."""
    route = matcher or default_matcher()
    need = scenario.need(level)
    for word in (*need.keywords, *scenario.attribute(need.attribute).keywords):
        question = f"How do you feel about {word}?"
        target = route(scenario, question)
        if target is not None and target.level == level:
            return question
    return f"How do you feel about {scenario.attribute(need.attribute).label}?"


class OracleAgent:
    """PRIVILEGED: uses the scenario's hidden needs and gold."""

    name = "oracle"

    def __init__(self, scenarios: Sequence[Scenario] | None = None) -> None:
        self._by_id = {s.id: s for s in (scenarios if scenarios is not None else load_scenarios())}
        self._plan: list[str] = []

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        s = self._by_id[info["scenario_id"]]
        gold = s.option(s.gold)
        self._plan = [format_action("ask", targeted_question(s, level)) for level in (1, 2, 3)]
        self._plan += [
            format_action("recommend", f"Then {gold.name} fits everything you need.", s.gold),
            format_action("confirm", "Great, I'll set that up."),
        ]

    def act(self, observation: dict[str, str]) -> str:
        return self._plan.pop(0) if self._plan else format_action("confirm", "Let's go with it.")
