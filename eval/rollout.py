"""Run agents in the environment and collect one outcome row per episode."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import gymnasium as gym

import hear2act_env
from hear2act.agents import Agent, make_agent


def play(env: gym.Env, agent: Agent, scenario_id: str, seed: int) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """One rollout, turn by turn: yields (observation, info) after the reset and after every step.

    Between yields the env stands at that turn, so callers can read its state (the
    utterance just spoken, the transcript). The last info holds ``"outcome"``.
    """
    obs, info = env.reset(seed=seed, options={"scenario_id": scenario_id})
    agent.reset(obs, info)
    yield obs, info
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        done = terminated or truncated
        yield obs, info


def run_episode(env: gym.Env, agent: Agent, scenario_id: str, seed: int) -> dict[str, Any]:
    """One rollout; returns ``info["outcome"]`` plus the transcript."""
    *_, (_, info) = play(env, agent, scenario_id, seed)
    outcome = dict(info["outcome"])
    outcome["transcript"] = env.unwrapped.transcript
    return outcome


def run_condition(
    env_id: str,
    agent_name: str,
    access: str = "T",
    state_intervention: str = "correct",
    scenario_ids: Iterable[str] | None = None,
    seed: int = 0,
    **agent_kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Every scenario (or the given ones) once under one condition, seeds ``seed + i``."""
    if env_id not in hear2act_env.ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; choose from {sorted(hear2act_env.ENV_IDS)}")
    env = gym.make(env_id, access=access, state_intervention=state_intervention,
                   disable_env_checker=True)
    agent = make_agent(agent_name, **agent_kwargs)
    ids = list(scenario_ids) if scenario_ids is not None else [s.id for s in env.unwrapped.scenarios]
    for i, sid in enumerate(ids):
        row = run_episode(env, agent, sid, seed + i)
        row.update(
            env_id=env_id, agent=agent_name, access=access, intervention=state_intervention, seed=seed + i
        )
        yield row
