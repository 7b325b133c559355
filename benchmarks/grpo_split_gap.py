"""Does GRPO learn the skill or the domains? Held-out gains on unseen domains vs unseen scenarios of trained domains.

    python benchmarks/grpo_split_gap.py                                   # the committed -v5 records (3 seeds)
    python benchmarks/grpo_split_gap.py runs/grpo-v5-seed0 runs/grpo-v5-seed1 ...   # grpo_learning.py outputs

The held-out split (:mod:`hear2act.training.splits`) has two parts: ``unseen_domain`` (8 whole domains no
training scenario comes from) and ``unseen_scenario`` (2 scenarios of every other domain, whose 8 siblings are
trained on). A domain's scenarios share content (its attributes, the sets of values its personas accept), so a
policy trained on a domain's siblings could learn which options tend to be the gold there
(``benchmarks/options_siblings_anatomy.py``: an oracle that reads the siblings' needs finds the gold in up to
0.4 of scenarios) instead of learning to ask. Such a policy would gain more on ``unseen_scenario`` than on
``unseen_domain``. This prints, per seed and pooled over seeds, the success gain (after - before GRPO) on each
part with paired bootstrap intervals, and the gap between the two gains with a stratified bootstrap interval
(:func:`hear2act.eval.stats.gain_gap_interval`).

Inputs: ``docs/results/grpo-v5/heldout-seed*.json`` by default (copied from three ``benchmarks/grpo_learning.py``
runs, the command in each file), or run directories holding ``grpo_learning.json``. The split is the default one
(:data:`hear2act.training.splits.DEFAULT_SPLIT`); a record whose held-out ids are not that split's is refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RECORDS = ROOT / "docs" / "results" / "grpo-v5"


def load(path: Path) -> dict:
    """One run's held-out record: a committed ``heldout-seed*.json`` or a run directory's ``grpo_learning.json``."""
    file = path / "grpo_learning.json" if path.is_dir() else path
    if not file.is_file():
        raise SystemExit(f"{path}: neither a held-out record nor a run directory with grpo_learning.json")
    record = json.loads(file.read_text(encoding="utf-8"))
    missing = [k for k in ("held_out_ids", "before", "after", "seed") if k not in record]
    if missing:
        raise SystemExit(f"{file}: missing {missing} (written by benchmarks/grpo_learning.py?)")
    for when in ("before", "after"):
        if len(record[when]["success_by_episode"]) != len(record["held_out_ids"]):
            raise SystemExit(f"{file}: {when}.success_by_episode has {len(record[when]['success_by_episode'])} "
                             f"entries for {len(record['held_out_ids'])} held-out ids")
    return record


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("runs", nargs="*", help="held-out records or grpo_learning.py output directories "
                                           f"(default: {RECORDS.relative_to(ROOT)}/heldout-seed*.json)")
    p.add_argument("--json", default="", help="also write the figures here")
    args = p.parse_args(argv)

    from hear2act.eval.stats import part_gains
    from hear2act.training.splits import bundled_split, part_of

    paths = [Path(r) for r in args.runs] or sorted(RECORDS.glob("heldout-seed*.json"))
    if not paths:
        raise SystemExit(f"no records in {RECORDS} and no runs given")
    records = [load(path) for path in paths]
    parts = part_of(bundled_split())
    ids = records[0]["held_out_ids"]
    held = {i for i, part in parts.items() if part != "train"}
    for path, r in zip(paths, records, strict=True):
        if r["held_out_ids"] != ids or set(ids) != held:
            raise SystemExit(f"{path}: its held-out ids are not the default split's "
                             f"({len(r['held_out_ids'])} ids; the split holds out {len(held)})")

    def gains(before: list, after: list) -> dict:
        return part_gains([parts[i] for i in ids], before, after)

    rows = []
    for r in records:
        rows.append({"seed": r["seed"], **gains([r["before"]["success_by_episode"]],
                                                [r["after"]["success_by_episode"]])})
    pooled = gains([r["before"]["success_by_episode"] for r in records],
                   [r["after"]["success_by_episode"] for r in records])

    def line(name: str, g: dict) -> str:
        cells = []
        for part in ("unseen_domain", "unseen_scenario"):
            x = g[part]
            d, lo, hi = (100 * v for v in x["gain_ci95"])
            cells.append(f"{x['before']:.3f} -> {x['after']:.3f}, {d:+.1f} [{lo:+.1f}, {hi:+.1f}]")
        gap, lo, hi = (100 * v for v in g["gap_ci95"])
        return f"| {name} | {cells[0]} | {cells[1]} | {gap:+.1f} [{lo:+.1f}, {hi:+.1f}] |"

    n_d, n_s = pooled["unseen_domain"]["n"], pooled["unseen_scenario"]["n"]
    print(f"| seed | unseen domains ({n_d} episodes): success before -> after, gain (points) [95% CI] | "
          f"unseen scenarios of trained domains ({n_s}): same | gap: scenario gain - domain gain [95% CI] |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print(line(str(row["seed"]), row))
    print(line(f"pooled ({len(rows)} seeds)", pooled))
    result = {"records": [str(p) for p in paths], "per_seed": rows, "pooled": pooled}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
