"""Before/after held-out success of ``benchmarks/grpo_learning.py`` runs, replayed from their checkpoints, with
paired bootstrap intervals per seed and pooled over seeds.

    python benchmarks/grpo_heldout_ci.py runs/grpo-seed0 runs/grpo-seed1 ...

For each run directory it loads the warm start (``RUN/sft``) and the trained policy (``RUN/grpo``), replays the
run's held-out episodes with the exact settings it recorded (``RUN/grpo_learning.json``: ids, episode seeds,
decoding temperature, the reward GRPO scored with) through ``hf:``'s stack
(:func:`hear2act.training.episode_rollout.evaluate_model`), and checks the replay against the figures the run
printed (its history's first and last rows; a mismatch is printed, not hidden). Then per run the success delta
with a paired bootstrap 95% interval over the held-out scenarios, and over all runs together the mean delta with
an interval that resamples the same scenarios for every seed (:func:`hear2act.eval.stats.paired_interval`).
Prints a Markdown table. ``--json PATH`` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEYS = ("success", "premature_closure", "reward", "confirm_if_resolved", "confirm_if_unresolved")


def replay(run: Path) -> dict:
    """The run's held-out episodes replayed from its two checkpoints, and whether they match its record."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hear2act.training.episode_rollout import evaluate_model
    from hear2act.training.episodes import EpisodeReward
    from hear2act.training.grpo import DEFAULT_PROCESS_WEIGHTS, Hear2ActArgs

    record = json.loads((run / "grpo_learning.json").read_text(encoding="utf-8"))
    args = record["args"]
    # The reward the run's held-out evaluation scored with: hear2act.training.grpo's, from the flags it was given.
    reward = EpisodeReward.from_args(Hear2ActArgs(
        turn_cost=args["turn_cost"], failure_cost=args["failure_cost"], fit_credit=args["fit_credit"],
        invalid_cost=args["invalid_cost"], process_weights=args["process_weights"] or DEFAULT_PROCESS_WEIGHTS))
    torch.set_num_threads(int(args.get("threads", 1)))
    out = {"run": str(run), "seed": record["seed"], "versions": record.get("versions", {})}
    for name, want in (("sft", record["history"][0]), ("grpo", record["history"][-1])):
        path = run / name
        model = AutoModelForCausalLM.from_pretrained(path).eval()
        tok = AutoTokenizer.from_pretrained(path)
        got = evaluate_model(model, tok, record["held_out_ids"], access="T+S", reasoning=False,
                             max_new_tokens=args["max_new_tokens"], seed=record["eval_seed"], reward=reward,
                             temperature=record["eval_temperature"])
        out[name] = got
        out[f"{name}_matches_record"] = all(abs(got[k] - want[k]) < 1e-9 for k in KEYS
                                            if want.get(k) == want.get(k))  # NaN == NaN is False: skipped
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="grpo_learning.py output directories")
    p.add_argument("--json", default="", help="also write the figures here")
    args = p.parse_args(argv)

    from hear2act.eval.stats import paired_interval

    rows = [replay(Path(r)) for r in args.runs]
    print("| seed | held-out success before -> after | delta (points) | paired 95% CI | P(confirm \\| resolved / "
          "unresolved), before -> after | premature closure | replay = record |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        b, a = r["sft"], r["grpo"]
        d, lo, hi = paired_interval(b["success_by_episode"], a["success_by_episode"])
        r["delta_ci95_points"] = [100 * d, 100 * lo, 100 * hi]
        same = "yes" if r["sft_matches_record"] and r["grpo_matches_record"] else "NO"
        print(f"| {r['seed']} | {b['success']:.3f} -> {a['success']:.3f} | {100 * d:+.1f} | [{100 * lo:+.1f}, "
              f"{100 * hi:+.1f}] | {b['confirm_if_resolved']:.2f} / {b['confirm_if_unresolved']:.2f} -> "
              f"{a['confirm_if_resolved']:.2f} / {a['confirm_if_unresolved']:.2f} | {b['premature_closure']:.3f} -> "
              f"{a['premature_closure']:.3f} | {same} |")
    pooled = None
    if len({len(r["sft"]["success_by_episode"]) for r in rows}) == 1:
        d, lo, hi = paired_interval([r["sft"]["success_by_episode"] for r in rows],
                                    [r["grpo"]["success_by_episode"] for r in rows])
        pooled = [100 * d, 100 * lo, 100 * hi]
        print(f"\n{len(rows)} seeds: mean delta {100 * d:+.1f} points, 95% CI [{100 * lo:+.1f}, {100 * hi:+.1f}] "
              f"(scenarios resampled jointly); seeds at or above +15: "
              f"{sum(r['delta_ci95_points'][0] >= 15 for r in rows)} of {len(rows)}; "
              f"lower CI bound above 0: {sum(r['delta_ci95_points'][1] > 0 for r in rows)} of {len(rows)}")
    result = {"runs": rows, "pooled_delta_ci95_points": pooled}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
