"""User banks (docs/new-domain.md): a new domain is written, built, validated, played and evaluated.

The end-to-end test runs on ``tests/data/user_domain_intercity_bus.*``, a domain file written by a
separate process from docs/new-domain.md alone (so the page, not this code, is what made it valid); it
is skipped, saying so, when that file is absent. The page's own example goes through the same steps, and
the paper bank stays strict: its 48 Table 6 domains, and a Table 6 name is refused in a user file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import hear2act_env  # noqa: F401  (registers the ids)
from hear2act_env.cli import main
from hear2act_env.scenarios import BANK_FILE, ScenarioError, load_scenarios
from hear2act_env.scenarios.content import DOMAIN_FAMILY, load_domain, parse_domain, slugify
from hear2act_env.scenarios.userbank import BANK_ENV, build_user_bank, read_user_domains
from hear2act_env.scenarios.validate import paper_bank_problems, problems, validate_file

REPO = Path(__file__).resolve().parent.parent
PAGE = (REPO / "docs" / "new-domain.md").read_text(encoding="utf-8")
SEPARATE = sorted((REPO / "tests" / "data").glob("user_domain_intercity_bus.*"))


def _block(lang: str) -> str:
    return PAGE.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def _cli(*args: str, bank: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(BANK_ENV, None)
    if bank is not None:
        env[BANK_ENV] = str(bank)
    return subprocess.run([sys.executable, "-m", "hear2act_env.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture
def example(tmp_path) -> Path:
    """The page's example domain file, as a reader would save it."""
    folder = tmp_path / "my_domains"
    folder.mkdir()
    path = folder / "bicycle-repair-shops.json"
    path.write_text(_block("json"), encoding="utf-8")
    return path


def _walk_through(domain_file: Path, tmp_path: Path) -> dict:
    """Every step of docs/new-domain.md on one domain file; returns what each step produced."""
    out = tmp_path / "bank.jsonl"
    built = _cli("scenarios", "build", "--domains", str(domain_file), "--out", str(out))
    assert built.returncode == 0, built.stdout + built.stderr
    checked = _cli("scenarios", "validate", str(out))
    assert checked.returncode == 0, checked.stdout
    bank = load_scenarios(out)
    content = load_domain(domain_file, paper=False)
    assert [s.id for s in bank] == [f"{content.slug}-{i + 1:02d}" for i in range(len(content.personas))]
    assert {s.domain for s in bank} == {content.domain} and content.domain not in DOMAIN_FAMILY
    assert all(problems(s) == [] for s in bank)
    # Rebuilding gives the same bytes (--check).
    assert _cli("scenarios", "build", "--domains", str(domain_file), "--out", str(out), "--check").returncode == 0

    # Play: gym.make(scenarios=FILE); the oracle (who knows the needs) succeeds on every scenario.
    from hear2act.agents import make_agent
    from hear2act.eval.rollout import run_episode

    env = gym.make("Hear2Act-Prosody-v5", scenarios=str(out), access="T")
    obs, info = env.reset(seed=0, options={"scenario_id": bank[0].id})
    assert info["scenario_id"] == bank[0].id and bank[0].request in obs["transcript"]
    obs, _, _, _, info = env.step("[ACTION: ASK] Is there anything else that matters to you?")
    assert obs["transcript"].count("User: ") == 3  # request, objection to the opening, the answer
    env = gym.make("Hear2Act-Prosody-v5", scenarios=out, access="T+S")
    oracle = [run_episode(env, make_agent("oracle", scenarios=bank), s.id, seed) for seed, s in enumerate(bank)]
    assert [row["success"] for row in oracle] == [True] * len(bank)

    # The CLI plays it through HEAR2ACT_SCENARIOS.
    rollout = _cli("rollout", "--agent", "state-rule", "--quiet", bank=out)
    assert rollout.returncode == 0, rollout.stderr
    assert "state-rule Hear2Act-Prosody-v5 T" in rollout.stdout

    # Evaluate: the page's grid, with the bank as every tool's default.
    grid = tmp_path / "my_grid.toml"
    grid.write_text(_block("toml"), encoding="utf-8")
    run = tmp_path / "runs"
    evaluated = _cli("eval", str(grid), "--out", str(run), bank=out)
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    rows = [json.loads(line) for line in (run / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["scenario_id"] for r in rows} == {s.id for s in bank}
    assert len(rows) == 2 * 2 * 2 * len(bank)  # agents x realizations x conditions x scenarios
    return {"bank": bank, "rows": rows}


def test_the_separately_written_domain_goes_end_to_end(tmp_path):
    if not SEPARATE:
        pytest.skip("tests/data/user_domain_intercity_bus.* is absent: it must be written by a separate process "
                    "from docs/new-domain.md alone (see the module docstring); nothing to test without it")
    assert len(SEPARATE) == 1, SEPARATE
    got = _walk_through(SEPARATE[0], tmp_path)
    assert all("bus" in s.domain for s in got["bank"])
    oracle = [r for r in got["rows"] if r["cell"]["agent"] == "oracle"]
    assert oracle and all(r["outcome"]["success"] for r in oracle)


def test_the_pages_example_goes_end_to_end(example, tmp_path):
    got = _walk_through(example, tmp_path)
    assert [s.id for s in got["bank"]] == ["bicycle-repair-shops-01"]


def test_the_page_documents_every_domain_file_key():
    """Every key the content parser reads appears in the page's format tables."""
    source = (REPO / "hear2act_env" / "scenarios" / "content.py").read_text(encoding="utf-8")
    keys = set(re.findall(r'c\.(?:text|texts|get)\(\w+, "(\w+)"', source))
    keys |= set(re.findall(r'raw\.get\("(\w+)"', source)) | {"in"}
    assert keys, "the parser's keys were not found"
    assert sorted(k for k in keys if f"`{k}`" not in PAGE) == []


# -- errors name the file, the field and the value ---------------------------------------------------


def _raw(example: Path) -> dict:
    return json.loads(example.read_text(encoding="utf-8"))


def _problems_of(raw: dict, tmp_path: Path, name: str = "bikes.json") -> list[str]:
    path = tmp_path / "bad" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(raw), encoding="utf-8")
    return read_user_domains([path])[1]


