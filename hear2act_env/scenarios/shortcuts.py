"""Options-only shortcut probes: can the visible numbers rank the gold without asking?

PROTOCOL.md "Scenario": what is visible must not rank the gold — an agent that
reads only the options text (value rankings over price, rating, ...) finds the
gold at close to chance. These are the bank-level checks behind that rule, pure
functions over :class:`~hear2act_env.scenarios.model.Scenario` objects:

* :func:`candidates` — the options an options-only reader would choose among:
  those that meet the request, less the opening (8 in a valid scenario);
* :func:`value_order` — those candidates best value first, by the sum of their
  ranks on every numeric visible attribute (each in its better direction);
* :func:`commonest_order` — those candidates by how common their categorical values
  are across the options (the counting shortcut);
* :func:`profile_order` — those candidates by one categorical statistic of
  :mod:`~hear2act_env.scenarios.profile` (agreement with each column's modal value,
  likeness to the opening, value frequency among the candidates, ...), highest first;
* :func:`gold_positions` — where the gold lands in that order (and on each
  single attribute), scenario by scenario;
* :func:`position_rates` — the share of scenarios with the gold at each place.

:func:`bank_problems` turns them into validator errors: no single ordering
(summed ranks, any one attribute best or worst first, the commonest categorical
values, or any one categorical statistic — modal-value agreement, likeness to the
opening, how many of its values the domain accepts for some need, phrase length, ...)
may put the gold at one place in more than :data:`MAX_POSITION_RATE` of the bank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .errors import ScenarioError
from .model import Option, Scenario
from .profile import NAMES as PROFILE_NAMES
from .profile import average_ranks
from .profile import features as profile_features

# Chance is 1/8 with 8 candidates; PROTOCOL.md allows at most 0.20.
MAX_POSITION_RATE = 0.20
# Fewer scenarios than this are too few for a rate (one scenario of 50 is 0.02).
MIN_BANK = 100


def candidates(s: Scenario) -> list[Option]:
    """Request-meeting options other than the opening, in option-number order."""
    return [o for o in s.options if o.meets_request and o.number != s.opening]


def attribute_ranks(s: Scenario, opts: Sequence[Option]) -> dict[str, list[float]]:
    """Per numeric visible attribute, each option's rank among ``opts`` (0 = best)."""
    out = {}
    for a in s.attributes:
        if a.numeric and a.better in ("lower", "higher"):
            sign = 1.0 if a.better == "lower" else -1.0  # 0 = best
            out[a.name] = average_ranks(np.array([sign * float(o.values[a.name]) for o in opts])).tolist()
    return out


def value_order(s: Scenario) -> list[int]:
    """Candidate option numbers, best value first (summed ranks; ties by number)."""
    opts = candidates(s)
    ranks = attribute_ranks(s, opts)
    total = [sum(r[i] for r in ranks.values()) for i in range(len(opts))]
    return [opts[i].number for i in sorted(range(len(opts)), key=lambda i: (total[i], opts[i].number))]


def commonest_order(s: Scenario) -> list[int]:
    """Candidates whose categorical values are the commonest across all 11 options first.

    The options-only counting shortcut: an option that shows the value most options
    share in every column (ties by number).
    """
    cats = [a.name for a in s.attributes if not a.numeric]
    counts = {a: Counter(str(o.values[a]) for o in s.options) for a in cats}
    opts = candidates(s)
    score = {o.number: sum(counts[a][str(o.values[a])] for a in cats) for o in opts}
    return sorted(score, key=lambda n: (-score[n], n))


Desirable = Mapping[str, Mapping[str, frozenset[str]]]


def desirable_values(scenarios: Iterable[Scenario]) -> dict[str, dict[str, frozenset[str]]]:
    """Per domain and attribute, the values some scenario's need accepts (the "better"
    values a reader with world knowledge counts, :func:`~hear2act_env.scenarios.profile.features`).

    Over a whole bank this is the domain's: every persona is a scenario.
    """
    out: dict[str, dict[str, set[str]]] = {}
    for s in scenarios:
        for n in s.needs:
            out.setdefault(s.domain, {}).setdefault(n.attribute, set()).update(n.accept)
    return {d: {a: frozenset(v) for a, v in m.items()} for d, m in out.items()}


