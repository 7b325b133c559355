"""``hear2act report``: the paper's numbers as transcribed, tables, figures, and the trajectory viewer in Chromium."""

from __future__ import annotations

import base64
import json
import os
import re
import time
from pathlib import Path

import pytest

from hear2act.eval.grid import parse_grid
from hear2act.eval.report import build_report
from hear2act.eval.report.tables import paper_entries, paper_value
from hear2act.eval.runner import run_grid
from hear2act_env.cli import main as cli_main

CHROMIUM = Path("/usr/bin/chromium")
GRID = """
name = "report-test"
[renderers]
hibari = "hibari"
[scenarios]
few = "first:3"
two = "first:2"
[[block]]
name = "text"
kind = "text"
agents = ["transcript-rule", "state-rule"]
conditions = ["T", "T+S"]
scenarios = "few"
[[block]]
name = "lf"
kind = "label-fidelity"
agents = ["state-rule"]
realizations = ["prosody"]
conditions = ["T+S"]
interventions = ["always_resolved", "shuffled", "always_unresolved"]
scenarios = "few"
[[block]]
name = "spoken"
kind = "spoken"
agents = ["state-rule"]
realizations = ["prosody"]
renderers = ["hibari"]
conditions = ["T", "A+T", "T+S_hat", "T+S"]
scenarios = "two"
"""


# ---------------------------------------------------------------- the paper's numbers


def test_paper_numbers_agree_with_the_papers_own_text() -> None:
    assert len(paper_entries()) == 207
    v = paper_value
    # §5.1: the average rises 14.3 -> 15.1 with audio, 39.6 with the audio-inferred state (Table 3)
    assert (v("3", agent="Average", condition="T", metric="success"),
            v("3", agent="Average", condition="A+T", metric="success"),
            v("3", agent="Average", condition="T+S_hat", metric="success")) == (14.3, 15.1, 39.6)
    # §5.2: Qwen2.5-Omni 14.8 / 16.9 / 15.4, HuBERT 35.2, SpeechBrain 32.1, T+S_hat 42.5, T+S 44.0
    omni = {c: v("3", agent="Qwen2.5-Omni", condition=c, metric="success")
            for c in ("T", "A", "A+T", "HuBERT", "SpeechBrain", "T+S_hat", "T+S")}
    assert omni == {"T": 14.8, "A": 16.9, "A+T": 15.4, "HuBERT": 35.2, "SpeechBrain": 32.1, "T+S_hat": 42.5,
                    "T+S": 44.0}
    # §5.1: under Explicit responses the seven conditions span 6.6 (Omni) and 5.4 (Qwen2-Audio) points
    for agent, span in (("Qwen2.5-Omni", 6.6), ("Qwen2-Audio", 5.4)):
        xs = [e["value"] for e in paper_entries() if e["table"] == "4" and e["agent"] == agent
              and e["metric"] == "success"]
        assert len(xs) == 7 and max(xs) - min(xs) == pytest.approx(span)
    # §5.1: state access adds 36.8 points (Prosody) vs 6.3 (Explicit) to the five-model mean; Accept/FullFit
    # +7.5/+4.1 under Prosody, +0.3 FullFit under Explicit
    d = {(r, m): v("5", realization=r, agent="mean", condition="T+S", metric=m)
         - v("5", realization=r, agent="mean", condition="T", metric=m)
         for r in ("prosody", "explicit") for m in ("success", "accept", "fullfit")}
    assert d[("prosody", "success")] == pytest.approx(36.8) and d[("explicit", "success")] == pytest.approx(6.3)
    assert d[("prosody", "accept")] == pytest.approx(7.5) and d[("prosody", "fullfit")] == pytest.approx(4.1)
    assert d[("explicit", "fullfit")] == pytest.approx(0.3)
    # every "Average" is the mean of the two audio LLMs, every five-model mean the mean of its five rows
    for e in paper_entries():
        keys = {k: e[k] for k in ("table", "realization", "condition", "metric")}
        if e["agent"] == "Average":
            pair = [v(agent=a, **keys) for a in ("Qwen2.5-Omni", "Qwen2-Audio")]
            assert e["value"] == pytest.approx(sum(pair) / 2, abs=0.11), e
        if e["agent"] == "mean" and e["table"] == "5":
            five = [v(agent=a, **keys) for a in ("Claude Opus 4.6", "Kimi K2.5", "GLM-5", "Qwen3-32B",
                                                 "DeepSeek-V3.2")]
            assert e["value"] == pytest.approx(sum(five) / 5, abs=0.11), e


