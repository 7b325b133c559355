"""Paired scenario-level bootstrap: against scipy.stats.bootstrap, equal model weights, ratio metrics, the ladder."""

from __future__ import annotations

import numpy as np
import pytest

from hear2act.eval import stats

scipy_stats = pytest.importorskip("scipy.stats")


def outcome(success: bool, recs: int = 2, accepts: int = 1, fullfits: int = 0, asks: int = 1) -> dict:
    return {"success": success, "recommendations": recs, "accepts": accepts, "fullfits": fullfits,
            "full_disclosure": False, "premature_closure": not success, "n_disclosed": 1, "turns": 4,
            "action_counts": {"recommend": recs, "ask": asks, "clarify": 0, "confirm": 1, "invalid": 0}}


def row(agent: str, sid: str, o: dict, repeat: int = 0, failed: str | None = None) -> dict:
    return {"cell": {"agent": agent}, "scenario_id": sid, "repeat": repeat, "outcome": None if failed else o,
            "failed": failed}


def synthetic(n: int = 120, p_a: float = 0.3, p_b: float = 0.55, seed: int = 1, agent: str = "m") -> tuple:
    rng = np.random.default_rng(seed)
    a = rng.random(n) < p_a
    b = rng.random(n) < p_b
    rows_a = [row(agent, f"s{i}", outcome(bool(x))) for i, x in enumerate(a)]
    rows_b = [row(agent, f"s{i}", outcome(bool(x))) for i, x in enumerate(b)]
    return rows_a, rows_b, a.astype(float), b.astype(float)


def test_matches_scipy_bootstrap_on_the_paired_differences() -> None:
    rows_a, rows_b, a, b = synthetic()
    c = stats.paired_contrast(rows_a, rows_b, "success", seed=3)
    # scenarios sorted by id inside paired_contrast: the point estimate does not depend on the order
    d = 100 * (b - a)
    assert c.diff == pytest.approx(d.mean()) and c.n_scenarios == 120 and c.n_resamples == 2000
    ref = scipy_stats.bootstrap((d,), np.mean, n_resamples=2000, confidence_level=0.95, method="percentile",
                                random_state=np.random.default_rng(11)).confidence_interval
    width = ref.high - ref.low
    # two independent Monte Carlo runs of the same bootstrap: endpoints agree to a few percent of the width
    assert abs(c.low - ref.low) < 0.08 * width and abs(c.high - ref.high) < 0.08 * width
    # with many resamples both converge on the same interval
    big = stats.paired_contrast(rows_a, rows_b, "success", n_resamples=40_000, seed=5)
    ref = scipy_stats.bootstrap((d,), np.mean, n_resamples=40_000, method="percentile",
                                random_state=np.random.default_rng(7)).confidence_interval
    # (success differences sit on a lattice of 100/120 points: the percentile methods may pick neighbours)
    assert abs(big.low - ref.low) < 0.05 * width and abs(big.high - ref.high) < 0.05 * width
    # and exactly: resampling scenarios with the same generator, by hand
    idx = np.random.default_rng(3).integers(0, 120, size=(2000, 120))
    order = np.argsort([f"s{i}" for i in range(120)])  # paired_contrast sorts scenario ids
    boot = d[order][idx].mean(axis=1)
    assert (c.low, c.high) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))


def test_seeded_and_deterministic() -> None:
    rows_a, rows_b, *_ = synthetic()
    assert stats.paired_contrast(rows_a, rows_b, seed=0) == stats.paired_contrast(rows_a, rows_b, seed=0)
    assert stats.paired_contrast(rows_a, rows_b, seed=0).low != stats.paired_contrast(rows_a, rows_b, seed=1).low


def test_models_weigh_equally() -> None:
    # model x: 3 repeats per scenario, success 100% in B; model y: 1 repeat, 0% -> pooled B is 50 %, not 75 %
    a, b = [], []
    for i in range(10):
        for rep in range(3):
            a.append(row("x", f"s{i}", outcome(False), rep))
            b.append(row("x", f"s{i}", outcome(True), rep))
        a.append(row("y", f"s{i}", outcome(False)))
        b.append(row("y", f"s{i}", outcome(False)))
    c = stats.paired_contrast(a, b)
    assert (c.a, c.b, c.diff, c.n_models) == (0.0, 50.0, 50.0, 2)
    assert stats.pooled_value(b) == 50.0
    assert c.low == c.high == 50.0  # no scenario-level variation


def test_ratio_metric_and_failed_rollouts() -> None:
    a = [row("m", "s0", outcome(False, recs=4, accepts=1)), row("m", "s1", outcome(False, recs=1, accepts=1))]
    b = [row("m", "s0", outcome(False, recs=2, accepts=2)), row("m", "s1", outcome(False, recs=2, accepts=0)),
         row("m", "s2", outcome(True), failed="server error")]
    c = stats.paired_contrast(a, b, "accept")
    assert c.a == pytest.approx(100 * 2 / 5) and c.b == pytest.approx(100 * 2 / 4)  # per recommendation turn
    assert c.n_scenarios == 2  # s2 failed: never scored, not paired
    assert stats.paired_contrast(a, b, "asks").diff == 0.0  # a mean per dialogue, not a percentage


