"""Every PROTOCOL.md interaction rule, one test (or a few) each."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import gymnasium as gym
import pytest

from hear2act.agents.oracle import targeted_question
from hear2act_env import load_scenarios
from hear2act_env.dialogue.actions import format_action
from hear2act_env.dialogue.engine import DELIVERY, assess
from hear2act_env.dialogue.matching import normalize
from hear2act_env.protocol import GRAMMAR
from hear2act_env.scenarios.quality import compares_options

ASSENT = GRAMMAR.pool("ASSENT")
DIRECT = GRAMMAR.pool("DIRECT")
HINT = GRAMMAR.pool("HINT")
IRRELEVANT = GRAMMAR.pool("IRRELEVANT")
RESTATE = GRAMMAR.pool("RESTATE")

BANK = load_scenarios()
GENERAL = format_action("ask", "Is there anything else I should know?")
CONFIRM = format_action("confirm", "Great.")


def rec(n: int) -> str:
    return format_action("recommend", "How about this one?", n)


def make(realization: str = "prosody", access: str = "T+S"):
    env_id = {"prosody": "Hear2Act-Prosody-v5", "explicit": "Hear2Act-Explicit-v5"}[realization]
    return gym.make(env_id, access=access, disable_env_checker=True).unwrapped


def start(env, s, seed=0):
    return env.reset(seed=seed, options={"scenario_id": s.id})


def last_user(obs) -> str:
    return obs["transcript"].splitlines()[-1].removeprefix("User: ")


def by_role(s, role: str) -> list[int]:
    out = []
    for o in s.options:
        a = assess(s, o.number)
        if role == a.issue:
            out.append(o.number)
    return out


SAMPLE = BANK[::7]


# -- episode start -------------------------------------------------------------------


@pytest.mark.parametrize("s", SAMPLE[:10], ids=lambda s: s.id)
def test_first_observation_holds_request_opening_and_reaction(s):
    env = make()
    obs, info = start(env, s)
    lines = obs["transcript"].splitlines()
    assert lines[0] == f"User: {s.request}"
    assert lines[1].startswith(f"Assistant: [ACTION: RECOMMEND] [OPTION: {s.opening}]")
    assert lines[2].startswith("User: ") and len(lines) == 3
    assert info["turn"] == 1 and info["current"] == s.opening
    assert info["state"] == assess(s, s.opening).state
    assert obs["options"].splitlines()[0].startswith("1. ")


# -- reactions to recommendations ----------------------------------------------------


@pytest.mark.parametrize("realization", ["prosody", "explicit"])
def test_graded_reactions_follow_the_table(realization):
    env = make(realization)
    seen = Counter()
    for s in SAMPLE:
        for o in s.options:
            start(env, s)
            obs, _, _, _, info = env.step(rec(o.number))
            words, a = last_user(obs), assess(s, o.number)
            assert info["state"] == a.state
            assert info["delivery"] in DELIVERY[a.state]
            status = "resolved" if a.state == "resolved" else "unresolved"
            assert obs["state"] == f"CONCERN STATE: {info['delivery']} ({status})"
            seen[a.issue] += 1
            if a.issue == "requirement":
                assert s.requirements[a.requirement].statement in words
            elif a.issue == "L1":
                assert s.need(1).statement in words and 1 in info["disclosed"]
            elif a.issue in ("L2", "L3"):
                level = int(a.issue[1])
                stated = s.need(level).statement in words
                assert stated == (realization == "explicit")
                assert (level in info["disclosed"]) == (realization == "explicit")
                # Explicit L2 is stated directly (no assent); L3 is qualified assent.
                direct = realization == "explicit" and level == 2
                assert words.startswith(tuple(ASSENT)) != direct, words
                if direct:
                    assert words.startswith(DIRECT)
            elif a.issue == "safe":
                assert s.attribute(s.priority).worse in words
                assert not compares_options(words), words
            else:
                assert words in ASSENT
    assert set(seen) == {"requirement", "L1", "L2", "L3", "safe", "none"}


def test_prosody_words_never_leak_an_l2_or_l3_need():
    env = make("prosody")
    assent_words = set(normalize(" ".join(ASSENT)).split())
    for s in BANK:
        for n in by_role(s, "L2") + by_role(s, "L3"):
            start(env, s)
            obs, *_ = env.step(rec(n))
            words = normalize(last_user(obs))
            for need in s.needs[1:]:
                assert normalize(need.statement) not in words
                for kw in need.keywords:
                    k = normalize(kw)
                    if k and not set(k.split()) <= assent_words:
                        assert f" {k} " not in f" {words} ", (s.id, kw, words)


def test_words_alone_are_at_chance_on_resolved_vs_unresolved_under_prosody():
    """A words-only classifier (majority label per exact utterance) on held-out turns."""
    for realization, expect_chance in (("prosody", True), ("explicit", False)):
        env = make(realization)
        data = []
        for i, s in enumerate(BANK):
            for n in [s.gold, *by_role(s, "L2"), *by_role(s, "L3")]:
                start(env, s, seed=i)
                obs, _, _, _, info = env.step(rec(n))
                data.append((i % 2, last_user(obs), info["state"] == "resolved"))
        train = [(w, lab) for half, w, lab in data if half == 0]
        test = [(w, lab) for half, w, lab in data if half == 1]
        votes = defaultdict(Counter)
        for words, label in train:
            votes[words][label] += 1
        prior = Counter(label for _, label in train).most_common(1)[0][0]

        def predict(words, votes=votes, prior=prior):
            return votes[words].most_common(1)[0][0] if words in votes else prior

        per_class = {
            cls: sum(predict(w) == cls for w, lab in test if lab == cls) / sum(lab == cls for _, lab in test)
            for cls in (True, False)
        }
        balanced = sum(per_class.values()) / 2
        if expect_chance:
            assert abs(balanced - 0.5) < 0.05, per_class
        else:
            assert balanced > 0.9, per_class


# -- ASK / CLARIFY ----------------------------------------------------------------------


@pytest.mark.parametrize("realization", ["prosody", "explicit"])
def test_targeted_question_discloses_that_need_plainly(realization):
    env = make(realization)
    for s in SAMPLE:
        for level in (1, 2, 3):
            start(env, s)
            obs, _, _, _, info = env.step(format_action("ask", targeted_question(s, level)))
            assert s.need(level).statement in last_user(obs)
            assert level in info["disclosed"]
            assert info["delivery"] == "neutral"


def test_general_question_reveals_one_need_in_priority_order():
    env = make("prosody")
    for s in SAMPLE:
        for o in s.options:
            a = assess(s, o.number)
            start(env, s)
            env.step(rec(o.number))
            before = set(env.engine.disclosed)
            obs, _, _, _, info = env.step(GENERAL)
            words = last_user(obs)
            new = set(info["disclosed"]) - before
            assert len(new) <= 1
            violated = [lv for lv, ok in zip((1, 2, 3), o.satisfies, strict=True) if not ok]
            if a.issue == "requirement":
                assert s.requirements[a.requirement].statement in words and not new
            elif a.issue == "L1":  # G.6: L1's directional hint, not a disclosure
                assert words.startswith(HINT) and words.endswith(s.need(1).hint), words
                assert s.need(1).statement not in words and not new
            elif violated:
                fresh = [lv for lv in violated if lv not in before]
                expected = fresh[0] if fresh else violated[0]
                assert s.need(expected).statement in words
                assert new == ({expected} if fresh else set())
            elif a.issue == "safe":
                assert s.attribute(s.priority).worse in words
            else:
                assert "covers" in words or "everything I was looking for" in words


def test_general_question_restates_when_nothing_new():
    env = make("explicit")
    checked = 0
    for s in SAMPLE:
        for n in by_role(s, "L3"):  # meets L1 and L2, misses only L3
            start(env, s)
            env.step(rec(n))  # explicit: L3 stated in the qualified assent
            obs, _, _, _, info = env.step(GENERAL)
            assert s.need(3).statement in last_user(obs)
            assert last_user(obs).startswith(RESTATE)
            assert 3 in info["disclosed"]
            checked += 1
    assert checked > 0


def test_general_question_on_an_l1_violation_gives_the_hint_even_when_l2_is_unknown():
    env = make("prosody")
    checked = 0
    for s in BANK[:60]:
        for o in s.options:
            if o.meets_request and o.pattern in ("000", "001"):  # L1 and L2 unmet
                start(env, s)
                env.step(rec(o.number))
                before = set(env.engine.disclosed)
                obs, _, _, _, info = env.step(GENERAL)
                assert s.need(1).hint in last_user(obs)
                assert set(info["disclosed"]) == before == {1}
                checked += 1
    assert checked > 0


def test_targeted_question_on_a_non_need_attribute_does_not_matter():
    env = make()
    for s in SAMPLE:
        distractor = next(a for a in s.attributes if a.kind == "distractor")
        start(env, s)
        before = set(env.engine.disclosed)  # an L1-violating opening discloses L1 already
        obs, *_ = env.step(format_action("ask", f"Do you care about the {distractor.label}?"))
        assert env._last.topic == "irrelevant"
        assert env.engine.disclosed == before
        assert last_user(obs) in IRRELEVANT


def test_clarify_returns_the_l1_hint_without_disclosing():
    env = make()
    for s in SAMPLE:
        start(env, s)
        obs, _, _, _, info = env.step(format_action("clarify", "What do you mean?"))
        assert s.need(1).hint in last_user(obs)
        assert info["disclosed"] == () or (1 in info["disclosed"] and assess(s, s.opening).issue == "L1")


# -- CONFIRM, invalid actions, truncation --------------------------------------------


def test_confirming_a_rejected_option_is_refused_and_dialogue_continues():
    env = make()
    for s in SAMPLE:
        bad = by_role(s, "requirement")[0]
        start(env, s)
        env.step(rec(bad))
        obs, r, term, trunc, _ = env.step(CONFIRM)
        assert not term and not trunc and r == 0.0
        assert s.requirements[0].statement in last_user(obs) or s.requirements[-1].statement in last_user(obs)


@pytest.mark.parametrize("realization", ["prosody", "explicit"])
def test_confirm_ends_the_episode_success_iff_gold(realization):
    env = make(realization)
    for s in SAMPLE:
        for n in (s.gold, s.safe, *by_role(s, "L3")):
            start(env, s)
            env.step(rec(n))
            _, r, term, trunc, info = env.step(CONFIRM)
            assert term and not trunc
            out = info["outcome"]
            assert out["final_option"] == n
            assert out["success"] == (n == s.gold) and r == float(n == s.gold)
            assert out["premature_closure"] == (n != s.gold)
            assert out["turns"] == 3


def test_invalid_action_costs_a_turn_and_asks_to_rephrase():
    env = make()
    s = SAMPLE[0]
    start(env, s)
    obs, _, _, _, info = env.step("let's just pick number three")
    assert info["action"] == "invalid" and "no [ACTION" in info["invalid_action"]
    assert info["turn"] == 2 and info["delivery"] == "neutral"
    assert re.search(r"rephrase|another way|suggesting", last_user(obs))
    obs, _, _, _, info = env.step("[ACTION: RECOMMEND] [OPTION: 99]")
    assert info["action"] == "invalid" and "out of range" in info["invalid_action"]


def test_truncation_after_20_turns_scores_the_last_recommendation():
    env = make()
    s = SAMPLE[1]
    start(env, s)
    env.step(rec(s.gold))
    for turn in range(3, 21):
        _, r, term, trunc, info = env.step(GENERAL)
        assert not term
        assert trunc == (turn == 20)
    out = info["outcome"]
    assert out["turns"] == 20 and out["final_option"] == s.gold and out["success"] and r == 1.0
    assert not out["premature_closure"] and not out["confirmed"]


def test_accept_and_fullfit_count_agent_recommendations_only():
    env = make()
    s = SAMPLE[2]
    start(env, s)
    env.step(rec(by_role(s, "L3")[0]))  # accept (L1, L2 met) but not full fit
    env.step(rec(s.gold))
    _, _, _, _, info = env.step(CONFIRM)
    out = info["outcome"]
    assert out["recommendations"] == 2 and out["accepts"] == 2 and out["fullfits"] == 1
    assert out["accept_rate"] == 1.0 and out["fullfit_rate"] == 0.5
    assert out["action_counts"]["recommend"] == 2 and out["action_counts"]["confirm"] == 1


# -- matched rollouts ------------------------------------------------------------------


def test_matched_rollouts_share_reactions_deliveries_and_states():
    actions = [GENERAL, rec(3), rec(5), format_action("clarify", "?"), rec(8), GENERAL, CONFIRM]
    pro, exp = make("prosody"), make("explicit")
    for i, s in enumerate(SAMPLE):
        start(pro, s, seed=i)
        start(exp, s, seed=i)
        for a in actions:
            o1, _, t1, _, i1 = pro.step(a)
            o2, _, t2, _, i2 = exp.step(a)
            keys = ("state", "delivery", "current")
            assert [i1[k] for k in keys] == [i2[k] for k in keys]
            assert o1["state"] == o2["state"]
            w1, w2 = last_user(o1), last_user(o2)
            if pro._last.act == "react" and pro._last.level == 3:
                assert w2.startswith(w1)  # same assent, explicit adds the need
            elif pro._last.act == "react" and pro._last.level == 2:
                assert w1 in ASSENT and w2.startswith(DIRECT)  # explicit states L2 directly
            elif pro._last.act == "react":
                assert w1 == w2
            if t1 or t2:
                assert t1 == t2
                break


# -- state-tag interventions ----------------------------------------------------------


@pytest.mark.parametrize(
    "intervention, pattern",
    [
        ("none", r"^$"),
        ("always_resolved", r"^CONCERN STATE: (satisfied|warm|enthusiastic|relieved) \(resolved\)$"),
        ("always_unresolved", r"^CONCERN STATE: \w+ \(unresolved\)$"),
        ("shuffled", r"^CONCERN STATE: \w+ \((un)?resolved\)$"),
    ],
)
def test_interventions_give_their_tags(intervention, pattern):
    env = gym.make("Hear2Act-Prosody-v5", access="T+S", state_intervention=intervention,
                   disable_env_checker=True)
    tags = []
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        tags.append(obs["state"])
        obs, *_ = env.step(GENERAL)
        tags.append(obs["state"])
    assert all(re.match(pattern, t) for t in tags), tags[:5]
    if intervention == "shuffled":
        assert len(set(tags)) > 3
