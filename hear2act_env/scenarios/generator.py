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
L1/L2/L3; in some scenarios only L1). Three or four distractor columns are dealt as
decoys of the cube the need patterns form (:mod:`.cube`), so that a reader who searches
the options for that cube finds several and their leaders are not all the gold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .content import DomainContent, PersonaContent, VisibleRange, load_all_domains
from .cube import cube_leaders, decoy_sides, leader_shares
from .model import Attribute, FrozenMap, Option, Scenario
from .profile import NAMES, WEIGHTS, deal_blind

BANK_VERSION = "v1"
BANK_FILE = Path(__file__).resolve().parent.parent / "data" / f"scenarios-{BANK_VERSION}.jsonl"

PATTERNS = tuple(f"{i:03b}" for i in range(8))  # "000" .. "111", L1 first
# The opening misses at least one need: usually L2 or L3, sometimes L1 as well, and
# sometimes only L1 (the paper's Figure 2 opening misses only L3).
OPENING_PATTERNS = ("110", "101", "100", "011", "010", "001", "000")
TRAP_MEETS = 0.25  # chance that a request violator meets a given need (the v1 draws)
# In the blind deal, each draw's chance that a violator meets a need (uniform in this range):
# the opening and the violators then share the all-needs rows' values about as often as
# any candidate's.
TRAP_MEETS_BLIND = (0.2, 1.0)
# How many distractor attributes a scenario shows (fewest, most; as many as the domain has). Env -v4: 3-4
# (1-2 before), each dealt as a decoy of the need patterns' cube (:mod:`.cube`): with 1-2 the decoys left
# the gold on the opening's side too often (a validator rule), with 3-4 the deal has room for both
# (benchmarks/options_cube.py). The routing question sets were labelled on 1-2; their recorded decisions were
# re-recorded on the -v4 bank (tests/test_router.py --record).
DISTRACTORS = (3, 4)
# The decoy deal (the bundled bank; ``build_bank(decoys=False)`` is the control): the weight, in the deal's
# distance, of the gold's place on the cube reader's picks (:mod:`.cube`). Measured in benchmarks/options_cube.py.
STRUCTURE_WEIGHT = 20.0
# The decoy deal's weights on the categorical statistics: profile.WEIGHTS, but likeness to the opening weighs 6,
# because a decoy column's sides leave the gold on the opening's side more often than a typical candidate.
DECOY_WEIGHTS = np.where(np.array(NAMES) == "agree_open", 6.0, WEIGHTS)
OPENING_WEIGHTS = (0.27, 0.27, 0.18, 0.1, 0.08, 0.05, 0.05)
# The premium model: what an option offers raises its numeric visible values (price up,
# rating up). Weight of a met L1/L2/L3 need, of a premium categorical value, and the noise.
NEED_PREMIUM = (1.2, 1.0, 1.0)
VALUE_PREMIUM = 1.2  # 0.8 before the blind categorical deal (its spread columns dilute the premium)
# The distractor columns' premium weighs in all at most as much as this many columns' did (env -v3 showed 1-2,
# at full weight): with 3-4 columns at full weight their premium would outweigh the needs' and move the six other
# options' numbers off the need premium (the never-ask value agent read 22.1% under Prosody T, over the 20% floor;
# benchmarks/options_floor.py).
PREMIUM_COLUMNS = 2.0
PREMIUM_NOISE = 0.15
# The Dirichlet concentration of the weights a group of rows (those that may show the same values of a
# column) shares in the blind categorical deal: small, so a column is sometimes one value, sometimes spread.
GROUP_CONCENTRATION = 0.7
# How loosely the visible numbers follow the latent premium (a standard normal per option):
# a rating (or distance, wait, ...) tracks what an option offers closely, a price loosely —
# a better listing is better reviewed and tends to cost more, but prices are noisy.
MERIT_NOISE = 0.1
COST_NOISE = 0.3


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

    def __init__(self, domain: DomainContent, index: int, twin_deal: bool = True, decoys: bool = True) -> None:
        self.domain = domain
        self.twin_deal = twin_deal
        self.decoys = decoys
        self.p: PersonaContent = domain.personas[index]
        self.id = f"{domain.slug}-{index + 1:02d}"
        self.rng = scenario_rng(self.id)
        # The premium model's noise has its own stream, so tuning it never shifts other draws.
        self.noise = scenario_rng(f"{self.id}/premium")
        self.visible = {a.name: a for a in domain.visible}
        # The values the domain accepts when an attribute is a need (over all its personas):
        # the "better" values a reader with world knowledge would count (profile.features).
        self.desirable: dict[str, set[str]] = {}
        for persona in domain.personas:
            for n in persona.needs:
                self.desirable.setdefault(n.attribute, set()).update(n.accept)

    def _split(self, name: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """Values of a visible attribute meeting every requirement, and violating ones per requirement."""
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

    def quality(self, values: dict[str, str | float | int], kinds: dict[str, str], noise: float) -> float:
        """How much an option offers (the premium model): met needs weigh by level, and a
        distractor value by its place in the vocabulary (content lists values from the
        premium end), plus the row's seeded ``noise`` so price is not a formula. A requested
        categorical value is left out: the request, not the price, decides it."""
        score = 0.0
        for n in self.p.needs:
            score += NEED_PREMIUM[n.level - 1] * (values[n.attribute] in n.accept)
        share = PREMIUM_COLUMNS / max(PREMIUM_COLUMNS, sum(kind == "distractor" for kind in kinds.values()))
        for name, kind in kinds.items():
            if kind == "distractor":
                vocab = self.domain.attribute(name).values
                score += VALUE_PREMIUM * share * (len(vocab) - 1 - vocab.index(str(values[name]))) / (len(vocab) - 1)
        return score + noise

    def premium_vectors(self) -> list[dict[str, float | int]]:
        """Nine request-meeting visible vectors, least premium first (the premium model).

        Each numeric attribute draws 9 values that meet every requirement (distinct on the
        priority attribute) and deals them out along a latent premium with noise: a more
        premium listing tends to cost more and to be better rated, closer, sooner, ... but
        not in lockstep, so no vector is a formula of its place.
        """
        rng = self.rng
        latent = np.sort(rng.normal(size=9))
        vectors: list[dict[str, float | int]] = [{} for _ in range(9)]
        for name, attr in self.visible.items():
            meeting, _ = self._split(name)
            picks = np.sort(rng.choice(meeting, size=9, replace=name != self.p.priority))
            # Costs rise with what an option offers; every other attribute improves.
            rising = attr.better == "higher" or _is_cost(attr)
            noisy = latent + rng.normal(0.0, COST_NOISE if _is_cost(attr) else MERIT_NOISE, size=9)
            place = np.argsort(np.argsort(noisy))
            for i in range(9):
                vectors[i][name] = _number(picks[place[i]] if rising else picks[8 - place[i]])
        return vectors

    def violator_values(self) -> list[dict[str, float | int]]:
        """Visible values of the two request-violating rows (9 and 10): each breaks one
        requirement by a little (a trap, not an outlier) and meets the rest."""
        rows: list[dict[str, float | int]] = [{}, {}]
        for name in self.visible:
            meeting, violating = self._split(name)
            for j in (0, 1):
                k = j % len(self.p.requirements)
                pool = violating.get(k) if self.p.requirements[k].attribute == name else None
                rows[j][name] = _number(self.rng.choice(pool if pool is not None else meeting))
        return rows

    def places(self, vectors: list[dict[str, float | int]]) -> tuple[int, int, int, list[int]]:
        """Which of the nine vectors the opening, gold and safe rows take, and the rest.

        The opening takes the vector that leads on the priority attribute. The gold takes
        one of the other eight at random, so that its visible numbers are those of an
        arbitrary candidate and rank it at chance (PROTOCOL.md "Scenario"), with two
        exceptions: not the last on the priority (the safe option sits behind it) and not
        the best value of all (summed ranks): an option that meets every need is never
        also the cheapest-and-best-rated deal ("too good to be true"), and a reader of the
        numbers alone who walks the value order meets an all-but-one-need decoy first.
        The safe option takes a random vector behind the gold; the rest (least premium
        first) go to the six other rows by :meth:`deal`.
        """
        rng = self.rng
        by_prio = sorted(range(9), key=lambda i: self._priority_key(vectors[i]))
        value = self._value_ranks([vectors[i] for i in by_prio[1:]])
        best = by_prio[1:][min(range(8), key=lambda k: (value[k], k))]
        gold_place = int(rng.choice([k for k in range(1, 8) if by_prio[k] != best]))
        safe_place = int(rng.integers(gold_place + 1, 9))
        taken = (by_prio[0], by_prio[gold_place], by_prio[safe_place])
        return (*taken, [i for i in range(9) if i not in taken])

    def _priority_key(self, values: dict[str, float | int]) -> float:
        """An option's place on the request's priority attribute: lower is better."""
        prio = self.p.priority
        return (1.0 if self.visible[prio].better == "lower" else -1.0) * float(values[prio])

    def deal(self, vectors: list[dict[str, float | int]], places: tuple[int, int, int, list[int]],
             quality: list[float]) -> list[dict[str, float | int]]:
        """Give the nine vectors to rows 0..8 (0 opening, 1 gold, 2 safe, 3..8 the others):
        the roles' by :meth:`places`, and the six other rows the rest in premium order: the
        more an option offers (``quality``), the more premium its vector."""
        opening, gold, safe, rest = places
        rows: list[dict[str, float | int]] = [{}] * 9
        rows[0], rows[1], rows[2] = vectors[opening], vectors[gold], vectors[safe]
        for row, i in zip(sorted(range(3, 9), key=lambda r: quality[r]), rest, strict=True):
            rows[row] = vectors[i]
        return rows

    def _value_ranks(self, vectors: list[dict[str, float | int]]) -> list[float]:
        """Each vector's summed rank over the visible numbers, each in its better direction."""
        total = [0.0] * len(vectors)
        for name, attr in self.visible.items():
            sign = 1.0 if attr.better == "lower" else -1.0
            for place, i in enumerate(sorted(range(len(vectors)), key=lambda i: sign * float(vectors[i][name]))):
                total[i] += place
        return total

    def _categorical(self, g: np.random.Generator, patterns: list[str], shown: list[Attribute],
                     ladder: dict, required: dict, breaks: dict[int, int]) -> list[dict[str, str | float | int]]:
        """One draw of the 11 rows' categorical values: rows 0..8 keep their need patterns,
        the two violators (9, 10) meet each need with one chance in :data:`TRAP_MEETS_BLIND` and
        break their requirement. Within a column, each group of rows that may take the same
        values (meeting a need, missing it, ...) draws them with Dirichlet weights, so a
        column is sometimes one value and sometimes spread."""
        meets = float(g.uniform(*TRAP_MEETS_BLIND))
        traps = ["".join("1" if g.random() < meets else "0" for _ in range(3)) for _ in range(2)]
        pats = [*patterns, *traps]
        rows: list[dict[str, str | float | int]] = [{} for _ in pats]
        decoys = self._decoys(g, patterns, shown, ladder, required) if self.decoys else {}
        for attr in shown:
            need, req = ladder.get(attr.name), required.get(attr.name)
            sides = self._decoy_pools(attr) if attr.name in decoys else None
            groups: dict[tuple[str, ...], list[int]] = {}
            for row, pattern in enumerate(pats):
                if req is not None:
                    broken = row in breaks and self.p.requirements[breaks[row]] is req
                    pool = tuple(v for v in attr.values if (v in req.values) != broken)
                elif sides is not None and row < 9:
                    pool = sides[decoys[attr.name][row]]
                elif need is None:
                    pool = tuple(attr.values)
                else:
                    meets = pattern[need.level - 1] == "1"
                    pool = tuple(v for v in attr.values if (v in need.accept) == meets)
                groups.setdefault(pool, []).append(row)
            for pool, members in groups.items():
                # 0: every row picks uniformly on its own (a control of benchmarks/options_twin.py)
                weights = g.dirichlet(np.full(len(pool), GROUP_CONCENTRATION)) if GROUP_CONCENTRATION else None
                for row in members:
                    rows[row][attr.name] = str(pool[int(g.choice(len(pool), p=weights))])
        return rows

    def _decoys(self, g: np.random.Generator, patterns: list[str], shown: list[Attribute], ladder: dict,
                required: dict) -> dict[str, list[int]]:
        """Sides (0/1 per row 0..8) of each distractor column: a decoy of the pattern cube.

        Each distractor, put in place of one column of the cube the needs form (or of a decoy
        cube made before it), completes another cube whose 111 pair is not that cube's, so an
        options-only reader who searches for the cube (:mod:`.cube`) finds several."""
        truth = [[int(p[j]) for p in patterns] for j in range(3)]
        cubes: list[tuple[list[list[int]], tuple[int, int]]] = [(truth, (1, 2))]
        out: dict[str, list[int]] = {}
        for attr in shown:
            if attr.name in ladder or attr.name in required:
                continue
            base, pair = cubes[int(g.integers(len(cubes)))]
            made = decoy_sides(g, base, opening=0, pair=pair)
            if made is None:
                continue
            sides, k = made
            cube = [sides if j == k else base[j] for j in range(3)]
            top = [r for r in range(9) if all(col[r] for col in cube)]
            cubes.append((cube, (top[0], top[1])))
            out[attr.name] = sides
        return out

    def _decoy_pools(self, attr: Attribute) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A distractor's two sides as value pools (side 0, side 1): side 1 the values some persona
        of the domain accepts when it is a need (else the premium half of the vocabulary), as a
        need column's meeting side would be."""
        good = [v for v in attr.values if v in self.desirable.get(attr.name, ())]
        if not 0 < len(good) < len(attr.values):
            good = list(attr.values[: (len(attr.values) + 1) // 2])
        return tuple(v for v in attr.values if v not in good), tuple(good)

    def build(self) -> Scenario:
        rng, p = self.rng, self.p
        opening = str(rng.choice(OPENING_PATTERNS, p=OPENING_WEIGHTS))
        others = [pat for pat in PATTERNS if pat not in ("111", opening)]
        rng.shuffle(others)
        # The v1 violator patterns (their own stream): they only replay the v1 draws below;
        # the violators' needs are drawn again with the blind deal.
        violators = scenario_rng(f"{self.id}/violators")
        traps = ["".join("1" if violators.random() < TRAP_MEETS else "0" for _ in range(3)) for _ in range(2)]
        # Three draws of the first v1 bank, retired (the gold's and safe's priority places,
        # one violator pattern), kept so that every scenario still shows the attributes it
        # showed then: the question-routing figures were measured on those scenarios.
        rng.integers(int(rng.choice((1, 2, 3, 4, 5))) + 1, 9), rng.choice(PATTERNS)
        # Rows: 0 opening, 1 gold, 2 safe, 3..8 the other six patterns, 9..10 the request violators.
        patterns = [opening, "111", "111", *others, *traps]

        ladder = {n.attribute: n for n in p.needs}
        # Categorical attributes the request names (kind "visible"): never needs, never distractors.
        required = {r.attribute: r for r in p.requirements if r.categorical}
        pool = [a for a in self.domain.attributes if a.name not in ladder and a.name not in required]
        low, high = DISTRACTORS
        n_distract = int(rng.integers(min(low, len(pool)), min(high, len(pool)) + 1))
        distractors = {pool[i].name for i in rng.choice(len(pool), size=n_distract, replace=False)}
        shown = [a for a in self.domain.attributes if a.name in ladder or a.name in distractors or a.name in required]
        kinds = {a.name: "need" if a.name in ladder else "visible" if a.name in required else "distractor"
                 for a in shown}
        # Which violator (row 9 or 10) breaks which requirement: one each, in order.
        breaks = {j: (j - 9) % len(p.requirements) for j in (9, 10)}

        # The v1 draws of the categorical values, kept so that every later draw of the
        # scenario (numbers, names, order) is the one it was; the values themselves are
        # then dealt blind (below).
        for row, pattern in enumerate(patterns):
            for attr in shown:
                need, req = ladder.get(attr.name), required.get(attr.name)
                if req is not None:
                    broken = row in breaks and p.requirements[breaks[row]] is req
                    rng.choice([v for v in attr.values if (v in req.values) != broken])
                elif need is None:
                    rng.choice(attr.values)
                elif pattern[need.level - 1] == "1":
                    rng.choice([v for v in attr.values if v in need.accept])
        # The numbers come first: the premium vectors and the roles' places (``rng``), and
        # one premium noise per row (its own stream), so that each draw of the categorical
        # values below is scored with the numbers it would get.
        noise = [float(self.noise.normal(0.0, PREMIUM_NOISE)) for _ in range(9)]
        vectors = self.premium_vectors()
        places = self.places(vectors)

        def numbers(rows: list[dict[str, str | float | int]]) -> list[dict[str, float | int]]:
            return self.deal(vectors, places, [self.quality(rows[r], kinds, noise[r]) for r in range(9)])

        # The values left free by the design (which accepted or missing value a row shows,
        # the violators' needs, the distractor and requested columns) are drawn 128 times from
        # their own stream, and the draw kept is the one in which the gold's place on every
        # categorical statistic (value frequency, modal value, likeness to the opening, and
        # its nearest candidates and whether it leads them on the priority: the gold/safe
        # twin) is one drawn at random: counting values finds an arbitrary candidate, not the gold.
        blind = scenario_rng(f"{self.id}/categorical")
        cube_columns = [a.name for a in shown if a.name not in required]
        categorical = deal_blind(
            lambda g: self._categorical(g, patterns[:9], shown, ladder, required, breaks),
            blind, [a.name for a in shown], candidates=list(range(1, 9)), opening=0, gold=1,
            desirable=self.desirable,
            priority_keys=(lambda rows: [self._priority_key(v) for v in numbers(rows)]) if self.twin_deal else None,
            structure=(lambda rows: leader_shares(cube_leaders(
                rows, cube_columns, range(1, 9), 0, [self._priority_key(v) for v in numbers(rows)]), range(1, 9)))
            if self.decoys else None, structure_weight=STRUCTURE_WEIGHT,
            weights=DECOY_WEIGHTS if self.decoys else None,
        )
        visible_rows = [*numbers(categorical), *self.violator_values()]

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


def build_scenario(domain: DomainContent, index: int, twin_deal: bool = True, decoys: bool = True) -> Scenario:
    return _Builder(domain, index, twin_deal, decoys).build()


def build_bank(domains: Iterable[DomainContent] | None = None, twin_deal: bool = True,
               decoys: bool = True) -> list[Scenario]:
    """Every scenario, domains in Table 6 order, personas in file order.

    ``twin_deal``: the categorical deal also matches the gold's twin statistics
    (:func:`~hear2act_env.scenarios.profile.twin_features`: its nearest candidates and
    whether it leads them on the priority) to a random candidate's, as the bundled bank
    does; ``False`` is the control that leaves them out (``benchmarks/options_twin.py
    --no-twin-deal``, docs/protocol-choices.md). ``decoys``: deal each distractor column as a
    decoy of the need patterns' cube (:func:`~hear2act_env.scenarios.cube.decoy_sides`) and match
    the gold's place on the cube reader's picks to a random candidate's, as the bundled bank does
    (env -v4); ``False`` is the control (``benchmarks/options_cube.py``).
    """
    domains = load_all_domains() if domains is None else list(domains)
    return [build_scenario(d, i, twin_deal, decoys) for d in domains for i in range(len(d.personas))]


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