def test_bad_input_is_named() -> None:
    rows_a, rows_b, *_ = synthetic(n=5)
    with pytest.raises(ValueError, match="unknown metric"):
        stats.paired_contrast(rows_a, rows_b, "succes")
    with pytest.raises(ValueError, match="no model"):
        stats.paired_contrast(rows_a, [row("other", "s0", outcome(True))])
    with pytest.raises(ValueError, match="share no scenario"):
        stats.paired_contrast(rows_a, [row("m", "zz", outcome(True))])


def test_ladder_is_successive_paired_steps() -> None:
    rates = {"none": 0.2, "always_resolved": 0.25, "shuffled": 0.35, "always_unresolved": 0.5, "correct": 0.7}
    rungs = {k: synthetic(n=48, p_a=p, p_b=p, seed=i)[0] for i, (k, p) in enumerate(rates.items())}
    steps = stats.ladder(rungs, "success", n_resamples=500)
    assert [(x, y) for x, y, _ in steps] == list(zip(stats.LADDER, stats.LADDER[1:], strict=False))
    total = sum(c.diff for *_, c in steps)
    direct = stats.paired_contrast(rungs["none"], rungs["correct"], n_resamples=10)
    assert total == pytest.approx(direct.diff)  # the steps telescope
    assert all(c.low <= c.diff <= c.high for *_, c in steps)
    del rungs["shuffled"]
    assert [(x, y) for x, y, _ in stats.ladder(rungs, n_resamples=10)][1] == ("always_resolved", "always_unresolved")


def test_metrics_disclosure_distribution_and_asks() -> None:
    from hear2act.eval.metrics import asks_per_dialogue, disclosure_distribution, summarize

    rows = [dict(outcome(True), n_disclosed=k, action_counts={"ask": k, "clarify": 1}) for k in (0, 3, 3, 1)]
    assert disclosure_distribution(rows) == {0: 25.0, 1: 25.0, 2: 0.0, 3: 50.0}
    assert asks_per_dialogue(rows) == pytest.approx((1 + 4 + 4 + 2) / 4)
    assert summarize(rows)["asks"] == asks_per_dialogue(rows)
    assert stats.pooled_value([row("m", "s", o) for o in rows], "asks") == asks_per_dialogue(rows)


def test_a_model_without_a_denominator_is_left_out_of_that_metric() -> None:
    a = [row("m", "s0", outcome(False, recs=2, accepts=1)), row("never", "s0", outcome(False, recs=0, accepts=0))]
    b = [row("m", "s0", outcome(False, recs=2, accepts=2)), row("never", "s0", outcome(False, recs=0, accepts=0))]
    c = stats.paired_contrast(a, b, "accept", n_resamples=50)
    assert (c.a, c.b, c.n_models) == (50.0, 100.0, 1)
    assert stats.paired_contrast(a, b, "success", n_resamples=50).n_models == 2


def test_gain_gap_interval_resamples_within_each_group() -> None:
    rng = np.random.default_rng(3)
    before = rng.integers(0, 2, size=(3, 60))
    same = before.copy()
    same[:, ::3] = 1  # the same gain in both groups
    in_b = np.arange(60) % 2 == 1
    gap, low, high = stats.gain_gap_interval(before, same, in_b)
    assert low <= 0.0 <= high  # no difference claimed where the gains are alike
    helped_b = before.copy()
    helped_b[:, in_b] = 1
    gap, low, high = stats.gain_gap_interval(before, helped_b, in_b)
    assert gap == pytest.approx((1 - before[:, in_b]).mean()) and low > 0
    # A stratified resample keeps each group's size: with one scenario per group the interval is the point.
    assert stats.gain_gap_interval([0, 0], [0, 1], [False, True]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="two non-empty groups"):
        stats.gain_gap_interval([0, 1], [1, 1], [True, True])
    with pytest.raises(ValueError, match="same scenarios"):
        stats.gain_gap_interval([0, 1], [1, 1], [True, False, True])


def test_part_gains_splits_a_held_out_set_by_part() -> None:
    parts = ["unseen_domain"] * 4 + ["unseen_scenario"] * 4 + ["train"] * 2
    before = [[0] * 10, [0] * 10]
    after = [[1, 1, 0, 0, 1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 1, 1, 1, 0, 0, 0]]
    out = stats.part_gains(parts, before, after)
    assert out["unseen_domain"]["n"] == 4 and out["unseen_domain"]["after"] == pytest.approx(3 / 8)
    assert out["unseen_scenario"]["after"] == pytest.approx(7 / 8)
    assert out["gap_ci95"][0] == pytest.approx(0.5)  # "train" rows are in neither group
    with pytest.raises(ValueError, match="no scenario of part 'unseen_domain'"):
        stats.part_gains(["unseen_scenario"] * 2, [[0, 0]], [[1, 1]])
