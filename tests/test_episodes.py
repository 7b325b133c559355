"""Episode-level GRPO: the held-out split of every shipped config, and a reward whose optimum is success.

For every GRPO configuration shipped in ``training/configs`` (and the CLI
defaults): the scenarios it trains on never meet the held-out evaluation
scenarios; and, for every one in episode mode, whole episodes played in the env
by the policies that never win -- stalling ("ASK whenever the tag says
unresolved, else CONFIRM"), always ASK, confirm at once -- score strictly
below the task-solving ones (oracle, state-rule) under that config's episode
reward.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

from hear2act.training.episodes import AgentPolicy, EpisodeReward, explain, make_reference, play, summarize
from hear2act.training.splits import bundled_split, eval_ids, train_ids
from hear2act_env import load_scenarios

CONFIGS = sorted(p for p in Path("training/configs").glob("*.yaml") if "distributed_type" not in p.read_text())
SOLVERS = ("oracle", "state-rule")
NON_SOLVERS = ("stall", "always-ask", "confirm")


def _parse(config: Path | None, tmp_path: Path):
    from hear2act.training.grpo import parse

    argv = ["--model", "m", "--output_dir", str(tmp_path), "--bf16", "false", "--use_cpu", "true"]
    return parse((["--config", str(config)] if config else []) + argv)


def test_shipped_grpo_configs_are_found():
    names = {p.name for p in CONFIGS}
    assert {"cesar_omni7b.yaml", "text_vllm.yaml", "episode_ts.yaml"} <= names


@pytest.mark.parametrize("config", [None, *CONFIGS], ids=lambda p: p.name if p else "cli-defaults")
def test_no_shipped_config_trains_on_an_evaluation_scenario(config, tmp_path):
    from hear2act.training.grpo import heldout_ids, split_spec, training_episodes

    args, _ = _parse(config, tmp_path)
    trained = {sid for sid, _ in training_episodes(args)}
    held = set(heldout_ids(args))
    assert trained and held and not trained & held
    split = bundled_split(split_spec(args))
    assert held <= set(eval_ids(split)) and trained <= {s.id for s in split["train"]}
    # unseen domains really are unseen: no training scenario shares a domain with them
    assert not {s.domain for s in split["train"]} & {s.domain for s in split["unseen_domain"]}


def test_split_is_deterministic_and_disjoint():
    a, b = bundled_split(), bundled_split()
    assert [s.id for s in a["train"]] == [s.id for s in b["train"]]
    assert len(set(eval_ids(a))) + len(a["train"]) == len(load_scenarios())
    assert set(train_ids(a)) == {s.id for s in a["train"]}


def _episode_configs(tmp_path: Path) -> list[tuple[str, EpisodeReward, bool]]:
    out = []
    for config in [None, *CONFIGS]:
        args, _ = _parse(config, tmp_path)
        if args.mode == "episode":
            out.append((config.name if config else "cli-defaults", EpisodeReward.from_args(args), args.reasoning))
    return out


def test_every_shipped_episode_reward_ranks_solving_above_stalling(tmp_path):
    configs = _episode_configs(tmp_path)
    assert configs, "no episode-mode config shipped"
    ids = train_ids(bundled_split(), 24)
    bank = load_scenarios()
    for name, reward, reasoning in configs:
        means = {}
        for agent in SOLVERS + NON_SOLVERS:
            rows = play(AgentPolicy(lambda a=agent: make_reference(a, bank), reasoning=reasoning), ids,
                        access="T+S", config=reward)
            means[agent] = summarize(rows)["reward"]
            if agent in NON_SOLVERS:
                assert summarize(rows)["success"] < 0.5, (name, agent)
        worst_solver = min(means[a] for a in SOLVERS)
        for agent in NON_SOLVERS:
            assert means[agent] < worst_solver, (name, agent, means)


def test_stalling_reasoning_cannot_buy_back_the_outcome():
    """The process terms average over turns: 20 perfectly formatted stalling turns gain nothing over one."""
    reward = EpisodeReward()
    ids = train_ids(bundled_split(), 8)
    stall = play(AgentPolicy(lambda: make_reference("stall")), ids, config=reward)
    assert all(r["turns"] == 20 and r["success"] == 0 for r in stall)
    assert all(r["reward"] <= -reward.turn_cost * 20 + reward.process_range() for r in stall)


def test_episode_reward_refuses_weights_that_could_outweigh_success():
    with pytest.raises(ValueError, match="outweigh"):
        EpisodeReward(process={"format": 0.3, "consistency": 0.3})
    with pytest.raises(ValueError, match="unknown"):
        EpisodeReward(process={"vibes": 0.1})


def test_explain_states_the_action_it_takes():
    from hear2act.training.rewards import consistency_reward

    obs = {"transcript": "User: That works.", "state": "CONCERN STATE: relieved (resolved)",
           "options": "1. A: x\n2. B: y\n3. C: z"}
    for action in ("[ACTION: CONFIRM] Done.", "[ACTION: RECOMMEND] [OPTION: 2] B?", "[ACTION: ASK] Why?"):
        text = f"<think>{explain(obs, action)}</think><answer>{action}</answer>"
        assert consistency_reward([text]) == [1.0], text


def test_failure_cost_horizon_charges_every_failure_alike():
    """A failure that closes at once and one that stalls to the turn limit get the same outcome under
    ``failure_cost="horizon"``; under the env's own return (``"turns"``) closing early is cheaper."""
    ids = train_ids(bundled_split(), 8)
    outcome = {}
    for failure in ("horizon", "turns"):
        reward = EpisodeReward(turn_cost=0.05, process={}, failure_cost=failure)
        for agent in ("confirm", "stall"):
            rows = play(AgentPolicy(lambda a=agent: make_reference(a), reasoning=False), ids, config=reward)
            assert not any(r["success"] for r in rows)
            outcome[failure, agent] = [r["outcome"] for r in rows]
    assert outcome["horizon", "confirm"] == outcome["horizon", "stall"] == [-0.05 * 20] * len(ids)
    assert all(c >= s for c, s in zip(outcome["turns", "confirm"], outcome["turns", "stall"], strict=True))
    assert sum(outcome["turns", "confirm"]) > sum(outcome["turns", "stall"])
    with pytest.raises(ValueError, match="failure_cost"):
        EpisodeReward(failure_cost="never")


