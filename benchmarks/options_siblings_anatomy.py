"""What a domain's other scenarios tell about a scenario's gold: oracle readers of the sibling channel.

    python benchmarks/options_siblings_anatomy.py                # the bundled bank (checked byte for byte)
    python benchmarks/options_siblings_anatomy.py --salt v1b     # another draw of it
    python benchmarks/options_siblings_anatomy.py --decoys 0.5   # counterfactual: distractor sides nobody accepts
    python benchmarks/options_siblings_anatomy.py --balanced-needs   # counterfactual content: needs spread evenly

Within one scenario the gold is exchangeable by construction (env -v5, ``hear2act_env/scenarios/design.py``): given
the options' sides and the priority, each of the design's cubes is the needs' cube alike, so a reader of one
scenario's options finds the gold at 1/7 (8 columns) or 1/6 (7). A domain's ten scenarios share content, though:
the same attributes, and the sets of values its personas accept, each persona's needs in its own scenario. A
reader that compares a scenario with its siblings can use that. The independent finder
(``benchmarks/options_probe_siblings/``) measures it from the options text; this script measures where it comes
from, with oracles that know every scenario's sides (from the generator) and pick, among the scenario's design
cubes, the one a sibling statistic ranks first (ties shared):

- ``attribute needs +/-``: how many sibling scenarios make each of the cube's attributes a need (the siblings'
  labels), most / fewest;
- ``accepted-set needs +/-``: how many siblings make the cube's attributes needs *with the set of values this
  scenario shows on the better side*, most / fewest;
- ``side recurrence -`` (no labels): how many siblings show the same better-side set on those attributes, fewest.

A "fewest" reader wins by leave-one-out: a set of values one persona accepts is a need only in that persona's own
scenario, so it is the scenario whose siblings never make that set a need. Figures with a 95% bootstrap interval
over scenarios. Prints a Markdown table; ``--json PATH`` writes it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def decoy_side(builder, attr, g: np.random.Generator) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """A better side no persona of the domain accepts for ``attr``, of a size some persona's set has (the
    ``--decoys`` counterfactual); ``()`` when every subset is some persona's."""
    taken = set(builder.accepts.get(attr.name, []))
    sizes = [len(x) for x in builder.accepts.get(attr.name, [])] or [1]
    free = [c for r in range(1, len(attr.values)) for c in itertools.combinations(attr.values, r) if c not in taken]
    size = sizes[int(g.integers(len(sizes)))]
    pool = [c for c in free if len(c) == size] or free
    return pool[int(g.integers(len(pool)))] if pool else ()


def balanced_needs(domain):  # type: ignore[no-untyped-def]
    """``domain`` with its personas' needs moved between attributes until every attribute is a need of as many
    personas as any other, give or take one (the ``--balanced-needs`` counterfactual: synthetic content, the moved
    needs' statements no longer match; the options are all this script reads). A moved need takes the set of
    values its new attribute's personas accept most often (its first value if none does)."""
    import dataclasses

    personas = list(domain.personas)
    while True:
        count = Counter({a.name: 0 for a in domain.attributes})
        count.update(n.attribute for q in personas for n in q.needs)
        most = max(count, key=lambda a: count[a])
        fewest = min(count, key=lambda a: count[a])
        if count[most] - count[fewest] <= 1:
            return dataclasses.replace(domain, personas=tuple(personas))
        movable = [i for i, q in enumerate(personas) if any(n.attribute == most for n in q.needs)
                   and fewest not in {n.attribute for n in q.needs} | {r.attribute for r in q.requirements}]
        if not movable:
            return dataclasses.replace(domain, personas=tuple(personas))
        sets = Counter(tuple(n.accept) for q in personas for n in q.needs if n.attribute == fewest)
        values = next(a.values for a in domain.attributes if a.name == fewest)
        accept = sets.most_common(1)[0][0] if sets else (values[0],)
        i = movable[0]
        personas[i] = dataclasses.replace(personas[i], needs=tuple(
            dataclasses.replace(n, attribute=fewest, accept=accept) if n.attribute == most else n
            for n in personas[i].needs))


def sides_and_bank(salt: str | None, decoys: float = 0.0,
                   balance: bool = False) -> tuple[list, dict[str, dict[str, tuple[str, ...]]]]:
    """The bank (bundled settings, or ``salt``) and, per scenario id, each shown attribute -> its better side.

    ``decoys`` > 0 is a counterfactual generator: a distractor's better side is, with that chance, a set of values
    no persona of the domain accepts for it (:func:`decoy_side`) instead of one some persona does; ``balance``
    builds it from :func:`balanced_needs` content."""
    from hear2act_env.scenarios import generator
    from hear2act_env.scenarios.content import load_all_domains

    better: dict[str, dict[str, tuple[str, ...]]] = defaultdict(dict)
    original = generator._Builder.side_pools
    version = generator.BANK_VERSION

    def recording(self, attr, g):  # type: ignore[no-untyped-def]
        pools = original(self, attr, g)
        is_need = any(n.attribute == attr.name for n in self.p.needs)
        if decoys > 0 and not is_need and g.random() < decoys:
            good = decoy_side(self, attr, g)
            if good:
                pools = tuple(v for v in attr.values if v not in good), good
        better[self.id][attr.name] = pools[1]
        return pools

    generator._Builder.side_pools = recording
    try:
        if salt is not None:
            generator.BANK_VERSION = salt
        domains = load_all_domains()
        bank = generator.build_bank([balanced_needs(d) for d in domains] if balance else domains)
    finally:
        generator._Builder.side_pools = original
        generator.BANK_VERSION = version
    shipped = salt is None and not decoys and not balance
    if shipped and generator.bank_text(bank) != generator.BANK_FILE.read_text(encoding="utf-8"):
        raise SystemExit(f"the rebuilt bank differs from {generator.BANK_FILE}: regenerate it first")
    return bank, better


