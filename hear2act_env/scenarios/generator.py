"""Deterministic assembly of the scenario bank from the domain content files.

Each persona of each domain becomes one scenario. All randomness comes from
one ``numpy.random.Generator`` per scenario, seeded from the bank version and
the scenario id, so the bank regenerates byte-identically on any machine and
one scenario never depends on another.

Option construction (PROTOCOL.md "Scenario"): nine options meet the request
and realise the eight (L1, L2, L3) satisfaction patterns plus a second
all-needs option (the *safe* one); two more violate a visible requirement of
the request. On the request's priority attribute (price for "cheapest",
rating for "best-rated") the opening option leads, the gold sits behind it and
the safe option behind the gold. The opening misses at least one need (any of
L1/L2/L3; in some scenarios only L1).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .content import DomainContent, PersonaContent, VisibleRange, load_all_domains
from .model import Attribute, FrozenMap, Option, Scenario

BANK_VERSION = "v1"
BANK_FILE = Path(__file__).resolve().parent.parent / "data" / f"scenarios-{BANK_VERSION}.jsonl"

PATTERNS = tuple(f"{i:03b}" for i in range(8))  # "000" .. "111", L1 first
# The opening misses at least one need: usually L2 or L3, sometimes L1 as well, and
# sometimes only L1 (the paper's example E1 opens on such an option).
OPENING_PATTERNS = ("110", "101", "100", "011", "010", "001", "000")
OPENING_WEIGHTS = (0.27, 0.27, 0.18, 0.1, 0.08, 0.05, 0.05)
GOLD_RANKS = (1, 2, 3, 4, 5)  # the gold's place on the priority attribute (0 = opening)
# The premium model: what an option offers raises its numeric visible values (price up,
# rating up). Weight of a met L1/L2/L3 need, of a premium categorical value, and the noise.
NEED_PREMIUM = (1.2, 1.0, 0.8)
VALUE_PREMIUM = 0.8
PREMIUM_NOISE = 0.15


def scenario_rng(scenario_id: str) -> np.random.Generator:
    """The one generator a scenario is built from (stable across platforms)."""
    digest = hashlib.sha256(f"hear2act-{BANK_VERSION}:{scenario_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _grid(rng_spec: VisibleRange, attr: Attribute) -> np.ndarray:
    steps = round((rng_spec.high - rng_spec.low) / rng_spec.step)
    return np.round(rng_spec.low + rng_spec.step * np.arange(steps + 1), attr.decimals)


def _number(v: float) -> float | int:
    v = float(v)
    return int(v) if v.is_integer() else v


class _Builder:
    """Builds one scenario; a class only to keep the shared state readable."""

    def __init__(self, domain: DomainContent, index: int) -> None:
        self.domain = domain
        self.p: PersonaContent = domain.personas[index]
        self.id = f"{domain.slug}-{index + 1:02d}"
        self.rng = scenario_rng(self.id)
        # The premium model's noise has its own stream, so tuning it never shifts other draws.
        self.noise = scenario_rng(f"{self.id}/premium")
        self.visible = {a.name: a for a in domain.visible}

    def _split(self, name: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """Values of a visible attribute meeting every requirement, and violating ones per requirement."""
        grid = _grid(self.domain.ranges[name], self.visible[name])
        meets = np.ones(len(grid), dtype=bool)
        violating = {}
        for k, req in enumerate(self.p.requirements):
            if req.attribute == name and not req.categorical:
                ok = grid <= req.value if req.op == "<=" else grid >= req.value
                meets &= ok
                # Violate it the way real listings do: a little over budget, not
                # absurdly, so the violation is a trap rather than an outlier.
                out = grid[~ok] if req.op == "<=" else grid[~ok][::-1]
                violating[k] = out[: max(3, len(out) // 4)]
        return grid[meets], violating

    def quality(self, values: dict[str, str | float | int], kinds: dict[str, str]) -> float:
        """How much an option offers (the premium model): met needs weigh by level, and a
        distractor value by its place in the vocabulary (content lists values from the
        premium end), plus seeded noise so price is not a formula. A requested categorical
        value is left out: the request, not the price, decides it."""
        score = 0.0
        for n in self.p.needs:
            score += NEED_PREMIUM[n.level - 1] * (values[n.attribute] in n.accept)
        for name, kind in kinds.items():
            if kind == "distractor":
                vocab = self.domain.attribute(name).values
                score += VALUE_PREMIUM * (len(vocab) - 1 - vocab.index(str(values[name]))) / (len(vocab) - 1)
        return score + float(self.noise.normal(0.0, PREMIUM_NOISE))

    def visible_values(self, by_quality: list[int], slots: list[int]) -> list[dict[str, float | int]]:
        """Visible values for the 11 rows: 9 request-meeting, 2 violating (rows 9, 10).

        ``slots[i]`` is row ``i``'s place on the priority attribute (0 = leads), fixed by the
        roles. Every other numeric attribute rises with quality: ``by_quality`` lists the 9
        meeting rows from least to most premium, and sorted draws are dealt out in that order
        (pricier and better rated as an option offers more).
        """
        rng, prio = self.rng, self.p.priority
        better_first = self.visible[prio].better == "lower"
        rows: list[dict[str, float | int]] = [{} for _ in range(11)]
        for name in self.visible:
            meeting, violating = self._split(name)
            if name == prio:
                picks = np.sort(rng.choice(meeting, size=9, replace=False))
                ranked = picks if better_first else picks[::-1]
                for i in range(9):
                    rows[i][name] = _number(ranked[slots[i]])
            else:
                picks = np.sort(rng.choice(meeting, size=9, replace=True))
                for value, i in zip(picks, by_quality, strict=True):
                    rows[i][name] = _number(value)
            for j in (9, 10):
                k = (j - 9) % len(self.p.requirements)
                req = self.p.requirements[k]
                pool = violating.get(k) if req.attribute == name else None
                rows[j][name] = _number(rng.choice(pool if pool is not None else meeting))
        return rows

    def build(self) -> Scenario:
        rng, p = self.rng, self.p
        opening = str(rng.choice(OPENING_PATTERNS, p=OPENING_WEIGHTS))
        others = [pat for pat in PATTERNS if pat not in ("111", opening)]
        rng.shuffle(others)
        gold_rank = int(rng.choice(GOLD_RANKS))
        safe_rank = int(rng.integers(gold_rank + 1, 9))
        trap = str(rng.choice(PATTERNS))
        # Rows: 0 opening, 1 gold, 2 safe, 3..8 the other six patterns, 9..10 the request violators.
        patterns = [opening, "111", "111", *others, "111", trap]

        ladder = {n.attribute: n for n in p.needs}
        # Categorical attributes the request names (kind "visible"): never needs, never distractors.
        required = {r.attribute: r for r in p.requirements if r.categorical}
        pool = [a for a in self.domain.attributes if a.name not in ladder and a.name not in required]
        n_distract = int(rng.integers(1, min(2, len(pool)) + 1))
        distractors = {pool[i].name for i in rng.choice(len(pool), size=n_distract, replace=False)}
        shown = [a for a in self.domain.attributes if a.name in ladder or a.name in distractors or a.name in required]
        kinds = {a.name: "need" if a.name in ladder else "visible" if a.name in required else "distractor"
                 for a in shown}
        # Which violator (row 9 or 10) breaks which requirement: one each, in order.
        breaks = {j: (j - 9) % len(p.requirements) for j in (9, 10)}

        categorical: list[dict[str, str | float | int]] = []
        for row, pattern in enumerate(patterns):
            values: dict[str, str | float | int] = {}
            for attr in shown:
                need = ladder.get(attr.name)
                req = required.get(attr.name)
                if req is not None:
                    broken = row in breaks and p.requirements[breaks[row]] is req
                    choices = [v for v in attr.values if (v in req.values) != broken]
                    values[attr.name] = str(rng.choice(choices))
                elif need is None:
                    values[attr.name] = str(rng.choice(attr.values))
                else:
                    ok = pattern[need.level - 1] == "1"
                    choices = [v for v in attr.values if (v in need.accept) == ok]
                    values[attr.name] = str(rng.choice(choices))
            categorical.append(values)
        quality = [self.quality(v, kinds) for v in categorical[:9]]

        # Priority places: the roles are fixed (opening leads, the gold behind it, the safe
        # option behind the gold); the six other rows take the remaining places so that the
        # more an option offers, the higher its priority value (dearer, or better rated).
        free = [r for r in range(1, 9) if r not in (gold_rank, safe_rank)]
        if self.visible[p.priority].better == "higher":
            free = free[::-1]
        slots = [0, gold_rank, safe_rank, *[0] * 6]
        for place, row in zip(free, sorted(range(3, 9), key=lambda r: quality[r]), strict=True):
            slots[row] = place
        visible_rows = self.visible_values(sorted(range(9), key=lambda r: quality[r]), slots)

        names = [str(x) for x in rng.choice(self.domain.names, size=11, replace=False)]
        raw = [(names[row], {**categorical[row], **visible_rows[row]}) for row in range(11)]

        order = rng.permutation(11)
        attrs = (*self.domain.visible, *(_with_kind(a, kinds[a.name]) for a in shown))
        options = []
        for number, role in enumerate(order, start=1):
            name, values = raw[int(role)]
            options.append(Option(number, name, FrozenMap(values), _describe(name, values, attrs)))
        return Scenario(
            id=self.id,
            domain=self.domain.domain,
            family=self.domain.family,
            persona=p.persona,
            request=p.request,
            requirements=p.requirements,
            priority=p.priority,
            attributes=attrs,
            needs=p.needs,
            options=tuple(options),
        )


def _with_kind(attr: Attribute, kind: str) -> Attribute:
    return Attribute(attr.name, attr.label, kind, attr.keywords, attr.values)


def _describe(name: str, values: dict[str, str | float | int], attrs: Iterable[Attribute]) -> str:
    """A product record in the paper's Appendix H style, features then visible facts."""
    attrs = list(attrs)
    features = [a.format(values[a.name]) for a in attrs if not a.numeric]
    facts = [a.format(values[a.name]) for a in attrs if a.numeric]
    return f"{name}: {', '.join(features + facts)}"


def build_scenario(domain: DomainContent, index: int) -> Scenario:
    return _Builder(domain, index).build()


def build_bank(domains: Iterable[DomainContent] | None = None) -> list[Scenario]:
    """Every scenario, domains in Table 6 order, personas in file order."""
    domains = load_all_domains() if domains is None else list(domains)
    return [build_scenario(d, i) for d in domains for i in range(len(d.personas))]


def bank_text(scenarios: Iterable[Scenario]) -> str:
    """The canonical JSONL serialisation (one scenario per line)."""
    return "".join(
        json.dumps(s.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n" for s in scenarios
    )


def write_bank(path: str | Path = BANK_FILE, scenarios: Iterable[Scenario] | None = None) -> Path:
    """Regenerate the bundled file (atomically) and return its path."""
    path = Path(path)
    text = bank_text(build_bank() if scenarios is None else scenarios)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
