"""Independent options-only gold finder: how well do the options' text and the request alone find the gold?

    nice python benchmarks/options_probe_independent/run.py                       # the bundled bank
    nice python benchmarks/options_probe_independent/run.py --bank FILE           # a scenario JSONL file
    nice python benchmarks/options_probe_independent/run.py --work DIR --out R.json --extras

Exports the bank (``export.py``, in a child process: the only code that imports the repository) to
``--work`` (a temporary folder by default), then reads only ``visible.jsonl`` / ``labels.jsonl``,
builds one feature row per candidate (``probe_features``), and scores logistic regression and
histogram gradient boosting with 5-fold GroupKFold by scenario. ``--skip-export`` reuses the files
already in ``--work``. ``--extras`` adds the auditor's further figures (domain target encoding, HGB
ablations, single-feature AUCs, logistic coefficients) to ``--out``. Single-threaded throughout.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
VISIBLE, LABELS = "visible.jsonl", "labels.jsonl"  # export.py's names (not imported: it imports the repo)


def probe(work: Path, with_extras: bool = False) -> dict[str, Any]:
    """Every figure for the export in ``work``: models' top-1 / AUC, candidate-set stats, twin diagnostic."""
    from probe_features import build_features
    from probe_models import MODELS, cross_validated_scores, evaluate, extras, twin_diagnostic, value_counts
    from probe_parse import load_export

    visible, labels = load_export(work / VISIBLE, work / LABELS)
    table = build_features(visible, labels)
    groups = table.groups
    out: dict[str, Any] = {
        "n_scenarios": table.n_scenarios,
        "mean_candidates": table.mean_candidates,
        "gold_in_candidate_set": table.gold_in_candidate_set,
        "chance_top1": float(sum(1 / (groups == s).sum() for s in set(groups.tolist())) / table.n_scenarios),
        "n_features": len(table.names),
        "models": {name: evaluate(table, cross_validated_scores(table, make)) for name, make in MODELS.items()},
        "twins": twin_diagnostic(table),
        "feature_value_counts": value_counts(table),
    }
    if with_extras:
        out["extras"] = extras(table)
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("hear2act", "hear2act_env"))
    assert not leaked, f"the probe must not import the repository: {leaked}"
    return out


def table_text(label: str, r: dict[str, Any]) -> str:
    """The printed summary of one bank's figures."""
    lines = [
        f"bank {label}: {r['n_scenarios']} scenarios, {r['n_features']} features, gold in candidate set "
        f"{r['gold_in_candidate_set']:.1%}, chance top-1 {r['chance_top1']:.3f}",
        f"{'model':<16} {'top-1':>15} {'AUC':>7} {'mean cand':>10}",
    ]
    models = {**r["models"], **r.get("extras", {}).get("models_domain_te", {})}
    for name, m in models.items():
        hits = f"{m['top1']:.4f} ({round(m['top1'] * r['n_scenarios'])}/{r['n_scenarios']})"
        lines.append(f"{name:<16} {hits:>15} {m['auc']:>7.4f} {r['mean_candidates']:>10.2f}")
    t = r["twins"]
    lines.append(
        f"twins: {t['scenarios_with_twin_pair']} scenarios have an exact categorical twin pair among candidates; "
        f"the gold is in it in {t['gold_has_twin']} and is its winner (at least as good on the objective) in "
        f"{t['gold_is_twin_winner']}/{t['scenarios_with_twin_pair']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from probe_cli import cli

    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--extras", action="store_true", help="also the auditor's further figures (slower)")

    return cli(argv, __doc__.split("\n")[0], "options_probe_",
               lambda work, args, label: probe(work, args.extras),
               lambda label, result: print(table_text(label, result)), options)


if __name__ == "__main__":
    sys.exit(main())
