"""The env's ``info`` dicts: one per step, and the episode's ``outcome`` at its end.

Every key has one type on every step (no ``None`` leaves: ``0``, ``""`` or
NaN stand for "nothing"), so Gymnasium's vector envs can stack the infos of
sub-envs that took different actions in the same step. The keys are
documented on :class:`hear2act_env.env.Hear2ActEnv` (its ``## Information``
section).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .dialogue.actions import Action
from .dialogue.engine import Reaction, UserEngine, assess
from .dialogue.matching import Target
from .scenarios import Scenario

NOT_ASKED: dict[str, Any] = {"target": "", "attribute": "", "level": 0}  # info["question"] on a non-ASK step


def routing(target: Target | None) -> dict[str, Any]:
    """``info["question"]``: where an ASK question was routed (fixed leaf types: str, str, int).

    >>> routing(None)
    {'target': 'general', 'attribute': '', 'level': 0}
    """
    if target is None:
        return {"target": "general", "attribute": "", "level": 0}
    return {"target": target.kind, "attribute": target.attribute, "level": target.level or 0}


def step_info(reaction: Reaction, action: Action, engine: UserEngine) -> dict[str, Any]:
    """The info of one step: the user's true state and delivery, the action as read, the dialogue's position."""
    return {
        "state": reaction.state,
        "delivery": reaction.delivery,
        "action": action.kind,
        "invalid_action": action.error,
        "action_note": action.note,
        "disclosed": tuple(sorted(engine.disclosed)),
        "current": engine.current,
        "turn": engine.turn,
        "question": routing(reaction.question) if action.kind == "ask" else dict(NOT_ASKED),
    }


def need_fit(satisfies: Sequence[bool]) -> float:
    """How well an option meets the three hidden needs, L1 (hard) 3, L2 (strong) 2, L3 (moderate) 1, over 6.

    >>> need_fit((True, True, True)), need_fit((True, False, True)), need_fit((False, True, True))
    (1.0, 0.6666666666666666, 0.5)
    """
    return (3.0 * bool(satisfies[0]) + 2.0 * bool(satisfies[1]) + 1.0 * bool(satisfies[2])) / 6.0


def outcome(s: Scenario, engine: UserEngine, recommendations: Sequence[int], counts: Mapping[str, int],
            terminated: bool) -> dict[str, Any]:
    """``info["outcome"]`` of a finished episode: success, the final option, disclosure, recommendation fits."""
    final = engine.current
    fits = [assess(s, n) for n in recommendations]
    accepts = sum(a.issue in ("none", "L3", "safe") for a in fits)
    fullfits = sum(a.issue in ("none", "safe") for a in fits)
    n = len(fits)
    final_opt = s.option(final) if final else None
    return {
        "scenario_id": s.id,
        "success": final == s.gold,
        "final_option": final,
        # The final option's need fit, L1-L3 weighted 3:2:1 (0 when it violates the request): graded, verifiable.
        "final_fit": need_fit(final_opt.satisfies) if final_opt is not None and final_opt.meets_request else 0.0,
        "confirmed": terminated,
        "turns": engine.turn,
        "premature_closure": terminated and final != s.gold,
        "full_disclosure": len(engine.disclosed) == 3,
        "n_disclosed": len(engine.disclosed),
        "recommendations": n,
        "accepts": accepts,
        "fullfits": fullfits,
        "accept_rate": accepts / n if n else math.nan,  # NaN, not None: one float type for vector envs
        "fullfit_rate": fullfits / n if n else math.nan,
        "action_counts": dict(counts),
    }


__all__ = ["NOT_ASKED", "need_fit", "outcome", "routing", "step_info"]