def test_successes_keep_the_turn_cost_under_either_failure_cost():
    ids = train_ids(bundled_split(), 6)
    for failure in ("horizon", "turns"):
        rows = play(AgentPolicy(lambda: make_reference("state-rule"), reasoning=False), ids,
                    config=EpisodeReward(turn_cost=0.05, process={}, failure_cost=failure))
        assert all(r["success"] == 1.0 for r in rows)
        assert [r["outcome"] for r in rows] == [pytest.approx(1.0 - 0.05 * r["turns"]) for r in rows]


def test_fit_credit_orders_wrong_closings_and_leaves_success_on_top():
    """``fit_credit``: a failed CONFIRM earns credit x the confirmed option's need fit (``final_fit``), a stall
    (never confirmed) none, a success exactly what it earned before; at the largest credit the weights allow,
    the policies that never win still score below the ones that solve the task."""
    from hear2act_env.info import need_fit

    bank = {s.id: s for s in load_scenarios()}
    ids = train_ids(bundled_split(), 12)
    plain = EpisodeReward(turn_cost=0.01, process={})
    credit = EpisodeReward(turn_cost=0.01, process={}, fit_credit=0.3)
    confirm = play(AgentPolicy(lambda: make_reference("confirm"), reasoning=False), ids, config=credit)
    closed = 0
    for row in confirm:
        out = row["trajectory"]["outcome"]
        s = bank[out["scenario_id"]]
        assert out["final_fit"] == need_fit(s.option(out["final_option"]).satisfies)
        closed += out["confirmed"]
        assert row["outcome"] == pytest.approx(-0.01 * 20 + 0.3 * out["final_fit"] * out["confirmed"])
    assert closed >= len(ids) // 2
    fits = {row["trajectory"]["outcome"]["final_fit"] for row in confirm}
    assert len(fits) > 1 and max(fits) < 1.0  # graded, and the opening never meets every need
    stall = play(AgentPolicy(lambda: make_reference("stall"), reasoning=False), ids, config=credit)
    assert [r["outcome"] for r in stall] == [pytest.approx(-0.01 * 20)] * len(ids)
    solved = [play(AgentPolicy(lambda: make_reference("state-rule"), reasoning=False), ids, config=c)
              for c in (plain, credit)]
    assert all(r["success"] for r in solved[0])
    assert [r["outcome"] for r in solved[0]] == [r["outcome"] for r in solved[1]]
    top = EpisodeReward(turn_cost=0.05, process={}, fit_credit=0.49)
    means = {a: summarize(play(AgentPolicy(lambda a=a: make_reference(a, list(bank.values())), reasoning=False),
                               ids, access="T+S", config=top))["reward"] for a in SOLVERS + NON_SOLVERS}
    assert max(means[a] for a in NON_SOLVERS) < min(means[a] for a in SOLVERS), means
    with pytest.raises(ValueError, match="fit_credit"):
        EpisodeReward(process={"format": 0.1, "consistency": 0.1}, fit_credit=0.3)
    with pytest.raises(ValueError, match="fit_credit"):
        EpisodeReward(fit_credit=-0.1)


def test_tag_decisions_separate_the_tag_reader_from_the_words_only_explorer():
    ids = train_ids(bundled_split(), 24)
    rates = {name: summarize(play(AgentPolicy(lambda n=name: make_reference(n), reasoning=False), ids,
                                  config=EpisodeReward())) for name in ("explore-tag", "explore:0.5")}
    assert rates["explore-tag"]["confirm_if_resolved"] == 1.0
    assert rates["explore-tag"]["confirm_if_unresolved"] == 0.0
    words = rates["explore:0.5"]
    assert words["confirm_if_unresolved"] > 0.0 and words["confirm_if_resolved"] < 1.0
