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
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
VISIBLE, LABELS = "visible.jsonl", "labels.jsonl"  # export.py's names (not imported: it imports the repo)


def run_export(work: Path, bank: str | None) -> None:
    """Write ``work/visible.jsonl`` and ``work/labels.jsonl`` with export.py in a child process."""
    cmd = [sys.executable, str(HERE / "export.py"), str(work)] + (["--bank", bank] if bank else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bank", help="scenario JSONL file (default: the bundled bank)")
    ap.add_argument("--work", type=Path, help="folder for visible.jsonl / labels.jsonl (default: a temporary one)")
    ap.add_argument("--skip-export", action="store_true", help="use the files already in --work")
    ap.add_argument("--out", type=Path, help="write every figure as JSON here")
    ap.add_argument("--extras", action="store_true", help="also the auditor's further figures (slower)")
    args = ap.parse_args(argv)
    if importlib.util.find_spec("sklearn") is None:
        print("error: scikit-learn is required: pip install scikit-learn", file=sys.stderr)
        return 2
    if args.skip_export and args.work is None:
        ap.error("--skip-export needs --work")
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    start = time.time()
    with tempfile.TemporaryDirectory(prefix="options_probe_") as tmp:
        work = args.work or Path(tmp)
        if not args.skip_export:
            run_export(work, args.bank)
        with threadpool_limits(limits=1):
            result = probe(work, args.extras)
    label = f"{args.work} (existing export)" if args.skip_export else (args.bank or "bundled")
    result = {"bank": label, **result, "seconds": round(time.time() - start, 1)}
    print(table_text(label, result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
