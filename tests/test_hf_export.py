"""``hear2act scenarios export --format hf DIR``: a folder ``datasets.load_dataset`` reads back as the bank,
with a dataset card; ``datasets`` is imported by the export only, never by the core."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hear2act_env.cli import main
from hear2act_env.scenarios import BANK_FILE, Scenario, load_scenarios

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _offline_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("HEAR2ACT_SCENARIOS", raising=False)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "hear2act-hf"
    assert main(["scenarios", "export", "--format", "hf", str(out)]) == 0
    return out


def _load(folder: Path, cache: Path):
    return datasets.load_dataset(str(folder), split="test", cache_dir=str(cache))


def test_the_folder_loads_back_as_the_bank(exported, tmp_path):
    ds = _load(exported, tmp_path / "c")
    bank = load_scenarios()
    assert ds.num_rows == len(bank) == 480
    assert ds["id"] == [s.id for s in bank]
    for row, s in zip(ds, bank, strict=True):
        assert Scenario.from_dict(json.loads(row["scenario"])) == s
        assert (row["domain"], row["family"], row["request"], row["priority"]) == (s.domain, s.family, s.request,
                                                                                   s.priority)
        assert (row["gold"], row["safe"], row["opening"]) == (s.gold, s.safe, s.opening)
        assert row["request_violating"] == list(s.request_violating)
        assert [n["accept"] for n in row["needs"]] == [list(n.accept) for n in s.needs]
        assert [o["description"] for o in row["options"]] == [o.description for o in s.options]
        assert [json.loads(o["values_json"]) for o in row["options"]] == [dict(o.values) for o in s.options]
        assert [a["kind"] for a in row["attributes"]] == [a.kind for a in s.attributes]


def test_the_dataset_card(exported):
    card = (exported / "README.md").read_text(encoding="utf-8")
    header = card.split("---\n")[1]
    assert "license: cc-by-sa-4.0" in header
    assert "- split: test\n    path: data/test.parquet" in header
    for section in ("## Loading", "## Splits", "## Fields", "## How it was generated", "## Licence", "## Citation"):
        assert section in card
    assert "arXiv" in card and "2608.19515" in card
    fields = card.split("## Fields", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in fields.splitlines() if line.startswith("| `")]
    documented = {c.strip(" `") for line in rows for c in line.split("|")[1].split(",")}
    assert documented == set(pq.read_schema(exported / "data" / "test.parquet").names)
    digest = hashlib.sha256(BANK_FILE.read_bytes()).hexdigest()[:16]
    assert digest in card  # the card names the exact file it was made from


def test_a_user_bank_exports_too(tmp_path):
    line = BANK_FILE.read_text(encoding="utf-8").splitlines()[0]
    bank = tmp_path / "mine.jsonl"
    bank.write_text(line + "\n", encoding="utf-8")
    out = tmp_path / "hf"
    assert main(["scenarios", "export", "--format", "hf", "--file", str(bank), str(out)]) == 0
    ds = _load(out, tmp_path / "c")
    assert ds["id"] == ["budget-airline-tickets-01"]
    assert "pretty_name: hear2act-scenarios-mine" in (out / "README.md").read_text(encoding="utf-8")


def test_a_non_empty_folder_is_refused(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    assert main(["scenarios", "export", "--format", "hf", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").read_text(encoding="utf-8") == "x"


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_the_core_never_imports_datasets():
    out = _python("import sys, gymnasium as gym, hear2act_env, hear2act_env.scenarios.cli, "
                  "hear2act_env.scenarios.hf_export; gym.make('Hear2Act-Prosody-v5').reset(seed=0); "
                  "print(sorted(m for m in ('datasets', 'pyarrow', 'pandas') if m in sys.modules))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_without_datasets_the_error_is_the_pip_line(tmp_path):
    out = _python("import sys; sys.modules['datasets'] = None\n"
                  "from hear2act_env.cli import main\n"
                  f"raise SystemExit(main(['scenarios', 'export', '--format', 'hf', {str(tmp_path / 'x')!r}]))")
    assert out.returncode == 2
    assert out.stderr.strip() == ("hear2act: error: hear2act scenarios export --format hf needs the datasets "
                                  "package: pip install datasets")
