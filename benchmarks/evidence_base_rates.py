"""Base rates of the evidence term's qualitative voice claims: how often each is true of a user turn by chance.

    python benchmarks/evidence_base_rates.py --episodes 60 --seed 0

Plays ``state-rule`` under access ``A`` (hibari, Prosody) on training-split
scenarios, collects up to 4 user turns per episode, re-derives each turn's
features and prints, per claim of :data:`hear2act_env.speech.claims.QUALITATIVE`, the
fraction of turns it holds for (with the 15 % tolerance) and the expected
score of making it unconditionally (:func:`hear2act.training.rewards.claim_score`).
``hear2act_env.speech.claims.BASE_RATES`` holds the numbers of ``--episodes 60 --seed 0``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def user_turn_clips(n_episodes: int, seed: int, turns: int = 4) -> list:
    import numpy as np

    from hear2act.agents import make_agent
    from hear2act.training.splits import bundled_split, train_ids
    from hear2act_env.env import Hear2ActEnv

    env = Hear2ActEnv(realization="prosody", access="A")
    clips = []
    for i, sid in enumerate(train_ids(bundled_split(), n_episodes)):
        obs, info = env.reset(seed=seed + i, options={"scenario_id": sid})
        agent = make_agent("state-rule")
        agent.reset(obs, info)
        clips.append(np.asarray(obs["audio"], dtype=np.float32))
        done, n = False, 1
        while not done and n < turns:
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
            if not done:
                clips.append(np.asarray(obs["audio"], dtype=np.float32))
                n += 1
    return clips


def rates(clips: list) -> list[tuple[str, str, float, float, float]]:
    """(feature, op, threshold, base rate, expected score of the unconditional claim) per qualitative claim."""
    from hear2act.training.rewards import claim_score
    from hear2act_env.speech.claims import QUALITATIVE, Claim, check_claim, clip_features

    feats = [clip_features(c) for c in clips]
    out = []
    for _, feature, op, value in QUALITATIVE:
        claim = Claim("x", feature, op, value)
        held = [check_claim(claim, f) for f in feats]
        out.append((feature, op, value, sum(held) / len(held),
                    sum(claim_score(claim, h) for h in held) / len(held)))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    clips = user_turn_clips(args.episodes, args.seed)
    print(f"{len(clips)} user turns of {args.episodes} episodes (seeds {args.seed}..)")
    for feature, op, value, rate, expected in rates(clips):
        print(f"{feature:12s} {op} {value:5.1f}  base rate {rate:.3f}  unconditional claim scores {expected:+.3f}")


if __name__ == "__main__":
    main()
