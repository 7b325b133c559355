"""The notebooks run top to bottom (code cells only; IPython's display is stubbed, matplotlib draws with Agg).

Each notebook runs in a fresh namespace with the repository root as the working directory, the way
`jupyter nbconvert --execute` would run it from there. Outputs are stripped in git (checked here too).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# What each notebook needs beyond the core install (the suite installs every extra; elsewhere they skip).
NEEDS = ("hibari", "matplotlib")
NEEDS_BY_NOTEBOOK = {"evaluate_a_model.ipynb": ("transformers", "torch"),
                     "train.ipynb": ("stable_baselines3", "trl", "transformers", "torch")}


def _ipython_stub() -> tuple[types.ModuleType, types.ModuleType, list]:
    shown: list = []
    display = types.ModuleType("IPython.display")
    display.Audio = lambda data, rate: ("Audio", len(data), rate)
    display.Image = lambda data=None, filename=None, **kw: ("Image", filename or len(data))
    display.Markdown = lambda text: ("Markdown", len(text))
    display.display = lambda *objs, **kw: shown.extend(objs)
    ipython = types.ModuleType("IPython")
    ipython.display = display
    # matplotlib looks IPython up in sys.modules: say "a modern IPython, not running" so it leaves it alone.
    ipython.get_ipython = lambda: None
    ipython.version_info = (9, 0, 0)
    return ipython, display, shown


def test_notebooks_are_stored_without_outputs():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                assert not cell["outputs"] and cell["execution_count"] is None, f"{path.name}: outputs not stripped"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    missing = [m for m in (*NEEDS, *NEEDS_BY_NOTEBOOK.get(path.name, ())) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"extras not installed: {missing}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ipython, display, shown = _ipython_stub()
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HEAR2ACT_NOTEBOOK_DIR", str(tmp_path))  # where the notebooks write runs and models
    namespace: dict = {"__name__": "__main__"}
    try:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                exec(compile("".join(cell["source"]), f"{path.name}", "exec"), namespace)
    finally:
        plt.close("all")
    if path.name == "quickstart.ipynb":  # two players: the same words, resolved and unresolved
        assert [s[0] for s in shown].count("Audio") == 2
