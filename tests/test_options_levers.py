"""benchmarks/options_levers.py: rebuilding the bank with changed generator constants, or from another seed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hear2act_env.scenarios import design, generator, load_scenarios
from hear2act_env.scenarios.content import load_all_domains

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import options_levers


@pytest.fixture(scope="module")
def two_domains():
    return load_all_domains()[:2]


@pytest.fixture(scope="module")
def shipped(two_domains):
    return options_levers.build({}, None, two_domains)


def test_a_setting_names_a_known_constant():
    assert options_levers.parse_setting("OPENING_WEIGHTS=(1, 0, 0, 0, 0, 0, 0)") == (
        "OPENING_WEIGHTS", (1, 0, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="OPENING_WEIGHTS"):
        options_levers.parse_setting("BANK_VERSION='x'")  # not a lever: the message lists the levers
    with pytest.raises(ValueError, match="NAME=VALUE"):
        options_levers.parse_setting("COST_NOISE")
    with pytest.raises(ValueError, match="'open'"):
        options_levers.parse_setting("COST_NOISE=open('x')")  # no names, no builtins


def test_the_shipped_settings_rebuild_the_bundled_scenarios_and_a_salt_draws_others(two_domains, shipped):
    bundled = {s.id: s for s in load_scenarios()}
    assert [s.to_dict() for s in shipped] == [bundled[s.id].to_dict() for s in shipped]
    salted = options_levers.build({}, "v1b", two_domains)
    moved = [s.id for s, t in zip(shipped, salted, strict=True) if s.to_dict() != t.to_dict()]
    assert len(moved) == len(shipped)  # another draw of every scenario ...
    assert generator.BANK_VERSION == "v1"  # ... and the bank version restored


def test_a_lever_moves_the_bank_and_is_restored(two_domains, shipped):
    shipped_weights = design.OPENING_WEIGHTS
    changed = options_levers.build({"OPENING_WEIGHTS": (1 / 7,) * 7}, None, two_domains)
    assert shipped_weights == design.OPENING_WEIGHTS
    assert [s.to_dict() for s in changed] != [s.to_dict() for s in shipped]
    # the request, needs and shown attributes do not depend on the opening's weights
    for s, t in zip(changed, shipped, strict=True):
        shown = [a.name for a in s.attributes], [a.name for a in t.attributes]
        assert (s.request, s.needs, shown[0]) == (t.request, t.needs, shown[1])


def _price_not_priority(bank):
    return [s for s in bank if next(a for a in s.attributes if a.name == s.priority).prefix != "$"]


def test_prices_follow_what_an_option_offers_unless_drowned_in_noise(two_domains, shipped):
    """Where the price is not the priority (the priority follows the design's row order), COST_NOISE decides."""
    follows = options_levers.price_follows_offers(_price_not_priority(shipped))
    noisy = options_levers.build({"COST_NOISE": 100.0}, None, two_domains)
    drowned = options_levers.price_follows_offers(_price_not_priority(noisy))
    assert follows > 0.1 and abs(drowned) < follows / 2, (follows, drowned)
