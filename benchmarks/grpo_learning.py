"""Does GRPO learn the task? SFT warm start, then whole-episode GRPO under T+S (Prosody), on held-out scenarios.

    nice -n 10 python benchmarks/grpo_learning.py --out runs/grpo-learning

Recipe (every number is a flag; the defaults are the CPU budget, seed 0):

1. build a tiny causal LM locally (:func:`hear2act.agents.llm.tiny.build_tiny_causal_lm`, hidden 64, 2 layers, a
   64-token sliding attention window on every layer; no downloads) whose BPE also learns from the teacher's
   replies and prompts, or take ``--model DIR``. The window is what lets so small a model condition its answer
   on the state tag, 20-40 tokens before it, rather than on a 1,300-token prompt: with full attention
   (``--window 0``) it learned how often CONFIRM occurs and not when (``benchmarks/sft_tag_probe.py``). It also
   makes the model cheap: it sees only the prompt's last 2 x 63 + 1 = 127 tokens, and ``hf:`` and the rollout cut
   every prompt to them (:mod:`hear2act.agents.llm.window`; the same replies, ``benchmarks/window_clip.py``), so a
   GRPO step of 32 episodes takes about 2-3 s instead of 13 s for 16;
2. ``python -m hear2act.training.sft``: imitate the **tag-blind teacher** ``explore``
   (:class:`hear2act.training.episodes.ExploringAgent`: after each reaction it CONFIRMs with probability 0.5,
   else RECOMMENDs a random other option; the tag changes nothing it does) on the training split, decisions as
   played. SFT teaches the ``[ACTION: ...]`` format and the search, not the decision the benchmark is about:
   the warm start confirms about as often under either tag;
3. ``python -m hear2act.training.grpo --mode episode``: K = 8 whole on-policy episodes per start, 4 starts per step,
   96 steps; episode reward (success - 0.01/turn + process terms; a failed episode is charged the whole horizon,
   ``--failure-cost horizon``). Each sample trains the decision that decided its episode (``--turn-sampling
   pivotal``, :func:`hear2act.training.episode_rollout.pivotal_turn`): the CONFIRM that closed it; in a failed
   episode, its first answer the parser cannot read (charged ``--invalid-cost 0.05``); in an episode that ran out of
   turns, its **first decision against the state tag** (a satisfied user passed by, or a CONFIRM under an unresolved
   tag that the user refused). An episode with no such decision trains nothing, and the group's baseline is its
   trained episodes' mean. So a CONFIRM under a resolved tag is pushed up, one under an unresolved tag down, passing
   by a satisfied user down, and unreadable answers down: whether GRPO learns to hear the user is whether P(confirm
   | unresolved) falls while P(confirm | resolved) does not. A KL penalty to the SFT model (``--beta 0.1``) keeps
   the policy from drifting to never confirming (docs/training.md). With the env's own return (failures charged the
   turns they used) a tag-blind policy gains reward by closing early as its success falls
   (``benchmarks/grpo_reward_landscape.py``), hence the horizon charge. Each step prints the rollouts' ``P(confirm |
   resolved)``, ``P(confirm | unresolved)`` and the advantage of the trained turns; the tag-reading teacher
   ``explore-tag`` is printed as the ceiling;
4. print held-out success, premature closure, mean episode reward and invalid-action rate before (= after
   SFT) and after GRPO, on the same held-out scenarios and seeds (all 160 of
   :func:`hear2act.training.splits.eval_ids`, ``--eval-stride 1``, episode seeds 10000 + i), decoded with
   ``--eval-temperature`` (default 1: sampled, seeded by episode and turn -- what ``hear2act rollout --agent
   hf:OUT/grpo --access T+S --temperature 1`` runs on the same ids), and write the curve to
   ``docs/figures/grpo_learning_curve.png``.

Seeds 0-7 (env -v3, docs/training.md "GRPO learns on every seed"): held-out success (160 scenarios) 0.188 -> 0.656
(+46.9), 0.181 -> 0.656 (+47.5), 0.175 -> 0.581 (+40.6), 0.138 -> 0.350 (+21.2), 0.181 -> 0.388 (+20.6), 0.175 ->
0.756 (+58.1), 0.194 -> 0.619 (+42.5), 0.212 -> 0.406 (+19.4): the +15-point target on 8 seeds of 8, every paired
95% interval above 0, mean +37.1 [+32.5, +41.7]. P(confirm | unresolved) falls to 0.00-0.07 while P(confirm |
resolved) rises. ``benchmarks/grpo_heldout_ci.py RUN ...`` replays the checkpoints and prints the intervals. The
recipe before (48 steps of K = 8 x 2 on 40 held-out episodes, ``decisive`` turns, prompts not cut) met the target on
2 seeds of 5 (+20.0 / -5.0 / +40.0 / -7.5 / +0.0).

The measured figures are in docs/training.md. Timing and the load average are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--out", default="runs/grpo-learning")
    p.add_argument("--model", default="", help="start from this checkpoint (default: build the tiny LM)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=64, help="tiny LM hidden size")
    p.add_argument("--layers", type=int, default=2, help="tiny LM layers")
    p.add_argument("--window", type=int, default=64, help="tiny LM sliding attention window, every layer (0: full "
                   "attention)")
    p.add_argument("--teacher", default="explore", help="SFT teacher(s), a comma list "
                   "(hear2act.training.episodes.make_reference)")
    p.add_argument("--sft-scenarios", type=int, default=160, help="training-split scenarios the teacher plays")
    p.add_argument("--sft-steps", type=int, default=240)
    p.add_argument("--sft-lr", type=float, default=3e-3)
    p.add_argument("--sft-batch", type=int, default=4)
    p.add_argument("--sft-resolved-share", type=float, default=0.0, help="SFT rows under a resolved tag repeated to "
                   "this share (hear2act.training.sft.balance_tags; 0: as played)")
    p.add_argument("--sft-contrast", action="store_true", help="SFT: also repeat the unresolved decisions after "
                   "words of assent to as many as the resolved ones (hear2act.training.sft --contrast_assent)")
    p.add_argument("--grpo-steps", type=int, default=96)
    p.add_argument("--grpo-scenarios", type=int, default=120)
    p.add_argument("--grpo-lr", type=float, default=1e-3)
    p.add_argument("--beta", type=float, default=0.1, help="GRPOConfig.beta: KL penalty to the SFT model (0: none)")
    p.add_argument("--k", type=int, default=8, help="episodes per group (num_generations)")
    p.add_argument("--groups", type=int, default=4, help="groups (episode starts) per GRPO step")
    p.add_argument("--turn-cost", type=float, default=0.01, help="episode reward: cost per assistant turn")
    p.add_argument("--failure-cost", default="horizon", help="episode reward: turns a failed episode is charged: "
                   "horizon (all 20: closing early on a failure saves nothing) or turns (the env's own return)")
    p.add_argument("--fit-credit", type=float, default=0.0, help="episode reward: a failed episode closed by CONFIRM "
                   "earns this x the confirmed option's need fit (0: off; see training/episodes.py)")
    p.add_argument("--invalid-cost", type=float, default=0.05, help="episode reward: charged once to an episode with "
                   "an answer that is not a valid action (0: off)")
    p.add_argument("--rollout-temperature", type=float, default=1.0, help="GRPOConfig.temperature: sampling "
                   "temperature of the training episodes (and of the logprobs GRPO computes)")
    p.add_argument("--reuse-sft", action="store_true", help="keep OUT/sft if it is there (diagnostic runs)")
    p.add_argument("--scale-rewards", default="none", help="GRPOConfig.scale_rewards: none (advantage = reward - "
                   "group mean) or group (divided by the group's std, which blows up an all-fail group's noise)")
    p.add_argument("--process-weights", default="", help="GRPO process-term weights (term=w,...; default: "
                   "hear2act.training.grpo's)")
    p.add_argument("--turn-sampling", default="pivotal", help="uniform, last, closing, decisive, pivotal or branch "
                   "(hear2act.training.episode_rollout)")
    p.add_argument("--branch-prefixes", type=int, default=1, help="--turn-sampling branch: prefix episodes per group "
                   "(one is branched from: one with a resolved decision, and then a resolved turn of it, half the "
                   "time)")
    p.add_argument("--max-new-tokens", type=int, default=16)
    p.add_argument("--eval-stride", type=int, default=1, help="every N-th held-out id (1: all 160 held-out "
                   "scenarios, one episode each)")
    p.add_argument("--eval-every", type=int, default=12)
    p.add_argument("--eval-temperature", type=float, default=1.0, help="0: greedy held-out decoding")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on a shared 2-core box)")
    p.add_argument("--figure", default=str(ROOT / "docs" / "figures" / "grpo_learning_curve.png"))
    return p.parse_args(argv)


# One token per action tag and per option tag: the tiny LM's decision is then one token (which action, which
# option) instead of a position inside a dozen punctuation tokens it confuses after a few dozen SFT steps; and one
# token for each value of the state tag.
ACTION_TOKENS = ("[ACTION: RECOMMEND]", "[ACTION: ASK]", "[ACTION: CONFIRM]", "[ACTION: CLARIFY]",
                 *(f"[OPTION: {n}]" for n in range(1, 12)), "(resolved)", "(unresolved)")


class LoadMonitor:
    """The 1-minute load average, sampled every ``every`` seconds in a daemon thread."""

    def __init__(self, every: float = 20.0) -> None:
        self.samples: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> dict[str, float]:
        self._stop.set()
        s = [*self.samples, os.getloadavg()[0]]
        return {"min": min(s), "mean": sum(s) / len(s), "max": max(s), "samples": len(s)}


def _tokenizer_corpus(teacher: str, n: int = 40) -> list[str]:
    """The teacher's replies and prompts on ``n`` training scenarios: texts the tiny LM's BPE learns merges from."""
    from hear2act.training.grpo_data import default_episodes
    from hear2act.training.sft import parse_teachers, sft_rows

    rows = sft_rows(default_episodes(n, 0), teachers=parse_teachers(teacher))
    return [m["content"] for r in rows[:200] for m in r["prompt"]] + [r["completion"][0]["content"] for r in rows]


def _versions() -> dict[str, str]:
    """The versions the figures depend on (the numerics move with torch and transformers; constraints.txt)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "trl", "accelerate", "tokenizers", "numpy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def _reference(name: str, ids: list[str], seed: int, turn_cost: float, failure_cost: str) -> dict[str, float]:
    from hear2act.training.episodes import AgentPolicy, EpisodeReward, make_reference, play, summarize
    from hear2act_env import load_scenarios

    bank = load_scenarios()
    return summarize(play(AgentPolicy(lambda: make_reference(name, bank), reasoning=False), ids, access="T+S",
                          seed=seed, config=EpisodeReward(turn_cost=turn_cost, failure_cost=failure_cost)))


