"""Environment throughput, side by side with Gymnasium's FrozenLake in one process.

    python benchmarks/env_throughput.py [--rounds 7] [--profile]

1. Load + validate the 480 scenarios (uncached).
2. Record the actions of the rule agents over all 960 base episodes (480
   scenarios x 2 realizations): the transcript-only rule agent under access
   ``T`` and the state-aware rule agent under ``T+S``.
3. Replay them, timing ``env.step`` and ``env.reset`` separately (agents are
   not timed), interleaved round by round with the same number of FrozenLake
   (``FrozenLake-v1``, unwrapped, no env checker) steps and seeded resets, so
   both see the same machine load. Per round the ratio of mean times is taken;
   the median over rounds is printed. Absolute microseconds are shown for
   orientation only: on a shared machine they drift, the ratios much less.

4. With the speech extra installed: the state-aware rule agent's episodes on
   the first ``--audio-scenarios`` Prosody scenarios under access ``A+T``
   (audio rendered once into ``$HEAR2ACT_CACHE``, then served from the memory
   cache) against the same episodes under ``T+S``, interleaved: the warm-cache
   audio step as a multiple of the text step.

Targets (issue 8): text step <= 2.5x FrozenLake's step, reset <= 3x; a
warm-cache audio step <= 2x a text step.
``--profile`` prints the top functions of a cProfile run of the replay.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import hear2act_env
from hear2act.agents import make_agent

CONDITIONS = (("transcript-rule", "T"), ("state-rule", "T+S"))
Episode = tuple[str, int, str, list[str]]  # env id, seed, scenario id, actions


def record(agent_name: str, access: str) -> list[Episode]:
    """The actions an agent takes in every base episode (replayed later without the agent)."""
    episodes: list[Episode] = []
    for env_id in hear2act_env.ENV_IDS:
        env = gym.make(env_id, access=access, disable_env_checker=True).unwrapped
        agent = make_agent(agent_name)
        for i, s in enumerate(env.scenarios):
            obs, info = env.reset(seed=i, options={"scenario_id": s.id})
            agent.reset(obs, info)
            actions, done = [], False
            while not done:
                actions.append(agent.act(obs))
                obs, _, term, trunc, _ = env.step(actions[-1])
                done = term or trunc
            episodes.append((env_id, i, s.id, actions))
    return episodes


def replay(envs: dict[str, Any], episodes: list[Episode]) -> tuple[float, int, float, int]:
    """(seconds in step, steps, seconds in reset, resets)."""
    clock = time.perf_counter
    step_s = reset_s = 0.0
    steps = 0
    for env_id, seed, sid, actions in episodes:
        env = envs[env_id]
        options = {"scenario_id": sid}
        t = clock()
        env.reset(seed=seed, options=options)
        reset_s += clock() - t
        step = env.step
        for action in actions:
            t = clock()
            step(action)
            step_s += clock() - t
        steps += len(actions)
    return step_s, steps, reset_s, len(episodes)


def frozen_lake(steps: int, resets: int) -> tuple[float, int, float, int]:
    """The same counts of FrozenLake steps (fixed action cycle, reset when done) and seeded resets."""
    env = gym.make("FrozenLake-v1", disable_env_checker=True).unwrapped
    clock = time.perf_counter
    env.reset(seed=0)
    step = env.step
    step_s = 0.0
    for i in range(steps):
        t = clock()
        _, _, term, trunc, _ = step(i % 4)
        step_s += clock() - t
        if term or trunc:
            env.reset()
    reset_s = 0.0
    for i in range(resets):
        t = clock()
        env.reset(seed=i)
        reset_s += clock() - t
    return step_s, steps, reset_s, resets


def measure(access: str, episodes: list[Episode], rounds: int) -> dict[str, float]:
    envs = {env_id: gym.make(env_id, access=access, disable_env_checker=True).unwrapped
            for env_id in hear2act_env.ENV_IDS}
    replay(envs, episodes)  # warm-up
    step_ratio, reset_ratio, ours_step, ours_reset, fl_step, fl_reset = [], [], [], [], [], []
    for _ in range(rounds):
        s, n, r, m = replay(envs, episodes)
        fs, fn, fr, fm = frozen_lake(n, m)
        ours_step.append(s / n)
        ours_reset.append(r / m)
        fl_step.append(fs / fn)
        fl_reset.append(fr / fm)
        step_ratio.append((s / n) / (fs / fn))
        reset_ratio.append((r / m) / (fr / fm))
    med = statistics.median
    return {"steps": n, "episodes": m, "step_us": 1e6 * med(ours_step), "reset_us": 1e6 * med(ours_reset),
            "fl_step_us": 1e6 * med(fl_step), "fl_reset_us": 1e6 * med(fl_reset),
            "step_ratio": med(step_ratio), "reset_ratio": med(reset_ratio)}


def audio_ratio(episodes: list[Episode], n_scenarios: int, rounds: int) -> tuple[float, float, int]:
    """(median warm A+T step / T+S step, median A+T step in us, steps) over the first scenarios' episodes."""
    env_id = "Hear2Act-Prosody-v5"
    chosen = [e for e in episodes if e[0] == env_id][:n_scenarios]
    text = {env_id: gym.make(env_id, access="T+S", disable_env_checker=True).unwrapped}
    audio_env = gym.make(env_id, access="A+T", disable_env_checker=True).unwrapped
    audio = {env_id: audio_env}
    replay(audio, chosen)  # renders what is missing from the disk cache, then fills the memory tier
    audio_env.speech.cache.memory_items = max(audio_env.speech.cache.memory_items, 4 * len(chosen) * 20)
    replay(audio, chosen)
    ratios, audio_us = [], []
    for _ in range(rounds):
        s, n, _, _ = replay(text, chosen)
        a, m, _, _ = replay(audio, chosen)
        ratios.append((a / m) / (s / n))
        audio_us.append(1e6 * a / m)
    return statistics.median(ratios), statistics.median(audio_us), m


