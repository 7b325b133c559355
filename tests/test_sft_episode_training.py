"""SFT warm start and whole-episode GRPO end to end on a locally built tiny LM (tiny budgets; CPU)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from hear2act.agents.llm.tiny import build_tiny_causal_lm
from hear2act.training.splits import bundled_split, eval_ids


def test_sft_rows_are_p6_prompts_with_teacher_answers_from_the_training_split():
    from hear2act.agents.prompts import build_messages
    from hear2act.training.grpo_data import default_episodes
    from hear2act.training.sft import sft_rows

    episodes = default_episodes(2, 0)
    rows = sft_rows(episodes, access="T+S", teachers=("state-rule",), reasoning=True)
    assert rows and not {r["scenario_id"] for r in rows} & set(eval_ids(bundled_split()))
    first = rows[0]
    assert first["prompt"][0]["role"] == "system" and "CONCERN STATE" in first["prompt"][1]["content"]
    answer = first["completion"][0]["content"]
    assert answer.startswith("<think>") and "[ACTION:" in answer
    # the prompt of a first decision is the one evaluation builds from the env's first observation
    from hear2act_env.env import Hear2ActEnv

    env = Hear2ActEnv(realization="prosody", access="T+S")
    obs, _ = env.reset(seed=episodes[0][1], options={"scenario_id": episodes[0][0]})
    from hear2act.agents.prompts import domain_from_scenario_id

    assert first["prompt"] == build_messages(obs, "T+S", domain=domain_from_scenario_id(episodes[0][0]),
                                             reasoning=True)


def test_balancing_repeats_the_resolved_decisions_of_real_teacher_rows_to_the_share():
    from hear2act.training.grpo_data import default_episodes
    from hear2act.training.sft import balance_tags, parse, sft_rows

    rows = sft_rows(default_episodes(6, 0), access="T+S", teachers=("explore-tag",))
    tags = [r["tag"] for r in rows]
    assert set(tags) == {"resolved", "unresolved"}, tags
    assert all(("(resolved)" in r["prompt"][-1]["content"]) == (r["tag"] == "resolved") for r in rows)
    # the teacher reads the tag: every resolved decision is a CONFIRM
    assert all(r["completion"][0]["content"].startswith("[ACTION: CONFIRM]") for r in rows if r["tag"] == "resolved")
    balanced = balance_tags(rows, 0.5)
    assert balanced[:len(rows)] == rows  # nothing is lost or reordered; repeats are appended
    share = sum(r["tag"] == "resolved" for r in balanced) / len(balanced)
    assert abs(share - 0.5) < 0.02, share
    assert all(r in rows for r in balanced[len(rows):])
    assert balance_tags(rows, 0.0) == rows
    with pytest.raises(ValueError, match="resolved_share"):
        parse(["--model", "x", "--output_dir", "y", "--resolved_share", "1"])


def test_contrast_balancing_leaves_the_tag_as_the_only_cue_after_assent():
    """Real teacher rows: the assent flag is what the user's words say, and with ``contrast`` the unresolved
    decisions after assent are repeated to as many as the resolved ones, so after assenting words CONFIRM and
    RECOMMEND are equally common and only the tag tells them apart."""
    from hear2act.agents.rule import PROBLEM_CUES
    from hear2act.training.grpo_data import default_episodes
    from hear2act.training.sft import balance_tags, sft_rows

    rows = sft_rows(default_episodes(12, 0), access="T+S", teachers=("explore-tag",))
    for r in rows:
        said = r["prompt"][-1]["content"].split("User: ")[-1].splitlines()[0]
        assert r["assent"] == (not PROBLEM_CUES.search("User: " + said)), said
    assert all(r["assent"] for r in rows if r["tag"] == "resolved")  # resolved reactions are worded as assent
    assert any(r["assent"] for r in rows if r["tag"] == "unresolved")  # and so are some unresolved ones

    def after_assent(rs):
        acts = [r["completion"][0]["content"].startswith("[ACTION: CONFIRM]") for r in rs if r["assent"]]
        return sum(acts), len(acts) - sum(acts)

    confirms, others = after_assent(balance_tags(rows, 0.5))
    assert confirms > 2 * others  # without contrast the words predict CONFIRM
    balanced = balance_tags(rows, 0.5, contrast=True)
    assert balanced[:len(balance_tags(rows, 0.5))] == balance_tags(rows, 0.5)  # contrast only appends
    assert after_assent(balanced)[0] == after_assent(balanced)[1]


@pytest.mark.slow
def test_sft_then_episode_grpo_on_a_tiny_lm(tmp_path):
    import torch
    from safetensors.torch import load_file

    from hear2act.training import grpo, sft

    base = build_tiny_causal_lm(tmp_path / "lm")
    summary = sft.main(["--model", str(base), "--output_dir", str(tmp_path / "sft"), "--n_scenarios", "1",
                        "--max_steps", "1", "--per_device_train_batch_size", "2", "--learning_rate", "1e-3"])
    assert summary["steps"] == 1 and summary["examples"] > 0
    out = tmp_path / "grpo"
    result = grpo.main(["--model", str(tmp_path / "sft"), "--access", "T+S", "--reasoning", "false",
                        "--max_steps", "1", "--output_dir", str(out), "--n_scenarios", "1", "--num_generations", "2",
                        "--per_device_train_batch_size", "2", "--global_batch", "2", "--max_completion_length", "8",
                        "--learning_rate", "1e-3", "--seed", "0", "--eval_n", "1", "--turn_cost", "0.05"])
    assert result["steps"] == 1
    log = json.loads((out / "grpo_log.json").read_text())
    assert any("rewards/episode_reward/mean" in h and "rewards/success/mean" in h for h in log)
    held = json.loads((out / "heldout_eval.json").read_text())
    assert [h["step"] for h in held["history"]] == [0, 1] and held["scenario_ids"] == eval_ids(bundled_split())[:1]
    before, after = load_file(tmp_path / "sft" / "model.safetensors"), load_file(out / "model.safetensors")
    assert set(before) == set(after)
    assert all(torch.isfinite(v).all() for v in after.values())
