"""Evaluation grids: the paper's 54,240 rollouts, the label-fidelity subset, ids, seeds, shards, bad input."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from hear2act.eval.grid import GridError, episode_seed, load_grid, parse_grid, parse_shard, shard
from hear2act_env import load_scenarios
from hear2act_env.cli import main as cli_main

BANK = [s.id for s in load_scenarios()]


@pytest.fixture(scope="module")
def paper():
    return load_grid("paper")


@pytest.fixture(scope="module")
def paper_rollouts(paper):
    return paper.expand()


def test_paper_grid_is_the_papers_table_2(paper_rollouts) -> None:
    assert len(paper_rollouts) == 54_240
    by_row: Counter = Counter()
    for r in paper_rollouts:
        c = r.cell
        if c.kind == "text":
            by_row["Text LLM main grid"] += 1
        elif c.kind == "label-fidelity":
            by_row["Text label interventions"] += 1
        elif c.agent == "Qwen2-Audio":
            by_row["Qwen2-Audio, three rollouts per scenario"] += 1
        else:
            by_row[f"Spoken assistant with {c.renderer}"] += 1
    assert by_row == {"Text LLM main grid": 19_200, "Text label interventions": 1_440,
                      "Spoken assistant with Qwen3-TTS": 6_720, "Spoken assistant with VoxCPM2": 6_720,
                      "Qwen2-Audio, three rollouts per scenario": 20_160}
    # the factorisation: 5 text models x 2 access x 2 realizations x 480 x 2 runs, ...
    text = [r for r in paper_rollouts if r.cell.kind == "text"]
    assert len({r.cell.agent for r in text}) == 5 and {r.cell.access for r in text} == {"T", "T+S"}
    assert {r.repeat for r in text} == {0, 1} and len({r.scenario_id for r in text}) == 480
    lf = [r for r in paper_rollouts if r.cell.kind == "label-fidelity"]
    assert {r.cell.intervention for r in lf} == {"always_resolved", "shuffled", "always_unresolved"}
    assert len({r.scenario_id for r in lf}) == 48 and {r.cell.realization for r in lf} == {"prosody"}
    spoken = [r for r in paper_rollouts if r.cell.kind == "spoken"]
    assert len({r.cell.condition for r in spoken}) == 7
    assert {r.repeat for r in spoken if r.cell.agent == "Qwen2-Audio"} == {0, 1, 2}


def test_rollout_ids_unique_and_stable(paper, paper_rollouts) -> None:
    ids = [r.rollout_id for r in paper_rollouts]
    assert len(set(ids)) == len(ids)
    again = load_grid("paper").expand()
    assert [r.rollout_id for r in again] == ids and [r.seed for r in again] == [r.seed for r in paper_rollouts]
    # changing a server URL (the agent spec) keeps every id: ids hash labels, not specs
    moved = parse_grid(paper.source.replace("http://localhost:8001/v1", "http://gpu-node-7:9000/v1"))
    assert [r.rollout_id for r in moved.expand()] == ids
    # another run seed moves every id and every episode seed
    reseeded = parse_grid(paper.source.replace("seed = 0", "seed = 1", 1)).expand()
    assert not set(r.rollout_id for r in reseeded[:100]) & set(ids)


def test_matched_rollouts_share_the_episode_seed(paper_rollouts) -> None:
    seeds: dict[tuple[str, int], set[int]] = {}
    for r in paper_rollouts:
        seeds.setdefault((r.scenario_id, r.repeat), set()).add(r.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert episode_seed(0, BANK[0], 0) != episode_seed(0, BANK[0], 1) != episode_seed(0, BANK[1], 1)


def test_label_fidelity_subset_one_scenario_per_domain(paper) -> None:
    by_domain: dict[str, list[str]] = {}
    for s in load_scenarios():
        by_domain.setdefault(s.domain, []).append(s.id)
    expected = []
    for d in sorted(by_domain):
        i = int(hashlib.sha256(f"hear2act label-fidelity|{d}".encode()).hexdigest(), 16) % len(by_domain[d])
        expected.append(by_domain[d][i])
    assert paper.scenario_ids("label-fidelity") == expected and len(expected) == 48
    quick = load_grid("quick")
    assert quick.scenario_ids("label-fidelity") == expected
    spoken = {c.scenarios for c in quick.cells if c.kind == "spoken"}
    assert spoken == {"label-fidelity"}  # spoken cells on 48 scenarios, one per domain


def test_quick_grid_covers_the_report_layouts() -> None:
    quick = load_grid("quick")
    kinds = {c.kind for c in quick.cells}
    assert kinds == {"text", "spoken", "label-fidelity"}
    assert {c.access for c in quick.cells if c.kind == "spoken"} == {"T", "A", "A+T", "T+affect", "T+S_hat", "T+S"}


def test_shards_partition_the_grid(paper_rollouts) -> None:
    parts = [shard(paper_rollouts, i, 7) for i in range(7)]
    ids = [r.rollout_id for p in parts for r in p]
    assert sorted(ids) == sorted(r.rollout_id for r in paper_rollouts)
    assert all(abs(len(p) - len(paper_rollouts) / 7) < 400 for p in parts)
    assert parse_shard("2/7") == (2, 7)
    for bad in ("7/7", "-1/3", "a/b", "3"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(bad)


GOOD = """
name = "t"
[scenarios]
few = "first:3"
[[block]]
name = "b"
agents = ["state-rule"]
conditions = ["T+S"]
scenarios = "few"
"""


@pytest.mark.parametrize(("edit", "message"), [
    (("conditions = [\"T+S\"]", "conditions = [\"T+X\"]"), "'conditions': unknown condition 'T\\+X'"),
    (("agents = [", "realizations = [\"prosodic\"]\nagents = ["), "'realizations': unknown value 'prosodic'"),
    (("conditions = [\"T+S\"]", "conditions = [\"T\"]\ninterventions = [\"shuffled\"]"),
     "intervention 'shuffled' needs a state-tag access"),
    (("scenarios = \"few\"", "scenarios = \"many\""), "unknown subset 'many'"),
    (("scenarios = \"few\"", "repeats = 0"), "'repeats' must be a positive integer"),
    (("name = \"b\"", "name = \"b\"\nmodel = \"x\""), "unknown field\\(s\\) \\['model'\\]"),
    (("few = \"first:3\"", "few = \"first:0\""), "scenarios.few must be"),
    (("[[block]]", "[[block]\n"), "not valid TOML"),
])
def test_bad_grids_name_the_field(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(GridError, match=message):
        parse_grid(GOOD.replace(*edit), Path("g.toml")).expand()


def test_duplicate_rollouts_across_blocks_are_refused() -> None:
    text = GOOD + '[[block]]\nname = "c"\nagents = ["state-rule"]\nconditions = ["T+S"]\nscenarios = "few"\n'
    with pytest.raises(GridError, match="block 'c' repeats rollouts of block 'b'"):
        parse_grid(text).expand()


def test_unknown_scenario_ids_are_named() -> None:
    with pytest.raises(GridError, match="unknown scenario id"):
        parse_grid(GOOD.replace('few = "first:3"', 'few = ["no-such-scenario"]')).expand()


def test_dry_run_prints_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["eval", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].split() == ["total", "54,240"]
    assert any(line.startswith("text-main: Claude Opus 4.6 | prosody | T ") and line.endswith("960") for line in out)
    assert cli_main(["eval", "paper", "--dry-run", "--shard", "0/2"]) == 0
    first = int(capsys.readouterr().out.splitlines()[-1].split()[-1].replace(",", ""))
    assert cli_main(["eval", "paper", "--dry-run", "--shard", "1/2"]) == 0
    second = int(capsys.readouterr().out.splitlines()[-1].split()[-1].replace(",", ""))
    assert first + second == 54_240
    assert cli_main(["eval", "nonexistent-grid", "--dry-run"]) == 2
    assert "shipped" in capsys.readouterr().err


def test_shard_auto_reads_the_launcher() -> None:
    assert parse_shard("auto", {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3"}) == (3, 8)
    assert parse_shard("auto", {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "16"}) == (5, 16)
    assert parse_shard("auto", {"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}) == (1, 2)
    assert parse_shard("auto", {}) == (0, 1)
    with pytest.raises(ValueError, match="shard"):
        parse_shard("auto", {"RANK": "8", "WORLD_SIZE": "8"})


def test_agent_tables_carry_policy_arguments() -> None:
    text = GOOD.replace("[scenarios]", '[agents]\nm = { spec = "openai:Qwen/Qwen3-32B@http://n1:8000/v1", '
                                       'concurrency = 64 }\n[scenarios]').replace('"state-rule"', '"m"')
    cell = parse_grid(text).cells[0]
    assert (cell.agent, cell.agent_spec, dict(cell.agent_kwargs)) == ("m", "openai:Qwen/Qwen3-32B@http://n1:8000/v1",
                                                                     {"concurrency": 64})
    assert cell.to_dict()["agent_kwargs"] == {"concurrency": 64}
    with pytest.raises(GridError, match=r"agents\.m must be a spec string"):
        parse_grid(text.replace('spec = "openai', 'sp = "openai'))


def test_two_stage_perceiver_condition() -> None:
    paper = load_grid("paper")
    assert {c.perceiver for c in paper.cells if c.access == "T+S_hat"} == {"self"}
    assert {c.perceiver for c in paper.cells if c.access != "T+S_hat"} == {""}
    bad = GOOD.replace("[scenarios]", '[conditions]\nX = { access = "T", perceiver = "self" }\n[scenarios]')
    with pytest.raises(GridError, match="perceiver only applies to access 'T\\+S_hat'"):
        parse_grid(bad)


def test_the_heldout_grid_is_the_trainers_held_out_split() -> None:
    """eval/grids/heldout.toml lists the ids every trainer holds out: a checkpoint evaluated with it is never
    scored on a scenario it trained on."""
    from hear2act.training.splits import bundled_split, eval_ids

    grid = load_grid("heldout")
    assert grid.scenario_ids("heldout") == eval_ids(bundled_split())
    assert {c.agent_spec for c in grid.cells} == {"hf:runs/grpo-learning/sft", "hf:runs/grpo-learning/grpo"}
    assert {(c.access, c.realization) for c in grid.cells} == {("T+S", "prosody")}
