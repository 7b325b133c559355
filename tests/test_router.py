"""The learned question router (the default matcher): held-out accuracy, behaviour, weights, fitting.

Question sets (rows ``{"scenario_id", "question", "expect", "attribute", "style"}``, scored by
:mod:`hear2act_env.dialogue.question_sets`):

- ``training/data/routing/routing_train/`` (beside the fitting tool; not test data): the training data,
  written by separate helpers that saw only the
  attribute sheets (name, label, values; never keyword lists) and ``hear2act scenarios show``: 48
  domain files (7,500 questions, labelled with an attribute or ``general``) and 5,376 rows written per
  scenario (scenarios -02 to -09). With the older development sources, the project's own
  agents' questions and two former held-out sets (``training/data/routing/former_heldout/``: v1; v3,
  measured once with an earlier fit at need 0.944 / general 0.938 / other 1.000 before it was added)
  they are what the weights are fitted on.
- ``heldout_questions_v2.jsonl`` (scenarios -05/-08): used to choose the fitting settings (L2 strength,
  pruning, the general offset), so a validation set, not an honest held-out figure.
- ``heldout_questions_v4.jsonl`` (scenarios -01/-10, 480 rows): written by another separate helper from
  ``hear2act scenarios list/show`` only, while the router was being fitted; never fitted on, never used
  to choose anything; measured once with the shipped weights: need 0.969 (direct 1.000, preference
  0.986, trade-off 0.986, paraphrase 0.903), general 1.000, other 1.000.
- ``heldout_questions_v5.jsonl`` (scenarios -03/-08, 480 rows): a second untouched set, written by yet
  another helper after the weights were final, measured once: need 0.948 (paraphrase 0.806), general
  1.000, other 1.000. Pooled with v4 (960 questions): need 0.958, general 1.000, other 1.000.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from hear2act_env import load_scenarios
from hear2act_env.dialogue import router as router_mod
from hear2act_env.dialogue.matchers import default_matcher, resolve_matcher
from hear2act_env.dialogue.matching import match_question
from hear2act_env.dialogue.question_sets import read_rows, tally
from hear2act_env.dialogue.router import Router, candidates, question_features, route
from hear2act_env.scenarios import Scenario

DATA = Path(__file__).parent / "data"
TRAIN = Path(__file__).resolve().parents[1] / "training" / "data" / "routing"  # the fit's rows (router_data.DATA)
FORMER = TRAIN / "former_heldout"  # v1 and v3: held out once, training rows now


@pytest.fixture(scope="module")
def bank():
    return {s.id: s for s in load_scenarios()}


def rates(names: list[str], bank, matcher=route) -> dict[tuple[str, str], float]:
    """(style or "all", "need"/"general"/"other") -> accuracy over the named sets together."""
    rows = [r for name in names for r in read_rows(DATA / name)]
    return {k: right / total for k, (right, total) in tally(rows, bank, matcher).items()}


# -- accuracy --------------------------------------------------------------------------------------
# CI gates only on the validation set v2 (the set the fitting settings were chosen on). The held-out sets
# v4 and v5 are reported, never asserted: a gate on them would be tuned against until they stop being held
# out. ``python benchmarks/routing.py`` prints their figures (README "Question routing").
def test_v2_validation_set(bank):
    """The CI gate: measured 0.951 / 0.958 / 1.000 (the fitting settings were chosen on this set)."""
    rate = rates(["heldout_questions_v2.jsonl"], bank)
    assert rate[("all", "need")] >= 0.95, rate
    assert rate[("all", "general")] >= 0.95, rate
    assert rate[("all", "other")] >= 0.98, rate


@pytest.mark.parametrize("path", [DATA / "heldout_questions_v4.jsonl", DATA / "heldout_questions_v5.jsonl",
                                  FORMER / "heldout_questions_v3.jsonl"], ids=lambda p: p.name)
def test_held_out_sets_cover_every_domain_and_style(bank, path):
    rows = read_rows(path)
    assert len(rows) >= 400
    assert {bank[r["scenario_id"]].domain for r in rows} == {s.domain for s in bank.values()}
    assert {r["style"] for r in rows} >= {"direct", "preference", "trade-off", "paraphrase"}
    for r in rows:  # labels agree with the bank
        if r["expect"].startswith("L"):
            assert bank[r["scenario_id"]].need(int(r["expect"][1])).attribute == r["attribute"], r


# -- behaviour -------------------------------------------------------------------------------------
def test_generic_questions_are_general_everywhere(bank):
    for s in bank.values():
        for q in ("Is there anything else I should know?", "What matters most to you?", "Anything else?",
                  "How long do you plan to keep it?", "How long have you been looking?"):
            assert route(s, q) is None, (s.id, q)


@pytest.mark.parametrize(
    "question, attribute",
    [("Do you mind layovers?", "stops"), ("Is a red-eye out of the question?", "departure"),
     ("How many bags are you bringing?", "baggage"), ("What's the most you'd spend on the fare?", "price"),
     ("Would you pay more for a nonstop flight?", "stops"),  # trade-off: the other attribute
     ("Would you pay extra to have a checked bag included?", "baggage")],
)
def test_airline_questions(question, attribute, bank):
    shown = [s for s in bank.values()
             if s.domain == "budget airline tickets" and attribute in {a.name for a in s.attributes}]
    assert shown
    for s in shown:
        got = route(s, question)
        assert got is not None and got.attribute == attribute, (s.id, got)


def test_every_need_is_reachable_by_its_label(bank):
    """The oracle's plain questions still reach every need."""
    from hear2act.agents.oracle import targeted_question

    for s in bank.values():
        for level in (1, 2, 3):
            got = route(s, targeted_question(s, level))
            assert got is not None and got.level == level, (s.id, level)