# ---------------------------------------------------------------- the report


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    pytest.importorskip("matplotlib")
    root = tmp_path_factory.mktemp("report")
    run_grid(parse_grid(GRID, root / "grid.toml"), root / "run", progress=False, batch_size=4)
    return build_report(root / "run", n_scenarios=2)


def test_report_tables_figures_and_paper_numbers(report: dict) -> None:
    md = Path(report["markdown"]).read_text()
    assert report["tables"] == ["spoken-prosody-hibari", "text", "behaviour", "ladder", "ci", "cells"]
    assert "(layout of the paper's Table 3)" in md and "(layout of the paper's Table 5)" in md
    # the paper's published numbers beside ours: Table 5 five-model mean, Table 3 average, Figure 3 rungs
    assert "| Paper: five-model mean | (26.9) | (63.7) |" in md
    t_row = next(line for line in md.splitlines() if line.startswith("| Transcript only (T) |"))
    assert t_row.rstrip(" |").endswith("(14.3) | (21.6) | (12.1)")
    assert "| correct (T+S) |" in md and "(68.1)" in md and "(34.8)" in md
    assert "Label fidelity, Prosody-mediated: no state (T) → always-resolved" in md
    assert [Path(f).name for f in report["figures"]] == ["figure3-ladder.png", "figure4-actions.png",
                                                          "figure5-disclosure.png", "figure5-disclosure-spoken.png"]
    for f in report["figures"]:
        assert Path(f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = Path(report["html"]).read_text()
    assert html.count('src="data:image/png;base64,') == 4
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)  # self-contained
    assert report["clips"] > 0 and "data:audio/ogg;base64," in html
    data = json.loads(re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', html,
                                re.S).group(1).replace("<\\/", "</"))
    s = data["scenarios"][0]
    assert len(data["scenarios"]) == 2 and s["gold"] in [o["number"] for o in s["options"]]
    spoken = [r for r in s["rollouts"] if r["block"] == "spoken"]
    assert {r["condition"] for r in spoken} == {"T", "A+T", "T+S_hat", "T+S"}
    users = [t for r in spoken for t in r["turns"] if t["who"] == "user" and not t.get("request")]
    assert all(t["state"] and t["delivery"] and t["audio"] in data["clips"] for t in users)
    # disclosures come from replaying the record: an agent that asks under T+S discloses at least one need
    assert any(t.get("disclosed") for r in s["rollouts"] if r["condition"] == "T+S" for t in r["turns"]
               if t["who"] == "user")
    assert not data["notes"]  # every replay matched its record
    ogg = base64.b64decode(next(iter(data["clips"].values())).split(",", 1)[1])
    assert ogg[:4] == b"OggS"


