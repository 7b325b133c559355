"""Question routing: accuracy by style on each question set, time per question, cold start and memory, per matcher.

    python benchmarks/routing.py                      # learned (default) and lexical, every set, then cold/RSS
    python benchmarks/routing.py --matchers learned lexical semantic --sets heldout_questions_v4.jsonl
    python benchmarks/routing.py --sets --cold        # cold start and memory only

Rows are scored by hear2act_env.dialogue.question_sets (as in the tests). *us/q* (warm) is the mean wall
time of one routing call over the set with per-scenario tables already built but per-question caches
cleared (each question is new, as in an episode). *Cold* runs each matcher in a fresh process: *load* is
importing and loading the matcher (the learned router's weights) and routing one question on a copy of a
scenario (another object, so none of the bank's tables is built); then the first question on each of
the 480 scenarios, in bank order, is timed: the first one written for that scenario in the question
sets (every table that scenario needs is built inside that call; caches of words seen before are kept,
as in a run). *cpu ms* is the mean process CPU time of such a call (less sensitive to a loaded machine
than wall times; it includes the garbage collector's full passes, a few tens of ms each, that the tables'
allocations trigger), *cpu p50* its median, *dom1 cpu* its mean on the first scenario of each domain but the
copy's (it also builds the domain's shared attribute layers) and *rest cpu* on the others. *RSS* is the process's
resident memory (``VmRSS``) with the bank loaded, before any
question and after all 480 scenarios. *warm* then times the second written question on each scenario
(a new question on a scenario already met). Figures are this machine's: quote ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from hear2act_env import load_scenarios
from hear2act_env.dialogue.matchers import resolve_matcher
from hear2act_env.dialogue.question_sets import read_rows, tally
from hear2act_env.scenarios import Scenario

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
TRAIN = ROOT / "training" / "data" / "routing"  # the router fit's rows (training/router_data.py)
# Held-out v4/v5 (reported), validation v2 (tests/data); the former held-out v3 and v1, now training rows.
SETS = ("heldout_questions_v4.jsonl", "heldout_questions_v5.jsonl", "heldout_questions_v2.jsonl",
        "training/data/routing/former_heldout/heldout_questions_v3.jsonl",
        "training/data/routing/former_heldout/heldout_questions.jsonl")
STYLES = ("direct", "preference", "trade-off", "paraphrase")
COLD_QUESTION = "Is there anything you would rather avoid?"


def set_path(name: str) -> Path:
    """A question set: a path relative to the repository root, or a file name under tests/data/."""
    path = ROOT / name
    return path if "/" in name else DATA / name


def _clear_question_caches() -> None:
    from hear2act_env.dialogue import router, words

    for fn in (words.stems, words.question_stems, words.frames, words.about_the_user,
               router.question_features):
        fn.cache_clear()


def rss_mb() -> float:
    """This process's resident set size (``VmRSS`` in /proc/self/status), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB; a peak, not current


def written_questions() -> dict[str, list[str]]:
    """Per scenario id, the questions written for it in the question sets, in file order."""
    out: dict[str, list[str]] = {}
    for path in [*(set_path(n) for n in SETS), *sorted((TRAIN / "routing_train").glob("*.jsonl"))]:
        for r in read_rows(path):
            out.setdefault(r["scenario_id"], []).append(r["question"])
    return out


def _timed(route, pairs: list) -> tuple[list[float], float, list[float]]:
    """Wall seconds of each call, sorted, the mean process CPU milliseconds, and each call's CPU ms in order."""
    times, cpus = [], []
    for s, question in pairs:
        c, t = time.process_time(), time.perf_counter()
        route(s, question)
        times.append(time.perf_counter() - t)
        cpus.append((time.process_time() - c) * 1e3)
    return sorted(times), sum(cpus) / len(pairs), cpus


