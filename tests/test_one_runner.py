"""One rollout runner: the same agent spec gives the same trajectory through every entry point.

``hear2act rollout`` (a one-cell grid), ``hear2act eval`` (a grid with that cell),
:func:`hear2act.eval.rollout.run_condition`
and GRPO's held-out play (:func:`hear2act.training.episodes.play`) all play
:func:`hear2act.eval.engine.run_episodes` with the
same episode seeds and rollout ids; PPO's evaluation plays the same loop on the discrete-action env and gives
what a plain step loop gives. Metrics come from one numerator/denominator table (:mod:`hear2act.eval.metrics`).
"""

from __future__ import annotations

import json
import math

import pytest

from hear2act.eval.engine import run_episodes
from hear2act.eval.grid import episode_seed
from hear2act.eval.metrics import TABLE, summarize, value
from hear2act.eval.rollout import condition_specs, run_condition
from hear2act.eval.rundir import read_run
from hear2act.eval.trajectory import Trajectory
from hear2act_env import load_scenarios
from hear2act_env.cli import main

SEED = 5
N = 4
GRID = """name = "one-cell"
seed = {seed}

[scenarios]
first = "first:{n}"

[[block]]
name = "text"
kind = "text"
agents = ["{agent}"]
realizations = ["prosody"]
conditions = ["{access}"]
repeats = 1
scenarios = "first"
"""


