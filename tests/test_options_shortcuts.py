"""The options text must not name the gold (PROTOCOL.md "Scenario", issue "Validity" §1).

Measured on the shipped bank (``python -m pytest tests/test_options_shortcuts.py -q``;
figures at the commit that introduced the rule, before -> after the bank change):
summed-rank value ranker picks the gold 0.496 -> 0.042 (chance 0.125; the gold is never the
best deal of all); highest place rate of any ordering 0.496 -> 0.185; the learned options-only
classifier below AUC 0.779 -> 0.571 (top-1 0.412 -> 0.160); never-ask value agent Prosody T
54.0% -> 19.4% (16-19% over the bank draws tried); commonest-categorical-values pick
0.327 -> 0.060 (rarest: at most 0.185). Categorical structure (issue 17 §1, remaining leak;
blind categorical deal, ``hear2act_env.scenarios.profile``): the options-only logistic with
categorical features + numeric ranks below, AUC 0.807 -> 0.675, top-1 0.460 -> 0.235 (still
above the 0.65 / 0.20 targets: xfail, strict). Desirability (issue 17 §1, the gold shows an
accepted value in every need column; the deal now also matches the count of values the domain
accepts for some need, and phrase length): with those two statistics among its features the
classifier below read the bank before this change at AUC 0.830, top-1 0.450, and reads it at
0.712 / 0.279 after ('cat:desirable' place rate 0.319 -> 0.194; an independent bag-of-words
logistic top-1 0.199 -> 0.079). The gold/safe twin (an independent probe: the one candidate
pair alike on every need column, the gold ahead on the priority; top-1 0.685 with gradient
boosting): with :func:`_twin_features` added the classifier below read the bank at 0.834 / 0.590.
Env -v3: the deal also matches the gold's twin statistics (generator ``twin_deal``), and the
classifier reads 0.737 / 0.348 (0.710 / 0.298 without the twin features; the one-rule twin reader
of :func:`_twin_rule` 0.426 -> 0.185). Env -v4: 3-4 distractor columns dealt as decoys of the
need patterns' cube (``tests/test_options_cube.py``): 0.710 / 0.260. Env -v5: every categorical column's
sides from a cube design (``hear2act_env.scenarios.design``), the needs one of its seven cubes at random:
0.580 / 0.146, under the issue's 0.60 / 0.20 (0.587 / 0.160 and 0.596 / 0.158 on two more draws,
``benchmarks/options_levers.py --salt v1b|v1c``).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hear2act_env  # noqa: F401
from hear2act.agents import make_agent
from hear2act.eval.rollout import run_episode
from hear2act_env.scenarios import Scenario, load_scenarios
from hear2act_env.scenarios.content import load_all_domains
from hear2act_env.scenarios.generator import build_bank
from hear2act_env.scenarios.profile import twin_features
from hear2act_env.scenarios.shortcuts import (
    MAX_POSITION_RATE,
    attribute_ranks,
    bank_problems,
    candidates,
    categorical_profile,
    desirable_values,
    position_rates,
    value_order,
    value_pick_rate,
)
from hear2act_env.scenarios.validate import problems


@pytest.fixture(scope="module")
def bank() -> list[Scenario]:
    return load_scenarios()


def test_no_options_only_ordering_places_the_gold(bank):
    assert bank_problems(bank) == []
    assert value_pick_rate(bank) <= MAX_POSITION_RATE
    for kind, rates in position_rates(bank).items():
        assert max(rates.values()) <= MAX_POSITION_RATE, (kind, rates)


def test_the_rule_catches_a_bank_whose_numbers_rank_the_gold(bank):
    """Give each gold the visible numbers of its scenario's best-value candidate: the rule fires."""
    rigged = []
    for s in bank[:200]:
        d = s.to_dict()
        best = value_order(s)[0]
        numeric = [a.name for a in s.attributes if a.numeric]
        gold, top = d["options"][s.gold - 1], d["options"][best - 1]
        for name in numeric:
            gold["values"][name], top["values"][name] = top["values"][name], gold["values"][name]
        rigged.append(Scenario.from_dict(d))
    found = bank_problems(rigged)
    assert found and "'value' puts the gold at place 1" in str(found[0])


