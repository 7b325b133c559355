"""What the options text and plain asking give an agent, without prosody (issue "Validity" §1).

Prints, over a scenario bank (default: the bundled 480):

* the options-only orderings of ``hear2act_env.scenarios.shortcuts``: how often the
  best-value candidate is the gold and the highest share of the gold at one place;
* Prosody ``T`` success of the never-ask ``options-value`` agent (the demo's floor row);
* Prosody ``T`` success and turns of a words-only agent that asks one general question
  after every recommendation and confirms only when the answer raises nothing — the
  state is recoverable by asking, so what prosody buys is turns.

    python benchmarks/options_floor.py [--scenarios FILE]
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

import gymnasium as gym

import hear2act_env  # noqa: F401
from hear2act.agents import make_agent
from hear2act.agents.rule import GENERAL_QUESTION, PROBLEM_CUES, TranscriptRuleAgent
from hear2act.eval.rollout import run_episode
from hear2act_env.dialogue.actions import format_action, parse_action
from hear2act_env.scenarios import load_scenarios
from hear2act_env.scenarios.shortcuts import position_rates, value_pick_rate

# The answer to a general question when the option misses nothing ("that one covers what I need").
COVERED = re.compile(r"\bcovers\b|\beverything I was looking for\b", re.IGNORECASE)


@dataclass
class AskEveryAgent(TranscriptRuleAgent):
    """Walks the request's order; after each recommendation asks one general question;
    confirms when the answer says the option covers everything, else moves on."""

    name: str = "ask-every"

    def act(self, observation: dict[str, str]) -> str:
        lines = observation.get("transcript", "").splitlines()
        current = next((parse_action(x[11:]).option for x in reversed(lines)
                        if x.startswith("Assistant: ") and parse_action(x[11:]).kind == "recommend"), None)
        last = parse_action(lines[-2][len("Assistant: "):]) if len(lines) >= 2 else None
        words = lines[-1][len("User: "):] if lines else ""
        if last is not None and last.kind == "recommend" and not PROBLEM_CUES.search(words):
            return format_action("ask", GENERAL_QUESTION)
        if last is not None and last.kind == "ask" and COVERED.search(words) and not re.search(r"\bbut\b", words):
            return format_action("confirm", "Great, let's go with that one.")
        self.ruled_out.add(current or 0)
        return self._recommend(self._next(current))


def play(bank, agent_factory, env_id: str = "Hear2Act-Prosody-v5", access: str = "T") -> tuple[float, float]:
    env = gym.make(env_id, access=access, scenarios=bank).unwrapped
    rows = [run_episode(env, agent_factory(), s.id, i) for i, s in enumerate(bank)]
    return 100 * sum(r["success"] for r in rows) / len(rows), sum(r["turns"] for r in rows) / len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default=None, help="a JSONL scenario file (default: the bundled bank)")
    args = ap.parse_args()
    bank = load_scenarios(args.scenarios)
    rates = position_rates(bank)
    print(f"scenarios: {len(bank)}")
    print(f"value ranker picks the gold: {value_pick_rate(bank):.3f} (chance 0.125)")
    for kind, r in rates.items():
        place = max(r, key=r.get)
        print(f"ordering {kind!r}: gold most often at place {place + 1} of the candidates, {r[place]:.3f}")
    for label, factory in (("options-value (never asks)", lambda: make_agent("options-value")),
                           ("ask-every (words only)", AskEveryAgent),
                           ("transcript-rule (words only)", lambda: make_agent("transcript-rule"))):
        success, turns = play(bank, factory)
        print(f"Prosody T  {label:30s} success {success:5.1f}%  turns {turns:4.1f}")


if __name__ == "__main__":
    main()