def profile(run: Callable[[], Any], top: int = 25) -> None:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.runcall(run)
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds; medians are reported")
    parser.add_argument("--profile", action="store_true", help="cProfile one replay of each condition")
    parser.add_argument("--audio-scenarios", type=int, default=20,
                        help="scenarios for the warm-cache audio step (0 skips it; needs the speech extra)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    from hear2act_env.scenarios import read_jsonl
    from hear2act_env.scenarios.generator import BANK_FILE

    t = time.perf_counter()
    read_jsonl(BANK_FILE)
    print(f"load + validate 480 scenarios (uncached): {time.perf_counter() - t:.3f} s")
    print(f"{'agent':<16}{'access':<7}{'episodes':>9}{'steps':>7}{'step us':>9}{'FL step':>9}{'ratio':>7}"
          f"{'reset us':>10}{'FL reset':>10}{'ratio':>7}")
    audio_episodes: list[Episode] = []
    for agent, access in CONDITIONS:
        episodes = record(agent, access)
        if args.profile:
            envs = {e: gym.make(e, access=access, disable_env_checker=True).unwrapped for e in hear2act_env.ENV_IDS}
            profile(lambda envs=envs, episodes=episodes: replay(envs, episodes))
        r = measure(access, episodes, args.rounds)
        print(f"{agent:<16}{access:<7}{r['episodes']:>9}{r['steps']:>7}{r['step_us']:>9.1f}{r['fl_step_us']:>9.1f}"
              f"{r['step_ratio']:>6.2f}x{r['reset_us']:>10.1f}{r['fl_reset_us']:>10.1f}{r['reset_ratio']:>6.2f}x")
        if access == "T+S" and args.audio_scenarios > 0:
            audio_episodes = episodes
    print("targets: step <= 2.50x FrozenLake-v1, reset <= 3.00x (medians over interleaved rounds)")
    if args.audio_scenarios > 0:
        import importlib.util

        if importlib.util.find_spec("hibari") is None:
            print("warm-cache audio step: skipped (speech extra not installed)")
            return
        ratio, us, steps = audio_ratio(audio_episodes, args.audio_scenarios, args.rounds)
        print(f"warm-cache audio step (A+T, {steps} steps): {us:.1f} us = {ratio:.2f}x the T+S text step "
              "(target <= 2.00x)")


if __name__ == "__main__":
    main()