def _rollout(tmp_path, agent: str, access: str) -> list[dict]:
    path = tmp_path / "rollout.jsonl"
    assert main(["rollout", "--agent", agent, "--access", access, "--n", str(N), "--seed", str(SEED), "--quiet",
                 "--out", str(path)]) == 0
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _eval(tmp_path, agent: str, access: str) -> list[dict]:
    grid = tmp_path / "one.toml"
    grid.write_text(GRID.format(seed=SEED, n=N, agent=agent, access=access), encoding="utf-8")
    assert main(["eval", str(grid), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    return [row["trajectory"] for row in sorted(read_run(tmp_path / "run"), key=lambda r: r["scenario_id"])]


@pytest.mark.parametrize(("agent", "access"), [("state-rule", "T+S"), ("transcript-rule", "T"), ("random", "T")])
def test_rollout_and_eval_play_the_same_trajectories(tmp_path, capsys, agent, access):
    ids = [s.id for s in load_scenarios()[:N]]
    from_rollout = _rollout(tmp_path, agent, access)
    from_eval = _eval(tmp_path, agent, access)
    assert [t["scenario_id"] for t in from_rollout] == ids == [t["scenario_id"] for t in from_eval]
    assert [t["seed"] for t in from_rollout] == [episode_seed(SEED, sid, 0) for sid in ids]  # the grid's seeds
    assert from_rollout == from_eval  # every field: key (rollout id), opening, each turn, outcome
    direct = list(run_condition("Hear2Act-Prosody-v5", agent, access, scenario_ids=ids, seed=SEED))
    assert [{k: v for k, v in d.items() if k in t["outcome"]} for d, t in zip(direct, from_rollout, strict=True)] \
        == [t["outcome"] for t in from_rollout]
    assert [d["rollout_id"] for d in direct] == [t["key"] for t in from_rollout]


def test_grpo_held_out_play_gives_the_rollout_trajectories(tmp_path, capsys):
    from hear2act.agents import make_policy
    from hear2act.training.episodes import play

    from_rollout = _rollout(tmp_path, "state-rule", "T+S")
    rows = play(make_policy("state-rule", access="T+S"), [t["scenario_id"] for t in from_rollout], access="T+S",
                seeds=[t["seed"] for t in from_rollout], keys=[t["key"] for t in from_rollout])
    assert [r["trajectory"] for r in rows] == from_rollout
    assert [r["success"] for r in rows] == [t["outcome"]["success"] for t in from_rollout]


class _Macro:
    """A stand-in for an SB3 model: a fixed macro action from the vector observation (deterministic)."""

    def predict(self, obs, deterministic: bool = True):
        assert deterministic
        return int(sum(float(x) * (i + 1) for i, x in enumerate(obs)) * 7) % 4, None


def test_ppo_evaluation_plays_the_engine_as_a_plain_step_loop_did():
    pytest.importorskip("stable_baselines3")
    from hear2act.training.ppo import Args, _summary, evaluate
    from hear2act.training.splits import split_scenarios
    from hear2act.training.wrappers import make_env

    args = Args(access="T+S", max_scenarios=60, test_domains=1, test_per_domain=2)
    split = split_scenarios(load_scenarios()[:60], 1, 2, 0)
    got = evaluate(_Macro(), args, split)
    # The loop PPO evaluation was before it moved onto the engine: one env, reset, predict, step.
    scenarios = split["unseen_domain"] + split["unseen_scenario"]
    env = make_env(args.env_id, args.access, action_set=args.action_set, scenarios=scenarios, turn_cost=args.turn_cost)
    want = []
    for i, s in enumerate(scenarios):
        obs, _ = env.reset(seed=args.eval_seed + i, options={"scenario_id": s.id})
        total, done = 0.0, False
        while not done:
            action, _ = _Macro().predict(obs)
            obs, reward, terminated, truncated, info = env.step(int(action))
            total += float(reward)
            done = terminated or truncated
        o = info["outcome"]
        want.append({"split": "unseen_domain" if i < len(split["unseen_domain"]) else "unseen_scenario",
                     "scenario_id": s.id, "success": bool(o["success"]), "turns": int(o["turns"]),
                     "premature_closure": bool(o["premature_closure"]), "n_disclosed": int(o["n_disclosed"]),
                     "return": round(total, 6)})
    assert got["episodes"] == want
    assert got["overall"]["n"] == len(want)
    assert got["overall"]["success"] == round(sum(r["success"] for r in want) / len(want), 6)
    assert got["overall"]["turns"] == round(sum(r["turns"] for r in want) / len(want), 6)
    assert _summary([]) == {"n": 0}


def test_one_metrics_table_for_summaries_and_the_bootstrap():
    from hear2act.eval import stats

    specs = condition_specs("Hear2Act-Prosody-v5", "transcript-rule", "T", scenario_ids=[s.id for s in
                                                                                         load_scenarios()[:6]])
    from hear2act.agents import make_policy

    trajs = run_episodes(specs, make_policy("transcript-rule", access="T"))
    assert all(isinstance(t, Trajectory) and t.scored for t in trajs)
    outcomes = [t.outcome for t in trajs]
    s = summarize(outcomes)
    assert set(s) == {"n", *TABLE}
    assert s["success"] == 100 * (sum(o["success"] for o in outcomes) / len(outcomes))
    recs = sum(o["recommendations"] for o in outcomes)
    assert s["accept"] == 100 * (sum(o["accepts"] for o in outcomes) / recs)  # per recommendation turn, pooled
    assert stats.METRICS.keys() == TABLE.keys()
    rows = [{"scenario_id": t.scenario_id, "agent": "a", "outcome": t.outcome, "failed": None} for t in trajs]
    for metric in TABLE:
        pooled = stats.pooled_value(rows, metric)
        assert math.isclose(pooled, s[metric]) or (math.isnan(pooled) and math.isnan(s[metric])), metric
    assert math.isnan(value([], "success"))


def test_trajectory_reads_as_its_json_object():
    specs = condition_specs("Hear2Act-Explicit-v5", "oracle", "T", scenario_ids=[load_scenarios()[0].id])
    from hear2act.agents import make_policy

    [t] = run_episodes(specs, make_policy("oracle", access="T"))
    d = json.loads(json.dumps(t.to_dict()))
    assert list(d) == ["key", "env_id", "scenario_id", "seed", "access", "intervention", "agent", "prompt_version",
                       "failed", "outcome", "opening", "turns", "parse_failures", "n_tokens"]  # the schema, in order
    assert t == d and d == t and dict(t) == t.to_dict() and t["outcome"] is t.outcome
    assert Trajectory.from_dict(d) == t
    with pytest.raises(ValueError, match="missing"):
        Trajectory.from_dict({k: v for k, v in d.items() if k != "turns"})
