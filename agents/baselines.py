"""Floor baselines: a uniformly random assistant and one that confirms at once."""

from __future__ import annotations

from typing import Any

import numpy as np

from hear2act_env.dialogue.actions import format_action

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