def _counts(s, shown: dict[str, tuple[str, ...]]) -> tuple[Counter, Counter, Counter]:  # type: ignore[no-untyped-def]
    """What one scenario adds to its domain's sibling statistics: its need attributes, its needs' better sides,
    and every better side it shows."""
    return (Counter(n.attribute for n in s.needs), Counter((n.attribute, shown[n.attribute]) for n in s.needs),
            Counter(shown.items()))


def readers(bank: list, better: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, list[float]]:
    """Per reader, per scenario: the chance its pick (ties broken at random) is the needs' cube."""
    from hear2act_env.scenarios import design
    from hear2act_env.scenarios.shortcuts import candidates

    domain_totals: dict[str, tuple[Counter, Counter, Counter]] = {}
    for s in bank:
        totals = domain_totals.setdefault(s.domain, (Counter(), Counter(), Counter()))
        for total, mine in zip(totals, _counts(s, better[s.id]), strict=True):
            total.update(mine)
    out: dict[str, list[float]] = defaultdict(list)
    for s in bank:
        shown = better[s.id]
        # the siblings' statistics: the domain's totals less this scenario's own
        need_count, set_needs, recurrence = (total - mine for total, mine in
                                             zip(domain_totals[s.domain], _counts(s, shown), strict=True))
        rows = [s.option(s.opening), *sorted(candidates(s), key=s._rank_key)]
        columns = [a.name for a in s.attributes if a.name in shown]
        vocabulary = {a.name: a.values for a in s.attributes if a.name in shown}
        table = np.array([[int(o.values[c] in shown[c]) for c in columns] for o in rows])
        cubes = design.cubes(table)
        needs = {n.attribute for n in s.needs}
        is_needs = np.array([{columns[j] for j in c.columns} == needs for c in cubes])
        if not is_needs.any():
            raise SystemExit(f"{s.id}: the needs' columns form no cube of its sides")
        stats: dict[str, dict[str, float]] = {
            "attribute needs +": {a: need_count[a] for a in columns},
            "attribute needs -": {a: -need_count[a] for a in columns},
            "accepted-set needs +": {a: set_needs[a, shown[a]] for a in columns},
            "accepted-set needs -": {a: -set_needs[a, shown[a]] for a in columns},
            "side recurrence -": {a: -recurrence[a, shown[a]] for a in columns},
            # no siblings: what any reader that knows which offerings are the better ones (an LLM) sees in one
            # scenario; content lists an attribute's premium values first
            "premium value on the better side": {a: int(vocabulary[a][0] in shown[a]) for a in columns},
        }
        out["one scenario (uniform over its cubes)"].append(1 / len(cubes))
        for name, stat in stats.items():
            score = np.array([sum(stat[columns[j]] for j in c.columns) for c in cubes])
            top = score == score.max()
            out[name].append(float(is_needs[top].sum() / top.sum()))
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--salt", default=None, help="seed the scenarios from this string instead of the bank version")
    p.add_argument("--decoys", type=float, default=0.0,
                   help="counterfactual: a distractor's better side is a set no persona accepts with this chance")
    p.add_argument("--balanced-needs", action="store_true",
                   help="counterfactual content: every attribute of a domain a need of equally many personas (+-1)")
    p.add_argument("--json", default="", help="also write the figures here")
    args = p.parse_args(argv)
    if not 0.0 <= args.decoys <= 1.0:
        p.error(f"--decoys must be in [0, 1], got {args.decoys}")
    bank, better = sides_and_bank(args.salt, args.decoys, args.balanced_needs)
    rng = np.random.default_rng(0)
    label = (("bundled" if args.salt is None else f"salt={args.salt}") + (f", decoys={args.decoys:g}" if args.decoys
                                                                             else "")
             + (", balanced needs" if args.balanced_needs else ""))
    result = {"bank": label, "scenarios": len(bank), "readers": {}}
    print(f"bank {result['bank']}, {len(bank)} scenarios; top-1: the chance the reader's pick is the needs' cube")
    print("| reader | reads | top-1 | 95% CI |")
    print("| --- | --- | --- | --- |")
    for name, hits in readers(bank, better).items():
        x = np.asarray(hits)
        boot = x[rng.integers(0, len(x), size=(2000, len(x)))].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        reads = ("sides only" if name.startswith("one") else "siblings' sides" if "recurrence" in name
                 else "one scenario's values" if name.startswith("premium") else "siblings' labels")
        result["readers"][name] = {"top1": float(x.mean()), "ci95": [float(low), float(high)]}
        print(f"| {name} | {reads} | {x.mean():.3f} | [{low:.3f}, {high:.3f}] |")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
