"""Reward terms on written examples: (completion, context, expected verdict), written from the issue's descriptions
(issue 19, "Rewards") before the rules were changed, not derived from the rules.

Context: the transcript the policy saw (``Assistant:`` lines carry the recommendations, so the current option and
the options the user turned down can be read off it) and the options text (how many options exist).
"""

from __future__ import annotations

import pytest

from hear2act.training.rewards import consistency_reward, evidence_reward, keywords_reward

OPTIONS = "\n".join(f"{i}. Option{i}: feature" for i in range(1, 11))  # ten options
T_CURRENT_4 = ("User: I want the cheapest plan.\n"
               "Assistant: [ACTION: RECOMMEND] [OPTION: 4] How about Option4?\n"
               "User: Okay, that sounds good.")
T_REJECTED_3 = ("User: I need a quiet keyboard.\n"
                "Assistant: [ACTION: RECOMMEND] [OPTION: 3] How about Option3?\n"
                "User: No, that won't work. It has to be wireless.\n"
                "Assistant: [ACTION: RECOMMEND] [OPTION: 5] How about Option5?\n"
                "User: Hmm, maybe.")


def think(reasoning: str, answer: str) -> str:
    return f"<think>{reasoning}</think><answer>{answer}</answer>"


REC9 = "[ACTION: RECOMMEND] [OPTION: 9] How about Option9?"
ASK = "[ACTION: ASK] What matters most to you?"
CONFIRM = "[ACTION: CONFIRM] Great, I'll set that up."

# (completion, transcript, expected consistency)
CONSISTENCY = [
    # reported speech: the user's request is not the assistant's decision
    (think("Since the user asked about the price, I will recommend option 9.", REC9), T_CURRENT_4, 1.0),
    (think("The user asked me a question about shipping, so I will recommend option 9.", REC9), T_CURRENT_4, 1.0),
    (think("Since the user asked about the price, I will recommend option 9.", ASK), T_CURRENT_4, 0.0),
    (think("The user said 'let me think', which means a concern remains, so I will ask.", ASK), T_CURRENT_4, 1.0),
    # "go with option N": CONFIRM when N is the current recommendation, RECOMMEND otherwise
    (think("The user accepted it, so let's go with option 4.", CONFIRM), T_CURRENT_4, 1.0),
    (think("The user accepted it, so let's go with option 4.", "[ACTION: RECOMMEND] [OPTION: 4] Option4 again?"),
     T_CURRENT_4, 0.0),
    (think("Option 9 fits better, so let's go with option 9.", REC9), T_CURRENT_4, 1.0),
    (think("Option 9 fits better, so let's go with option 9.", CONFIRM), T_CURRENT_4, 0.0),
    # plain statements, and a negated verb
    (think("She sounded flat, so I should ask what bothers her.", ASK), T_CURRENT_4, 1.0),
    (think("I won't confirm yet; I'll ask instead.", ASK), T_CURRENT_4, 1.0),
    (think("So I will recommend option 2.", "[ACTION: RECOMMEND] [OPTION: 3] Option3?"), T_CURRENT_4, 0.0),
    # context: the option must exist and must not be one the user turned down
    (think("I will recommend option 12.", "[ACTION: RECOMMEND] [OPTION: 12] Option12?"), T_CURRENT_4, 0.0),
    (think("I will recommend option 3.", "[ACTION: RECOMMEND] [OPTION: 3] How about Option3?"), T_REJECTED_3, 0.0),
    (think("I will recommend option 6.", "[ACTION: RECOMMEND] [OPTION: 6] How about Option6?"), T_REJECTED_3, 1.0),
]


@pytest.mark.parametrize("completion,transcript,expected", CONSISTENCY)
def test_consistency_on_written_examples(completion, transcript, expected):
    assert consistency_reward([completion], transcript=[transcript], options=[OPTIONS]) == [expected]


# (reasoning, expected sign of the evidence term under text access, i.e. no audio): 0 = no claim about the voice
EVIDENCE_TEXT = [
    ('The user wants "fast shipping", so option 2 fits.', 0),
    ("Option 3 is the quiet keyboard and option 5 is the loud one.", 0),
    ("The fast shipping option is the cheapest.", 0),
    ("Soft cover notebooks suit the request.", 0),
    ("The tag says unresolved, so a concern remains.", 0),
    ("She spoke slowly and quietly, so she is not convinced.", -1),
    ("Her pitch falls at the end.", -1),
]


@pytest.mark.parametrize("reasoning,sign", EVIDENCE_TEXT)
def test_evidence_ignores_option_words_and_penalises_voice_claims_without_audio(reasoning, sign):
    value = evidence_reward([think(reasoning, ASK)])[0]
    assert (value > 0) - (value < 0) == sign, value


@pytest.mark.parametrize("reasoning", [
    "The user sounded slow, with a long pause before speaking and low energy, so I will ask.",
    "Her tone was flat and her voice quiet, so I will ask.",
])
def test_keywords_and_evidence_never_pull_opposite_ways_under_text_access(reasoning):
    """Without audio a voice claim is penalised by evidence; keywords must not pay for the same words."""
    transcript = "User: I need a quiet keyboard.\nAssistant: ...\nUser: Okay, sounds good."
    with_claims = think(reasoning, ASK)
    without = think("The user said 'sounds good', so I will ask.", ASK)
    kw = keywords_reward([with_claims, without], transcript=[transcript] * 2)
    ev = evidence_reward([with_claims, without])
    assert ev[0] < ev[1]
    assert kw[0] <= kw[1]


def test_state_tag_reasoning_earns_the_delivery_keyword_under_text_access():
    transcript = "User: I need a quiet keyboard.\nAssistant: ...\nUser: Okay, sounds good."
    state = think("The user said it sounds good but the tag says unresolved, so a need is unmet.", ASK)
    plain = think("The user said it sounds good, so a need is unmet.", ASK)
    assert keywords_reward([state], transcript=[transcript]) > keywords_reward([plain], transcript=[transcript])


@pytest.mark.slow
def test_an_unconditional_voice_claim_earns_nothing_in_expectation_on_fresh_turns():
    """Claims made whatever the audio (on user turns of seeds not used to measure the base rates) score <= 0."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from evidence_base_rates import rates, user_turn_clips

    table = rates(user_turn_clips(24, 5000))
    assert all(expected <= 0.2 for *_, expected in table), table  # each claim, within sampling noise
    assert sum(expected for *_, expected in table) / len(table) <= 0.05, table