def cold(name: str) -> dict[str, float]:
    """One matcher in this (fresh) process: load time, first question per scenario, RSS (see the docstring)."""
    bank = load_scenarios()
    written = written_questions()
    base = rss_mb()
    t0 = time.perf_counter()
    route = resolve_matcher(name)
    route(Scenario.from_dict(bank[0].to_dict()), COLD_QUESTION)  # loads it (on a copy: another object)
    load = time.perf_counter() - t0
    asked = [(s, written.get(s.id, [COLD_QUESTION])) for s in bank]
    times, cpu, cpus = _timed(route, [(s, qs[0]) for s, qs in asked])
    after = rss_mb()
    warm, warm_cpu, _ = _timed(route, [(s, qs[1] if len(qs) > 1 else qs[0] + " ") for s, qs in asked])
    met = {bank[0].domain}  # its layers were built at load, by the copy
    first = [i for i, s in enumerate(bank) if s.domain not in met and not met.add(s.domain)]  # of its domain
    return {"scenarios": len(bank), "load_s": load, "cold_total_s": sum(times), "cold_cpu_ms": cpu,
            "cold_mean_ms": sum(times) / len(times) * 1e3, "cold_p50_ms": times[len(times) // 2] * 1e3,
            "cold_max_ms": times[-1] * 1e3, "cold_cpu_p50_ms": sorted(cpus)[len(cpus) // 2],
            "cold_cpu_domain_first_ms": sum(cpus[i] for i in first) / len(first),
            "cold_cpu_others_ms": (sum(cpus) - sum(cpus[i] for i in first)) / max(1, len(cpus) - len(first)),
            "rss_before_mb": base, "rss_after_mb": after,
            "warm_mean_ms": sum(warm) / len(warm) * 1e3, "warm_p50_ms": warm[len(warm) // 2] * 1e3,
            "warm_cpu_ms": warm_cpu}


def print_cold(matchers: list[str]) -> None:
    print("\ncold start, one fresh process per matcher (the first question on each of the bank's scenarios)")
    print(f"{'matcher':10} {'load s':>8} {'scen':>5} {'total s':>8} {'mean ms':>8} {'p50 ms':>8} {'max ms':>8}"
          f" {'cpu ms':>8} {'cpu p50':>8} {'dom1 cpu':>8} {'rest cpu':>8} {'RSS0 MB':>8} {'RSS480 MB':>9}"
          f" | warm: {'mean ms':>8} {'p50 ms':>8} {'cpu ms':>8}")
    for m in matchers:
        out = subprocess.run([sys.executable, __file__, "--cold-child", m], capture_output=True, text=True,
                             check=True, cwd=ROOT)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{m:10} {r['load_s']:8.2f} {r['scenarios']:5d} {r['cold_total_s']:8.2f} {r['cold_mean_ms']:8.2f}"
              f" {r['cold_p50_ms']:8.2f} {r['cold_max_ms']:8.2f} {r['cold_cpu_ms']:8.2f} {r['cold_cpu_p50_ms']:8.2f}"
              f" {r['cold_cpu_domain_first_ms']:8.2f} {r['cold_cpu_others_ms']:8.2f}"
              f" {r['rss_before_mb']:8.0f} {r['rss_after_mb']:9.0f} |       {r['warm_mean_ms']:8.3f}"
              f" {r['warm_p50_ms']:8.3f} {r['warm_cpu_ms']:8.3f}")


def print_accuracy(matchers: list[str], sets: list[str]) -> None:
    bank = {s.id: s for s in load_scenarios()}
    for name in sets:
        rows = read_rows(set_path(name))
        print(f"\n{Path(name).name} ({len(rows)} questions)")
        print(f"{'matcher':10} " + " ".join(f"{s:>10}" for s in (*STYLES, "need", "general", "other")) + "   us/q")
        for m in matchers:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matchers", nargs="+", default=["learned", "lexical"], help="registered matcher names")
    ap.add_argument("--sets", nargs="*", default=list(SETS),
                    help="file names under tests/data/ or paths from the repository root (none: skip accuracy)")
    ap.add_argument("--cold", action="store_true", help="only the cold start and memory figures (with --sets)")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold start and memory figures")
    ap.add_argument("--cold-child", metavar="MATCHER", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cold_child:
        print(json.dumps(cold(args.cold_child)))
        return
    if not args.cold:
        print_accuracy(args.matchers, args.sets)
    if not args.no_cold:
        print_cold(args.matchers)


if __name__ == "__main__":
    main()