def _features(s: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate: its rank on every numeric column (priority, costs, others), summed rank,
    and rank gaps to the neighbours, all scaled to [0, 1] within the scenario."""
    opts = candidates(s)
    ranks = attribute_ranks(s, opts)
    n = len(opts) - 1
    prio = np.array(ranks[s.priority]) / n
    others = [np.array(r) / n for name, r in ranks.items() if name != s.priority]
    other = np.mean(others, axis=0) if others else np.zeros(len(opts))
    total = np.array([sum(r[i] for r in ranks.values()) for i in range(len(opts))])
    value = np.argsort(np.argsort(total)) / n
    x = np.column_stack([prio, other, value, prio * other, np.abs(prio - other), value**2, prio**2, other**2])
    y = np.array([o.number == s.gold for o in opts], dtype=float)
    return x, y


def _categorical_features(s: Scenario, desirable: dict | None = None) -> np.ndarray:
    """Per candidate: its categorical statistics (value frequency among all options, the
    candidates, the others; modal-value agreement; likeness to the opening; rarest value;
    unique values; values the domain accepts for some need; phrase length), raw and as ranks
    within the scenario scaled to [0, 1]."""
    _, f = categorical_profile(s, desirable)
    n = len(f) - 1
    ranks = np.column_stack([np.argsort(np.argsort(f[:, k], kind="stable"), kind="stable") / n
                             for k in range(f.shape[1])])
    return np.column_stack([f, ranks, f[:, 1] - f[:, 2], f[:, 1] - f[:, 0]])


def _cv_scores(data: list[tuple[np.ndarray, np.ndarray]], folds: int = 5) -> tuple[float, float]:
    """AUC and top-1 of a logistic regression, cross-validated with folds grouped by scenario."""
    group = np.arange(len(data)) % folds
    scores, labels = [], []
    for k in range(folds):
        train = [d for d, f in zip(data, group, strict=True) if f != k]
        x = np.vstack([x for x, _ in train])
        mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
        w = _fit_logistic((x - mu) / sd, np.concatenate([y for _, y in train]), steps=600)
        for x, y in (d for d, f in zip(data, group, strict=True) if f == k):
            scores.append(np.column_stack([(x - mu) / sd, np.ones(len(x))]) @ w)
            labels.append(y)
    auc = _auc(np.concatenate(scores), np.concatenate(labels))
    top1 = float(np.mean([y[np.argmax(sc)] for sc, y in zip(scores, labels, strict=True)]))
    return auc, top1


def _auc(score: np.ndarray, label: np.ndarray) -> float:
    pos, neg = score[label == 1], score[label == 0]
    greater = (pos[:, None] > neg[None, :]).mean()
    ties = (pos[:, None] == neg[None, :]).mean()
    return float(greater + 0.5 * ties)


def _fit_logistic(x: np.ndarray, y: np.ndarray, steps: int = 400, l2: float = 1e-3) -> np.ndarray:
    x1 = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(x1.shape[1])
    for _ in range(steps):  # plain gradient descent: deterministic, no dependency
        p = 1 / (1 + np.exp(-x1 @ w))
        w -= 0.5 * (x1.T @ (p - y) / len(y) + l2 * w)
    return w


def test_a_learned_options_only_classifier_is_near_chance(bank):
    """Logistic regression on within-scenario rank features, 5-fold CV grouped by scenario."""
    data = [_features(s) for s in bank]
    folds = np.arange(len(bank)) % 5
    scores, labels = [], []
    for k in range(5):
        train = [d for d, f in zip(data, folds, strict=True) if f != k]
        test = [d for d, f in zip(data, folds, strict=True) if f == k]
        w = _fit_logistic(np.vstack([x for x, _ in train]), np.concatenate([y for _, y in train]))
        for x, y in test:
            scores.append(np.column_stack([x, np.ones(len(x))]) @ w)
            labels.append(y)
    auc = _auc(np.concatenate(scores), np.concatenate(labels))
    top1 = np.mean([y[np.argmax(sc)] for sc, y in zip(scores, labels, strict=True)])
    assert auc <= 0.60, auc
    assert top1 <= MAX_POSITION_RATE, top1


def _success(bank, agent: str, env_id: str, access: str) -> float:
    env = gym.make(env_id, access=access, scenarios=bank).unwrapped
    player = make_agent(agent)
    return sum(run_episode(env, player, s.id, i)["success"] for i, s in enumerate(bank)) / len(bank)


def test_the_never_ask_value_agent_stays_at_the_floor(bank):
    """Recommends by the options-only value ranking, confirms unless the words object."""
    assert _success(bank, "options-value", "Hear2Act-Prosody-v5", "T") <= 0.20
    # Under Explicit responses every unmet need is said in words, so walking on works.
    assert _success(bank[::8], "options-value", "Hear2Act-Explicit-v5", "T") >= 0.9


def test_strict_bound_words_are_strict(bank):
    """ "under $X" means < X: no option sits on a strict bound, and the named scenarios agree."""
    by_id = {s.id: s for s in bank}
    for sid in ("landscaping-contractors-10", "lawn-care-contractors-02"):
        s = by_id[sid]
        price = next(r for r in s.requirements if not r.categorical)
        assert price.op == "<" and "under" in s.request.lower(), (sid, price, s.request)
    strict = 0
    for s in bank:
        for r in s.requirements:
            if r.op in ("<", ">"):
                strict += 1
                assert all(float(o.values[r.attribute]) != r.value for o in s.options), s.id
    assert strict >= 200


def test_the_validator_names_a_bound_that_contradicts_its_words(bank):
    s = next(s for s in bank if any(r.op == "<" for r in s.requirements))
    d = s.to_dict()
    k = next(i for i, r in enumerate(d["requirements"]) if r.get("op") == "<")
    d["requirements"][k]["op"] = "<="
    found = [str(e) for e in problems(Scenario.from_dict(d))]
    assert any(f"requirements[{k}].op" in e and "strictly" in e for e in found), found


def test_counting_categorical_values_does_not_find_the_gold(bank):
    """The option showing the commonest value in every column is not the gold (nor the rarest)."""
    rates = position_rates(bank)["commonest"]
    assert max(rates.values()) <= MAX_POSITION_RATE, rates


def _twin_features(s: Scenario) -> np.ndarray:
    """Per candidate: likeness to its nearest other candidate (share of categorical columns with the same value),
    how many candidates are that near, and whether it leads its nearest candidates on the priority attribute --
    the gold/safe twin (both meet every need, so where a need accepts one value they show it both; the safe is
    worse on the priority). Found by an independent options-only probe (gradient boosting, top-1 0.685).
    One home: :func:`hear2act_env.scenarios.profile.twin_features`, which the generator's twin deal matches."""
    opts = candidates(s)
    cols = [a.name for a in s.attributes if not a.numeric]
    rows = [dict(o.values) for o in opts]
    return twin_features(rows, cols, range(len(opts)), [s._rank_key(o) for o in opts])


def _twin_rule(bank: list[Scenario]) -> float:
    """Share of scenarios whose gold has the top ``near * leads`` (ties split): the twin read by one rule."""
    credit = 0.0
    for s in bank:
        score = _twin_features(s)[:, 3]
        top = np.flatnonzero(score == score.max())
        gold = [o.number for o in candidates(s)].index(s.gold)
        credit += (gold in top) / len(top)
    return credit / len(bank)


def test_the_designs_hide_the_gold_safe_twin(bank):
    """In a cube design every cube's 111 pair is such a twin, so the gold's is one of several; the control
    (``designs=False``: the needs' cube alone) leaves it. Env -v5: 0.256 -> 0.133 (-v4's twin deal:
    0.325 -> 0.149)."""
    domains = load_all_domains()[:8]
    shipped = bank[: sum(len(d.personas) for d in domains)]
    control = build_bank(domains, designs=False)
    assert [s.id for s in control] == [s.id for s in shipped]
    before, after = _twin_rule(control), _twin_rule(shipped)
    assert before > 0.2 and after < before - 0.1, (before, after)


def _numeric_and_categorical(bank: list[Scenario]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per scenario: :func:`_features` and :func:`_categorical_features`, the desirable values
    being the bank's (every scenario's needs of the domain: a reader's world knowledge)."""
    desirable = desirable_values(bank)
    out = []
    for s in bank:
        x, y = _features(s)
        out.append((np.column_stack([x, _categorical_features(s, desirable), _twin_features(s)]), y))
    return out


def test_a_learned_classifier_with_categorical_features_is_near_chance(bank):
    """Numeric ranks plus categorical structure (value frequencies, modal-value agreement,
    likeness to the opening), logistic regression, 5-fold CV grouped by scenario."""
    auc, top1 = _cv_scores(_numeric_and_categorical(bank))
    assert auc <= 0.60, auc
    assert top1 <= MAX_POSITION_RATE, top1


def test_the_categorical_classifier_finds_a_centroid_gold(bank):
    """Rig a bank so the gold is the centroid of the distractor columns (half the other
    options copy its values there): the learned classifier and the bank rule both see it."""
    rigged = []
    for s in bank[:200]:
        d = s.to_dict()
        gold = d["options"][s.gold - 1]["values"]
        for o in d["options"]:
            if o["number"] not in (s.gold, s.opening) and o["number"] % 2 == 0:
                for a in s.attributes:
                    if a.kind == "distractor":
                        o["values"][a.name] = gold[a.name]
        rigged.append(Scenario.from_dict(d))
    auc, top1 = _cv_scores(_numeric_and_categorical(rigged))
    assert auc > 0.65 and top1 > MAX_POSITION_RATE, (auc, top1)
    assert any("'cat:" in str(e) or "'commonest'" in str(e) for e in bank_problems(rigged))


def test_the_rule_catches_a_gold_that_shows_the_desirable_values(bank):
    """Rig a bank so the gold shows a value the domain accepts for some need in every
    distractor column and the other candidates do not: the 'cat:desirable' ordering fires."""
    desirable = desirable_values(bank)
    rigged = []
    for s in bank[:200]:
        d = s.to_dict()
        cand = {o.number for o in candidates(s)}
        for a in s.attributes:
            good = desirable.get(s.domain, {}).get(a.name, frozenset())
            if a.kind != "distractor" or not good or set(a.values) <= good:
                continue
            for o in d["options"]:
                if o["number"] == s.gold:
                    o["values"][a.name] = sorted(good)[0]
                elif o["number"] in cand:
                    o["values"][a.name] = next(v for v in a.values if v not in good)
        rigged.append(Scenario.from_dict(d))
    assert max(position_rates(rigged)["cat:desirable"].values()) > MAX_POSITION_RATE
    assert any("'cat:desirable'" in str(e) for e in bank_problems(rigged))
