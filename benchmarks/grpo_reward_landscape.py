"""Where does the episode reward point a policy that cannot read the tag yet? Prints the reward along two lines.

    python benchmarks/grpo_reward_landscape.py [--n 80] [--turn-cost 0.01]

A family of scripted policies (:class:`TagMix`) searches like the SFT teacher ``explore``: after a
recommendation it CONFIRMs with probability ``a`` when the state tag says resolved and ``b`` when it says
unresolved (never when the words object), otherwise RECOMMENDs a random other option. ``a = b`` is a policy
that ignores the tag -- what a warm start on the words-only teacher is -- and the only direction it can move
before it learns to read the tag; ``b = 0`` reads it. For each point this prints success, premature
closure, turns and the mean episode reward under both failure costs of
:class:`hear2act.training.episodes.EpisodeReward` (``turns``: the env's own return; ``horizon``: a failure is
charged the whole horizon), on training-split episodes (never the held-out ones), seeds ``0 + i``.

Read the ``a = b`` rows: with ``failure_cost=turns`` the reward can rise while success falls (shorter failures
save turn cost), so GRPO, which follows the reward, learns to close early; with ``horizon`` it cannot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hear2act.training.episodes import FAILURE_COSTS, AgentPolicy, EpisodeReward, ExploringAgent, play, summarize


class TagMix(ExploringAgent):
    """``ExploringAgent`` confirming with probability ``a`` under a resolved tag, ``b`` under an unresolved one."""

    def __init__(self, a: float, b: float) -> None:
        super().__init__(0.5)
        self.a, self.b = float(a), float(b)
        self.name = f"tagmix:{a:g}:{b:g}"

    def act(self, observation: dict[str, str]) -> str:
        from hear2act.agents.rule import PROBLEM_CUES, UNRESOLVED, _last_recommended
        from hear2act_env.dialogue.actions import format_action, parse_action

        lines = str(observation.get("transcript", "")).splitlines()
        last = parse_action(lines[-2][len("Assistant: "):]) if len(lines) >= 2 else None
        current = _last_recommended(lines)
        if last is not None and last.kind == "recommend":
            resolved = not UNRESOLVED.search(str(observation.get("state", "")))
            p = self.a if resolved else (0.0 if PROBLEM_CUES.search(lines[-1]) else self.b)
            if self._rng.random() < p:
                return format_action("confirm", "Great, let's go with that.")
        others = [n for n in range(1, max(self._n, 1) + 1) if n != current] or [1]
        return format_action("recommend", "How about this one?", int(self._rng.choice(others)))


POINTS = ((0.05, 0.05), (0.1, 0.1), (0.2, 0.2), (0.35, 0.35), (0.5, 0.5), (0.75, 0.75), (1.0, 1.0),
          (0.5, 0.25), (0.5, 0.0), (1.0, 0.0))


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    from hear2act.training.splits import bundled_split, train_ids

    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--n", type=int, default=80, help="training-split scenarios (one episode each)")
    p.add_argument("--turn-cost", type=float, default=0.01)
    args = p.parse_args(argv)
    ids = train_ids(bundled_split(), args.n)
    out = []
    print(f"{len(ids)} training-split episodes, T+S Prosody, turn cost {args.turn_cost:g}")
    print("   a     b  success premature turns  " + "  ".join(f"R[{f}]" for f in FAILURE_COSTS))
    for a, b in POINTS:
        row: dict[str, float] = {"a": a, "b": b}
        for failure in FAILURE_COSTS:
            s = summarize(play(AgentPolicy(lambda a=a, b=b: TagMix(a, b), reasoning=False), ids, access="T+S",
                               config=EpisodeReward(turn_cost=args.turn_cost, failure_cost=failure)))
            row.update(success=s["success"], premature=s["premature_closure"], turns=s["turns"])
            row[f"reward_{failure}"] = s["reward"]
        out.append(row)
        print(f"{a:4.2f}  {b:4.2f}  {row['success']:7.3f} {row['premature']:9.3f} {row['turns']:5.1f}  "
              + "  ".join(f"{row[f'reward_{f}']:+8.3f}" for f in FAILURE_COSTS), flush=True)
    return out


if __name__ == "__main__":
    main()
