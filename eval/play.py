"""``hear2act play``: be the assistant yourself, in the terminal.

Type an action in the paper's format, or a shortcut:
``r 3 [text]`` recommend option 3, ``a <question>`` ask, ``c [text]``
clarify, ``ok`` confirm, ``o`` show the options again, ``q`` quit.
"""

from __future__ import annotations

import argparse

from hear2act_env import ENV_IDS
from hear2act_env.dialogue.actions import format_action

SHORTCUTS = {"a": "ask", "c": "clarify", "ok": "confirm", "r": "recommend"}


def expand(line: str) -> str:
    """Turn a shortcut into the full action text (anything else passes through)."""
    head, _, rest = line.strip().partition(" ")
    kind = SHORTCUTS.get(head.lower())
    if kind is None:
        return line
    if kind == "recommend":
        number, _, text = rest.partition(" ")
        return format_action("recommend", text, int(number)) if number.isdigit() else line
    return format_action(kind, rest)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("play", help="play the assistant yourself in the terminal")
    p.add_argument("--env", default="Hear2Act-Prosody-v0", choices=sorted(ENV_IDS))
    p.add_argument("--access", default="T", help="T or T+S (shows the state tag)")
    p.add_argument("--scenario", default=None, help="scenario id (default: drawn by the seed)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_play)


def _play(args: argparse.Namespace, read=input, write=print) -> int:
    import gymnasium as gym

    env = gym.make(args.env, access=args.access)
    options = {"scenario_id": args.scenario} if args.scenario else None
    obs, info = env.reset(seed=args.seed, options=options)
    write(f"Scenario {info['scenario_id']} ({args.env}, access {args.access})\n")
    write(obs["options"] + "\n")
    write(obs["transcript"])
    if obs.get("state"):
        write(f"  [{obs['state']}]")
    write(__doc__.split("\n\n", 1)[1])
    while True:
        try:
            line = read("assistant> ").strip()
        except EOFError:
            return 0
        if line in ("q", "quit"):
            return 0
        if line == "o":
            write(obs["options"])
            continue
        obs, reward, terminated, truncated, info = env.step(expand(line))
        if info["invalid_action"]:
            write(f"  (invalid action: {info['invalid_action']})")
        write(obs["transcript"].splitlines()[-1])
        if obs.get("state"):
            write(f"  [{obs['state']}]")
        if terminated or truncated:
            out = info["outcome"]
            gold = env.unwrapped.scenario.gold
            write(f"\nEpisode over after {out['turns']} turns: final option {out['final_option']}, "
                  f"gold {gold}, {'SUCCESS' if out['success'] else 'no success'} (reward {reward}).")
            return 0
