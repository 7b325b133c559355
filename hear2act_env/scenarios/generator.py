"""Deterministic assembly of the scenario bank from the domain content files.

Each persona of each domain becomes one scenario. All randomness comes from
``numpy.random.Generator`` streams seeded from the bank version and the scenario
id, so the bank regenerates byte-identically on any machine and one scenario
never depends on another.

Option construction (PROTOCOL.md "Scenario"): nine options meet the request
and realise the eight (L1, L2, L3) satisfaction patterns plus a second
all-needs option (the *safe* one); two more violate a visible requirement of
the request. The opening leads on the request's priority attribute (price for
"cheapest", rating for "best-rated") and misses at least one need; the gold
leads the safe option. Env -v5: every categorical column the request does not
name (the three needs and every distractor the domain has) takes its meet/miss
sides from a cube design (:mod:`.design`), and which of the design's cubes are
the needs is drawn after the design, so the gold is any of seven candidates
with the same chance for a reader of the options. What an option offers (its
side-1 values, needs and distractors alike) raises its numbers: a better
listing costs more and is better rated.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from . import design
from .content import DomainContent, PersonaContent, VisibleRange, load_all_domains
from .model import Attribute, FrozenMap, Option, Scenario
from .profile import average_ranks

BANK_VERSION = "v1"
BANK_FILE = Path(__file__).resolve().parent.parent / "data" / f"scenarios-{BANK_VERSION}.jsonl"

# The Dirichlet concentration of the weights the rows showing one side of a column share over that
# side's values: small, so a side is sometimes one value, sometimes spread.
GROUP_CONCENTRATION = 0.7
# How loosely the visible numbers follow what an option offers (its side-1 values, standardised):
# a rating (or distance, wait, ...) tracks it closely, a price loosely.
MERIT_NOISE = 0.3
COST_NOISE = 0.6
# How often a number draw whose never-ask value walk still ends at the gold is kept, and how many draws at most
# (``_Builder.build``): the never-ask value agent's Prosody T success (benchmarks/options_floor.py).
WALK_KEEP = 0.25
WALK_DRAWS = 4
# A request violator shows side 1 of a column with this chance (it is not a candidate; its sides are free).
VIOLATOR_SIDE = 0.5


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

    def __init__(self, domain: DomainContent, index: int, designs: bool = True) -> None:
        self.domain = domain
        self.designs = designs
        self.p: PersonaContent = domain.personas[index]
        self.id = f"{domain.slug}-{index + 1:02d}"
        self.rng = scenario_rng(self.id)
        self.visible = {a.name: a for a in domain.visible}
        self._splits: dict[str, tuple[np.ndarray, dict[int, np.ndarray]]] = {}
        # Every accepted-value set the domain's personas give an attribute when it is a need, in
        # file order: a distractor's side 1 is one of them, so its sides read like a need's.
        self.accepts: dict[str, list[tuple[str, ...]]] = {}
        for persona in domain.personas:
            for n in persona.needs:
                self.accepts.setdefault(n.attribute, []).append(tuple(n.accept))

    def _split(self, name: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """Values of a visible attribute meeting every requirement, and violating ones per requirement
        (computed once per attribute: every number draw of the scenario reads them)."""
        if name not in self._splits:
            self._splits[name] = self._compute_split(name)
        return self._splits[name]

    def _compute_split(self, name: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        grid = _grid(self.domain.ranges[name], self.visible[name])
        meets = np.ones(len(grid), dtype=bool)
        violating = {}
        for k, req in enumerate(self.p.requirements):
            if req.attribute == name and not req.categorical:
                ok = np.array([req.holds(float(v)) for v in grid], dtype=bool)
                meets &= ok
                # Violate it the way real listings do: a little over budget, not
                # absurdly, so the violation is a trap rather than an outlier.
                # A strict bound ("under $200") keeps every option off the bound itself, so
                # no reading of the request or of its statement ("up to $200") disagrees.
                off = ~ok & (grid != req.value) if req.op in ("<", ">") else ~ok
                out = grid[off] if req.op[0] == "<" else grid[off][::-1]
                violating[k] = out[: max(3, len(out) // 4)]
        return grid[meets], violating

    def numbers(self, g: np.random.Generator, offers: np.ndarray) -> list[dict[str, float | int]]:
        """The nine request-meeting rows' visible numbers, rows in priority order (row 0 leads).

        Each attribute draws nine values that meet every requirement (distinct on the priority).
        The priority attribute deals them in row order; every other one along what the row
        offers (``offers``, its count of side-1 values) plus noise: more offered, higher price and
        rating, shorter distance or wait, but not in lockstep.
        """
        spread = offers.std()
        latent = (offers - offers.mean()) / spread if spread > 0 else np.zeros(9)
        rows: list[dict[str, float | int]] = [{} for _ in range(9)]
        for name, attr in self.visible.items():
            meeting, _ = self._split(name)
            picks = np.sort(g.choice(meeting, size=9, replace=name != self.p.priority))
            if name == self.p.priority:  # row k takes the k-th best
                best_first = picks if attr.better == "lower" else picks[::-1]
                for i in range(9):
                    rows[i][name] = _number(best_first[i])
                continue
            rising = attr.better == "higher" or _is_cost(attr)
            noisy = latent + g.normal(0.0, COST_NOISE if _is_cost(attr) else MERIT_NOISE, size=9)
            place = np.argsort(np.argsort(noisy, kind="stable"), kind="stable")
            for i in range(9):
                rows[i][name] = _number(picks[place[i]] if rising else picks[8 - place[i]])
        return rows

    def violator_values(self, g: np.random.Generator) -> list[dict[str, float | int]]:
        """Visible values of the two request-violating rows: each breaks one requirement by a
        little (a trap, not an outlier) and meets the rest."""
        rows: list[dict[str, float | int]] = [{}, {}]
        for name in self.visible:
            meeting, violating = self._split(name)
            for j in (0, 1):
                k = j % len(self.p.requirements)
                pool = violating.get(k) if self.p.requirements[k].attribute == name else None
                rows[j][name] = _number(g.choice(pool if pool is not None else meeting))
        return rows

    def _value_walk(self, numbers: list[dict[str, float | int]]) -> list[int]:
        """Rows 1..8 best value first, as the never-ask reader ranks the options (``hear2act.agents.baselines.
        value_ranking``): summed average ranks over the visible numbers, the opening left out."""
        rows = range(1, len(numbers))
        total = np.zeros(len(numbers))
        for name, attr in self.visible.items():
            x = np.array([float(numbers[r][name]) for r in rows]) * (1.0 if attr.better == "lower" else -1.0)
            total[1:] += average_ranks(x)
        return sorted(range(1, 9), key=lambda r: (total[r], r))

    def side_pools(self, attr: Attribute, g: np.random.Generator) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A column's two sides as value pools (side 0, side 1): a need's accepted values on side 1;
        a distractor's side 1 one of the accepted sets some persona of the domain gives it (else the
        premium half of its vocabulary, which content lists first), so its sides read like a need's."""
        need = next((n for n in self.p.needs if n.attribute == attr.name), None)
        if need is not None:
            good = tuple(need.accept)
        elif self.accepts.get(attr.name):
            sets = self.accepts[attr.name]
            good = sets[int(g.integers(len(sets)))]
        else:
            good = tuple(attr.values[: (len(attr.values) + 1) // 2])
        return tuple(v for v in attr.values if v not in good), tuple(v for v in attr.values if v in good)

    def build(self) -> Scenario:
        rng, p = self.rng, self.p
        values_rng, numbers_rng = scenario_rng(f"{self.id}/values"), scenario_rng(f"{self.id}/numbers")
        needs = sorted(p.needs, key=lambda n: n.level)
        ladder = {n.attribute: n for n in needs}
        # Categorical attributes the request names (kind "visible"): never needs, never distractors.
        required = {r.attribute: r for r in p.requirements if r.categorical}
        pool = [a.name for a in self.domain.attributes if a.name not in ladder and a.name not in required]
        kind = "rising" if _is_cost(self.visible[p.priority]) else "falling"
        dealt = design.deal(rng, kind, 3 + len(pool)) if self.designs else design.bare(rng, 3 + len(pool))
        offers = dealt.table.sum(axis=1).astype(float)
        # A never-asking reader of the numbers (recommend the best value, confirm what is not refused in words:
        # an L1 miss is, and the safe option's worse priority) walks the candidates in value order and keeps the
        # first that meets L1 and is not the safe one. With the gold any of seven candidates alike, that is the
        # gold in 1/(1 + k) of walks (k: the other L1-meeting candidates, 2 or 3), over PROTOCOL.md's 0.20 floor
        # for an options-only agent. So: of the level orders the opening's pattern allows
        # (which column is L1 is invisible in the options), one whose walk meets another L1-meeting option first,
        # when one does; and a walk that still ends at the gold keeps its numbers with chance WALK_KEEP only.
        for _attempt in range(WALK_DRAWS):
            numbers = [*self.numbers(numbers_rng, offers), *self.violator_values(numbers_rng)]
            walk = self._value_walk(numbers)

            def ends_elsewhere(cols: tuple[int, int, int], walk: list[int] = walk) -> bool:
                return next(r for r in walk if dealt.table[r, cols[0]] == 1 and r != dealt.safe) != dealt.gold

            needs_at = design.levels(rng, dealt, prefer=ends_elsewhere)
            if ends_elsewhere(needs_at) or numbers_rng.random() < WALK_KEEP:
                break
        # Design columns -> attributes: the cube's to the needs by level, the rest to the distractors.
        column_of = {n.attribute: c for n, c in zip(needs, needs_at, strict=True)}
        rest = [c for c in range(dealt.table.shape[1]) if c not in dealt.cube]
        column_of.update(zip([pool[i] for i in rng.permutation(len(pool))], rest, strict=True))
        shown = [a for a in self.domain.attributes if a.name in column_of or a.name in required]
        kinds = {a.name: "need" if a.name in ladder else "visible" if a.name in required else "distractor"
                 for a in shown}
        # Which violator (row 9 or 10) breaks which requirement: one each, in order.
        breaks = {j: (j - 9) % len(p.requirements) for j in (9, 10)}

        rows: list[dict[str, str | float | int]] = [{} for _ in range(11)]
        for attr in shown:
            req = required.get(attr.name)
            if req is not None:
                pools = [tuple(v for v in attr.values if (v in req.values) != (row in breaks and
                                                                                p.requirements[breaks[row]] is req))
                         for row in range(11)]
            else:
                sides = self.side_pools(attr, values_rng)
                column = [int(x) for x in dealt.table[:, column_of[attr.name]]]
                column += [int(values_rng.random() < VIOLATOR_SIDE) for _ in (9, 10)]
                pools = [sides[side] for side in column]
            # Each group of rows showing one pool shares Dirichlet weights over it (0: every row uniform on its
            # own, a control of benchmarks/options_twin.py).
            weights = {pool_: values_rng.dirichlet(np.full(len(pool_), GROUP_CONCENTRATION))
                       if GROUP_CONCENTRATION else None for pool_ in dict.fromkeys(pools)}
            for row, pool_ in enumerate(pools):
                rows[row][attr.name] = str(pool_[int(values_rng.choice(len(pool_), p=weights[pool_]))])
        for row, nums in enumerate(numbers):
            rows[row].update(nums)

        names = [str(x) for x in rng.choice(self.domain.names, size=11, replace=False)]
        order = rng.permutation(11)
        attrs = (*self.domain.visible, *(_with_kind(a, kinds[a.name]) for a in shown))
        options = []
        for number, role in enumerate(order, start=1):
            name, values = names[int(role)], rows[int(role)]
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


def _is_cost(attr: Attribute) -> bool:
    """Money (a price, fee, rate or ratio): lower is better and it rises with what is offered."""
    return attr.better == "lower" and (attr.prefix == "$" or "%" in attr.suffix)


def _with_kind(attr: Attribute, kind: str) -> Attribute:
    return Attribute(attr.name, attr.label, kind, attr.keywords, attr.values)


def _describe(name: str, values: dict[str, str | float | int], attrs: Iterable[Attribute]) -> str:
    """A product record in the paper's Appendix H style, features then visible facts."""
    attrs = list(attrs)
    features = [a.format(values[a.name]) for a in attrs if not a.numeric]
    facts = [a.format(values[a.name]) for a in attrs if a.numeric]
    return f"{name}: {', '.join(features + facts)}"


def build_scenario(domain: DomainContent, index: int, designs: bool = True) -> Scenario:
    return _Builder(domain, index, designs).build()


def build_bank(domains: Iterable[DomainContent] | None = None, designs: bool = True) -> list[Scenario]:
    """Every scenario, domains in Table 6 order, personas in file order.

    ``designs``: deal the categorical sides from the cube designs (:func:`.design.deal`), as the
    bundled bank does (env -v5); ``False`` is the control that deals the needs' cube alone and the
    distractors' sides at random (:func:`.design.bare`; ``benchmarks/options_cube.py --control``).
    """
    domains = load_all_domains() if domains is None else list(domains)
    return [build_scenario(d, i, designs) for d in domains for i in range(len(d.personas))]


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