def test_the_full_wrappers_column_questions_reach_their_attribute(bank):
    from hear2act.training.reader import Options
    from hear2act.training.wrappers import column_question
    from hear2act_env.env import options_text

    hits = total = 0
    for s in bank.values():
        opts = Options.parse(options_text(s))
        names = list(s.options[0].values)
        for k in range(opts.width):
            question = column_question(list(opts.column(k).values()))
            if question is None:  # nothing but numbers: the wrapper asks its general question
                continue
            total += 1
            got = route(s, question)
            hits += got is not None and got.attribute == names[k]
    assert total == 4770 and hits >= 4750  # measured 4,758 on env -v5 (4,118 of 4,129 on -v4; 3,159 of 3,169 on -v3)


def test_candidates_cover_the_domain_and_general(bank):
    s = bank["budget-airline-tickets-05"]
    names = [c.name for c in candidates(s)]
    assert names[-1] == "general" and len(names) == len(set(names))
    assert {a.name for a in s.attributes} <= set(names)
    # An attribute of the domain that a scenario does not show routes to None (env -v5's bank shows them all,
    # so one is dropped here; a user's scenario file may show fewer).
    d = s.to_dict()
    gone = next(a["name"] for a in d["attributes"] if a["kind"] == "distractor")
    d["attributes"] = [a for a in d["attributes"] if a["name"] != gone]
    for o in d["options"]:
        del o["values"][gone]
    fewer = Scenario.from_dict(d)
    absent = [c for c in candidates(fewer) if c.name not in {a.name for a in fewer.attributes} and c.name != "general"]
    assert [c.name for c in absent] == [gone] and all(c.target is None for c in absent)


def test_a_scenario_of_an_unknown_domain_routes_on_lexical_evidence(bank):
    data = bank["budget-airline-tickets-05"].to_dict()
    data["domain"] = "space tourism"
    s = Scenario.from_dict(data)
    assert all(not c.keys[0].startswith("budget") for c in candidates(s))
    assert route(s, "Is there anything else I should know?") is None
    got = route(s, "Do you mind layovers, or does it have to be nonstop?")
    assert got is not None and got.attribute == "stops"


def test_features_are_stems_bigrams_and_frames():
    feats = question_features("Would you pay more for a nonstop flight?")
    assert "bias" in feats and "u:nonstop" in feats and "b:pay_more" in feats and "f:tradeoff" in feats
    assert question_features("How long have you had the car?") == question_features("how long have you had the car")


def test_default_matcher_is_the_router_and_the_env_uses_it():
    import gymnasium as gym

    assert default_matcher() is route and resolve_matcher("learned") is route
    assert resolve_matcher("lexical") is match_question
    env = gym.make("Hear2Act-Explicit-v5")
    env.reset(seed=0, options={"scenario_id": "budget-airline-tickets-03"})
    _, _, _, _, info = env.step("[ACTION: ASK] Will you want to pick where you sit ahead of time?")
    assert info["question"] == {"target": "need", "attribute": "seating", "level": 1}


# -- weights ---------------------------------------------------------------------------------------
def test_shipped_weights_are_small_and_well_formed():
    path = router_mod.WEIGHTS_PATH
    assert path.stat().st_size < 2_000_000
    data = json.loads(gzip.decompress(path.read_bytes()))
    assert data["psi"] == list(router_mod.PSI) and len(data["beta"]) == len(router_mod.PSI)
    assert "*/general" in data["weights"]


