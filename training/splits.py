"""The held-out split shared by every trainer (PPO, SFT, GRPO): unseen domains + unseen scenarios.

One deterministic function of ``(bank, test_domains, test_per_domain, seed)``
(:func:`split_scenarios`):

1. ``test_domains`` whole domains are held out (``unseen_domain``): drawn by a
   permutation of the sorted domain names under ``np.random.default_rng(seed)``;
2. of every remaining domain, ``test_per_domain`` scenarios are held out
   (``unseen_scenario``), drawn by the same generator, domain by domain in
   sorted order;
3. the rest is ``train``.

The defaults (:data:`DEFAULT_SPLIT`: 8 domains, 2 per domain, seed 0) hold out
8 x 10 + 40 x 2 = 160 of the 480 bundled scenarios and train on 320. Every
trainer draws its training scenarios from ``train`` only and evaluates on
``unseen_domain + unseen_scenario`` (:func:`eval_ids`); ``hear2act rollout``
can be pointed at the same ids. The same arguments give the same split on any
machine (no global RNG, no dependence on file order beyond the bank's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SPLITS = ("train", "unseen_domain", "unseen_scenario")


@dataclass(frozen=True)
class SplitSpec:
    """The three numbers that fix a split (the same for every run to compare)."""

    test_domains: int = 8
    test_per_domain: int = 2
    seed: int = 0


DEFAULT_SPLIT = SplitSpec()


def split_scenarios(scenarios: Sequence[Any], test_domains: int, test_per_domain: int,
                    seed: int) -> dict[str, list]:
    """{"train", "unseen_domain", "unseen_scenario"}: whole domains held out, then scenarios per domain.

    >>> from hear2act_env import load_scenarios
    >>> split = split_scenarios(load_scenarios(), 8, 2, 0)
    >>> [len(split[k]) for k in SPLITS]
    [320, 80, 80]
    >>> not {s.id for s in split["train"]} & set(eval_ids(split))
    True
    """
    rng = np.random.default_rng(seed)
    domains = sorted({s.domain for s in scenarios})
    if not 0 <= test_domains < len(domains):
        raise ValueError(f"test_domains must be in 0..{len(domains) - 1}, got {test_domains}")
    held = set(np.array(domains)[rng.permutation(len(domains))[:test_domains]].tolist())
    out: dict[str, list] = {"train": [], "unseen_domain": [], "unseen_scenario": []}
    for domain in domains:
        group = [s for s in scenarios if s.domain == domain]
        if domain in held:
            out["unseen_domain"] += group
            continue
        if not 0 <= test_per_domain < len(group):
            raise ValueError(f"test_per_domain must leave a training scenario in {domain!r}, got {test_per_domain}")
        picked = set(rng.permutation(len(group))[:test_per_domain].tolist())
        for i, s in enumerate(group):
            out["unseen_scenario" if i in picked else "train"].append(s)
    return out


def bundled_split(spec: SplitSpec = DEFAULT_SPLIT) -> dict[str, list]:
    """:func:`split_scenarios` of the 480 bundled scenarios."""
    from hear2act_env import load_scenarios

    return split_scenarios(load_scenarios(), spec.test_domains, spec.test_per_domain, spec.seed)


def eval_ids(split: dict[str, list]) -> list[str]:
    """The held-out scenario ids, unseen domains first (the order held-out evaluation plays them)."""
    return [s.id for s in split["unseen_domain"] + split["unseen_scenario"]]


def part_of(split: dict[str, list]) -> dict[str, str]:
    """Scenario id -> the part of the split it is in (``"train"``, ``"unseen_domain"`` or ``"unseen_scenario"``).

    Held-out figures broken down by part tell a learned skill from learned domain content: a policy that
    learned the trained domains' content gains more on ``unseen_scenario`` (benchmarks/grpo_split_gap.py).

    >>> from collections import Counter
    >>> parts = part_of(bundled_split())
    >>> sorted(Counter(parts.values()).items())
    [('train', 320), ('unseen_domain', 80), ('unseen_scenario', 80)]
    """
    return {s.id: part for part in SPLITS for s in split[part]}


def train_ids(split: dict[str, list], n: int = 0) -> list[str]:
    """The training scenario ids, spread over domains: round-robin by domain, first ``n`` (0: all).

    Round-robin so that a small ``n`` still covers many domains instead of the
    first few alphabetically.

    >>> ids = train_ids(bundled_split(), 40)
    >>> len(ids), len({i.rsplit("-", 1)[0] for i in ids})
    (40, 40)
    """
    by_domain: dict[str, list[str]] = {}
    for s in split["train"]:
        by_domain.setdefault(s.domain, []).append(s.id)
    ordered: list[str] = []
    columns = [by_domain[d] for d in sorted(by_domain)]
    for i in range(max((len(c) for c in columns), default=0)):
        ordered += [c[i] for c in columns if i < len(c)]
    if n < 0 or n > len(ordered):
        raise ValueError(f"n_scenarios must be in 0..{len(ordered)} (the training split), got {n}")
    return ordered[:n] if n else ordered


__all__ = ["DEFAULT_SPLIT", "SPLITS", "SplitSpec", "bundled_split", "eval_ids", "part_of", "split_scenarios",
           "train_ids"]
