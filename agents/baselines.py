"""Floor baselines: a uniformly random assistant and one that confirms at once."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from hear2act_env.dialogue.actions import format_action, parse_action
from hear2act_env.scenarios.profile import average_ranks

from .rule import PROBLEM_CUES, numeric_columns

QUESTIONS = (
    "Is there anything else that matters to you?",
    "What would make this a better fit for you?",
    "How do you feel about this option?",
)


class RandomAgent:
    """Picks ask / clarify / recommend(random option) / confirm uniformly.

    Its own generator is seeded at construction and re-seeded from the reset
    observation's scenario id, so a rollout is reproducible.
    """

    name = "random"

    def __init__(self, seed: int = 0, n_options: int = 11) -> None:
        self.seed = seed
        self.n_options = n_options
        self.rng = np.random.default_rng(seed)

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        key = sum(map(ord, str(info.get("scenario_id", ""))))
        self.rng = np.random.default_rng([self.seed, key])

    def act(self, observation: dict[str, str]) -> str:
        kind = ("ask", "clarify", "recommend", "confirm")[int(self.rng.integers(4))]
        if kind == "recommend":
            n = int(self.rng.integers(1, self.n_options + 1))
            return format_action("recommend", "How about this one?", n)
        if kind == "ask":
            return format_action("ask", QUESTIONS[int(self.rng.integers(len(QUESTIONS)))])
        return format_action(kind, "")


class ConfirmImmediatelyAgent:
    """Confirms whatever is recommended: the standardised opening, every turn."""

    name = "confirm"

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, str]) -> str:
        return format_action("confirm", "Great, let's go with that.")


# The better direction of a numeric option column, read as a shopper would: money and
# waiting are costs (lower is better); ratings, scores, rates and battery are not.
_COST_COLUMN = re.compile(r"\$|%\s*(?:APR|expense|of assets)|\bmiles?\b|\bdays?\b(?!-)|\bwait", re.IGNORECASE)


def value_ranking(options_text: str, exclude: tuple[int, ...] = ()) -> list[int]:
    """Option numbers best value first, from the options text alone.

    Each trailing numeric fact of an option line ("$129/month", "rated 4.3/5") is a
    column; every column is ranked in its common-sense direction and the ranks are
    summed (the options-only shortcut of PROTOCOL.md "Scenario", which the bank must
    defeat). Ties go to the lower option number.

    >>> text = "1. A: x, $10, rated 4.0/5\\n2. B: y, $20, rated 4.9/5\\n3. C: z, $9, rated 4.8/5"
    >>> value_ranking(text)
    [3, 2, 1]
    >>> value_ranking(text, exclude=(3,))
    [1, 2]
    """
    names, _ = numeric_columns(options_text)
    numbers = [n for n in names if n not in exclude]
    _, columns = numeric_columns(options_text, among=numbers)
    total = dict.fromkeys(numbers, 0.0)
    for cell, values in columns:
        sign = 1.0 if _COST_COLUMN.search(cell) else -1.0
        ranks = average_ranks(np.array([sign * values[n] for n in numbers]))  # ties share their mean place
        for n, rank in zip(numbers, ranks.tolist(), strict=True):
            total[n] += rank
    return sorted(numbers, key=lambda n: (total[n], n))


class OptionsValueAgent:
    """Never asks: recommends the best-value option by the options text, confirms unless refused.

    The options-only floor of every report (PROTOCOL.md "Scenario": what is visible
    must not rank the gold). It walks :func:`value_ranking` (the opening excluded),
    moves on when the user's words object (the transcript-rule agent's cues), and
    confirms the first option met without objection.
    """

    name = "options-value"

    def __init__(self) -> None:
        self.order: list[int] = []
        self.current: int | None = None

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        lines = observation.get("transcript", "").splitlines()
        said = [parse_action(x[len("Assistant: "):]) for x in lines if x.startswith("Assistant: ")]
        opening = next((a.option for a in said if a.kind == "recommend"), None)
        self.order = value_ranking(observation["options"], exclude=(opening,) if opening else ())
        self.current = None

    def act(self, observation: dict[str, str]) -> str:
        lines = observation.get("transcript", "").splitlines()
        last = parse_action(lines[-2][len("Assistant: "):]) if len(lines) >= 2 else None
        if self.current is not None and last is not None:
            objected = last.kind == "confirm" or bool(PROBLEM_CUES.search(lines[-1]))
            if not objected:
                return format_action("confirm", "Great, let's go with that one.")
        if not self.order:
            return format_action("confirm", "Let's go with this one.")
        self.current = self.order.pop(0)
        return format_action("recommend", "How about this one?", self.current)
