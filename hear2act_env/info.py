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


def outcome(s: Scenario, engine: UserEngine, recommendations: Sequence[int], counts: Mapping[str, int],
            terminated: bool) -> dict[str, Any]:
    """``info["outcome"]`` of a finished episode: success, the final option, disclosure, recommendation fits."""
    final = engine.current
    fits = [assess(s, n) for n in recommendations]
    accepts = sum(a.issue in ("none", "L3", "safe") for a in fits)
    fullfits = sum(a.issue in ("none", "safe") for a in fits)
    n = len(fits)
    return {
        "scenario_id": s.id,
        "success": final == s.gold,
        "final_option": final,
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


__all__ = ["NOT_ASKED", "outcome", "routing", "step_info"]
