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
