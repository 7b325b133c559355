"""Independent options-only gold finder that compares a domain's scenarios: structure, sibling recurrence, baselines.

    nice python benchmarks/options_probe_siblings/run.py                       # the bundled bank
    nice python benchmarks/options_probe_siblings/run.py --bank FILE           # a scenario JSONL file
    nice python benchmarks/options_probe_siblings/run.py --work DIR --out R.json

Exports the bank (``options_probe_independent/export.py``, in a child process: the only code that imports the
repository) to ``--work`` (a temporary folder by default), then reads only ``visible.jsonl`` / ``labels.jsonl``.
It parses each option into name, categorical and numeric columns (``parse``), removes the options that break the
request's numeric bounds or beat the opening on the priority column (``structs``), searches every structural triple
of categorical predicates whose 3-bit codes over the 9 remaining options are the 8 combinations plus a second
all-true option (``structs``), scores those triples with a log-linear model fit under 5-fold GroupKFold
(``latent``, ``combined``), adds how often each predicate recurs in the domain's sibling scenarios (label-free, or
with training-fold labels; ``combined``, ``rules``), and compares with logistic-regression / gradient-boosting
baselines on candidate-level features (``cand_feats``, ``stack``). Written by a separate process that saw only the
exported options text and labels. ``--skip-export`` reuses the files already in ``--work``. Single-threaded.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "options_probe_independent"))  # probe_cli: the command line both probes share

# candidate-level features of the LR / GBM baselines (cand_feats.build_cands columns)
BASE_FEATURES = [
    "prank", "pz", "pgap_op", "sgold", "s111", "ham_op", "rarity",
    "n_unique", "n_major", "neg", "pos", "req_ov", "sec0_z", "sec0_rank",
]  # fmt: skip


def finder(work: Path) -> dict[str, Any]:
    """Every figure for the export in ``work``, printing the table as it goes."""
    import numpy as np
    import stack
    from cand_feats import build_cands
    from combined import run, setup
    from latent import cand_scores, to_mats
    from parse import load
    from rules import rule_scores
    from run_latent import report
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    bank = load(work)
    out: dict[str, Any] = {"n_scenarios": len(bank.visible), "rules": {}, "latent": {}, "candidate_features": {}}
    data = setup(bank)

    print("== parameter-free rules (no training) ==")
    rules = out["rules"]
    tag = "RULE best-on-priority candidate"
    rules[tag] = report(data, [np.array([dd["pval"][c] for c in dd["C"]], float) for dd in data], tag)
    to_mats(data, {"__dummy": 0})
    tag = "RULE most structures name it gold"
    rules[tag] = report(data, [cand_scores(dd, None) for dd in data], tag)
    tag = "RULE min sibling-commonness structure"
    rules[tag] = report(data, rule_scores(data, "sib"), tag)
    tag = "RULE min (sibling+within) commonness structure"
    rules[tag] = report(data, rule_scores(data, "sib+in"), tag)

    print("== latent-structure log-linear model, 5-fold GroupKFold ==")
    for gk in ["id", "domain"]:
        settings = [(False, False, "structure feats only"), (True, False, "+ label-free sibling commonness")]
        if gk == "id":
            settings.append((True, True, "+ sibling labels (train folds)"))
        for use_unsup, use_sup, what in settings:
            tag = f"{gk}: {what}"
            out["latent"][tag] = run(data, gk, 1.0, use_unsup, use_sup, tag)[2]

    print("== candidate-level features only (LR / GBM) ==")
    df = build_cands(bank)
    models = {
        "LR": lambda: LogisticRegression(C=0.3, max_iter=2000),
        "GBM": lambda: HistGradientBoostingClassifier(
            max_iter=150, learning_rate=0.05, max_depth=3, min_samples_leaf=40
        ),
    }
    for gk in ["id", "domain"]:
        for name, make in models.items():
            tag = f"{gk}: {name} candidate features"
            out["candidate_features"][tag] = stack.evaluate(df, BASE_FEATURES, make, gk, tag)[1]

    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("hear2act", "hear2act_env"))
    assert not leaked, f"the finder must not import the repository: {leaked}"
    return out


def main(argv: list[str] | None = None) -> int:
    from probe_cli import cli

    def compute(work: Path, _args: object, label: str) -> dict[str, Any]:
        print(f"bank {label}")
        return finder(work)

    return cli(argv, __doc__.split("\n")[0], "options_probe_siblings_", compute,
               lambda label, result: print(f"time {result['seconds']:.0f}s"))


if __name__ == "__main__":
    sys.exit(main())
