"""The gold/safe twin (issue "Validity" 17 §1): would needs that accept >=2 values undo it? Synthetic content, measured.

    nice -n 19 python benchmarks/options_twin.py A A2 B C D A-u B-u D-u
    for k in 1 2; do nice -n 19 python benchmarks/options_twin.py --reseed $k A B C D; done
    nice -n 19 python benchmarks/options_twin.py --control A B-u   # control: the needs' cube alone (no cube designs)

Why: the gold and the safe option both meet every need, and 74% of need columns accept one value, so
the two show the same value in every need column -- the one candidate pair no need column forces apart;
the gold leads the safe on the priority. This script asks, before anyone writes real content, whether
giving every need two or three accepted values would remove what an options-only classifier reads.
Written by a separate process from the bank's author; figures in docs/protocol-choices.md.

Variants (suffix -u: a generator control, each row picks uniformly from its pool, see uniform_picks):
A (baseline, load_all_domains), A2 (control: every categorical value renamed "V (type A)", nothing added),
B (two forms: every value V -> "V (type A)" + "V (type B)", every accept / `in` list
takes both), C (accept two: only values that are the SOLE accepted value of some need get a
"(type B)" twin; every accept / `in` list holding V takes it), D (three forms, like B with A/B/C).
Never writes the domain files: the raw JSON is read and transformed in memory, then checked with
content.parse_domain (the loader's own rules). ``--out FILE``: every figure as JSON.
"""
from __future__ import annotations

import copy
import importlib.util
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import numpy as np  # noqa: E402

from hear2act_env.scenarios.content import DOMAIN_ORDER, DOMAINS_DIR, load_all_domains, parse_domain  # noqa: E402
from hear2act_env.scenarios.content_check import bank_problems as content_bank_problems  # noqa: E402
from hear2act_env.scenarios.errors import ScenarioError  # noqa: E402
from hear2act_env.scenarios.generator import build_bank  # noqa: E402
from hear2act_env.scenarios.shortcuts import candidates, desirable_values  # noqa: E402
from hear2act_env.scenarios.validate import bank_problems, problems  # noqa: E402

spec = importlib.util.spec_from_file_location("tos", str(ROOT / "tests" / "test_options_shortcuts.py"))
tos = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tos)

NULL_DRAWS = 20
SUFFIX = " (type {})"  # 9 characters for every form: phrase length stays equal across forms


def forms_for(mode: str, attr_name: str, value: str, sole: set[tuple[str, str]]) -> list[str]:
    letters = {"A2": "A", "B": "AB", "D": "ABC"}.get(mode.removesuffix("-u"))
    if mode.removesuffix("-u") == "C":
        letters = "AB" if (attr_name, value) in sole else "A"
    return [value + SUFFIX.format(x) for x in letters]


def transform(raw: dict, mode: str) -> dict:
    raw = copy.deepcopy(raw)
    sole = {(n["attribute"], n["accept"][0]) for p in raw["personas"] for n in p["needs"] if len(n["accept"]) == 1}
    fmap = {}
    for a in raw["attributes"]:
        fmap[a["name"]] = {v: forms_for(mode, a["name"], v, sole) for v in a["values"]}
        # interleaved, so the premium order of the vocabulary (generator.quality) is kept
        a["values"] = [f for v in a["values"] for f in fmap[a["name"]][v]]
    for p in raw["personas"]:
        for n in p["needs"]:
            n["accept"] = [f for v in n["accept"] for f in fmap[n["attribute"]][v]]
        for r in p["requirements"]:
            if "in" in r:
                r["in"] = [f for v in r["in"] for f in fmap[r["attribute"]][v]]
    return raw