def test_bad_weight_files_fail_with_the_path(tmp_path):
    bad = tmp_path / "router.json.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="unreadable"):
        Router.load(bad)
    bad.write_bytes(gzip.compress(b'{"beta": []}'))
    with pytest.raises(ValueError, match="expected an object"):
        Router.load(bad)
    bad.write_bytes(gzip.compress(json.dumps({"psi": ["x"], "beta": [1.0], "weights": {}}).encode()))
    with pytest.raises(ValueError, match="psi"):
        Router.load(bad)


# -- fitting ---------------------------------------------------------------------------------------
def test_fitting_is_deterministic_and_learns(bank):
    pytest.importorskip("scipy")
    from hear2act.training import router_data, router_fit

    path = TRAIN / "routing_train" / "budget-airline-tickets.txt"
    by_domain = {"budget-airline-tickets": [s for s in bank.values() if s.domain == "budget airline tickets"]}
    rows = list(router_data.read_domain_lines(path))
    examples = router_data.domain_examples(rows, by_domain, per_question=1)
    a = router_fit.fit(examples, steps=60, l2_domain=1e-6, l2_shared=1e-6)
    b = router_fit.fit(examples, steps=60, l2_domain=1e-6, l2_shared=1e-6)
    assert a == b
    fitted = Router(a)
    right = sum(fitted.best(e.scenario, e.question).name in e.labels for e in examples)
    assert right / len(examples) >= 0.95
    zero = Router({"psi": list(router_mod.PSI), "beta": [0.0] * len(router_mod.PSI), "weights": {}})
    assert sum(zero.best(e.scenario, e.question).name in e.labels for e in examples) < right


def test_training_files_name_real_domains_and_attributes(bank):
    from hear2act.training import router_data

    examples = router_data.default_examples(list(bank.values()), per_question=1)
    assert len({e.question for e in examples}) > 8000
    for e in examples:
        assert e.labels <= {c.name for c in candidates(e.scenario)}, e
    # Every row comes from a declared source; the project's own agents' questions are their own subset,
    # and leaving it out removes exactly those rows (nothing else is tagged with it).
    assert {e.source for e in examples} == set(router_data.SOURCES)
    own = [e for e in examples if e.source == router_data.OWN_AGENTS]
    from hear2act.agents.rule import GENERAL_QUESTION

    general_own = [e for e in own if e.labels == frozenset({router_mod.GENERAL})]
    assert {e.question for e in general_own} == {GENERAL_QUESTION}  # the rule agents' one general question
    assert len(general_own) == len({s.domain for s in bank.values()})  # once per domain
    without = router_data.default_examples(list(bank.values()), per_question=1, exclude=[router_data.OWN_AGENTS])
    assert len(without) == len(examples) - len(own)
    assert router_data.OWN_AGENTS not in {e.source for e in without}
    with pytest.raises(ValueError, match="unknown source"):
        router_data.default_examples(list(bank.values()), per_question=1, exclude=["nope"])


def test_plans_are_kept_per_scenario_and_router_and_die_with_either(bank):
    import gc
    import weakref

    s = Scenario.from_dict(bank["budget-airline-tickets-05"].to_dict())
    a, b = Router.load(), Router.load()
    assert a._table(s) is a._table(s) and a._table(s) is not b._table(s)  # one plan per (scenario, router)
    alive = weakref.ref(b)
    del b
    gc.collect()
    assert alive() is None  # a scenario's plans do not keep a router alive
    held = weakref.ref(s)
    del s
    gc.collect()
    assert held() is None  # nor a router a scenario


def test_decisions_are_remembered_per_scenario_object(bank):
    router = Router.load()
    s = bank["budget-airline-tickets-05"]
    copy = Scenario.from_dict(s.to_dict())  # equal, another object: its own tables
    q = "Is rushing between gates hard on your knee?"
    first = router(s, q)
    assert router(s, q) == first == router(copy, q)
    assert q in router._table(s)[1] and router._table(s) is not router._table(copy)
    assert router.best(s, q).target == first


def test_odd_questions_route_without_error_and_long_ones_are_not_kept(bank):
    router = Router.load()
    s = bank["budget-airline-tickets-05"]
    assert router(s, "") is None and router(s, "?!") is None
    router(s, "é ü 日本語?")
    long = "Do you mind a layover? " * 100
    assert router(s, long) == router(s, "Do you mind a layover?")
    assert long not in router._table(s)[1]


