"""Cutting prompts to a windowed model's receptive field: time and replies of held-out episodes, cut vs whole.

    python benchmarks/window_clip.py                      # builds the windowed tiny LM (untrained) in a temp dir
    python benchmarks/window_clip.py --model runs/grpo-learning/sft --episodes 40

Plays the same held-out episodes (``hear2act.training.episode_rollout.evaluate_model``, T+S Prosody, seeds
10000 + i) through ``HFBackend`` twice: with the prompt cut to :func:`hear2act.agents.llm.window.receptive_field`
(what ``hf:`` does) and with the whole prompt (``field = None``: the backend before the cut). Prints the prompt
tokens each way, the wall time of each pass, and how many episodes' every reply differs (the cut is exact up to
float rounding, so 0 is expected). Timings are printed, never asserted; run both passes in one process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--model", default="", help="a windowed checkpoint (default: build the tiny LM, window 64)")
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--temperature", type=float, default=1.0)
    args = p.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.policy import ModelPolicy
    from hear2act.agents.llm.tiny import build_tiny_causal_lm
    from hear2act.agents.llm.window import model_field
    from hear2act.training.episodes import EpisodeReward, play, summarize
    from hear2act.training.splits import bundled_split, eval_ids

    torch.set_num_threads(args.threads)
    path = args.model or str(build_tiny_causal_lm(Path(tempfile.mkdtemp()) / "lm", seed=0, hidden_size=64,
                                                  num_layers=2, sliding_window=64))
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    tok = AutoTokenizer.from_pretrained(path)
    field = model_field(model)
    if field is None:
        raise SystemExit(f"{path}: not windowed on every layer; nothing is cut")
    ids = eval_ids(bundled_split())[:args.episodes]
    rows, wall, stats = {}, {}, {}
    for name in ("whole", "cut"):
        backend = HFBackend("in-memory", model=model, tokenizer=tok, max_new_tokens=16,
                            temperature=args.temperature, device="cpu")
        if name == "whole":
            backend.field = None  # the backend before the cut
        t = time.perf_counter()
        rows[name] = play(ModelPolicy(backend, access="T+S", reasoning=False), ids, access="T+S", seed=10_000,
                          config=EpisodeReward())
        wall[name], stats[name] = time.perf_counter() - t, backend.stats
    differ = sum([t.raw for t in a["records"]] != [t.raw for t in b["records"]]
                 for a, b in zip(rows["whole"], rows["cut"], strict=True))
    for name in ("whole", "cut"):
        s = stats[name]
        print(f"{name:5s}: {wall[name]:.1f} s for {len(ids)} episodes, {s['prompt_tokens']} prompt tokens "
              f"({s['prompt_tokens'] / max(s['rows'], 1):.0f} a turn), success {summarize(rows[name])['success']:.3f}")
    print(f"field {field} tokens; speed-up {wall['whole'] / wall['cut']:.2f}x; "
          f"episodes whose replies differ: {differ} of {len(ids)}")
    return {"field": field, "differ": differ, **wall}


if __name__ == "__main__":
    main()
