"""Audio-LLM input building and generation with the tiny models, measured and printed.

    python benchmarks/audio_llm.py [--clips 16] [--threads 1]

1. ``build_audio_inputs`` (processor-free) against ``Qwen2AudioProcessor`` on
   the same real user turns (hibari): ms per clip (best of ``--repeats``),
   and equality of the inputs.
2. Placeholder tokens per second of audio.
3. Tiny Omni thinker: one batched ``generate`` for all clips vs one call per
   clip (greedy, 8 new tokens), and whether the texts agree.

The tiny models are random: the figures measure the plumbing around a model
(feature extraction, tokenization, padding), not a real model's speed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def real_clips(n: int) -> list:
    import gymnasium as gym

    import hear2act_env  # noqa: F401  (registers the env ids)

    env = gym.make("Hear2Act-Prosody-v5", access="A+T", disable_env_checker=True)
    clips, seed = [], 0
    while len(clips) < n:
        obs, _ = env.reset(seed=seed)
        clips.append(obs["audio"])
        seed += 1
    return clips


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def chat(clip) -> list[dict]:
    return [{"role": "system", "content": "You are a service assistant."},
            {"role": "user", "content": [{"type": "text", "text": "DIALOGUE TRANSCRIPT:\nUser: That could work."},
                                         {"type": "audio", "audio": clip, "sampling_rate": 16000}]}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--repeats", type=int, default=3, help="best of N for the input-building timings")
    args = ap.parse_args()
    import torch
    from transformers import Qwen2AudioProcessor

    from hear2act.agents.llm.audio_inputs import build_audio_inputs, load_audio_processing
    from hear2act.agents.llm.backend import GenerationRequest
    from hear2act.agents.llm.omni import OmniBackend
    from hear2act.agents.llm.tiny import build_tiny_omni, build_tiny_qwen2audio

    torch.set_num_threads(args.threads)
    clips = real_clips(args.clips)
    seconds = sum(c.size for c in clips) / 16000
    tmp = Path(tempfile.mkdtemp(prefix="h2a-audio-bench-"))
    p = load_audio_processing(build_tiny_qwen2audio(tmp / "q2a"))
    proc = Qwen2AudioProcessor(feature_extractor=p.feature_extractor, tokenizer=p.tokenizer,
                               chat_template=p.chat_template)
    messages = [chat(c) for c in clips]

    def ours_once():
        return build_audio_inputs(messages, p.tokenizer, p.feature_extractor, chat_template=p.chat_template)

    def ref_once():  # the processor path, chat template rendering included
        texts = [proc.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in messages]
        return proc(text=texts, audio=clips, sampling_rate=16000, return_tensors="pt", padding=True)

    p.tokenizer.padding_side = "left"
    ours, ref = ours_once(), ref_once()  # warm up both
    t_ours = best_of(ours_once, args.repeats)
    t_ref = best_of(ref_once, args.repeats)
    same = all(torch.equal(ours[k], ref[k]) for k in ("input_ids", "attention_mask", "feature_attention_mask"))
    n_audio = int((ours["input_ids"] == p.tokenizer.convert_tokens_to_ids(p.audio_token)).sum())
    print(f"{len(clips)} real user turns, {seconds:.1f} s of audio, torch threads {args.threads}")
    print(f"build_audio_inputs     {1000 * t_ours / len(clips):7.1f} ms/clip")
    print(f"Qwen2AudioProcessor    {1000 * t_ref / len(clips):7.1f} ms/clip   (inputs identical: {same})")
    print(f"placeholder tokens     {n_audio / seconds:7.1f} per second of audio")

    backend = OmniBackend(build_tiny_omni(tmp / "omni"), max_new_tokens=8)
    requests = [GenerationRequest(m, seed=i, key=f"e{i}/1") for i, m in enumerate(messages)]
    backend.generate(requests[:1])  # warm up
    t = time.perf_counter()
    together = backend.generate(requests)
    t_batch = time.perf_counter() - t
    backend.batch_size = 1
    t = time.perf_counter()
    alone = backend.generate(requests)
    t_single = time.perf_counter() - t
    agree = [a.text for a in together] == [b.text for b in alone]
    print(f"tiny Omni generate     batched {t_batch:.2f} s, one by one {t_single:.2f} s "
          f"({t_single / t_batch:.1f}x), texts identical: {agree}")


if __name__ == "__main__":
    main()
