"""PPO (SB3, CPU) on the macro wrapper: held-out success and turns per access condition and realization.

    nice -n 10 python benchmarks/ppo_results.py --out runs/ppo-grid            # train what is missing, then report
    python benchmarks/ppo_results.py --out runs/ppo-grid --report-only          # table + figure from finished runs

Every cell is ``python -m hear2act.training.ppo`` (the same ``train`` function, in one
process so cached audio features are reused across seeds) with the same
split, turn cost and budget; a cell whose ``eval.json`` exists is skipped, so
the command resumes. The report is a markdown table (mean and spread over
seeds: min-max) and ``docs/figures/ppo_learning_curves.png`` (held-out
success and turns vs training steps, mean over seeds with the min-max band).
The audio conditions need the speech extra and render speech into
``$HEAR2ACT_CACHE`` on first use.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the repo's packages come first

ACCESS = ("T", "T+S", "T+S_hat", "A+T")
ENVS = {"Prosody": "Hear2Act-Prosody-v5", "Explicit": "Hear2Act-Explicit-v5"}
FIGURE = ROOT / "docs" / "figures" / "ppo_learning_curves.png"


def cell_dir(out: Path, realization: str, access: str, seed: int) -> Path:
    return out / f"{realization}_{access.replace('+', 'p')}_s{seed}"


def run_grid(out: Path, seeds: list[int], steps: int, eval_every: int, turn_cost: float,
             access: tuple[str, ...], realizations: tuple[str, ...], episode_pool: int = -1) -> None:
    from hear2act.training.ppo import Args, train

    for acc in access:
        for real in realizations:
            for seed in seeds:
                d = cell_dir(out, real, acc, seed)
                if (d / "eval.json").exists():
                    continue
                start = time.perf_counter()
                r = train(Args(env_id=ENVS[real], access=acc, total_timesteps=steps, seed=seed, out=str(d),
                               eval_every=eval_every, turn_cost=turn_cost, episode_pool=episode_pool))
                o = r["overall"]
                print(f"{real:8s} {acc:7s} seed {seed}: success {o['success']:.3f} turns {o['turns']:.2f} "
                      f"({time.perf_counter() - start:.0f} s)", flush=True)


def load(out: Path) -> dict[tuple[str, str], list[dict]]:
    cells: dict[tuple[str, str], list[dict]] = {}
    for f in sorted(out.glob("*/eval.json")):
        r = json.loads(f.read_text())
        real = next(k for k, v in ENVS.items() if v == r["env_id"])
        cells.setdefault((real, r["access"]), []).append(r)
    return cells


def _fmt(values: list[float], digits: int) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} [{v.min():.{digits}f}-{v.max():.{digits}f}]"


def table(cells: dict[tuple[str, str], list[dict]]) -> str:
    head = ("| realization | access | seeds | held-out success | turns | premature closure | disclosed (0-3) "
            "| unseen-domain success |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [head]
    for real in ENVS:
        for acc in ACCESS:
            runs = cells.get((real, acc))
            if not runs:
                continue
            o = [r["overall"] for r in runs]
            rows.append(f"| {real} | {acc} | {len(runs)} | {_fmt([x['success'] for x in o], 3)} | "
                        f"{_fmt([x['turns'] for x in o], 2)} | {_fmt([x['premature_closure'] for x in o], 3)} | "
                        f"{_fmt([x['n_disclosed'] for x in o], 2)} | "
                        f"{_fmt([r['unseen_domain']['success'] for r in runs], 3)} |")
    return "\n".join(rows)


def figure(cells: dict[tuple[str, str], list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [real for real in ENVS if any((real, acc) in cells for acc in ACCESS)]
    fig, axes = plt.subplots(2, len(shown), figsize=(5 * len(shown), 7), sharex=True, squeeze=False)
    for col, real in enumerate(shown):
        for acc in ACCESS:
            runs = cells.get((real, acc))
            if not runs:
                continue
            steps = [p["timesteps"] for p in runs[0]["curve"]]
            n = min(len(r["curve"]) for r in runs)
            for row, key in enumerate(("success", "turns")):
                y = np.array([[p[key] for p in r["curve"][:n]] for r in runs])
                ax = axes[row][col]
                ax.plot(steps[:n], y.mean(axis=0), marker="o", label=f"{acc} ({len(runs)} seeds)")
                ax.fill_between(steps[:n], y.min(axis=0), y.max(axis=0), alpha=0.2)
        axes[0][col].set_title(f"{real}-mediated" if real == "Prosody" else f"{real} lexical")
        axes[0][col].set_ylabel("held-out success")
        axes[1][col].set_ylabel("held-out turns")
        axes[1][col].set_xlabel("training steps")
        if axes[0][col].get_legend_handles_labels()[0]:
            axes[0][col].legend(fontsize=8)
    fig.suptitle("PPO, macro actions, per-turn cost: held-out scenarios\n(mean, band = min-max over seeds)",
                 fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/ppo-grid", help="folder of the runs (one sub-folder per cell)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated run seeds")
    p.add_argument("--steps", type=int, default=20_480, help="training steps per run")
    p.add_argument("--eval-every", type=int, default=4_096, help="steps between held-out evaluations")
    p.add_argument("--turn-cost", type=float, default=0.05, help="the env's per-turn cost")
    p.add_argument("--access", default=",".join(ACCESS), help="access conditions to train")
    p.add_argument("--realizations", default="Prosody,Explicit", help="Prosody and/or Explicit")
    p.add_argument("--episode-pool", type=int, default=-1,
                   help="episodes per training scenario (hear2act.training.ppo's --episode-pool; -1: its default)")
    p.add_argument("--report-only", action="store_true", help="only aggregate finished runs")
    p.add_argument("--figure", default=str(FIGURE), help="where the learning-curve PNG goes")
    a = p.parse_args()
    out = Path(a.out)
    if not a.report_only:
        run_grid(out, [int(s) for s in a.seeds.split(",")], a.steps, a.eval_every, a.turn_cost,
                 tuple(a.access.split(",")), tuple(a.realizations.split(",")), a.episode_pool)
    cells = load(out)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# PPO held-out results (repo {commit}; {out})\n")
    print(table(cells))
    figure(cells, Path(a.figure))
    print(f"\nfigure: {a.figure}")


if __name__ == "__main__":
    main()
