"""Does a step take longer on the gold than on a wrong option? (PROTOCOL.md: nothing observable
varies with the hidden state, step time included.)

``python benchmarks/step_time_by_role.py`` recommends each option of every scenario once per
repeat and prints the step time per role, plus how well step time alone separates resolved
from unresolved reactions among the turns whose Prosody words are the shared assent (gold,
unmet L2/L3): a threshold fit on even scenarios, balanced accuracy on odd ones (0.5 = chance).
"""

from __future__ import annotations

import time
from collections import defaultdict

import gymnasium as gym

from hear2act_env.dialogue.actions import format_action
from hear2act_env.dialogue.engine import assess


def main(repeats: int = 3, every: int = 4) -> None:
    env = gym.make("Hear2Act-Prosody-v5", disable_env_checker=True).unwrapped
    times: dict[str, list[float]] = defaultdict(list)
    labelled: dict[int, list[tuple[float, bool]]] = {0: [], 1: []}
    for k, s in enumerate(env.scenarios[::every]):
        for _ in range(repeats):
            for o in s.options:
                env.reset(seed=0, options={"scenario_id": s.id})
                action = format_action("recommend", "This one?", o.number)
                t0 = time.perf_counter()
                _, _, _, _, info = env.step(action)
                dt = time.perf_counter() - t0
                times[s.role(o.number) if not s.role(o.number).startswith("pattern") else "other"].append(dt)
                if assess(s, o.number).issue in ("none", "L2", "L3"):  # same words under Prosody
                    labelled[k % 2].append((dt, info["state"] == "resolved"))
    for role, ts in sorted(times.items()):
        ts.sort()
        median, mean = 1e6 * ts[len(ts) // 2], 1e6 * sum(ts) / len(ts)
        print(f"{role:<18} median {median:7.1f} us  mean {mean:7.1f} us  n={len(ts)}")
    threshold = _fit(labelled[0])
    test = labelled[1]
    pos = [dt for dt, r in test if r]
    neg = [dt for dt, r in test if not r]
    acc = 0.5 * (sum(dt < threshold for dt in pos) / len(pos) + sum(dt >= threshold for dt in neg) / len(neg))
    print(f"step time alone, resolved vs unresolved (same words): held-out balanced accuracy "
          f"{max(acc, 1 - acc):.3f} over {len(test)} turns (0.5 = chance)")


def _fit(data: list[tuple[float, bool]]) -> float:
    """The threshold ("faster than t -> resolved") with the best balanced accuracy on ``data``."""
    data = sorted(data)
    pos = sum(r for _, r in data)
    neg = len(data) - pos
    best, best_t, tp, fp = -1.0, data[0][0], 0, 0
    for dt, resolved in data:
        tp += resolved
        fp += not resolved
        acc = 0.5 * (tp / pos + (neg - fp) / neg)
        if acc > best:
            best, best_t = acc, dt
    return best_t + 1e-12

if __name__ == "__main__":
    main()
