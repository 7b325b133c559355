"""Model-reply fuzzer through the full ``hear2act eval`` path (issue 20): random unicode, lone surrogates,
huge replies, several tags, reasoning fragments, no-text replies. No reply may stop a run: every run exits 0,
every planned rollout is written exactly once, every line reads back, and ``report`` builds.

The replies come from ``random.Random(seed)`` (a local generator); the counts are printed (``-s``).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

from hear2act.eval.grid import parse_grid
from hear2act.eval.runner import read_run, rollouts_path
from hear2act_env.cli import main as cli_main
from tests.fake_openai import FakeChatServer, Reply, completion, message_completion

TAGS = ["[ACTION: ASK] ", "[ACTION: CONFIRM]", "[ACTION: CLARIFY] ", "[ACTION: RECOMMEND] [OPTION: 3] ",
        "**[ACTION: ASK]** ", '"[ACTION: CONFIRM]"', "Action: ASK ", "[ACTION: RECOMMEND] [OPTION: 99] ",
        "[ACTION: RECOMMEND] [OPTION: \uff13] ", "<answer>", "</answer>", "<think>", "</think>", "[ACTION:",
        "[OPTION: 7]", "take action: confirm ", "reaction: ask "]
ODD = ["\ud800", "\udfff", "\ud83d", "\x00", "\u202e", "\u200b", "\ufeff", "\uffff", "\U0010ffff", "\r\n", "\t",
       "\\", '"', "\u0663", "\U0001f389", "\u0130", "\u017f"]


def fuzz_reply(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.01:  # huge: 100 kB to 1 MB, a tag (or a fragment of one) at the far end
        n = rng.randrange(100_000, 1_000_000)
        unit = rng.choice([" ", "a", "[", "*", "9", "\ud800", "[ACTION: ASK] q "])
        return unit * (n // len(unit)) + rng.choice(TAGS)
    parts = []
    for _ in range(rng.randrange(0, 12)):
        r = rng.random()
        if r < 0.35:
            parts.append(rng.choice(TAGS))
        elif r < 0.6:
            parts.append(rng.choice(ODD))
        elif r < 0.8:
            parts.append("".join(chr(rng.randrange(0x20, 0x110000)) for _ in range(rng.randrange(1, 30))))
        else:
            parts.append(rng.choice(["Sure, ", "what is your budget? ", "I recommend option 4. ", "\n", " "]))
    return "".join(parts)


GRID = """
name = "reply-fuzz-{i}"
seed = {i}
[scenarios]
few = "first:{n}"
[agents]
fuzz = "{spec}"
[[block]]
name = "text"
kind = "text"
agents = ["fuzz"]
conditions = ["T", "T+S"]
scenarios = "few"
"""


SURROGATE = re.compile("[\ud800-\udfff]")


def _check_run(out: Path, planned: int, seen: Counter[str]) -> int:
    """Rows read back, each rollout once and scored or failed with a reason; returns the turns played."""
    rows = read_run(out)
    lines = rollouts_path(out).read_bytes().splitlines()
    assert len(rows) == len(lines) == planned
    for row in rows:
        assert row["outcome"] is not None or row["failed"]
        for t in row["trajectory"]["turns"]:
            raw = t["raw"]
            seen["huge (>= 100k chars)"] += len(raw) >= 100_000
            seen["with a lone surrogate"] += SURROGATE.search(raw) is not None
            seen["several tags"] += raw.count("[ACTION") > 1
            seen["no text"] += bool(t.get("no_text"))
            seen["invalid"] += t.get("parsed_kind") == "invalid"
    return sum(len(r["trajectory"]["turns"]) for r in rows)


def test_fuzzed_replies_never_stop_eval_scripted(tmp_path: Path) -> None:
    played = stopped = 0
    seen: Counter[str] = Counter()
    for i in range(4):
        rng = random.Random(1000 + i)
        grid_text = GRID.format(i=i, n=6, spec="scripted:{script}")
        planned = parse_grid(grid_text.replace("{script}", "x.json")).expand()
        script = {r.rollout_id: [fuzz_reply(rng) for _ in range(19)] for r in planned}
        path = tmp_path / f"script-{i}.json"
        path.write_text(json.dumps(script), encoding="ascii")  # surrogates travel as JSON escapes
        grid = tmp_path / f"g{i}.toml"
        grid.write_text(grid_text.replace("{script}", str(path)))
        out = tmp_path / f"run{i}"
        code = cli_main(["eval", str(grid), "--out", str(out), "--quiet"])
        stopped += code != 0
        played += _check_run(out, len(planned), seen)
        assert cli_main(["report", str(out), "--out", str(tmp_path / f"rep{i}"), "--no-audio"]) == 0
    print(f"\nscripted fuzz: {played} fuzzed replies played over 4 runs, {stopped} stopped runs; {dict(seen)}")
    assert stopped == 0 and played > 500
    assert seen["huge (>= 100k chars)"] and seen["with a lone surrogate"] and seen["several tags"]


def _server_plan(seed: int):
    def plan(body: dict, attempt: int) -> Reply:
        # A stable draw per request (its messages) and attempt, so reruns are identical.
        rng = random.Random(f"{seed}/{json.dumps(body.get('messages'), sort_keys=True)}/{attempt}")
        r = rng.random()
        if r < 0.08:
            return Reply(body=message_completion({"content": None}))
        if r < 0.12:
            return Reply(body=message_completion({"content": None, "reasoning_content": fuzz_reply(rng)}))
        if r < 0.15:
            return Reply(body=message_completion({"content": [{"type": "text", "text": fuzz_reply(rng)}]}))
        if r < 0.17:
            return Reply(status=400, body=b'{"message": "maximum context length is 4096 tokens"}')
        if r < 0.19:
            return Reply(status=503, body=b"{}", headers=(("retry-after", "0"),))
        return Reply(body=completion(fuzz_reply(rng)))  # json.dumps escapes lone surrogates
    return plan


def test_fuzzed_replies_never_stop_eval_through_the_openai_backend(tmp_path: Path) -> None:
    played = stopped = 0
    seen: Counter[str] = Counter()
    for i in range(2):
        with FakeChatServer(_server_plan(i)) as server:
            spec = f"openai:m@{server.url}"
            grid_text = GRID.format(i=i, n=3, spec=spec)
            grid_text = grid_text.replace(f'fuzz = "{spec}"', f'fuzz = {{ spec = "{spec}", timeout = 5.0, '
                                                              'max_retries = 1, backoff = 0.01 }')
            grid = tmp_path / f"g{i}.toml"
            grid.write_text(grid_text)
            out = tmp_path / f"run{i}"
            code = cli_main(["eval", str(grid), "--out", str(out), "--quiet"])
        stopped += code != 0
        played += _check_run(out, len(parse_grid(grid_text).expand()), seen)
    print(f"\nopenai fuzz: {played} fuzzed replies played over 2 runs, {stopped} stopped runs; {dict(seen)}")
    assert stopped == 0 and played > 100
    assert seen["no text"] and seen["with a lone surrogate"]
