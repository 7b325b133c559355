"""Regenerate the shipped distribution of true state tags (for the ``shuffled`` intervention).

``python -m hear2act.eval.tag_table`` plays the state-aware rule agent with correct tags
(access ``T+S``) over all 960 base episodes (480 scenarios x 2 realizations,
seeds 0..479) and counts the delivery label of the true tag at every observed
turn. The ``shuffled`` intervention draws tags from this table, independently
of the true state, so it keeps the label distribution of real episodes while
breaking their alignment with the turn (the paper's turn-shuffled control).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import gymnasium as gym

from hear2act.agents import make_agent
from hear2act.eval.rollout import play
from hear2act_env import ENV_IDS
from hear2act_env.state_tags import TAG_TABLE

AGENT = "state-rule"


def measure(seed: int = 0) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    episodes = 0
    for env_id in ENV_IDS:
        env = gym.make(env_id, access="T+S", disable_env_checker=True)
        agent = make_agent(AGENT)
        for i, s in enumerate(env.unwrapped.scenarios):
            for obs, _ in play(env, agent, s.id, seed + i):
                counts[obs["state"].split(": ")[1].split(" ")[0]] += 1
            episodes += 1
    return {
        "source": f"true CONCERN STATE tags at every turn of {AGENT} (access T+S, correct) over "
        f"{episodes} base episodes, seeds {seed}..{seed + episodes // 2 - 1}; python -m hear2act.eval.tag_table",
        "episodes": episodes,
        "counts": dict(sorted(counts.items())),
    }


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=2) + "\n"


def main() -> int:
    text = render(measure())
    if "--check" in sys.argv[1:]:
        same = TAG_TABLE.read_text(encoding="utf-8") == text
        print(f"{TAG_TABLE.name}: {'up to date' if same else 'OUT OF DATE'}")
        return 0 if same else 1
    TAG_TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TAG_TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
