"""The pieces of the GRPO learning recipe (benchmarks/grpo_learning.py) that need no training run.

The SFT teacher ``explore`` must read the words only (so the warm start does
not already know the decision GRPO is to learn), be reproducible from the
episode seed, and leave room: the same random search reading the tag
(``explore-tag``) must win far more often. The tiny LM's added tokens must
round-trip, so that its replies parse exactly as typed.
"""

from __future__ import annotations

import pytest

from hear2act.training.episodes import AgentPolicy, ExploringAgent, make_reference, play, summarize
from hear2act.training.splits import bundled_split, train_ids
from hear2act_env import load_scenarios
from hear2act_env.dialogue.actions import parse_action

IDS = train_ids(bundled_split(), 24)


def _actions(name: str, access: str, seed: int = 0) -> list[list[str]]:
    bank = load_scenarios()
    rows = play(AgentPolicy(lambda: make_reference(name, bank), reasoning=False), IDS, access=access, seed=seed)
    return [[t.raw for t in r["records"]] for r in rows]


def test_explorer_reads_words_only_and_is_reproducible():
    with_tag = _actions("explore", "T+S")
    assert with_tag == _actions("explore", "T")  # the tag changes nothing it does
    assert with_tag == _actions("explore", "T+S")
    assert with_tag != _actions("explore", "T+S", seed=1)
    kinds = {parse_action(a).kind for ep in with_tag for a in ep}
    assert kinds == {"recommend", "confirm"}


def test_reading_the_tag_is_what_the_explorer_lacks():
    bank = load_scenarios()
    rows = {n: summarize(play(AgentPolicy(lambda n=n: make_reference(n, bank), reasoning=False), IDS,
                              access="T+S")) for n in ("explore", "explore-tag")}
    assert rows["explore-tag"]["premature_closure"] == 0.0
    assert rows["explore-tag"]["success"] >= rows["explore"]["success"] + 0.3, rows
    assert rows["explore"]["premature_closure"] > 0.5, rows


def test_explorer_rejects_a_bad_probability():
    with pytest.raises(ValueError, match="confirm_prob"):
        ExploringAgent(1.5)


def test_tiny_tokenizer_added_tokens_round_trip():
    pytest.importorskip("tokenizers")
    from hear2act.agents.llm.tiny import build_tokenizer

    tok = build_tokenizer(600, added_tokens=("[ACTION: RECOMMEND]", "[OPTION: 5]", "[ACTION: CONFIRM]"))
    for text in ("[ACTION: RECOMMEND] [OPTION: 5] How about this one?", "[ACTION: CONFIRM] Great."):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids) == text
        assert tok.convert_ids_to_tokens(ids[0]) == text.split("]")[0] + "]"


def test_rollout_turn_sampling_is_checked():
    pytest.importorskip("trl")
    from hear2act.training.episode_rollout import TURN_SAMPLING, make_rollout_func
    from hear2act.training.episodes import EpisodeReward

    assert TURN_SAMPLING == ("uniform", "last", "closing", "decisive", "pivotal", "branch")
    with pytest.raises(ValueError, match="turn_sampling"):
        make_rollout_func(access="T+S", reward=EpisodeReward(), turn_sampling="first")


def test_closing_baseline_makes_the_closed_episodes_advantages_sum_to_zero():
    pytest.importorskip("trl")
    from hear2act.training.episode_rollout import closing_baseline

    rewards = [0.9, -0.2, -0.2, -0.2, -0.2, -0.2, -0.2, -0.2]
    closed = [True, True, True, False, False, False, False, False]
    out = closing_baseline(rewards, closed, 4) + closing_baseline(rewards, [False] * 8, 4)
    first, untouched = out[:8], out[8:]
    for lo in (0, 4):  # GRPO's advantage: reward - group mean; the closed episodes' advantages sum to zero
        g, c = first[lo:lo + 4], closed[lo:lo + 4]
        mean = sum(g) / len(g)
        assert abs(sum(r - mean for r, done in zip(g, c, strict=True) if done)) < 1e-12
    assert first[3] == (0.9 - 0.2 - 0.2) / 3 and first[4:] == rewards[4:]  # no closed episode: kept
    assert untouched == rewards


class _Derails:
    """Answers something the parser cannot read, then CONFIRMs whatever is on the table."""

    def reset(self, observation, info):
        self.turn = 0

    def act(self, observation):
        self.turn += 1
        return "How about the second one?" if self.turn == 1 else "[ACTION: CONFIRM] Great."


def test_decisive_sampling_trains_the_invalid_answer_and_invalid_cost_charges_it():
    """On played episodes: an episode with an unreadable answer trains that answer (``decisive``), is charged
    ``invalid_cost`` once, and an episode without one trains its closing turn."""
    pytest.importorskip("trl")
    from hear2act.training.episode_rollout import decisive_turn
    from hear2act.training.episodes import AgentPolicy, EpisodeReward, make_reference, play
    from hear2act.training.splits import bundled_split, train_ids

    ids = train_ids(bundled_split(), 4)
    plain, charged = EpisodeReward(process={}), EpisodeReward(process={}, invalid_cost=0.1)
    derailed = [play(AgentPolicy(_Derails, reasoning=False), ids, config=c) for c in (plain, charged)]
    for a, b in zip(*derailed, strict=True):
        assert a["invalid"] == 1 and b["outcome"] == pytest.approx(a["outcome"] - 0.1)
        closed = a["trajectory"]["outcome"]["confirmed"]
        assert decisive_turn(a["records"], closed) == 0
    solved = play(AgentPolicy(lambda: make_reference("state-rule"), reasoning=False), ids, config=charged)
    for row in solved:
        assert row["invalid"] == 0 and row["success"] == 1.0
        assert decisive_turn(row["records"], True) == len(row["records"]) - 1
    with pytest.raises(ValueError, match="invalid_cost"):
        EpisodeReward(invalid_cost=-1.0)


class _WalksOn:
    """Recommends options 1, 2, ... in turn and never confirms: every episode runs out of turns."""

    def reset(self, observation, info):
        self.turn = 0

    def act(self, observation):
        self.turn += 1
        return f"[ACTION: RECOMMEND] [OPTION: {(self.turn - 1) % 11 + 1}] How about this one?"


def test_pivotal_sampling_trains_the_first_satisfied_user_passed_by():
    """On played episodes that run out of turns: ``decisive`` trains nothing, ``pivotal`` trains the first turn
    that answered a recommendation the user was satisfied with (tag resolved) by looking further."""
    pytest.importorskip("trl")
    from hear2act.training.branching import decision_turns
    from hear2act.training.episode_rollout import decisive_turn, pivotal_turn
    from hear2act.training.episodes import AgentPolicy, play, state_tag

    rows = play(AgentPolicy(_WalksOn, reasoning=False), train_ids(bundled_split(), 12), access="T+S")
    passed = 0
    for row in rows:
        assert not row["trajectory"]["outcome"]["confirmed"]
        if row["success"]:  # the gold on the table at the turn limit wins (PROTOCOL.md); nothing to train
            assert pivotal_turn(row["records"], closed=False, success=True) is None
            continue
        turns = row["records"]
        assert decisive_turn(turns, closed=False) is None
        picked = pivotal_turn(turns, closed=False)
        resolved = decision_turns(turns)["resolved"]
        assert picked == (resolved[0] if resolved else None)
        if picked is not None:
            passed += 1
            assert state_tag(turns[picked].state) == "resolved"
            assert parse_action(turns[picked].raw).kind == "recommend"
    assert passed >= 6  # walking every option, most episodes meet the gold (a resolved reaction) and pass it by
