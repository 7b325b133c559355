"""Environment throughput: all 960 base episodes (480 scenarios x 2 realizations).

    python benchmarks/env_throughput.py [--repeat 3]

Runs the transcript-only rule agent (access T) and the state-aware rule agent
(access T+S) over every base episode and prints, per agent, wall time for the
960 episodes, steps/s, ms/step (env + agent) and the env's own share (time
inside ``env.step``/``env.reset``). Target (issue 3): 960 episodes in <= 2 s on
the 2-core reference machine, <= 0.1 ms of env overhead per step.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import hear2act_env
from agents import make_agent


def run(agent_name: str, access: str) -> tuple[float, float, int, int]:
    """(wall seconds, seconds inside the env, steps, episodes)."""
    env_time = steps = episodes = 0
    t0 = time.perf_counter()
    for env_id in hear2act_env.ENV_IDS:
        env = gym.make(env_id, access=access, disable_env_checker=True).unwrapped
        agent = make_agent(agent_name)
        for i, s in enumerate(env.scenarios):
            t = time.perf_counter()
            obs, info = env.reset(seed=i, options={"scenario_id": s.id})
            env_time += time.perf_counter() - t
            agent.reset(obs, info)
            done = False
            while not done:
                action = agent.act(obs)
                t = time.perf_counter()
                obs, _, term, trunc, _ = env.step(action)
                env_time += time.perf_counter() - t
                steps += 1
                done = term or trunc
            episodes += 1
    return time.perf_counter() - t0, env_time, steps, episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per agent; the best is reported")
    args = parser.parse_args()
    hear2act_env.load_scenarios()  # load once, outside the timing (measured below)
    t = time.perf_counter()
    from hear2act_env.scenarios import read_jsonl
    from hear2act_env.scenarios.generator import BANK_FILE

    read_jsonl(BANK_FILE)
    print(f"load + validate 480 scenarios (uncached): {time.perf_counter() - t:.3f} s")
    print(f"{'agent':<16}{'access':<7}{'episodes':>9}{'steps':>7}{'wall s':>8}{'steps/s':>9}"
          f"{'ms/step':>9}{'env ms/step':>13}{'episodes/s':>12}")
    for agent, access in (("transcript-rule", "T"), ("state-rule", "T+S")):
        wall, env_s, steps, eps = min((run(agent, access) for _ in range(args.repeat)), key=lambda r: r[0])
        print(f"{agent:<16}{access:<7}{eps:>9}{steps:>7}{wall:>8.2f}{steps / wall:>9.0f}"
              f"{1000 * wall / steps:>9.3f}{1000 * env_s / steps:>13.3f}{eps / wall:>12.0f}")


if __name__ == "__main__":
    main()