def categorical_profile(s: Scenario, desirable: Desirable | None = None) -> tuple[list[Option], np.ndarray]:
    """The candidates and their rows of :func:`~hear2act_env.scenarios.profile.features`.

    ``desirable``: :func:`desirable_values` of the bank (what a reader who knows the domain
    counts as the better values). Without it the ``desirable`` statistic is 0: one
    scenario's own needs are hidden from the user, so they are never the default.
    """
    cats = [a.name for a in s.attributes if not a.numeric]
    rows = [dict(o.values) for o in s.options]
    idx = {o.number: i for i, o in enumerate(s.options)}
    opts = candidates(s)
    good = (desirable or {}).get(s.domain, {})
    f = profile_features(rows, cats, [idx[o.number] for o in opts], idx[s.opening], good)
    return opts, f[[idx[o.number] for o in opts]]


def profile_order(s: Scenario, name: str, desirable: Desirable | None = None) -> list[int]:
    """Candidate option numbers, highest first on one categorical statistic (ties by number)."""
    opts, f = categorical_profile(s, desirable)
    k = PROFILE_NAMES.index(name)
    return [opts[i].number for i in sorted(range(len(opts)), key=lambda i: (-f[i, k], opts[i].number))]


def gold_positions(s: Scenario, desirable: Desirable | None = None) -> dict[str, int]:
    """The gold's 0-based place among the candidates under each ordering.

    Keys: ``value`` (summed ranks), ``commonest`` (:func:`commonest_order`),
    ``cat:<statistic>`` (:func:`profile_order`, highest first, for every statistic), and
    ``<attr>:best`` / ``<attr>:worst`` for every numeric visible attribute (best or
    worst first, ties by option number). ``desirable``: as for :func:`categorical_profile`.
    """
    opts = candidates(s)
    numbers = [o.number for o in opts]
    out = {"value": value_order(s).index(s.gold), "commonest": commonest_order(s).index(s.gold)}
    for name in PROFILE_NAMES:
        out[f"cat:{name}"] = profile_order(s, name, desirable).index(s.gold)
    for name, ranks in attribute_ranks(s, opts).items():
        best = sorted(range(len(opts)), key=lambda i: (ranks[i], numbers[i]))
        worst = sorted(range(len(opts)), key=lambda i: (-ranks[i], numbers[i]))
        out[f"{name}:best"] = [numbers[i] for i in best].index(s.gold)
        out[f"{name}:worst"] = [numbers[i] for i in worst].index(s.gold)
    return out


def position_rates(scenarios: Iterable[Scenario]) -> dict[str, dict[int, float]]:
    """For each ordering, the share of scenarios with the gold at each place.

    An attribute ordering counts over the scenarios that show that attribute.
    """
    scenarios = list(scenarios)
    desirable = desirable_values(scenarios)
    counts: dict[str, Counter[int]] = {}
    for s in scenarios:
        for key, place in gold_positions(s, desirable).items():
            # pool attributes by direction; categorical statistics each on their own
            kind = key if key.startswith("cat:") or ":" not in key else key.split(":", 1)[1]
            counts.setdefault(kind, Counter())[place] += 1
    return {k: {p: n / sum(c.values()) for p, n in sorted(c.items())} for k, c in counts.items()}


def value_pick_rate(scenarios: Iterable[Scenario]) -> float:
    """Share of scenarios in which the best-value candidate is the gold."""
    scenarios = list(scenarios)
    return sum(value_order(s)[0] == s.gold for s in scenarios) / max(1, len(scenarios))


def bank_problems(scenarios: Sequence[Scenario], limit: float = MAX_POSITION_RATE) -> list[ScenarioError]:
    """Bank-level rule: no options-only ordering puts the gold at one place too often.

    Needs a bank-sized sample to mean anything; :func:`~hear2act_env.scenarios.validate.bank_problems`
    skips it for fewer than :data:`MIN_BANK` scenarios.
    """
    out = []
    for kind, rates in position_rates(scenarios).items():
        for place, rate in rates.items():
            if rate > limit:
                out.append(ScenarioError(
                    "<bank>", "options",
                    f"options-only ordering {kind!r} puts the gold at place {place + 1} of the candidates "
                    f"in {rate:.3f} of scenarios (at most {limit:.2f}; chance 1/8): the visible options "
                    "rank the gold",
                ))
    return out
