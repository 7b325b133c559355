"""The notebooks run top to bottom in a real Jupyter kernel (nbclient + ipykernel), and show what they promise.

Each notebook runs with the repository root as the working directory, the way ``jupyter nbconvert --execute``
would run it from there, in a kernel of this interpreter (its environment, so ``HEAR2ACT_NOTEBOOK_DIR`` and the
test cache reach it). Figures come back as ``image/png`` outputs (the kernel's inline backend), the audio players
as HTML ``<audio>`` elements. Outputs are stripped in git (checked here too). The kernel packages are the
``notebooks`` extra (``pip install "hear2act[notebooks]"``); without them the run tests skip and say so.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = ("nbclient", "nbformat", "ipykernel")
# What each notebook needs beyond the core install (the suite installs every extra; elsewhere they skip).
NEEDS = ("hibari", "matplotlib")
NEEDS_BY_NOTEBOOK = {"evaluate_a_model.ipynb": ("transformers", "torch"),
                     "train.ipynb": ("stable_baselines3", "trl", "transformers", "torch")}
# Code that draws or shows a figure: its cell must come back with a PNG.
FIGURE_CODE = ("plt.subplots(", "display(Image(")


def test_notebooks_are_stored_without_outputs():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                assert not cell["outputs"] and cell["execution_count"] is None, f"{path.name}: outputs not stripped"


def _outputs(cell: dict, mime: str) -> list:
    return [o["data"][mime] for o in cell.get("outputs", []) if mime in o.get("data", {})]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_a_kernel(path, monkeypatch, tmp_path):
    missing_kernel = [m for m in KERNEL if importlib.util.find_spec(m) is None]
    if missing_kernel:
        pytest.skip(f'a Jupyter kernel needs {missing_kernel}: pip install "hear2act[notebooks]"')
    missing = [m for m in (*NEEDS, *NEEDS_BY_NOTEBOOK.get(path.name, ())) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"extras not installed: {missing}")
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("HEAR2ACT_NOTEBOOK_DIR", str(tmp_path))  # where the notebooks write runs and models
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend turns figures into PNGs
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=540, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # a failing cell raises CellExecutionError naming the cell and its traceback

    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    drawn = [c for c in code if any(s in c.source for s in FIGURE_CODE)]
    assert drawn, f"{path.name}: no figure cell found"
    for cell in drawn:
        assert _outputs(cell, "image/png"), f"{path.name}: the cell drawing\n{cell.source[:200]}\nshowed no figure"
    if path.name == "quickstart.ipynb":  # two players: the same words, resolved and unresolved
        players = [html for c in code for html in _outputs(c, "text/html") if "<audio" in html]
        assert len(players) == 2
    if path.name == "evaluate_a_model.ipynb":  # the report cell: its markdown and every figure it built
        (report,) = [c for c in code if "build_report(" in c.source]
        assert _outputs(report, "text/markdown")
        pngs = _outputs(report, "image/png")
        assert pngs and all(png.startswith("iVBORw0KGgo") for png in pngs)  # base64 of the PNG signature
