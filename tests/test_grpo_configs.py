"""Every GRPO configuration shipped in ``training/configs``: does its reward rank solving above stalling?

Episode mode (``mode: episode``): whole episodes played in the env by the
policies that never win -- stalling ("ASK whenever the tag says unresolved,
else CONFIRM"), always ASK, confirm at once -- score strictly below the
task-solving ones (oracle, state-rule) under that config's episode reward
(``tests/test_episodes.py`` checks the same on more scenarios).

State mode (``mode: state``, CESAR's one-step replication; the only mode that
carries audio into the loss or generates with vLLM, so ``cesar_omni7b.yaml``
and ``text_vllm.yaml`` stay in it): the reward scores one decision. Issue 19
found its optimum stalled (ASK scored 1 whenever the tag said unresolved);
ASK is now worth 0.5 only while something is left to find out
(:func:`hear2act.training.grpo_data.action_value`), and the test asserts that
the weighted per-state reward (accuracy and process terms) of the never-winning
policies' decisions along their own episodes is strictly below the solvers'.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

from hear2act.training.episodes import AgentPolicy, EpisodeReward, make_reference, play, summarize, turn_terms
from hear2act.training.grpo_data import DialogueState, score_action
from hear2act.training.splits import bundled_split, train_ids
from hear2act_env import load_scenarios

CONFIGS = sorted(p for p in Path("training/configs").glob("*.yaml") if "distributed_type" not in p.read_text())
SOLVERS = ("oracle", "state-rule")
NON_SOLVERS = ("stall", "always-ask", "confirm")


def _parse(config: Path, tmp_path: Path):
    from hear2act.training.grpo import parse

    return parse(["--config", str(config), "--model", "m", "--output_dir", str(tmp_path), "--bf16", "false",
                  "--use_cpu", "true"])


def _play(agent: str, ids: list[str], reward: EpisodeReward, reasoning: bool) -> list[dict]:
    bank = load_scenarios()
    return play(AgentPolicy(lambda: make_reference(agent, bank), reasoning=reasoning), ids, access="T+S",
                config=reward)


def test_every_shipped_config_is_covered():
    names = {p.name for p in CONFIGS}
    assert {"cesar_omni7b.yaml", "text_vllm.yaml", "episode_ts.yaml"} <= names


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_shipped_config_reward_ranks_solving_above_stalling_or_says_it_does_not(config, tmp_path):
    args, _ = _parse(config, tmp_path)
    ids = train_ids(bundled_split(), 12)
    if args.mode == "episode":
        reward = EpisodeReward.from_args(args)
        means = {a: summarize(_play(a, ids, reward, args.reasoning))["reward"] for a in SOLVERS + NON_SOLVERS}
        for agent in NON_SOLVERS:
            assert means[agent] < min(means[a] for a in SOLVERS), (config.name, agent, means)
        # what GRPO is asked to learn from the words-only warm start: reading the tag must pay
        tag = {a: summarize(_play(a, ids, reward, args.reasoning))["reward"] for a in ("explore-tag", "explore:0.5")}
        for agent in ("explore:0.5", "confirm", "stall"):
            assert {**means, **tag}[agent] < tag["explore-tag"], (config.name, agent, tag, means)
        return
    assert args.mode == "state", (config.name, args.mode)
    # CESAR's weighted per-state reward of each decision along the policy's own episodes: accuracy (the env's
    # verifiable value, hear2act.training.grpo_data.action_value) plus the process terms, scored on the text view
    names = [n.strip() for n in args.rewards.split(",") if n.strip()]
    weights = dict(zip(names, config_weights(config, tmp_path), strict=True))
    per_state, success = {}, {}
    for agent in ("stall", "always-ask", "confirm", "state-rule", "oracle"):
        rows = _play(agent, ids, EpisodeReward(), True)
        success[agent] = summarize(rows)["success"]
        scores = []
        for row in rows:
            actions = [t.raw for t in row["records"]]
            for i, (turn, action) in enumerate(zip(row["records"], actions, strict=True)):
                state = DialogueState(args.realization, row["scenario_id"], row["seed"], tuple(actions[:i]))
                terms = {**turn_terms(turn, EpisodeReward()),
                         "accuracy": score_action(state, action, outcome_weight=args.outcome_weight)}
                scores.append(sum(w * terms[n] for n, w in weights.items()))
        per_state[agent] = sum(scores) / len(scores)
    assert success["stall"] == success["always-ask"] == success["confirm"] == 0.0, success
    assert success["state-rule"] == success["oracle"] == 1.0, success
    for agent in ("stall", "always-ask", "confirm"):  # the per-state optimum no longer stalls
        assert per_state[agent] < min(per_state["state-rule"], per_state["oracle"]), (config.name, per_state)


def config_weights(config: Path, tmp_path: Path) -> list[float]:
    return list(_parse(config, tmp_path)[1].reward_weights)


def test_state_mode_still_says_what_it_scores_on_the_command_line(tmp_path, capsys):
    _parse(Path("training/configs/text_vllm.yaml"), tmp_path)
    assert "one decision" in capsys.readouterr().err