def test_report_cli(report: dict, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = Path(report["html"]).parent
    assert cli_main(["report", str(run), "--out", str(tmp_path), "--no-audio", "--scenarios", "1"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "report.html") in out and "0 audio clips" in out
    assert cli_main(["report", str(tmp_path / "nothing")]) == 2
    assert "no rollouts" in capsys.readouterr().err


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install -y chromium)")
def test_viewer_in_chromium(report: dict, tmp_path: Path) -> None:
    from test_listen import Chromium

    profile = tmp_path / "profile"
    profile.mkdir()
    browser = Chromium(profile)
    try:
        browser.open("about:blank")
        browser.send("Page.enable")
        # collect page errors from the first script on
        browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.__errors = [];
            addEventListener('error', e => __errors.push('error: ' + (e.message || e.target.src || e.type)), true);
            addEventListener('unhandledrejection', e => __errors.push('rejection: ' + e.reason));
            const ce = console.error.bind(console);
            console.error = (...a) => { __errors.push('console: ' + a.join(' ')); ce(...a); };"""})
        browser.send("Page.navigate", {"url": Path(report["html"]).as_uri()})
        browser.wait_for("document.body && document.body.dataset.viewerReady === '1'", timeout=30)
        # the figures decode
        assert browser.js("[...document.images].every(i => i.complete && i.naturalWidth > 0)") is True
        assert browser.js("document.images.length") == 4
        options = browser.js("[...document.getElementById('scenario').options].map(o => o.value)")
        assert len(options) == 2
        # pick the second scenario, its spoken block
        browser.js(f"""(() => {{ const s = document.getElementById('scenario'); s.value = {json.dumps(options[1])};
                       s.dispatchEvent(new Event('change')); }})()""")
        assert browser.js("document.body.dataset.viewerScenario") == options[1]
        browser.js("""(() => { const b = document.getElementById('block'); b.value = 'spoken';
                      b.dispatchEvent(new Event('change')); })()""")
        cards = browser.js("document.querySelectorAll('#cards .card').length")
        assert cards == 4
        assert browser.js("document.querySelectorAll('#cards .chip.delivery').length") > 4
        assert browser.js("document.querySelectorAll('#scenario-info .chip.gold').length") == 1
        n_audio = browser.js("document.querySelectorAll('#cards audio').length")
        assert n_audio >= 4
        # play the first spoken turn (as a user click would) and hear it advance
        played = browser.send("Runtime.evaluate", {
            "expression": """(async () => { const a = document.querySelector('#cards audio'); await a.play();
                             await new Promise(r => setTimeout(r, 400));
                             return {t: a.currentTime, d: a.duration, paused: a.paused}; })()""",
            "awaitPromise": True, "returnByValue": True, "userGesture": True}, timeout=20)["result"]["value"]
        assert played["t"] > 0 and played["d"] > 0.3
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1,
                                                            "mobile": False})
        browser.js("document.getElementById('viewer').scrollIntoView()")
        shot = browser.send("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(os.environ.get("HEAR2ACT_SCREENSHOT_DIR", tmp_path)) / "report-viewer.png"
        path.write_bytes(base64.b64decode(shot))
        assert path.read_bytes()[:4] == b"\x89PNG"
        time.sleep(0.1)
        assert browser.js("window.__errors") == []
    finally:
        browser.close()


def test_paper_grid_cells_meet_their_published_numbers() -> None:
    """Rows of the paper grid (fake outcomes) land in tables whose cells carry the paper's own numbers."""
    from hear2act.eval.grid import load_grid
    from hear2act.eval.report import tables

    outcome = {"success": True, "recommendations": 1, "accepts": 1, "fullfits": 1, "full_disclosure": True,
               "premature_closure": False, "n_disclosed": 3, "turns": 5,
               "action_counts": {"recommend": 1, "ask": 3, "clarify": 0, "confirm": 1, "invalid": 0}}
    paper = load_grid("paper")
    bank = paper.scenario_ids("label-fidelity")  # a 48-scenario bank: every 480-scenario block shrinks tenfold
    rows = [{"cell": r.cell.to_dict(), "scenario_id": r.scenario_id, "repeat": r.repeat, "outcome": outcome,
             "failed": None} for r in paper.expand(bank=bank)]
    assert len(rows) == (54_240 - 1_440) // 10 + 1_440
    spoken = {t.key: t for t in tables.spoken_tables(rows)}
    assert set(spoken) == {f"spoken-{r}-{x}" for r in ("prosody", "explicit") for x in ("Qwen3-TTS", "VoxCPM2")}
    t3 = spoken["spoken-prosody-Qwen3-TTS"]
    assert [label for label, _ in t3.rows] == [  # the paper's own row labels and groups (Table 3)
        "Transcript only (T)", "Audio only (A)", "Audio + transcript (A+T)", "Generic affect (HuBERT)",
        "Generic affect (SpeechBrain)", "Audio-inferred state (T+Ŝ)", "Ground-truth state (T+S)"]
    assert t3.section_rows == {0: "Direct input", 3: "Textualized prosodic representations"}
    assert t3.groups[1:3] == [("Qwen2.5-Omni", 3), ("Qwen2-Audio", 3)]
    omni_t, audio_hubert = t3.rows[0][1][0], t3.rows[3][1][3]
    assert (omni_t.ours, omni_t.paper, audio_hubert.paper) == (100.0, 14.8, 29.7)
    t4 = spoken["spoken-explicit-Qwen3-TTS"]
    assert t4.rows[6][1][0].paper == 49.2  # Omni, T+S, Explicit (Table 4)
    assert all(v.paper is None for _, vs in spoken["spoken-prosody-VoxCPM2"].rows for v in vs[:6])  # Appendix B
    t5 = tables.text_table(rows)
    claude = dict(t5.rows)["Claude Opus 4.6"]
    assert [v.paper for v in claude[:2]] == [50.3, 79.8] and claude[6].paper == 75.5
    ladder = tables.ladder_table(tables.ladder_rungs(rows))
    assert [label for label, _ in ladder.rows] == ["no state (T)", "always-resolved", "shuffled",
                                                   "always-unresolved", "correct (T+S)"]
    assert [vs[0].paper for _, vs in ladder.rows] == [34.8, None, None, 53.3, 68.1]
