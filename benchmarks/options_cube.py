"""The pattern cube (issue 17 §1): how often a structural options-only reader names the gold, designs vs control.

    nice python benchmarks/options_cube.py                        # the bundled bank only (seconds)
    nice python benchmarks/options_cube.py --control --write-banks /tmp/cube   # + the needs' cube alone, rebuilt
    nice python benchmarks/options_probe_independent/run.py --bank /tmp/cube/bank-1.jsonl        # that bank

PROTOCOL.md fixes the patterns: the nine request-meeting options realise every (L1, L2, L3) pattern once
plus the safe option's second 111, and the gold leads the safe option on the priority. The reader
(``hear2act_env.scenarios.cube``) searches the columns the request does not name for three whose value
splits form that cube and names the leader of its 111 pair; it needs no training and no world knowledge.

For each bank this prints the reader's expected top-1 (chance 0.125; the issue's limit 0.20), the share of
scenarios in which every cube it finds names the gold, the validator's bank rules
(``validate.bank_problems``: options-only orderings, the never-ask value ranker) and the in-repo learned
options-only classifier (``tests/test_options_shortcuts.py``: AUC / top-1, grouped by scenario).
``--control`` also rebuilds the bank with ``generator.build_bank(designs=False)``: the needs' cube alone, every
distractor's sides a fair coin (env -v3's deal, on -v5's columns). Never writes the bank file.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hear2act_env.scenarios import generator, load_scenarios  # noqa: E402
from hear2act_env.scenarios.cube import reader_rate  # noqa: E402
from hear2act_env.scenarios.validate import bank_problems  # noqa: E402


def _classifier(bank: list) -> tuple[float, float]:
    """The in-repo options-only classifier's (AUC, top-1), as tests/test_options_shortcuts.py scores it."""
    spec = importlib.util.spec_from_file_location("tos", str(ROOT / "tests" / "test_options_shortcuts.py"))
    tos = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tos)
    return tos._cv_scores(tos._numeric_and_categorical(bank))


def figures(name: str, bank: list) -> dict:
    rate, sure = reader_rate(bank)
    found = [str(e) for e in bank_problems(bank)]
    auc, top1 = _classifier(bank)
    return {"bank": name, "scenarios": len(bank), "cube_reader_top1": round(rate, 3),
            "every_cube_names_the_gold": round(sure, 3), "validator_bank_problems": len(found),
            "validator_examples": found[:4], "classifier_auc": round(auc, 3), "classifier_top1": round(top1, 3)}


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--control", action="store_true", help="also rebuild the bank without the cube designs")
    p.add_argument("--out", default="", help="write every figure as JSON to this file")
    p.add_argument("--write-banks", default="", metavar="DIR",
                   help="also write each rebuilt bank as JSONL under DIR (for options_probe_independent/run.py --bank)")
    args = p.parse_args(argv)
    banks = [("bundled", load_scenarios)]
    if args.control:
        banks.append(("the needs' cube alone", lambda: generator.build_bank(designs=False)))
    rows = []
    for name, build in banks:
        t = time.time()
        bank = build()
        row = figures(name, bank)
        if args.write_banks and name != "bundled":
            Path(args.write_banks).mkdir(parents=True, exist_ok=True)
            row["file"] = str(Path(args.write_banks) / f"bank-{len(rows)}.jsonl")
            Path(row["file"]).write_text(generator.bank_text(bank), encoding="utf-8")
        row["seconds"] = round(time.time() - t, 1)
        rows.append(row)
        print(f"{name:40s} cube reader {row['cube_reader_top1']:.3f} (sure {row['every_cube_names_the_gold']:.3f})"
              f"  classifier AUC {row['classifier_auc']:.3f} top-1 {row['classifier_top1']:.3f}"
              f"  validator problems {row['validator_bank_problems']}  ({row['seconds']} s)", flush=True)
        for example in row["validator_examples"]:
            print(f"    {example[:150]}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
