"""Generator levers against the options-only readers (issue 17 §1): rebuild the bank with changed settings.

    nice python benchmarks/options_levers.py                                   # the shipped settings, rebuilt
    nice python benchmarks/options_levers.py --set "OPENING_WEIGHTS=(1/7,)*7" --probe --write /tmp/levers
    nice python benchmarks/options_levers.py --salt v1b --probe          # another draw of the shipped bank
    nice python benchmarks/options_floor.py --scenarios /tmp/levers/<label>.jsonl   # what a rebuilt bank costs

Each run rebuilds all 480 scenarios with the generator's constants changed as ``--set NAME=VALUE`` says (a
Python expression; only the names in :data:`LEVERS`) and prints, for that bank, what
``benchmarks/options_cube.py`` prints (the cube reader's expected top-1, the validator's bank rules, the in-repo
learned options-only classifier's AUC / top-1), a binomial 95% interval on each top-1 (about +-0.04 at 0.25 on
480 scenarios), and how far prices follow what an option offers (:func:`price_follows_offers`).
``--probe`` adds the independent probe (``options_probe_independent/run.py``: logistic regression and gradient
boosting). ``--salt S`` seeds every scenario's generator from ``S`` instead of the bank version
(``generator.BANK_VERSION``, "v1"): the same settings, another draw of the whole bank, so a lever's effect can be
told from the spread between draws. Figures for env -v5's bank and for env -v4's levers: docs/protocol-choices.md,
"Cube designs" and "Levers measured, not shipped". Never writes the bundled bank file; ``--write DIR`` keeps
the rebuilt bank as ``DIR/<label>.jsonl``. About 15 s a run with ``--probe``, on one core.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from options_cube import figures  # noqa: E402

from hear2act_env.scenarios import design, generator  # noqa: E402
from hear2act_env.scenarios.profile import average_ranks  # noqa: E402
from hear2act_env.scenarios.shortcuts import desirable_values  # noqa: E402

# The settings a run may change, each a constant of the generator (or of its cube designs) read while the bank
# is built: name -> (module, what it is).
LEVERS = {
    "OPENING_WEIGHTS": (design, "weights of the opening's seven patterns (110, 101, 100, 011, 010, 001, 000)"),
    "GROUP_CONCENTRATION": (generator, "Dirichlet concentration of the values one side of a column shows (0: uniform)"),
    "MERIT_NOISE": (generator, "how loosely ratings, distances, ... follow what an option offers"),
    "COST_NOISE": (generator, "how loosely prices follow what an option offers"),
    "VIOLATOR_SIDE": (generator, "chance that a request violator shows a column's side 1"),
    "WALK_KEEP": (generator, "chance that a number draw whose never-ask value walk ends at the gold is kept"),
    "WALK_DRAWS": (generator, "most number draws per scenario"),
}


def parse_setting(text: str) -> tuple[str, object]:
    """``NAME=EXPR`` -> (NAME, value); NAME must be one of :data:`LEVERS`.

    >>> parse_setting("COST_NOISE=0")
    ('COST_NOISE', 0)
    >>> parse_setting("OPENING_WEIGHTS=(1/7,)*7")[1][0] == 1 / 7
    True
    """
    name, sep, expr = text.partition("=")
    name = name.strip()
    if not sep or name not in LEVERS:
        raise ValueError(f"--set {text!r}: expected NAME=VALUE with NAME one of {sorted(LEVERS)}")
    try:  # a literal or simple arithmetic, typed by the user; no names, no builtins
        return name, eval(expr, {"__builtins__": {}}, {})
    except Exception as e:
        raise ValueError(f"--set {text!r}: the value {expr!r} is not a Python literal or arithmetic ({e})") from None


def interval(p: float, n: int) -> tuple[float, float]:
    """A binomial 95% interval (normal approximation) for a share ``p`` of ``n`` scenarios."""
    half = 1.96 * math.sqrt(max(p * (1 - p), 0.0) / n)
    return round(max(0.0, p - half), 3), round(min(1.0, p + half), 3)


def price_follows_offers(bank: list) -> float:
    """Mean over scenarios of the rank correlation, across the request-meeting options, between what an option
    offers as a reader with world knowledge counts it (the share of its categorical values that some need of the
    domain accepts: ``shortcuts.desirable_values``) and its price (the first ``$`` attribute): how far the numbers
    follow what is offered. Scenarios without a price, or with either constant, are left out."""
    good = desirable_values(bank)
    out = []
    for s in bank:
        rows = [o for o in s.options if o.meets_request]
        cats = [a.name for a in s.attributes if not a.numeric]
        price = [a for a in s.attributes if a.numeric and a.better == "lower" and a.prefix == "$"]
        if not cats or not price:
            continue
        offers = [np.mean([str(o.values[c]) in good[s.domain].get(c, ()) for c in cats]) for o in rows]
        cost = [float(o.values[price[0].name]) for o in rows]
        if np.std(offers) > 0 and np.std(cost) > 0:
            # average ranks: tied values share their places
            out.append(float(np.corrcoef(average_ranks(np.array(offers)), average_ranks(np.array(cost)))[0, 1]))
    return round(float(np.mean(out)), 3)


def build(settings: dict[str, object], salt: str | None, domains: list | None = None) -> list:
    """The bank under ``settings`` (and ``salt``), the generator's constants restored afterwards
    (``domains``: a subset of the domains' content, for a quick look; default all 48)."""
    modules = {k: LEVERS[k][0] for k in settings} | {"BANK_VERSION": generator}
    saved = {k: getattr(m, k) for k, m in modules.items()}
    try:
        for k, v in settings.items():
            setattr(modules[k], k, v)
        if salt is not None:
            generator.BANK_VERSION = salt  # scenario_rng reads it per scenario
        return generator.build_bank(domains)
    finally:
        for k, v in saved.items():
            setattr(modules[k], k, v)


def probe(bank_file: Path) -> dict:
    """The independent probe's figures for a bank file (its own process: it must not import the repository)."""
    with tempfile.TemporaryDirectory(prefix="levers_probe_") as tmp:
        out = Path(tmp) / "probe.json"
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "options_probe_independent" / "run.py"),
                "--bank",
                str(bank_file),
                "--out",
                str(out),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        models = json.loads(out.read_text())["models"]
    return {f"probe_{name}_{k}": round(v, 4) for name, m in models.items() for k, v in m.items()}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"change one generator constant (one of {', '.join(LEVERS)})",
    )
    ap.add_argument("--salt", default=None, help="seed the scenarios from this string instead of the bank version")
    ap.add_argument("--probe", action="store_true", help="also the independent probe (needs scikit-learn)")
    ap.add_argument("--write", type=Path, default=None, metavar="DIR", help="keep the rebuilt bank here")
    ap.add_argument("--label", default="", help="name of this run in the output (default: from the settings)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON to this file")
    args = ap.parse_args(argv)
    try:
        settings = dict(parse_setting(s) for s in args.set)
    except ValueError as e:
        ap.error(str(e))
    label = args.label or (" ".join(args.set) or "shipped") + (f" salt={args.salt}" if args.salt else "")
    start = time.time()
    scenarios = build(settings, args.salt)
    built = time.time() - start
    with tempfile.TemporaryDirectory(prefix="levers_") as tmp:
        folder = args.write or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (label.replace(" ", "_").replace("/", "-")[:120] + ".jsonl")
        generator.write_bank(path, scenarios)  # for --write and the probe, which reads only files
        result = {
            "label": label,
            "settings": {k: repr(v) for k, v in settings.items()},
            "salt": args.salt,
            **figures(str(path), scenarios),
            "build_s": round(built, 1),
            "price_follows_offers": price_follows_offers(scenarios),
        }
        if args.probe:
            result.update(probe(path))
    n = len(scenarios)
    for key in [k for k in result if k.endswith("top1")]:
        result[key + "_95"] = interval(float(result[key]), n)
    result["seconds"] = round(time.time() - start, 1)
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
