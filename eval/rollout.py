"""Rollouts of one condition: a one-cell grid played by the engine, plus a turn-by-turn loop for Agent objects.

``hear2act rollout --agent SPEC --access A --seed S`` is the one-cell grid of (SPEC, the env's realization,
condition A) under grid seed S: its episodes have the seeds and rollout ids that ``hear2act eval`` gives
the same cell (:func:`hear2act.eval.grid.episode_seed`, :func:`hear2act.eval.grid.rollout_id`), and they are
played by the
one rollout loop, :func:`hear2act.eval.engine.run_episodes`, whatever the agent (rule agent or model).
:func:`play` and :func:`run_episode` step a single :class:`hear2act.agents.Agent` object by hand (a custom agent
that is not registered, or a caller that reads the env between turns).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import gymnasium as gym

import hear2act_env
from hear2act.agents import Agent

from .engine import EpisodeSpec, run_episodes
from .grid import Cell, Grid, Rollout

ROLLOUT_SUBSET = "rollout"


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
    """One rollout of an Agent object; returns ``info["outcome"]`` plus the transcript."""
    *_, (_, info) = play(env, agent, scenario_id, seed)
    outcome = dict(info["outcome"])
    outcome["transcript"] = env.unwrapped.transcript
    return outcome


def rollout_cell(agent: str, env_id: str, access: str = "T", intervention: str = "correct",
                 perceiver: str = "") -> Cell:
    """The grid cell ``hear2act rollout`` plays: agent label = spec, condition label = access, no renderer label."""
    if env_id not in hear2act_env.ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; choose from {sorted(hear2act_env.ENV_IDS)}")
    return Cell(block="rollout", kind="other", agent=agent, agent_spec=agent, realization=hear2act_env.ENV_IDS[env_id],
                condition=access, access=access, affect="", intervention=intervention, renderer="",
                renderer_spec="", scenarios=ROLLOUT_SUBSET, repeats=1, perceiver=perceiver)


def one_cell_grid(cell: Cell, scenario_ids: Iterable[str] | None = None, seed: int = 0) -> Grid:
    """A grid of that one cell over the given scenarios (default: the whole bank), repeat 0, grid seed ``seed``."""
    subset: list[str] | str = "all" if scenario_ids is None else list(scenario_ids)
    return Grid("rollout", seed, [cell], {ROLLOUT_SUBSET: subset})


def episode_spec(r: Rollout, env_kwargs: Mapping[str, Any] | None = None) -> EpisodeSpec:
    """The engine's spec of one planned rollout (``hear2act eval`` and ``hear2act rollout`` alike)."""
    return EpisodeSpec(r.cell.env_id, r.scenario_id, r.seed, r.cell.access, r.cell.intervention,
                       dict(env_kwargs or {}), key=r.rollout_id)


def condition_specs(env_id: str, agent: str, access: str = "T", state_intervention: str = "correct",
                    scenario_ids: Iterable[str] | None = None, seed: int = 0,
                    env_kwargs: Mapping[str, Any] | None = None, perceiver: str = "") -> list[EpisodeSpec]:
    """The specs of ``hear2act rollout``: the one-cell grid's rollouts, in scenario order."""
    grid = one_cell_grid(rollout_cell(agent, env_id, access, state_intervention, perceiver), scenario_ids, seed)
    return [episode_spec(r, env_kwargs) for r in grid.expand()]


def run_condition(
    env_id: str,
    agent_name: str,
    access: str = "T",
    state_intervention: str = "correct",
    scenario_ids: Iterable[str] | None = None,
    seed: int = 0,
    *,
    batch_size: int = 16,
    **agent_kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Every scenario (or the given ones) once under one condition: ``info["outcome"]`` per episode, plus its id.

    The episodes of ``hear2act rollout --agent AGENT --seed SEED`` (the one-cell grid under grid seed
    ``seed``), played by the engine; ``agent_kwargs`` go to :func:`hear2act.agents.make_policy`.
    """
    from hear2act.agents import make_policy

    specs = condition_specs(env_id, agent_name, access, state_intervention, scenario_ids, seed)
    policy = make_policy(agent_name, access=access, **agent_kwargs)
    for spec, traj in zip(specs, run_episodes(specs, policy, batch_size=batch_size), strict=True):
        if not traj.scored:
            raise RuntimeError(f"{spec.scenario_id}: episode failed ({traj.failed})")
        yield {**traj.outcome, "env_id": env_id, "agent": agent_name, "access": access,
               "intervention": state_intervention, "seed": spec.seed, "rollout_id": spec.key}
