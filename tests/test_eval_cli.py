"""`hear2act eval GRID --agent LABEL=SPEC --limit N`, named grids, results.json, `rollout --out` for rule
agents, `render GRID` (exactly what eval plays) and `demo --text-only` on a core install."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hear2act.eval.grid import load_grid
from hear2act.eval.grid_edit import edit_grid
from hear2act.eval.results import build_results, read_results
from hear2act.eval.runner import read_run
from hear2act_env.cli import main

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    """paper-text with two rule agents in place of its five models, 2 scenarios per subset."""
    out = tmp_path_factory.mktemp("run")
    argv = ["eval", "paper-text", "--agent", "sr=state-rule", "--agent", "transcript-rule", "--limit", "2",
            "--out", str(out), "--quiet"]
    return out, argv


def test_eval_named_grid_with_own_agents_and_limit(text_run, capsys):
    out, argv = text_run
    assert main(argv) == 0
    printed = capsys.readouterr().out
    rows = read_run(out)
    # text-main: 2 agents x (T, T+S) x 2 realizations x 2 scenarios x 2 repeats; label fidelity: 2 x 3 x 2 x 2
    assert len(rows) == 32 + 24
    assert {r["cell"]["agent"] for r in rows} == {"sr", "transcript-rule"}
    assert {r["cell"]["agent_spec"] for r in rows} == {"state-rule", "transcript-rule"}
    assert len({r["scenario_id"] for r in rows if r["cell"]["block"] == "text-main"}) == 2
    assert read_results(out)["command"] == ("hear2act eval paper-text --agent sr=state-rule --agent transcript-rule "
                                            f"--limit 2 --out {out}")
    # the run directory's grid.toml is the edited grid itself: eval of it resumes with nothing to do
    assert main(["eval", str(out / "grid.toml"), "--out", str(out), "--quiet"]) == 0
    assert "56 already done, 0 run now" in capsys.readouterr().out
    # eval ends with the table: every cell, value and CI
    assert "text-main | sr | prosody | T+S" in printed and "scenario bootstrap" in printed
    assert "Claude" not in printed


def test_results_json_round_trips_and_agrees_with_the_report(text_run, capsys):
    from hear2act.eval.report import build_report
    from hear2act.eval.report.tables import overview_table

    out, argv = text_run
    if not (out / "rollouts.jsonl").exists():
        assert main(argv) == 0
    results = read_results(out / "results.json")
    rows = read_run(out)
    again = build_results(sorted(rows, key=lambda r: r["rollout_id"]),
                          (out / "grid.toml").read_text(encoding="utf-8"), command=results["command"])
    assert json.loads((out / "results.json").read_text(encoding="utf-8")) == results  # plain JSON, no NaN
    assert {k: v for k, v in again.items() if k not in ("cells", "versions")} == \
        {k: v for k, v in results.items() if k not in ("cells", "versions")}
    assert sorted(c["label"] for c in again["cells"]) == sorted(c["label"] for c in results["cells"])
    by_label = {c["label"]: c for c in results["cells"]}
    assert {c["label"]: c["metrics"] for c in again["cells"]} == {k: c["metrics"] for k, c in by_label.items()}
    assert results["versions"]["hear2act"] and len(results["versions"]["bank_hash"]) == 1
    assert results["command"].startswith("hear2act eval ")  # the last eval into the directory
    assert sum(c["n"] + c["failed"] for c in results["cells"]) == results["rollouts"] == len(rows)
    for c in results["cells"]:
        for m in c["metrics"].values():
            if m["value"] is not None:
                assert m["low"] - 1e-9 <= m["value"] <= m["high"] + 1e-9
    # the report's "All cells" table shows the same values, and `report` rewrites the same results.json
    built = build_report(out, n_resamples=results["bootstrap"]["n_resamples"], audio=False)
    assert read_results(built["results"])["cells"] == results["cells"]
    from hear2act.eval.report.build import _in_grid_order

    table = overview_table(_in_grid_order(sorted(rows, key=lambda r: r["rollout_id"]), out))
    assert len(table.rows) == len(results["cells"])
    for (_, values), cell in zip(table.rows, results["cells"], strict=True):
        assert int(values[3].text) == cell["n"] and int(values[4].text) == cell["failed"]
        for v, m in zip(values[5:], ("success", "accept", "fullfit", "full_disclosure", "premature_closure",
                                     "turns"), strict=True):
            ours = cell["metrics"][m]["value"]
            assert (v.ours is None and ours is None) or math.isclose(v.ours, ours, abs_tol=1e-4)


def test_keep_agents_adds_and_a_known_label_keeps_its_ids():
    plain = load_grid("paper-text")
    added = edit_grid("paper-text", agents=[("mine", "hf:/models/x")], keep_agents=True)
    assert len(added.expand()) == len(plain.expand()) * 6 // 5
    paper = load_grid("paper")
    replaced = edit_grid("paper", agents=[("GLM-5", "hf:/models/glm")])  # a text model: its text blocks only
    old = {r.rollout_id for r in paper.expand() if r.cell.agent == "GLM-5"}
    assert {r.rollout_id for r in replaced.expand()} == old
    assert {r.cell.agent_spec for r in replaced.expand()} == {"hf:/models/glm"}
    assert "block 'spoken-omni' left out" in replaced.source
    # a new model on the whole paper design: both spoken blocks would repeat each other; the first is kept
    mine = edit_grid("paper", agents=[("mine", "omni:/models/mine")])
    assert {r.cell.block for r in mine.expand()} == {"text-main", "text-label-fidelity", "spoken-omni"}
    assert len(mine.expand()) == 3_840 + 288 + 13_440


def test_repeats_and_skip_kind_keep_the_whole_grids_rollouts():
    """A timed first pass (one run of the text blocks) is a subset of the whole grid: same ids, same seeds,
    so the whole grid run into the same directory afterwards plays only the rest."""
    whole = {r.rollout_id: r.seed for r in load_grid("smollm2").expand()}
    part = edit_grid("smollm2", repeats=1, drop_kinds=("spoken",)).expand()
    assert len(part) == 96 and len(whole) == 240
    assert all(whole[r.rollout_id] == r.seed for r in part)
    assert {r.cell.block for r in part} == {"text-main"} and {r.repeat for r in part} == {0}


@pytest.mark.parametrize("argv, says", [
    (["eval", "quick", "--agent", "mine=nosuch", "--dry-run"], "unknown agent 'nosuch'"),
    (["eval", "quick", "--agent", "=hf:/x", "--dry-run"], "expected LABEL=SPEC"),
    (["eval", "quick", "--agent", "a=hf:/x", "--agent", "a=hf:/y", "--dry-run"], "given twice"),
    (["eval", "quick", "--limit", "0", "--dry-run"], "--limit/--n: must be a positive integer, got 0"),
    (["eval", "quick", "--keep-agents", "--dry-run"], "--keep-agents needs"),
    (["eval", "quick", "--repeats", "0", "--dry-run"], "--repeats: must be a positive integer, got 0"),
    (["eval", "smollm2", "--skip-kind", "text", "--skip-kind", "spoken", "--dry-run"], "leaves no block"),
    (["eval", "no-such-grid", "--dry-run"], "not a shipped grid"),
    (["render", "no-such-grid"], "not a shipped grid"),
])
def test_bad_values_are_one_line_errors(argv, says, capsys):
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert says in err.splitlines()[-1] and "Traceback" not in err


def test_shipped_grids_resolve_by_name():
    for name in ("quick", "paper", "paper-text"):
        assert load_grid(name).name == name
    assert len(load_grid("paper-text").expand()) == 20_640


def test_rollout_out_writes_rule_agent_trajectories(tmp_path, capsys):
    from hear2act.eval.rollout import run_condition

    path = tmp_path / "r.jsonl"
    assert main(["rollout", "--agent", "state-rule", "--access", "T+S", "--n", "5", "--quiet",
                 "--out", str(path)]) == 0
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 5 and all(t["agent"] == "state-rule" and t["turns"] for t in lines)
    direct = list(run_condition("Hear2Act-Prosody-v5", "state-rule", "T+S", "correct",
                                [t["scenario_id"] for t in lines], 0))
    for t, d in zip(lines, direct, strict=True):
        assert t["outcome"]["success"] == d["success"] and t["outcome"]["turns"] == d["turns"]


@pytest.mark.slow  # end to end, over 15 s: make test runs it, make test-fast leaves it out
@pytest.mark.skipif(importlib.util.find_spec("hibari") is None, reason="speech extra not installed")
def test_render_grid_caches_everything_eval_then_plays(tmp_path, monkeypatch, capsys):
    from hear2act.eval.render import trajectory_utterances

    grid = tmp_path / "tiny.toml"
    grid.write_text("""name = "tiny"
