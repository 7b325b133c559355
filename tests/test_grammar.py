"""The observation grammar (hear2act_env.protocol): format/parse pairs, and readers that follow a changed phrase."""

from __future__ import annotations

import gymnasium as gym
import pytest

from hear2act.training import reader
from hear2act.training.wrappers import CHANNELS
from hear2act_env import load_scenarios, protocol
from hear2act_env.dialogue.actions import format_action
from hear2act_env.dialogue.engine import STATES, assess, collapsed
from hear2act_env.protocol import (
    DESCRIPTORS,
    GRAMMAR,
    LABEL_STATUS,
    LABELS,
    TURN_FORMS,
    Grammar,
    format_inferred,
    format_perception,
    format_priority,
    format_tag,
    parse_perception,
    parse_tag,
    parse_turn,
    strip_inferred,
)

STATEMENT = "We need a window seat on the way back."


@pytest.mark.parametrize("label", LABELS)
def test_tag_round_trip(label: str):
    assert parse_tag(format_tag(label)) == (label, LABEL_STATUS[label])
    assert CHANNELS["T+S"][1]({"state": format_tag(label)})[:2] == \
        ([1.0, 0.0] if LABEL_STATUS[label] == "resolved" else [0.0, 1.0])
    assert parse_tag("") is None


@pytest.mark.parametrize("state", STATES)
def test_perception_round_trip(state: str):
    status = collapsed(state)
    text = format_inferred(format_perception(state, status, 6.24, -1.26, 4.05, -2.5))
    read = parse_perception(text)
    assert read is not None and (read.state, read.status) == (state, status)
    assert dict(read.figures) == {"f0_range": 6.2, "f0_final": -1.3, "speech_rate": 4.0, "energy_fade": -2.5}
    assert strip_inferred(text).startswith("The user's delivery sounds " + DESCRIPTORS[state])
    assert parse_perception("The user sounds fine.") is None


@pytest.mark.parametrize(("category", "form", "pool"), TURN_FORMS, ids=[c for c, _, _ in TURN_FORMS])
def test_every_turn_form_reads_back(category: str, form: str, pool: str):
    if form == "whole":
        turns = [(p, "") for p in GRAMMAR.pool(pool)]
    elif form == "prefix":
        turns = [(format_priority("monthly price", "lower"), ""), (format_priority("rating", "higher"), "")]
    elif form == "qualified":
        turns = [(f"{a} {m} {STATEMENT}", STATEMENT) for a in GRAMMAR.pool("ASSENT") for m in GRAMMAR.pool(pool)]
    else:
        turns = [(protocol.join(p, STATEMENT), STATEMENT) for p in GRAMMAR.pool(pool)]
    for words, statement in turns:
        assert parse_turn(words) == (category, statement), words


def test_a_missing_pool_is_an_error_not_an_empty_reading():
    with pytest.raises(KeyError, match="no phrase pool 'STRONG'"):
        GRAMMAR.pool("STRONG")
    pools = tuple((n, ps) for n, ps in GRAMMAR.pools if n != "MILD")
    with pytest.raises(KeyError, match="'MILD'"):
        Grammar("test", pools)
    with pytest.raises(IndexError, match="no index 9"):
        GRAMMAR.with_phrase("REJECT", 9, "x")


def _reject_turn() -> tuple[str, dict, object]:
    """Recommend a requirement violator in the first bundled scenario: the user rejects it with a REJECT opener."""
    s = load_scenarios()[0]
    bad = next(o.number for o in s.options if assess(s, o.number).issue == "requirement")
    env = gym.make("Hear2Act-Prosody-v5", access="T", disable_env_checker=True).unwrapped
    env.reset(seed=3, options={"scenario_id": s.id})
    obs, *_ = env.step(format_action("recommend", "How about this one?", bad))
    return obs["transcript"].splitlines()[-1].removeprefix("User: "), obs, bad


def test_changing_a_phrase_in_the_grammar_moves_the_realizer_and_the_reader(monkeypatch):
    words, obs, bad = _reject_turn()
    old = next(p for p in GRAMMAR.pool("REJECT") if words.startswith(p + " "))
    statement = words[len(old) + 1:]
    assert reader.split_opener(words) == ("reject", statement)
    assert bad in reader.read(obs["options"], obs["transcript"]).flagged

    new = "Nope, that is a no from me."
    edited = GRAMMAR.with_phrase("REJECT", GRAMMAR.pool("REJECT").index(old), new)
    assert edited.version != GRAMMAR.version
    monkeypatch.setattr(protocol, "GRAMMAR", edited)
    words2, obs2, _ = _reject_turn()
    assert words2 == f"{new} {statement}"  # the realizer writes the new phrase (same draw, same statement)
    assert reader.split_opener(words2) == ("reject", statement)  # and the reader reads it
    assert bad in reader.read(obs2["options"], obs2["transcript"]).flagged
    # Under the original grammar the new words are no opener: a bare statement, the whole turn.
    assert parse_turn(words2, GRAMMAR) == ("answer", words2)


def test_doctests_of_the_grammar_and_the_table():
    import doctest

    from hear2act_env import access

    for module in (protocol, access):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
