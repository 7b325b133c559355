"""``hear2act play``: be the assistant yourself, in the terminal.

Type an action in the paper's format, or a shortcut:
``r 3 [text]`` recommend option 3, ``a <question>`` ask, ``c [text]``
clarify, ``ok`` confirm, ``o`` show the options again, ``q`` quit.
An empty line costs no turn.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hear2act_env import ENV_IDS
from hear2act_env.access import ACCESS
from hear2act_env.cli import seed_int
from hear2act_env.dialogue.actions import format_action

SHORTCUTS = {"a": "ask", "c": "clarify", "ok": "confirm", "r": "recommend"}
# Command-line audio players tried in order for the audio access conditions (first one found is used).
PLAYERS = (("afplay",), ("paplay",), ("aplay", "-q"), ("pw-play",),
           ("ffplay", "-nodisp", "-autoexit", "-loglevel", "quiet"))


def expand(line: str) -> str:
    """Turn a shortcut into the full action text (anything else passes through)."""
    head, _, rest = line.strip().partition(" ")
    kind = SHORTCUTS.get(head.lower())
    if kind is None:
        return line
    if kind == "recommend":
        number, _, text = rest.partition(" ")
        return format_action("recommend", text, int(number)) if number.isascii() and number.isdigit() else line
    return format_action(kind, rest)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("play", help="play the assistant yourself in the terminal")
    p.add_argument("--env", default="Hear2Act-Prosody-v5", choices=sorted(ENV_IDS))
    p.add_argument("--access", default="T", choices=list(ACCESS),
                   help="T, T+S (shows the state tag), A / A+T (plays the user's audio), T+S_hat, T+affect")
    p.add_argument("--scenario", default=None, help="scenario id (default: drawn by the seed)")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--audio-dir", type=Path, default=None,
                   help="where user turns are saved as WAV under audio access (default: a temporary folder)")
    p.add_argument("--no-play", action="store_true", help="under audio access, only save the WAV files")
    p.set_defaults(func=_play)


class AudioOut:
    """Saves each user turn as a WAV and plays it with a command-line player when one is installed."""

    def __init__(self, folder: Path | None, play: bool, write: Callable[[str], Any]) -> None:
        self.folder = folder or Path(tempfile.mkdtemp(prefix="hear2act-play-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.player = next((cmd for cmd in PLAYERS if shutil.which(cmd[0])), None) if play else None
        self.write = write
        names = ", ".join(cmd[0] for cmd in PLAYERS)
        how = (f"playing with {self.player[0]}" if self.player else
               f"no audio player found ({names}); open the WAV files in any audio player")
        write(f"  (audio: user turns are saved in {self.folder}; {how})")

    def __call__(self, audio: Any, turn: int) -> None:
        import soundfile as sf

        path = self.folder / f"turn-{turn:02d}.wav"
        sf.write(path, audio, 16_000)
        if self.player is None:
            self.write(f"  [audio: {path}]")
            return
        try:
            subprocess.run([*self.player, str(path)], check=False, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            self.write(f"  [audio: {path} (the player failed; open it yourself)]")


def _show(obs: dict[str, Any], write: Callable[[str], Any], audio: AudioOut | None, turn: int) -> None:
    """The user's latest turn and whatever the access condition adds to it."""
    write(obs["transcript"].splitlines()[-1])
    for key in ("state", "inferred_state", "affect"):
        if obs.get(key):
            write(f"  [{obs[key]}]")
    if audio is not None and "audio" in obs:
        audio(obs["audio"], turn)


def _play(args: argparse.Namespace, read: Callable[[str], str] = input, write: Callable[[str], Any] = print) -> int:
    import gymnasium as gym

    env = gym.make(args.env, access=args.access)
    max_turns = env.unwrapped.max_turns
    options = {"scenario_id": args.scenario} if args.scenario else None
    obs, info = env.reset(seed=args.seed, options=options)
    write(f"Scenario {info['scenario_id']} ({args.env}, access {args.access})\n")
    write(obs["options"] + "\n")
    audio = None
    if "audio" in obs:
        audio = AudioOut(getattr(args, "audio_dir", None),
                         not getattr(args, "no_play", False) and sys.stdout.isatty(), write)
    write("\n".join(obs["transcript"].splitlines()[:-1]))
    _show(obs, write, audio, info["turn"])
    write(__doc__.split("\n\n", 1)[1])
    while True:
        turn = info["turn"] + 1
        try:
            line = read(f"turn {turn}/{max_turns} assistant> ").strip()
        except EOFError:
            return 0
        if not line:
            continue  # an empty line costs no turn
        if line in ("q", "quit"):
            return 0
        if line == "o":
            write(obs["options"])
            continue
        obs, reward, terminated, truncated, info = env.step(expand(line))
        if info["invalid_action"]:
            write(f"  (invalid action, the turn still counts: {info['invalid_action']})")
        _show(obs, write, audio, info["turn"])
        if terminated or truncated:
            out = info["outcome"]
            gold = env.unwrapped.scenario.gold
            write(f"\nEpisode over after {out['turns']} turns: final option {out['final_option']}, "
                  f"gold {gold}, {'SUCCESS' if out['success'] else 'no success'} (reward {reward}).")
            return 0