# -- decisions pinned before the per-domain tables (issues 20 and 22) -------------------------------
# tests/data/router_decisions.json.gz was recorded with the router as it was before its per-scenario
# tables were replaced by shared ones (commit 1bbb14d; re-recorded with that code on the bank of commit
# 9415d94), and re-recorded with the shared tables on env -v4's bank, which shows 3-4 distractor columns and
# adds the distractor_offset: ``python tests/test_router.py --record``.
DECISIONS = DATA / "router_decisions.json.gz"
# The lexical matcher's decisions on the same questions, recorded with matching.py unchanged (commit 1bbb14d)
# before its phrase tables were assembled from per-attribute parts, and re-recorded on env -v4's bank:
# ``--record-lexical``.
LEXICAL_DECISIONS = DATA / "lexical_decisions.json.gz"
QUESTION_SETS = (DATA / "dev_questions.jsonl", FORMER / "heldout_questions.jsonl", DATA / "heldout_questions_v2.jsonl",
                 FORMER / "heldout_questions_v3.jsonl", DATA / "heldout_questions_v4.jsonl",
                 DATA / "heldout_questions_v5.jsonl")


def decision_pairs(bank) -> list[tuple[str, str]]:
    """Every (scenario id, question) of the repo's question sets, once each, in a fixed order.

    Rows written per scenario (the held-out sets, ``routing_train/*.jsonl``) are routed on their scenario;
    a domain file's question (``routing_train/*.txt``) on two of the domain's scenarios, in turn, so that
    every scenario of the domain is met.
    """
    from hear2act.training.router_data import read_domain_lines

    paths = [*QUESTION_SETS, *sorted((TRAIN / "routing_train").glob("*.jsonl"))]
    pairs = [(r["scenario_id"], r["question"]) for path in paths for r in read_rows(path)]
    by_domain: dict[str, list[str]] = {}
    for sid in sorted(bank):
        by_domain.setdefault(router_mod.slug(bank[sid].domain), []).append(sid)
    for path in sorted((TRAIN / "routing_train").glob("*.txt")):
        for i, (domain, _attr, question) in enumerate(read_domain_lines(path)):
            ids = by_domain[domain]
            pairs += [(ids[i % len(ids)], question), (ids[(i + len(ids) // 2) % len(ids)], question)]
    return list(dict.fromkeys(pairs))


def decision(target) -> list:
    """A routing decision as (target, attribute, level): ``["general", None, None]`` when it goes nowhere."""
    return ["general", None, None] if target is None else [target.kind, target.attribute, target.level]


def record_decisions(path: Path = DECISIONS, matcher=route) -> int:
    bank = {s.id: s for s in load_scenarios()}
    rows = [[sid, q, *decision(matcher(bank[sid], q))] for sid, q in decision_pairs(bank)]
    path.write_bytes(gzip.compress(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode(), mtime=0))
    return len(rows)


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["learned", "lexical"])
def test_decisions_match_those_recorded_before_the_shared_tables(bank, fixture):
    """Every question of the repo's question sets routes exactly as before: the learned router as with its
    per-scenario tables, the lexical matcher as with its tables built attribute by attribute in one go."""
    path, matcher = (DECISIONS, Router.load()) if fixture == "learned" else (LEXICAL_DECISIONS, match_question)
    recorded = json.loads(gzip.decompress(path.read_bytes()))
    assert [(sid, q) for sid, q, *_ in recorded] == decision_pairs(bank)  # the sets as recorded, in order
    assert len(recorded) == 28821 and len({r[0] for r in recorded}) == len(bank)
    differ = [(sid, q, rest, got) for sid, q, *rest in recorded if (got := decision(matcher(bank[sid], q))) != rest]
    assert not differ, f"{len(differ)} of {len(recorded)} decisions moved, e.g. {differ[:3]}"


def test_a_scenario_costs_the_router_references_not_tables(bank):
    """A scenario's plan holds the shared weight classes' lookups (one per class), not copied weights."""
    router = Router.load()
    s = bank["budget-airline-tickets-05"]
    plan, _memo = router._table(s)
    assert [i for i, _ in plan] == list(range(len(candidates(s))))
    for (_i, gets), c in zip(plan, candidates(s), strict=True):
        assert [id(g.__self__) for g in gets] == [id(router.classes[k]) for k in c.keys if k in router.classes]


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--record"]:
        print(f"recorded {record_decisions()} decisions in {DECISIONS}")
    elif sys.argv[1:] == ["--record-lexical"]:
        print(f"recorded {record_decisions(LEXICAL_DECISIONS, match_question)} decisions in {LEXICAL_DECISIONS}")
    else:
        raise SystemExit("usage: python tests/test_router.py --record | --record-lexical  (rewrites the fixture)")
