"""Question routing: accuracy by style on each question set, and time per question, per matcher.

    python benchmarks/routing.py                      # learned (default) and lexical, every set
    python benchmarks/routing.py --matchers learned lexical semantic --sets heldout_questions_v4.jsonl

Rows are scored by hear2act_env.dialogue.question_sets (as in the tests). Time is the mean wall time of one
routing call over the set with per-scenario tables already built but per-question caches cleared (each
question is new, as in an episode), on this machine: quote ratios from one run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hear2act_env import load_scenarios
from hear2act_env.dialogue.matching import resolve_matcher
from hear2act_env.dialogue.question_sets import read_rows, tally

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = ("heldout_questions_v4.jsonl", "heldout_questions_v5.jsonl", "heldout_questions_v2.jsonl",
        "heldout_questions_v3.jsonl", "heldout_questions.jsonl")
STYLES = ("direct", "preference", "trade-off", "paraphrase")


def _clear_question_caches() -> None:
    from hear2act_env.dialogue import matching, router

    for fn in (matching._stems, matching._question_stems, matching._frames, matching.about_the_user,
               router.question_features):
        fn.cache_clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matchers", nargs="+", default=["learned", "lexical"], help="registered matcher names")
    ap.add_argument("--sets", nargs="+", default=list(SETS), help="files under tests/data/")
    args = ap.parse_args()
    bank = {s.id: s for s in load_scenarios()}
    for name in args.sets:
        rows = read_rows(DATA / name)
        print(f"\n{name} ({len(rows)} questions)")
        print(f"{'matcher':10} " + " ".join(f"{s:>10}" for s in (*STYLES, "need", "general", "other")) + "   us/q")
        for m in args.matchers:
            route = resolve_matcher(m)
            for sid in {r["scenario_id"] for r in rows}:  # warm-up: per-scenario tables
                route(bank[sid], "Is there anything else?")
            _clear_question_caches()
            t0 = time.perf_counter()
            counts = tally(rows, bank, route)
            per_q = (time.perf_counter() - t0) / len(rows) * 1e6
            keys = [*((s, "need") for s in STYLES), ("all", "need"), ("all", "general"), ("all", "other")]
            cells = [f"{counts[k][0] / counts[k][1]:10.3f}" if k in counts else f"{'-':>10}" for k in keys]
            print(f"{m:10} " + " ".join(cells) + f"   {per_q:6.0f}")


if __name__ == "__main__":
    main()