def test_bad_user_domain_files_name_file_field_and_value(example, tmp_path):
    raw = _raw(example)
    raw["personas"][0]["needs"][0]["accept"] = ["teleport"]
    assert _problems_of(raw, tmp_path) == [
        "bikes.json: personas[0].needs[0].accept: 'teleport' is not a value of turnaround "
        "['same-day turnaround', 'ready in two to three days', 'ready in about a week']"]

    raw = _raw(example)
    raw["domain"] = "budget airline tickets"
    (msg,) = _problems_of(raw, tmp_path)
    assert msg.startswith("bikes.json: domain: 'budget airline tickets' is a Table 6 domain of the paper bank")

    raw = _raw(example)
    raw["personas"][0]["request"] = "What's the cheapest shop under $120 with a same-day turnaround?"
    (msg,) = _problems_of(raw, tmp_path)
    assert msg.startswith("bicycle-repair-shops: personas[0].request states hidden need L1 through")

    raw = _raw(example)
    raw["visible"][0]["worse"] = "it costs more than the other one"
    (msg,) = _problems_of(raw, tmp_path)
    assert msg.startswith("bikes.json: visible[0].worse: must name the option's own drawback")

    raw = _raw(example)
    raw["personas"] = []
    assert _problems_of(raw, tmp_path) == ["bikes.json: personas: 1 to 99 personas, got 0"]


def test_two_files_with_one_domain_are_refused(example, tmp_path):
    twin = example.with_name("copy.json")
    twin.write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        build_user_bank([example.parent])
    lines = caught.value.problems
    assert any(line.startswith("copy.json: domain: 'bicycle repair shops' is also the domain of") for line in lines)


def test_build_cli_reports_every_problem_and_writes_nothing(example, tmp_path):
    raw = _raw(example)
    raw["names"] = raw["names"][:5]
    example.write_text(json.dumps(raw), encoding="utf-8")
    out = tmp_path / "bank.jsonl"
    result = _cli("scenarios", "build", "--domains", str(example.parent), "--out", str(out))
    assert result.returncode == 1 and not out.exists()
    assert "INVALID bicycle-repair-shops.json: names: needs at least 14 entries, has 5" in result.stdout


def test_build_cli_user_mistakes_are_one_line(example, tmp_path, capsys):
    assert main(["scenarios", "build", "--domains", str(example)]) == 2
    assert "give --out FILE" in capsys.readouterr().err
    assert main(["scenarios", "build", "--domains", str(example), "--out", str(BANK_FILE)]) == 2
    assert "must not be the bundled bank" in capsys.readouterr().err
    assert main(["scenarios", "build", "--domains", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nowhere" in err


# -- the paper bank stays the paper's ------------------------------------------------------------------


def test_paper_bank_is_strict(example):
    assert paper_bank_problems(load_scenarios()) == []
    with pytest.raises(ScenarioError, match="'bicycle repair shops' is not one of the 48 Table 6 domains"):
        parse_domain(_raw(example), "bicycle-repair-shops.json")  # paper=True: the bundled folder's rule
    user = build_user_bank([example])
    assert str(paper_bank_problems(user)[0]).startswith(
        "bicycle-repair-shops-01: domain: 'bicycle repair shops' is not a Table 6 domain")


def test_validator_keeps_table6_families(tmp_path):
    """A user bank may not relabel a paper domain: its family is Table 6's."""
    line = BANK_FILE.read_text(encoding="utf-8").splitlines()[0]
    d = json.loads(line)
    d["family"] = "Transport & Mobility"
    path = tmp_path / "relabelled.jsonl"
    path.write_text(json.dumps(d) + "\n", encoding="utf-8")
    (error,) = validate_file(path)
    assert "family" in str(error) and "belongs to 'Travel & Events'" in str(error)


def test_bank_env_variable_is_every_tools_default(example, tmp_path, monkeypatch):
    out = tmp_path / "bank.jsonl"
    assert main(["scenarios", "build", "--domains", str(example), "--out", str(out)]) == 0
    monkeypatch.setenv(BANK_ENV, str(out))
    assert [s.id for s in load_scenarios()] == ["bicycle-repair-shops-01"]
    env = gym.make("Hear2Act-Prosody-v5")
    assert env.unwrapped.scenarios[0].domain == "bicycle repair shops"
    monkeypatch.setenv(BANK_ENV, str(tmp_path / "missing.jsonl"))
    with pytest.raises(FileNotFoundError, match=r"HEAR2ACT_SCENARIOS"):
        load_scenarios()
    monkeypatch.delenv(BANK_ENV)
    assert len(load_scenarios()) == 480


def test_slug_rules_match_the_page():
    assert slugify("Children's Daycare Centers") == "childrens-daycare-centers"
    assert slugify("intercity bus tickets") == "intercity-bus-tickets"