@contextmanager
def uniform_picks(on: bool) -> Iterator[None]:
    """Generator control (not content), for the ``-u`` variants only: every row picks uniformly from its
    pool, no Dirichlet weights shared by the rows of one group (so gold and safe agree on a k-value column
    at 1/k). Restored afterwards, so a later variant of the same invocation builds with the shipped deal."""
    from hear2act_env.scenarios import generator as gen

    shipped = gen.GROUP_CONCENTRATION
    gen.GROUP_CONCENTRATION = 0 if on else shipped
    try:
        yield
    finally:
        gen.GROUP_CONCENTRATION = shipped


def domains_for(mode: str):
    mode = mode.removesuffix("-u")
    if mode == "A":
        return load_all_domains(), []
    out, errs = [], []
    for path in sorted(DOMAINS_DIR.glob("*.json")):
        raw = transform(json.loads(path.read_text(encoding="utf-8")), mode)
        try:
            out.append(parse_domain(raw, path.name))
        except ScenarioError as exc:
            errs.append(str(exc))
    return sorted(out, key=lambda d: DOMAIN_ORDER[d.domain]), errs


def need_structure(domains) -> dict:
    acc, rej = [], []
    for d in domains:
        for p in d.personas:
            for n in p.needs:
                acc.append(len(n.accept))
                rej.append(len(d.attribute(n.attribute).values) - len(n.accept))
    acc, rej = np.array(acc), np.array(rej)
    return {"needs": len(acc), "accept1_share": float((acc == 1).mean()), "accept_min": int(acc.min()),
            "accept_mean": float(acc.mean()), "reject1_share": float((rej == 1).mean()), "reject_min": int(rej.min())}


def twin_stats(bank) -> dict:
    same_all = same_need = 0
    rule_credit, gold_qualifies, pair_unique, null_credit = 0.0, 0, 0, 0.0
    rng = np.random.default_rng(17)
    for s in bank:
        cols = [a.name for a in s.attributes if not a.numeric]
        needc = [n.attribute for n in s.needs]
        g = next(o for o in s.options if o.number == s.gold)
        sf = next(o for o in s.options if o.number == s.safe)
        same_all += all(g.values[c] == sf.values[c] for c in cols)
        same_need += all(g.values[c] == sf.values[c] for c in needc)
        opts = candidates(s)
        table = np.array([[str(o.values[c]) for c in cols] for o in opts])
        diff = (table[:, None, :] != table[None, :, :]).sum(axis=2).astype(float)
        np.fill_diagonal(diff, np.inf)
        key = np.array([s._rank_key(o) for o in opts])
        nearest = diff.min(axis=1)
        leads = np.array([all(key[i] < key[j] for j in np.flatnonzero(diff[i] == nearest[i]))
                          for i in range(len(opts))])
        # rule: among candidates that lead every nearest candidate on the priority, the nearest-twinned
        # (fewest differing columns) wins; ties split evenly (expected top-1 of a random tie-break)
        score = np.where(leads, -nearest, -np.inf)
        gi = [o.number for o in opts].index(s.gold)
        si = [o.number for o in opts].index(s.safe)
        gold_qualifies += bool(leads[gi])
        best = np.flatnonzero(score == score.max()) if leads.any() else np.arange(len(opts))
        rule_credit += (gi in best) / len(best)
        # null: the same rule with the candidates' categorical rows shuffled (no role information left)
        for _ in range(NULL_DRAWS):
            perm = rng.permutation(len(opts))
            dn = diff[np.ix_(perm, perm)]
            nn = dn.min(axis=1)
            ld = np.array([all(key[i] < key[j] for j in np.flatnonzero(dn[i] == nn[i])) for i in range(len(opts))])
            sc = np.where(ld, -nn, -np.inf)
            bb = np.flatnonzero(sc == sc.max()) if ld.any() else np.arange(len(opts))
            null_credit += (gi in bb) / len(bb) / NULL_DRAWS
        # is gold/safe the unique closest pair among candidates?
        m = diff.min()
        pairs = {(min(i, j), max(i, j)) for i, j in zip(*np.where(diff == m), strict=True)}
        pair_unique += pairs == {(min(gi, si), max(gi, si))}
    n = len(bank)
    return {"gold_safe_identical_all_cat": same_all / n, "gold_safe_identical_need_cols": same_need / n,
            "twin_rule_top1": rule_credit / n, "twin_rule_null": null_credit / n,
            "gold_leads_its_nearest": gold_qualifies / n,
            "gold_safe_unique_closest_pair": pair_unique / n}