def _title(args: argparse.Namespace, held: int) -> str:
    """The curve's title: the recipe in two lines (model and warm start; GRPO and the evaluation)."""
    window = f", window {args.window}" if args.window else ""
    return (f"seed {args.seed}: tiny LM (hidden {args.hidden}{window}), SFT {args.sft_steps} steps on {args.teacher}\n"
            f"GRPO K={args.k} x {args.groups}, {args.turn_sampling} turns; T+S Prosody, {held} held-out episodes, "
            f"T={args.eval_temperature:g}")


def _plot(history: list[dict], path: Path, title: str, ceiling: dict[str, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.plot(steps, [h["success"] for h in history], "o-", label="held-out success")
    ax.plot(steps, [h["premature_closure"] for h in history], "s--", label="premature closure")
    ax.plot(steps, [h["reward"] for h in history], "^:", label="mean episode reward")
    for key, style, label in (("confirm_if_resolved", "c-", "P(confirm | resolved)"),
                              ("confirm_if_unresolved", "r-", "P(confirm | unresolved)")):
        ax.plot(steps, [h[key] for h in history], style, lw=0.8, alpha=0.7, label=label)
    ax.axhline(ceiling["success"], color="grey", lw=0.8, ls="-.", label="tag-reading teacher's success")
    ax.set_xlabel("GRPO step")
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=6.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> dict:
    args = _args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from hear2act.agents.llm.tiny import build_tiny_causal_lm
    from hear2act.eval.stats import paired_interval, part_gains
    from hear2act.training import grpo, sft
    from hear2act.training.splits import bundled_split, eval_ids, part_of

    load = LoadMonitor()
    start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    split = bundled_split()
    held = eval_ids(split)[::args.eval_stride]
    refs = {name: _reference(name, held, 10_000, args.turn_cost, args.failure_cost)
            for name in dict.fromkeys((*sft.parse_teachers(args.teacher), "explore-tag", "stall", "confirm"))}
    timings: dict[str, float] = {}
    t = time.perf_counter()
    reuse = args.reuse_sft and (out / "sft" / "config.json").is_file()
    if reuse:
        summary_sft: dict = {"reused": str(out / "sft")}
    else:
        base = args.model or str(build_tiny_causal_lm(out / "base", seed=args.seed, hidden_size=args.hidden,
                                                      num_layers=args.layers,
                                                      extra_corpus=_tokenizer_corpus(args.teacher),
                                                      added_tokens=ACTION_TOKENS, sliding_window=args.window))
        summary_sft = sft.main(["--model", base, "--output_dir", str(out / "sft"), "--access", "T+S",
                                "--teachers", args.teacher, "--n_scenarios", str(args.sft_scenarios),
                                "--max_steps", str(args.sft_steps), "--learning_rate", str(args.sft_lr),
                                "--per_device_train_batch_size", str(args.sft_batch), "--seed", str(args.seed),
                                "--resolved_share", str(args.sft_resolved_share),
                                "--contrast_assent", str(args.sft_contrast).lower(),
                                "--logging_steps", "10", "--lr_scheduler_type", "constant_with_warmup",
                                "--warmup_steps", "3", "--gradient_checkpointing", "false"])
    timings["sft_s"] = time.perf_counter() - t
    t = time.perf_counter()
    batch = args.k * args.groups
    grpo_argv = ["--model", str(out / "sft"), "--mode", "episode", "--access", "T+S", "--reasoning", "false",
                 "--output_dir", str(out / "grpo"), "--n_scenarios", str(args.grpo_scenarios),
                 "--num_generations", str(args.k), "--per_device_train_batch_size", str(batch),
                 "--global_batch", str(batch), "--max_steps", str(args.grpo_steps),
                 "--max_completion_length", str(args.max_new_tokens), "--learning_rate", str(args.grpo_lr),
                 "--lr_scheduler_type", "constant", "--seed", str(args.seed), "--eval_every", str(args.eval_every),
                 "--eval_stride", str(args.eval_stride), "--eval_temperature", str(args.eval_temperature),
                 "--logging_steps", "1", "--save_strategy", "no", "--gradient_checkpointing", "false",
                 "--turn_cost", str(args.turn_cost), "--turn_sampling", args.turn_sampling,
                 "--scale_rewards", args.scale_rewards, "--failure_cost", args.failure_cost,
                 "--branch_prefixes", str(args.branch_prefixes), "--beta", str(args.beta),
                 "--fit_credit", str(args.fit_credit), "--invalid_cost", str(args.invalid_cost),
                 "--temperature", str(args.rollout_temperature)]
    if args.process_weights:
        grpo_argv += ["--process_weights", args.process_weights]
    summary_grpo = grpo.main(grpo_argv)
    timings["grpo_s"] = time.perf_counter() - t
    timings["total_s"] = time.perf_counter() - start
    history = json.loads((out / "grpo" / "heldout_eval.json").read_text())["history"]
    before, after = history[0], history[-1]
    load_avg = load.stop()
    result = {"versions": _versions(), "held_out_ids": held, "eval_seed": 10_000,
              "eval_temperature": args.eval_temperature,
              "seed": args.seed, "args": vars(args), "references": refs, "sft": summary_sft,
              "grpo_steps": summary_grpo["steps"], "grpo_mean_step_s": summary_grpo["mean_step_time_s"],
              "before": before, "after": after, "history": history, "timings_s": timings, "load_average": load_avg,
              "delta_success_points": 100 * (after["success"] - before["success"])}
    _, low, high = paired_interval(before["success_by_episode"], after["success_by_episode"])
    result["delta_success_ci95_points"] = [100 * low, 100 * high]
    # Gains on unseen domains vs unseen scenarios of trained domains: a policy that learned the trained domains'
    # content (benchmarks/options_siblings_anatomy.py) instead of asking gains more on the second.
    held_parts = [part_of(split)[i] for i in held]
    result["by_split"] = part_gains(held_parts, [before["success_by_episode"]], [after["success_by_episode"]]) \
        if len(set(held_parts)) == 2 else None  # an --eval-stride that keeps one part only
    (out / "grpo_learning.json").write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    _plot(history, Path(args.figure), _title(args, len(held)), refs["explore-tag"])
    for name, ref in refs.items():
        print(f"reference {name}: success {ref['success']:.3f}, premature closure {ref['premature_closure']:.3f}, "
              f"reward {ref['reward']:+.3f}")
    print(f"held-out ({len(held)} episodes, seeds 10000+i, T={args.eval_temperature:g}): success "
          f"{before['success']:.3f} -> {after['success']:.3f} ({result['delta_success_points']:+.1f} points, "
          f"paired bootstrap 95% CI [{100 * low:+.1f}, {100 * high:+.1f}]); "
          f"P(confirm|resolved) {before['confirm_if_resolved']:.2f} -> {after['confirm_if_resolved']:.2f}, "
          f"P(confirm|unresolved) {before['confirm_if_unresolved']:.2f} -> {after['confirm_if_unresolved']:.2f}; "
          f"premature closure {before['premature_closure']:.3f} -> {after['premature_closure']:.3f}; mean reward "
          f"{before['reward']:+.3f} -> {after['reward']:+.3f}; invalid actions {before['invalid_rate']:.3f} -> "
          f"{after['invalid_rate']:.3f}")
    by = result["by_split"]
    if by:
        cells = [f"{part} ({by[part]['n']}) {by[part]['before']:.3f} -> {by[part]['after']:.3f}, "
                 + "{:+.1f} [{:+.1f}, {:+.1f}]".format(*(100 * x for x in by[part]["gain_ci95"]))
                 for part in ("unseen_domain", "unseen_scenario")]
        print("held-out gain by part: " + "; ".join(cells)
              + "; gap {:+.1f} [{:+.1f}, {:+.1f}]".format(*(100 * x for x in by["gap_ci95"])))
    print(f"SFT {timings['sft_s']:.0f} s, GRPO {summary_grpo['steps']} steps {timings['grpo_s']:.0f} s "
          f"(mean step {summary_grpo['mean_step_time_s'] or float('nan'):.1f} s, K={args.k} x {args.groups}); "
          f"total {timings['total_s']:.0f} s; load average {load_avg['min']:.2f}-{load_avg['max']:.2f} "
          f"(mean {load_avg['mean']:.2f}, {os.cpu_count()} CPUs); wrote {out}")
    return result


if __name__ == "__main__":
    main()
