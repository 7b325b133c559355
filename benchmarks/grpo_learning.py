"""Does GRPO learn the task? SFT warm start, then whole-episode GRPO under T+S (Prosody), on held-out scenarios.

    nice -n 10 python benchmarks/grpo_learning.py --out runs/grpo-learning

Recipe (every number is a flag; the defaults are the CPU budget):

1. build a tiny causal LM locally (:func:`hear2act.agents.llm.tiny.build_tiny_causal_lm`; no downloads), or take
   ``--model DIR`` (e.g. a local SmolLM2-135M-Instruct);
2. ``python -m hear2act.training.sft``: imitate ``state-rule`` on the training split (P6 prompts, ``[ACTION: ...]``);
3. ``python -m hear2act.training.grpo --mode episode``: K whole on-policy episodes per start, episode reward
   (success - 0.05/turn + process terms), held-out evaluation every ``--eval-every`` steps;
4. print held-out success, premature closure and mean episode reward before (= after SFT) and after GRPO,
   on the same held-out scenarios and seeds (every ``--eval-stride``-th id of :func:`hear2act.training.splits.eval_ids`,
   seeds 10000 + i), and write the curve to ``docs/figures/grpo_learning_curve.png``.

Measured once (seed 0, defaults, 2 shared cores): 0.000 -> 0.000 held-out success, 97.8 s per GRPO step,
45 min in all; see docs/training.md for why. Held-out play is greedy through ``ModelPolicy(HFBackend)``,
i.e. what ``hear2act rollout --agent hf:OUT/grpo --access T+S`` runs on the same ids. Timing is printed,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--out", default="runs/grpo-learning")
    p.add_argument("--model", default="", help="start from this checkpoint (default: build the tiny LM)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sft-scenarios", type=int, default=80, help="training-split scenarios the teacher plays")
    p.add_argument("--sft-steps", type=int, default=40)
    p.add_argument("--sft-lr", type=float, default=3e-3)
    p.add_argument("--grpo-steps", type=int, default=8)
    p.add_argument("--grpo-scenarios", type=int, default=40)
    p.add_argument("--grpo-lr", type=float, default=1e-4)
    p.add_argument("--k", type=int, default=8, help="episodes per group (num_generations)")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--eval-stride", type=int, default=8, help="every N-th held-out id (160 / 8 = 20 episodes)")
    p.add_argument("--eval-every", type=int, default=4)
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on a shared 2-core box)")
    p.add_argument("--figure", default=str(ROOT / "docs" / "figures" / "grpo_learning_curve.png"))
    return p.parse_args(argv)


def _plot(history: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, [h["success"] for h in history], "o-", label="held-out success")
    ax.plot(steps, [h["premature_closure"] for h in history], "s--", label="premature closure")
    ax.plot(steps, [h["reward"] for h in history], "^:", label="mean episode reward")
    ax.set_xlabel("GRPO step")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> dict:
    args = _args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from hear2act.agents.llm.tiny import build_tiny_causal_lm
    from hear2act.training import grpo, sft
    from hear2act.training.splits import bundled_split, eval_ids

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    held = eval_ids(bundled_split())[::args.eval_stride]
    timings: dict[str, float] = {}
    t = time.perf_counter()
    base = args.model or str(build_tiny_causal_lm(out / "base", seed=args.seed))
    summary_sft = sft.main(["--model", base, "--output_dir", str(out / "sft"), "--access", "T+S",
                            "--n_scenarios", str(args.sft_scenarios), "--max_steps", str(args.sft_steps),
                            "--learning_rate", str(args.sft_lr), "--per_device_train_batch_size", "8",
                            "--seed", str(args.seed), "--logging_steps", "10"])
    timings["sft_s"] = time.perf_counter() - t
    t = time.perf_counter()
    # the held-out ids: grpo evaluates its first eval_n of eval_ids; pass the strided subset via a split-free list
    grpo_argv = ["--model", str(out / "sft"), "--mode", "episode", "--access", "T+S", "--reasoning", "false",
                 "--output_dir", str(out / "grpo"), "--n_scenarios", str(args.grpo_scenarios),
                 "--num_generations", str(args.k), "--per_device_train_batch_size", str(args.k),
                 "--global_batch", str(args.k), "--max_steps", str(args.grpo_steps),
                 "--max_completion_length", str(args.max_new_tokens), "--learning_rate", str(args.grpo_lr),
                 "--seed", str(args.seed), "--eval_every", str(args.eval_every), "--eval_stride",
                 str(args.eval_stride), "--logging_steps", "1", "--save_strategy", "no"]
    summary_grpo = grpo.main(grpo_argv)
    timings["grpo_s"] = time.perf_counter() - t
    history = json.loads((out / "grpo" / "heldout_eval.json").read_text())["history"]
    before, after = history[0], history[-1]
    result = {"held_out_ids": held, "eval_seed": 10_000, "seed": args.seed, "sft": summary_sft,
              "grpo_steps": summary_grpo["steps"], "grpo_mean_step_s": summary_grpo["mean_step_time_s"],
              "before": before, "after": after, "history": history, "timings_s": timings,
              "delta_success_points": 100 * (after["success"] - before["success"])}
    (out / "grpo_learning.json").write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    _plot(history, Path(args.figure), f"tiny LM, SFT {args.sft_steps} steps then GRPO, T+S Prosody, "
                                      f"{len(held)} held-out episodes")
    print(f"held-out ({len(held)} episodes, seeds 10000+i): success {before['success']:.3f} -> {after['success']:.3f} "
          f"({result['delta_success_points']:+.1f} points); premature closure {before['premature_closure']:.3f} -> "
          f"{after['premature_closure']:.3f}; mean reward {before['reward']:+.3f} -> {after['reward']:+.3f}")
    print(f"SFT {timings['sft_s']:.0f} s, GRPO {summary_grpo['steps']} steps {timings['grpo_s']:.0f} s "
          f"(mean step {summary_grpo['mean_step_time_s'] or float('nan'):.1f} s, K={args.k}); wrote {out}")
    return result


if __name__ == "__main__":
    main()
