"""The registered discrete ids (``gym.make("Hear2Act-Prosody-Macro-v5")``) for SB3 users: spec, checkers, SB3."""

from __future__ import annotations

import importlib.util
import warnings

import gymnasium as gym
import numpy as np
import pytest

import hear2act_env
from hear2act.training.wrappers import MACRO, N_COLUMNS, N_OPTIONS, make_env
from hear2act_env import DISCRETE_ENV_IDS, MAX_EPISODE_STEPS, load_scenarios

SB3 = importlib.util.find_spec("stable_baselines3") is not None
SCENARIOS = load_scenarios()[:6]
# What gymnasium's checker says of any wrapped env (it would rather see env.unwrapped, the dict env here).
WRAPPED = "is different from the unwrapped version"


def test_the_ids_are_registered() -> None:
    assert set(DISCRETE_ENV_IDS) == {"Hear2Act-Prosody-Macro-v5", "Hear2Act-Prosody-Full-v5",
                                     "Hear2Act-Explicit-Macro-v5", "Hear2Act-Explicit-Full-v5"}
    for env_id, (base, action_set) in DISCRETE_ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.max_episode_steps == MAX_EPISODE_STEPS
        assert spec.kwargs == {"env_id": base, "action_set": action_set}
        assert base in hear2act_env.ENV_IDS


@pytest.mark.parametrize("env_id", sorted(DISCRETE_ENV_IDS))
def test_gym_make_and_check_env(env_id: str) -> None:
    env = gym.make(env_id, access="T+S", scenarios=SCENARIOS)
    assert env.spec is not None and env.spec.id == env_id and env.spec.max_episode_steps == MAX_EPISODE_STEPS
    n = len(MACRO) if DISCRETE_ENV_IDS[env_id][1] == "macro" else 3 + N_COLUMNS + N_OPTIONS
    assert env.action_space == gym.spaces.Discrete(n)
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    assert [str(w.message) for w in caught if WRAPPED not in str(w.message)] == []
    if SB3:
        from stable_baselines3.common.env_checker import check_env as sb3_check

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sb3_check(env, warn=True)
        assert [str(w.message) for w in caught] == []


def test_same_env_as_make_env() -> None:
    """The registered id is the documented make_env, plus the TimeLimit: same observations, same rewards."""
    a = gym.make("Hear2Act-Explicit-Full-v5", access="T", scenarios=SCENARIOS)
    b = make_env("Hear2Act-Explicit-v5", "T", action_set="full", scenarios=SCENARIOS)
    obs_a, _ = a.reset(seed=3)
    obs_b, _ = b.reset(seed=3)
    np.testing.assert_array_equal(obs_a, obs_b)
    for action in (3, 1, 0, 14, 2):
        step_a, step_b = a.step(action), b.step(action)
        np.testing.assert_array_equal(step_a[0], step_b[0])
        assert step_a[1:4] == step_b[1:4]
        if step_a[2] or step_a[3]:
            break


def test_max_episode_steps_is_the_envs_own_turn_limit() -> None:
    """An agent that only asks runs into the env's turn limit exactly at spec.max_episode_steps."""
    env = gym.make("Hear2Act-Prosody-Macro-v5", access="T+S", scenarios=SCENARIOS)
    for seed in range(3):
        env.reset(seed=seed)
        steps, terminated, truncated = 0, False, False
        while not (terminated or truncated):
            _, _, terminated, truncated, _ = env.step(MACRO.index("ask"))
            steps += 1
        assert (steps, terminated, truncated) == (MAX_EPISODE_STEPS, False, True)
        assert env.unwrapped.engine.turn == env.unwrapped.max_turns  # the env's own limit, not only the TimeLimit


@pytest.mark.skipif(not SB3, reason="needs stable-baselines3")
def test_sb3_make_vec_env_by_id() -> None:
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("Hear2Act-Prosody-Macro-v5", n_envs=2, seed=0,
                        env_kwargs={"access": "T+S", "scenarios": SCENARIOS})
    obs = venv.reset()
    assert obs.shape == (2, *venv.observation_space.shape)
    _, rewards, dones, _ = venv.step(np.array([2, 3]))
    assert rewards.shape == (2,) and dones.shape == (2,)
    venv.close()
