"""CESAR process rewards and the verified-evidence reward (training/rewards.py)."""

from __future__ import annotations

import doctest

import gymnasium as gym
import pytest

import hear2act_env  # noqa: F401  (registers the env ids)
from hear2act.training import rewards
from hear2act.training.rewards import (
    claim_score,
    consistency_reward,
    evidence_reward,
    format_reward,
    keywords_reward,
    make_reward_funcs,
    overthinking_reward,
)
from hear2act_env.speech import claims
from hear2act_env.speech.claims import CITED_BASE_RATE, QUALITATIVE, acoustic_claims, check_claim


def test_doctests_of_every_reward():
    result = doctest.testmod(rewards, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 20 and result.failed == 0


def test_doctests_of_the_claim_parser():
    result = doctest.testmod(claims, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_rewards_take_conversational_completions_and_return_one_value_each():
    good = [{"role": "assistant", "content": "<think>She sounded flat, so I should ask.</think>"
                                             "<answer>[ACTION: ASK] What would help?</answer>"}]
    for func in (format_reward, consistency_reward, keywords_reward, overthinking_reward, evidence_reward):
        assert len(func([good, good])) == 2
    assert format_reward([good]) == [1.0] and consistency_reward([good]) == [1.0]


def test_format_needs_a_valid_action_and_both_blocks():
    assert format_reward(["<think>x</think><answer>[ACTION: RECOMMEND] [OPTION: 12] y</answer>"]) == [0.0]
    assert format_reward(["<think> </think><answer>[ACTION: CONFIRM] ok</answer>"]) == [0.0]
    assert format_reward(["<answer>[ACTION: CONFIRM] ok</answer>"]) == [0.0]
    assert format_reward(["<think>a</think>\n<answer>[ACTION: RECOMMEND] [OPTION: 3] ok</answer>\n"]) == [1.0]


def test_make_reward_funcs_names_each_term_and_rejects_unknown_ones():
    funcs = make_reward_funcs()
    assert [f.__name__ for f in funcs] == list(rewards.REWARDS)
    with pytest.raises(ValueError, match="unknown"):
        make_reward_funcs(("accuracy", "style"))
    short = make_reward_funcs(("overthinking",), overthinking={"norm": 4})[0]
    assert short(["a b c d e f g h"]) == [-1.0]


@pytest.fixture(scope="module")
def user_turn():
    """A real user turn rendered by hibari (the audio a model hears under A+T) and its re-derived features."""
    pytest.importorskip("hibari")
    from hear2act_env.speech.features import extract

    env = gym.make("Hear2Act-Prosody-v5", access="A+T", disable_env_checker=True)
    obs, _ = env.reset(seed=3)
    return obs["audio"], extract(obs["audio"])


def test_evidence_on_rendered_speech_earns_for_true_claims_and_costs_for_fabricated_ones(user_turn):
    audio, f = user_turn

    def reasoning(text):
        return f"<think>{text}</think><answer>[ACTION: ASK] x</answer>"

    true_cite = reasoning(f"f0_range = {f.f0_range:.2f} st, speech rate {f.speech_rate:.2f} syll/s")
    fake_cite = reasoning(f"f0_range = {f.f0_range * 2 + 3:.2f} st")
    mixed = reasoning(f"f0_range = {f.f0_range:.2f} st but lead_pause = {f.lead_pause + 2:.2f} s")
    # calibrated scores: a verified claim earns 1 - p, a false one costs max(p, 0.5) (p: its base rate)
    hit, miss = 1 - CITED_BASE_RATE, -max(CITED_BASE_RATE, 0.5)
    assert evidence_reward([true_cite, fake_cite, mixed], audio=[audio] * 3) == pytest.approx(
        [hit, miss, (hit + miss) / 2])
    # the 15 % tolerance of the deterministic checks: 10 % off passes, 30 % off fails
    near = reasoning(f"f0_mean = {f.f0_mean * 1.10:.1f} Hz")
    far = reasoning(f"f0_mean = {f.f0_mean * 1.30:.1f} Hz")
    assert evidence_reward([near, far], audio=[audio] * 2) == pytest.approx([hit, miss])
    # qualitative claims: each pattern's claim is checked against its feature, never trusted
    falls = reasoning("The pitch falls at the end.")
    rises = reasoning("The pitch rises at the end.")
    got = evidence_reward([falls, rises], audio=[audio] * 2)
    fall, rise = acoustic_claims("pitch falls")[0], acoustic_claims("pitch rises")[0]
    expected = [claim_score(fall, f.f0_final <= -1.0 * 0.85), claim_score(rise, f.f0_final >= 1.0 * 0.85)]
    assert got == pytest.approx(expected) and not (got[0] > 0 and got[1] > 0)
    # the audio can also come from the prompt (A / A+T messages)
    prompt = [{"role": "user", "content": [{"type": "text", "text": "t"}, {"type": "audio", "audio": audio}]}]
    assert evidence_reward([true_cite], prompts=[prompt]) == pytest.approx([hit])
    # T+S_hat: the model read the perceiver's numbers; they are checked against the turn's audio all the same
    assert evidence_reward([true_cite, fake_cite], reference_audio=[audio] * 2) == pytest.approx([hit, miss])


def test_cited_values_with_spans_go_through_the_speech_verifier(user_turn):
    audio, f = user_turn
    e = next(x for x in f.evidence() if x.feature == "f0_final")
    a, b = e.span
    right = f"<think>f0_final = {e.value:.3f} st over {a:.3f}-{b:.3f} s</think>"
    moved = f"<think>f0_final = {e.value:.3f} st over {a + 0.3:.3f}-{b + 0.3:.3f} s</think>"
    hit, miss = 1 - CITED_BASE_RATE, -max(CITED_BASE_RATE, 0.5)
    assert evidence_reward([right, moved], audio=[audio] * 2) == pytest.approx([hit, miss])  # right value, wrong place


def test_accuracy_names_the_columns_it_needs():
    from hear2act.training.rewards import accuracy_reward

    with pytest.raises(ValueError, match="scenario_id"):
        accuracy_reward(["<answer>[ACTION: ASK] x</answer>"], realization=["prosody"])


def test_every_qualitative_pattern_is_found_and_checked(user_turn):
    _, f = user_turn
    phrases = ["pitch falls at the end", "rising intonation", "monotone", "lively pitch", "she spoke slowly",
               "she spoke fast", "long pause before answering", "low energy", "she sounded loud", "lower pitch",
               "higher pitch"]
    found = {(c.feature, c.op) for p in phrases for c in acoustic_claims(p)}
    assert found == {(feat, op) for _, feat, op, _ in QUALITATIVE}
    for claim in acoustic_claims(" ".join(phrases)):
        assert check_claim(claim, f) in (True, False)


def test_keywords_reward_reads_the_dialogue_not_just_any_words():
    transcript = ["User: I need a flight under $200.\nAssistant: How about X?\nUser: Sure, that one."]
    grounded = ("<think>The user said 'sure, that one', but the tone was flat, so a need may be unmet.</think>"
                "<answer>a</answer>")
    generic = "<think>The tone was flat, so a need may be unmet.</think><answer>a</answer>"
    high, low = keywords_reward([grounded, generic], transcript * 2, access=["A+T"] * 2)
    assert high == 1.0 and low == 0.75
    # Echoing a stopword of the turn ("sure", in hear2act_env.dialogue.lexicon.STOP like "okay") is not grounding
    # (it was before the stopword lists became one); quoting the turn is.
    echo = "<think>The user said sure, but the tone was flat, so a need may be unmet.</think><answer>a</answer>"
    assert keywords_reward([echo], transcript, access=["A+T"]) == [0.75]
    # without audio, "the tone was flat" is an unverifiable claim: it earns no delivery keyword
    assert keywords_reward([grounded], transcript, access=["T"]) == [0.75]
