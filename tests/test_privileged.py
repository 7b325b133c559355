"""The privileged training API: env.fork() and env.ground_truth()."""

from __future__ import annotations

import gymnasium as gym
import pytest

from hear2act_env.dialogue.actions import format_action
from hear2act_env.dialogue.engine import assess


def _env(access: str = "T+S"):
    return gym.make("Hear2Act-Prosody-v5", access=access, disable_env_checker=True).unwrapped


def test_before_reset_both_are_clear_errors():
    env = _env()
    for call in (env.fork, env.ground_truth):
        with pytest.raises(RuntimeError, match="has not been reset"):
            call()


def test_ground_truth_agrees_with_info_and_the_outcome():
    env = _env()
    _, info = env.reset(seed=4, options={"scenario_id": "budget-airline-tickets-01"})
    truth = env.ground_truth()
    s = truth.scenario
    assert s.id == info["scenario_id"] and truth.gold == s.gold and truth.current == s.opening
    assert truth.current_state == assess(s, s.opening).state and truth.state == info["state"]
    assert truth.delivery == info["delivery"] and truth.turn == info["turn"] and not truth.done
    _, _, _, _, info = env.step(format_action("recommend", "This one?", s.gold))
    _, _, terminated, _, info = env.step(format_action("confirm", "Great."))
    truth = env.ground_truth()
    assert terminated and truth.done and truth.current == s.gold == info["outcome"]["final_option"]
    assert truth.disclosed == frozenset(info["disclosed"])
    assert "scenario=" not in repr(truth)  # the hidden scenario is not dumped into logs


def test_fork_is_independent_and_shares_the_immutable_parts():
    env = _env()
    env.reset(seed=2, options={"scenario_id": "budget-airline-tickets-01"})
    before = (env.transcript, env.ground_truth().turn)
    fork = env.fork()
    assert fork.scenarios is env.scenarios and fork.observation_space is env.observation_space
    assert fork.engine is not env.engine
    fork.step(format_action("ask", "Is there anything else I should know?"))
    assert (env.transcript, env.ground_truth().turn) == before and fork.ground_truth().turn == before[1] + 1
    # the fork continues exactly as the original would
    obs_f, *_ = fork.step(format_action("confirm", "Done."))
    env.step(format_action("ask", "Is there anything else I should know?"))
    obs_e, *_ = env.step(format_action("confirm", "Done."))
    assert obs_f == obs_e
