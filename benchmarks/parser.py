"""Action-parser speed on 1 MB replies (the grammar of docs/protocol-choices.md, "Reading an action").

    python benchmarks/parser.py [--repeat 5]

Prints, per hostile shape, the best-of-``--repeat`` milliseconds to parse a
1,000,000-character reply, and the worst over all shapes (target <= 20 ms on
an idle machine). Linear parsing keeps every shape in milliseconds; a
backtracking pattern would take seconds to minutes on some of them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hear2act_env.dialogue.actions import parse_action  # noqa: E402

MB = 1_000_000
SHAPES = {
    "spaces then tag": lambda: " " * MB + "[ACTION: CONFIRM] ok",
    "prose then tag": lambda: ("The user said it is fine. " * (MB // 26)) + "[ACTION: ASK] why?",
    "many tags": lambda: "[ACTION: ASK] q? " * (MB // 17),
    "many quoted tags": lambda: '"[ACTION: CONFIRM]" ' * (MB // 20),
    "open brackets": lambda: "[" * MB,
    "bracket + emphasis": lambda: "[" + "*" * MB,
    "bracket action runs": lambda: "[action " * (MB // 8),
    "Action: lines": lambda: "Action: maybe\n" * (MB // 14),
    "newlines": lambda: "\n" * MB,
    "think blocks": lambda: "<think>x</think>" * (MB // 16),
    "answer blocks": lambda: "<answer>[ACTION: ASK] a</answer>" * (MB // 32),
    "unclosed think": lambda: "<think>" * (MB // 7),
    "option digits": lambda: "[ACTION: RECOMMEND] [OPTION: " + "7" * MB + "]",
    "recommend + spaces": lambda: "[ACTION: RECOMMEND] option" + " " * MB + "#",
    "words after ask": lambda: "[ACTION: ASK] " + "a " * (MB // 2),
    "digits": lambda: "9" * MB,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    worst = 0.0
    for name, make in SHAPES.items():
        text = make()
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            action = parse_action(text)
            best = min(best, time.perf_counter() - t)
        worst = max(worst, best)
        print(f"{name:22s} {len(text):>9,d} chars  {best * 1e3:7.2f} ms  -> {action.kind}")
    print(f"worst over {len(SHAPES)} shapes: {worst * 1e3:.2f} ms per 1 MB reply")


if __name__ == "__main__":
    main()
