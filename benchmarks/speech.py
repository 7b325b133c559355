"""Speech targets (issue 4), measured and printed.

    python benchmarks/speech.py [--quick]

1. Rendering speed of the default renderer: x realtime on one core
   (target >= 50x), and the second renderer for reference.
2. A cached audio observation: ms per read from the disk cache and from
   memory (target <= 1 ms).
3. Perceiver accuracy on resolved vs unresolved for turns with the same
   words (assent pool), balanced: hibari (training renderer) and piper
   (other renderer). Target: the paper's human listeners' range, 0.85-0.95
   (above it would point to a shortcut; benchmarks/audio_probe.py checks for those).
4. The state-aware rule agent under Prosody-mediated responses with access
   T, T+S and T+S_hat over all 480 scenarios: share of the T+S success gain
   over T that T+S_hat recovers (target >= 90 %). T+affect for reference.

``--quick`` uses fewer clips and 96 scenarios (a smoke run, not the figures).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

SENTENCES = ("Okay, sounds good.", "That could work...", "It covers everything I need, but the fare is higher.",
             "No, that won't work. I really only have two hundred dollars for this ticket.")


def render_speed(name: str, repeats: int) -> float:
    from hear2act_env.speech.renderers import make_renderer

    r = make_renderer(name)
    r.render("Warm up.", "neutral", None, 0)
    audio = wall = 0.0
    for k in range(repeats):
        for i, text in enumerate(SENTENCES):
            t = time.perf_counter()
            w = r.render(text, ("hesitant", "warm", "flat", "firm")[i], None, 100 + k)
            wall += time.perf_counter() - t
            audio += len(w) / r.sample_rate
    return audio / wall


def cached_read_ms(n: int = 200) -> tuple[float, float]:
    """ms per cached observation: from disk (no memory tier), then from the memory tier."""
    from hear2act_env.speech.cache import AudioCache
    from hear2act_env.speech.renderers import make_renderer

    keys = [(SENTENCES[i % 4], "warm", i) for i in range(20)]

    def ms_per_read(cache: AudioCache) -> float:
        for k in keys:  # fill (render or load) before timing
            cache.get(*k)
        t = time.perf_counter()
        for i in range(n):
            cache.get(*keys[i % len(keys)])
        return (time.perf_counter() - t) / n * 1000

    with tempfile.TemporaryDirectory() as root:
        renderer = make_renderer("hibari")
        disk = ms_per_read(AudioCache(renderer, root, memory_items=0))
        memory = ms_per_read(AudioCache(renderer, root, memory_items=64))
    return disk, memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"1. rendering speed, one core: hibari {render_speed('hibari', 1 if args.quick else 5):.0f}x realtime "
          "(target >= 50x)", flush=True)
    print(f"   piper (second renderer, WORLD prosody): {render_speed('piper', 1):.2f}x realtime", flush=True)
    disk, memory = cached_read_ms()
    print(f"2. cached audio observation: {disk:.3f} ms from disk, {memory:.4f} ms from memory (target <= 1 ms)",
          flush=True)

    from hear2act.eval.perception import balanced_sample, collect_turns, evaluate

    n = 40 if args.quick else 200
    turns = collect_turns()
    # piper renders at ~0.2x realtime, so it gets half the clips.
    for name, k in (("hibari", n), ("piper", n // 2)):
        r = evaluate(balanced_sample(turns, k, seed=0, same_words=True), name)
        print(f"3. perceiver, same words, {name}: {r['overall']:.3f} on {r['n']} balanced clips "
              f"(resolved {r['resolved']:.2f}, unresolved {r['unresolved']:.2f}; target 0.85-0.95)", flush=True)

    from hear2act.eval.metrics import summarize
    from hear2act.eval.rollout import run_condition
    from hear2act_env import load_scenarios

    ids = [s.id for s in load_scenarios()][:: 5 if args.quick else 1]
    success = {}
    for access in ("T", "T+S", "T+S_hat", "T+affect"):
        t = time.perf_counter()
        rows = list(run_condition("Hear2Act-Prosody-v5", "state-rule", access, scenario_ids=ids))
        success[access] = summarize(rows)["success"]
        print(f"4. state-rule, Prosody, {access:<8} success {success[access]:5.1f}% over {len(rows)} episodes "
              f"({time.perf_counter() - t:.0f}s)", flush=True)
    gain = success["T+S"] - success["T"]
    recovered = (success["T+S_hat"] - success["T"]) / gain if gain else float("nan")
    print(f"   T+S_hat recovers {100 * recovered:.1f}% of the T+S gain over T (target >= 90%)")


if __name__ == "__main__":
    main()
