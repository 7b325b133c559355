"""Can imitation make the tiny LM's CONFIRM depend on the state tag? P(CONFIRM | tag) along a plain SFT loop.

    nice -n 10 python benchmarks/sft_tag_probe.py                      # the decisions as played
    nice -n 10 python benchmarks/sft_tag_probe.py --resolved-share 0.5  # resolved decisions at half the rows
    nice -n 10 python benchmarks/sft_tag_probe.py --window 64 --seed 1  # as played, a 64-token window per layer

The student is the tiny LM of ``benchmarks/grpo_learning.py`` (same BPE, same one-token action tags; full
attention unless ``--window``, where the recipe now uses a 64-token window), the
teacher ``explore-tag`` (CONFIRM after every resolved reaction, never after an unresolved one). Every
``--every`` steps it prints the student's probability of the ``[ACTION: CONFIRM]`` token as the first answer
token, averaged over held-out decision prompts under each tag (the teacher's own states on held-out scenarios,
:func:`hear2act.training.splits.eval_ids`). A student that reads the tag moves the two apart; one that learns
only how often CONFIRM occurs keeps them equal.

The loop is a plain AdamW loop on the answer tokens (what ``python -m hear2act.training.sft`` trains, without
TRL's bookkeeping), so that a checkpoint's probabilities can be read every few steps. Figures: docs/training.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--out", default="runs/sft-tag-probe", help="where the tiny LM is built")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--teacher", default="explore-tag")
    p.add_argument("--scenarios", type=int, default=160, help="training-split scenarios the teacher plays")
    p.add_argument("--resolved-share", type=float, default=0.0, help="hear2act.training.sft.balance_tags")
    p.add_argument("--steps", type=int, default=240)
    p.add_argument("--window", type=int, default=0, help="tiny LM sliding attention window (0: full attention)")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--schedule", default="constant", choices=("constant", "linear"), help="learning rate: constant "
                   "(what benchmarks/grpo_learning.py's SFT used until the decay) or linear decay to 0 over --steps")
    p.add_argument("--every", type=int, default=40)
    p.add_argument("--probe-prompts", type=int, default=30, help="held-out prompts per tag")
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    args = _args(argv)
    import torch
    from grpo_learning import ACTION_TOKENS, _tokenizer_corpus
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hear2act.agents.llm.tiny import build_tiny_causal_lm
    from hear2act.training.grpo_data import default_episodes
    from hear2act.training.sft import balance_tags, sft_rows
    from hear2act.training.splits import bundled_split, eval_ids

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    path = build_tiny_causal_lm(Path(args.out) / "base", seed=args.seed, hidden_size=args.hidden,
                                num_layers=args.layers, extra_corpus=_tokenizer_corpus(args.teacher),
                                added_tokens=ACTION_TOKENS, sliding_window=args.window)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    confirm = tok.convert_tokens_to_ids("[ACTION: CONFIRM]")

    def encode(row: dict) -> tuple[list[int], list[int]]:
        prompt = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        answer = row["completion"][0]["content"] + tok.eos_token
        return (tok(prompt, add_special_tokens=False)["input_ids"],
                tok(answer, add_special_tokens=False)["input_ids"])

    rows = balance_tags(sft_rows(default_episodes(args.scenarios, 0), teachers=(args.teacher,)), args.resolved_share)
    data = [encode(r) for r in rows]
    held = eval_ids(bundled_split())
    probe_rows = sft_rows([(sid, 10_000 + i) for i, sid in enumerate(held)], teachers=("explore-tag",))
    probe: dict[str, list[list[int]]] = {"resolved": [], "unresolved": []}
    for r in probe_rows:
        if r["tag"] in probe and len(probe[r["tag"]]) < args.probe_prompts:
            probe[r["tag"]].append(encode(r)[0])
    print(f"{len(rows)} SFT rows, {sum(r['tag'] == 'resolved' for r in rows)} under a resolved tag; probe prompts "
          f"{len(probe['resolved'])} resolved / {len(probe['unresolved'])} unresolved")

    def p_confirm() -> dict[str, float]:
        model.eval()
        with torch.no_grad():
            out = {tag: sum(torch.softmax(model(torch.tensor([ids])).logits[0, -1], -1)[confirm].item()
                            for ids in prompts) / max(1, len(prompts)) for tag, prompts in probe.items()}
        model.train()
        return out

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    decay = (lambda step: 1.0 - step / args.steps) if args.schedule == "linear" else (lambda step: 1.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, decay)
    rng = random.Random(args.seed)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    history = []
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        batch = [data[rng.randrange(len(data))] for _ in range(args.batch)]
        width = max(len(p) + len(c) for p, c in batch)
        ids = torch.full((len(batch), width), pad)
        labels = torch.full((len(batch), width), -100)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (p, c) in enumerate(batch):
            ids[i, :len(p) + len(c)] = torch.tensor(p + c)
            mask[i, :len(p) + len(c)] = 1
            labels[i, len(p):len(p) + len(c)] = torch.tensor(c)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % args.every == 0 or step == args.steps:
            pc = p_confirm()
            history.append({"step": step, "loss": loss.item(), **pc})
            print(f"step {step}: loss {loss.item():.3f}, P(CONFIRM | resolved) {pc['resolved']:.4f}, "
                  f"P(CONFIRM | unresolved) {pc['unresolved']:.4f} "
                  f"({(time.perf_counter() - start) / step:.2f} s/step)", flush=True)
    return history


if __name__ == "__main__":
    main()