def classifier(bank) -> dict:
    with_twin = tos._numeric_and_categorical(bank)
    desirable = desirable_values(bank)
    without = []
    for s in bank:
        x, y = tos._features(s)
        without.append((np.column_stack([x, tos._categorical_features(s, desirable)]), y))
    a1, t1 = tos._cv_scores(with_twin)
    a0, t0 = tos._cv_scores(without)
    an, tn = tos._cv_scores([tos._features(s) for s in bank])
    ac, tc = tos._cv_scores([(tos._categorical_features(s, desirable), tos._features(s)[1]) for s in bank])
    return {"auc_twin": a1, "top1_twin": t1, "auc_no_twin": a0, "top1_no_twin": t0,
            "auc_numeric_only": an, "top1_numeric_only": tn, "auc_cat_only": ac, "top1_cat_only": tc}


def run(mode: str, designs: bool = True) -> dict:
    t = time.time()
    domains, load_errs = domains_for(mode)
    res = {"variant": mode, "loader_errors": len(load_errs), "loader_examples": load_errs[:5],
           "domains": len(domains), "structure": need_structure(domains)}
    cc = content_bank_problems(domains)
    res.update(content_check=len(cc), content_check_examples=cc[:5])
    with uniform_picks(mode.endswith("-u")):
        bank = build_bank(domains, designs=designs)
    res["designs"] = designs
    res["build_s"] = round(time.time() - t, 1)
    per = [str(e) for s in bank for e in problems(s)]
    bp = [str(e) for e in bank_problems(bank)]
    res.update(scenarios=len(bank), scenario_problems=len(per), scenario_problem_examples=per[:5],
               bank_problems=len(bp), bank_problem_examples=bp[:8])
    res.update(twin_stats(bank))
    res.update(classifier(bank))
    res["total_s"] = round(time.time() - t, 1)
    return res


def main(argv: list[str] | None = None) -> list[dict]:
    import argparse

    from hear2act_env.scenarios import generator as gen

    p = argparse.ArgumentParser(description="gold/safe twin under synthetic need structures")
    p.add_argument("variants", nargs="+", choices=["A", "A2", "B", "C", "D", "A-u", "B-u", "D-u"])
    p.add_argument("--reseed", type=int, default=0, help="k > 0: re-seed every scenario (bank version v1 -> v1sk), "
                   "another realisation of the same content, for the seed-to-seed spread; 0: the shipped seeds")
    p.add_argument("--control", dest="designs", action="store_false", help="control: build with "
                   "generator.build_bank(designs=False), the needs' cube alone and the distractors' sides at random")
    p.add_argument("--out", default="", help="write every figure (problem examples included) to this JSON file")
    args = p.parse_args(argv)
    if args.reseed:
        gen.BANK_VERSION = f"v1s{args.reseed}"
    results = []
    for mode in args.variants:
        r = run(mode, args.designs)
        r["seed"] = args.reseed
        results.append(r)
        name = mode + ("" if args.designs else "-control")
        print(f"{name:4s} accept1 {r['structure']['accept1_share']:.2f} | problems {r['scenario_problems']}/"
              f"{r['bank_problems']} | g/s identical need/all {r['gold_safe_identical_need_cols']:.2f}/"
              f"{r['gold_safe_identical_all_cat']:.2f} | twin rule {r['twin_rule_top1']:.3f} "
              f"(null {r['twin_rule_null']:.3f}) | clf +twin {r['auc_twin']:.3f}/{r['top1_twin']:.3f} "
              f"-twin {r['auc_no_twin']:.3f}/{r['top1_no_twin']:.3f} | {r['total_s']} s", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
