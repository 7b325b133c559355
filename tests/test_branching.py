"""Branched GRPO groups (hear2act.training.branching): K continuations of one replayed on-policy decision state."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hear2act.agents.base import PolicyOutput
from hear2act.training.branching import PrefixReplay, decision_turns, play_branched
from hear2act.training.episodes import EpisodeReward, TurnRecord, play
from hear2act.training.splits import bundled_split, train_ids

IDS = train_ids(bundled_split(), 3)


class KeyedCoin:
    """After a recommendation: CONFIRM or RECOMMEND another option by a hash of (episode key, turn) -- a policy
    whose samples differ between episodes of the same start, as the model's seeded sampling does."""

    name = "keyed-coin"

    def act_batch(self, items):
        out = []
        for it in items:
            h = int.from_bytes(hashlib.blake2b(f"{it.key}/{it.turn}".encode(), digest_size=4).digest(), "little")
            text = "[ACTION: CONFIRM] Great." if h % 3 == 0 else f"[ACTION: RECOMMEND] [OPTION: {1 + h % 11}] This?"
            out.append(PolicyOutput(action=text, raw=text))
        return out


def _starts(k: int):
    sids = [sid for sid in IDS for _ in range(k)]
    seeds = [7 + i for i in range(len(IDS)) for _ in range(k)]
    keys = [f"s/{i}/{sid}" for i, sid in enumerate(sids)]
    return sids, seeds, keys


def test_every_branch_of_a_group_reaches_the_drawn_state_and_then_samples_its_own_continuation():
    k = 4
    sids, seeds, keys = _starts(k)
    rows, taus = play_branched(KeyedCoin(), sids, seeds, keys, k, access="T+S", realization="prosody",
                               config=EpisodeReward(), rng=np.random.default_rng(0))
    assert len(rows) == len(sids) and len(taus) == len(sids)
    differ = 0
    for g in range(0, len(rows), k):
        group, tau = rows[g:g + k], taus[g]
        assert len(set(taus[g:g + k])) == 1
        states = {(r["records"][tau].transcript, r["records"][tau].state) for r in group}
        assert len(states) == 1  # the same decision state: one prompt for the K samples
        differ += len({r["records"][tau].raw for r in group}) > 1
        prefix = play(KeyedCoin(), [sids[g]], seeds=[seeds[g]], keys=[f"{keys[g]}/prefix"])[0]["records"]
        assert [t.raw for t in group[0]["records"][:tau]] == [t.raw for t in prefix[:tau]]
        assert tau in [t for ts in decision_turns(prefix).values() for t in ts]
    assert differ >= 1  # the continuations are the policy's own samples


def test_replay_refuses_a_prefix_recorded_in_another_state():
    sids, seeds, keys = _starts(1)
    wrong = [TurnRecord("User: something else", "", "", "[ACTION: ASK] Which one?")]
    with pytest.raises(RuntimeError, match="another transcript"):
        play(PrefixReplay(KeyedCoin(), {keys[0]: wrong}), sids[:1], seeds=seeds[:1], keys=keys[:1])


def test_groups_must_be_one_start():
    sids, seeds, keys = _starts(2)
    with pytest.raises(ValueError, match="num_generations=4"):
        play_branched(KeyedCoin(), sids[:6], seeds[:6], keys[:6], 4, access="T+S", realization="prosody",
                      config=EpisodeReward(), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="not one episode start"):
        play_branched(KeyedCoin(), sids[1:5], seeds[1:5], keys[1:5], 2, access="T+S", realization="prosody",
                      config=EpisodeReward(), rng=np.random.default_rng(0))


def test_a_branched_sample_is_credited_with_its_own_turns_process_terms_only():
    from hear2act.training.branching import branch_reward
    from hear2act.training.episodes import turn_terms

    config = EpisodeReward()
    good = TurnRecord("User: Hi.", "1. A", "", "[ACTION: RECOMMEND] [OPTION: 1] How about A?")
    bad = TurnRecord("User: Hi.", "1. A", "", "whatever")
    row = {"outcome": -0.2, "records": [bad, good, bad]}
    terms = turn_terms(good, config)
    expected = -0.2 + sum(w * terms[t] for t, w in config.process.items())
    assert branch_reward(row, 1, config) == pytest.approx(expected)
    other = {"outcome": -0.2, "records": [good, good, good]}
    assert branch_reward(other, 1, config) == branch_reward(row, 1, config)  # the other turns do not enter


def test_an_invalid_trained_turn_scores_as_a_failure_whatever_followed():
    from hear2act.training.branching import branch_reward

    config = EpisodeReward()
    ok = TurnRecord("User: Hi.", "1. A", "", "[ACTION: RECOMMEND] [OPTION: 1] How about A?")
    bad = TurnRecord("User: Hi.", "1. A", "", "whatever")
    won = {"outcome": 1.0 - 0.05 * 3, "records": [bad, ok, ok]}
    failed = {"outcome": -0.05 * 20, "records": [bad, ok, ok]}
    assert branch_reward(won, 0, config) == branch_reward(failed, 0, config) < branch_reward(won, 1, config)


def test_several_prefixes_let_a_group_branch_at_a_resolved_state():
    """With more prefix episodes per group, more groups branch where CONFIRM is right (a resolved tag)."""
    k = 2
    sids, seeds, keys = _starts(k)
    tagged = {}
    for n in (1, 4):
        rows, taus = play_branched(KeyedCoin(), sids, seeds, keys, k, access="T+S", realization="prosody",
                                   config=EpisodeReward(), rng=np.random.default_rng(1), resolved_share=1.0,
                                   prefixes=n)
        tagged[n] = sum("(resolved)" in rows[g]["records"][taus[g]].state for g in range(0, len(rows), k))
        for g in range(0, len(rows), k):  # every sample of a group still sees one state
            assert len({r["records"][taus[g]].transcript for r in rows[g:g + k]}) == 1
    assert tagged[4] > tagged[1], tagged
    with pytest.raises(ValueError, match="prefixes must be >= 1"):
        play_branched(KeyedCoin(), sids, seeds, keys, k, access="T+S", realization="prosody",
                      config=EpisodeReward(), rng=np.random.default_rng(1), prefixes=0)


def test_with_several_prefixes_the_resolved_share_is_drawn_once():
    """pick_prefix draws the share and its tag picks the turn: a group branches at a resolved state with probability
    resolved_share (drawn again for the turn, as before the fix, it was about its square: 0.25 here)."""
    from hear2act.training.branching import draw_branch_turn, pick_prefix

    def turn(state: str, answer: str) -> TurnRecord:
        return TurnRecord("User: A\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] a\nUser: ok", "",
                          f"CONCERN STATE: x ({state})", answer)

    both = {"records": [turn("unresolved", "[ACTION: RECOMMEND] [OPTION: 2] b"), turn("resolved", "[ACTION: CONFIRM]")]}
    rng = np.random.default_rng(0)
    resolved = 0
    for _ in range(800):
        _, tag = pick_prefix([both, both, both], rng, 0.5)
        resolved += "(resolved)" in both["records"][draw_branch_turn(both["records"], rng, 0.5, tag=tag)].state
    assert 0.44 < resolved / 800 < 0.56, resolved / 800