seed = 3
[renderers]
hibari = "hibari"
[scenarios]
two = ["auto-mechanic-services-03", "budget-airline-tickets-08"]
[[block]]
name = "spoken"
kind = "spoken"
agents = ["state-rule", "transcript-rule"]
realizations = ["prosody"]
renderers = ["hibari"]
conditions = ["T", "A+T", "T+S_hat", "T+affect"]
scenarios = "two"
""", encoding="utf-8")
    monkeypatch.setenv("HEAR2ACT_CACHE", str(tmp_path / "cache"))
    assert main(["render", str(grid)]) == 0
    assert "distinct utterances" in capsys.readouterr().out
    clips = sorted(p.name for p in (tmp_path / "cache" / "audio").rglob("*.h2a"))
    assert clips
    assert main(["eval", str(grid), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    # eval rendered nothing new: every clip it needed was a cache hit
    assert sorted(p.name for p in (tmp_path / "cache" / "audio").rglob("*.h2a")) == clips
    from hear2act_env.speech.cache import AudioCache
    from hear2act_env.speech.renderers import make_renderer

    cache = AudioCache(make_renderer("hibari"), tmp_path / "cache" / "audio")
    heard = set()
    for r in read_run(tmp_path / "run"):
        if r["cell"]["access"] != "T":
            heard |= trajectory_utterances(r["trajectory"])
    assert heard and all(cache.path(cache.key(*u)).exists() for u in heard)


def test_demo_text_only_without_matplotlib(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from hear2act_env.cli import main\n"
            f"raise SystemExit(main(['demo', '--text-only', '--n', '1', '--out', {str(tmp_path)!r}]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "figures skipped" in proc.stdout and "matplotlib" in proc.stdout
    assert (tmp_path / "report.md").exists() and (tmp_path / "results.json").exists()
    assert not (tmp_path / "figures").exists() or not list((tmp_path / "figures").iterdir())
