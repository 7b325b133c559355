"""Every access condition over all 960 base episodes on CPU (state-aware rule agent).

    python benchmarks/all_conditions.py [--agent state-rule] [--n 480]

Prints success, premature closure and wall time per (realization, access).
Audio conditions render through the cache ($HEAR2ACT_CACHE): run
`hear2act render` first to separate rendering time from rollout time.
"""

from __future__ import annotations

import argparse
import time

from hear2act.eval.metrics import summarize
from hear2act.eval.rollout import run_condition
from hear2act_env import ENV_IDS, load_scenarios
from hear2act_env.env import ACCESS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="state-rule")
    parser.add_argument("--n", type=int, default=480)
    args = parser.parse_args()
    ids = [s.id for s in load_scenarios()[: args.n]]
    print(f"{'env':<22}{'access':<10}{'episodes':>9}{'success':>9}{'premature':>10}{'turns':>7}{'wall s':>8}")
    for env_id in ENV_IDS:
        for access in ACCESS:
            t = time.perf_counter()
            s = summarize(list(run_condition(env_id, args.agent, access, scenario_ids=ids)))
            print(f"{env_id:<22}{access:<10}{int(s['n']):>9}{s['success']:>9.1f}{s['premature_closure']:>10.1f}"
                  f"{s['turns']:>7.1f}{time.perf_counter() - t:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
