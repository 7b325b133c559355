"""Packaging: one namespace (``hear2act_env`` + ``hear2act.{agents,eval,training}``), no top-level ``agents``.

The wheel is built from a copy of the package sources (nothing is written into the checkout) and installed with
``pip install --target`` next to a stand-in for the OpenAI Agents SDK (a top-level ``agents`` defining
``Agent``); a fresh interpreter then imports both and plays an episode with our agent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "LICENSES", "hear2act", "hear2act_env", "agents",
           "eval", "training")
spec = importlib.util.spec_from_file_location("namespace_imports", ROOT / "tools" / "namespace_imports.py")
assert spec is not None and spec.loader is not None
namespace_imports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(namespace_imports)


# -- the rewrite script (tools/namespace_imports.py) -------------------------------------------------------------
SUBS = namespace_imports.submodules(ROOT)


@pytest.mark.parametrize(("before", "after"), [
    ("from agents.rule import Catalog\n", "from hear2act.agents.rule import Catalog\n"),
    ("    from training import grpo, sft\n", "    from hear2act.training import grpo, sft\n"),
    ("import agents\n", "from hear2act import agents\n"),
    ("import training.ppo as ppo\n", "import hear2act.training.ppo as ppo\n"),
    ('"state-rule": "agents.rule:StateAwareRuleAgent",', '"state-rule": "hear2act.agents.rule:StateAwareRuleAgent",'),
    ('"report": "eval.report.cli",', '"report": "hear2act.eval.report.cli",'),
    ("python -m training.ppo --access T+S", "python -m hear2act.training.ppo --access T+S"),
    ('    "from eval.grid import parse_grid\\n",', '    "from hear2act.eval.grid import parse_grid\\n",'),
    (":mod:`training.splits`", ":mod:`hear2act.training.splits`"),
    ("any agents.make_policy spec", "any hear2act.agents.make_policy spec"),  # a name in agents.__all__
])
def test_rewrite_examples(before: str, after: str) -> None:
    assert namespace_imports.rewrite_text(before, ".py", SUBS) == after
    assert namespace_imports.rewrite_text(after, ".py", SUBS) == after  # idempotent


@pytest.mark.parametrize("text", [
    "from hear2act_env.dialogue.engine import LABELS\n",  # hear2act_env is never touched
    'json.loads((out / "eval.json").read_text())',  # a file name, not eval/json.py
    "model.eval()\nself.training.splits = 1\n",  # attributes, not modules
    "results from eval are kept\n",  # prose
    "agents.get(name)\n",  # a local dict named agents: get is not in agents.__all__
    "from hear2act.training.ppo import Args\n",
])
def test_rewrite_leaves_alone(text: str) -> None:
    assert namespace_imports.rewrite_text(text, ".md", SUBS) == text


def test_tree_uses_the_namespace() -> None:
    """Every reference in the tree already names hear2act.* (new code with old names: run the script)."""
    stale = namespace_imports.run(namespace_imports.tree_files(ROOT), check=True, root=ROOT)
    assert not stale, f"run `python tools/namespace_imports.py`: {[str(p.relative_to(ROOT)) for p in stale]}"


def test_checkout_maps_the_namespace() -> None:
    import hear2act
    import hear2act.agents
    import hear2act.eval
    import hear2act.training

    for name in hear2act.SUBPACKAGES:
        module = sys.modules[f"hear2act.{name}"]
        assert Path(module.__file__).resolve() == ROOT / name / "__init__.py"


def test_pyproject_license_is_spdx() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert isinstance(project["license"], str)  # a table ({text = ...}) is deprecated: setuptools warns
    assert project["license"] == "Apache-2.0 AND CC-BY-SA-4.0"
    for pattern in project["license-files"]:
        assert list(ROOT.glob(pattern)), f"license-files {pattern!r} matches nothing"


# -- the wheel ----------------------------------------------------------------------------------------------------
def _copy_sources(src: Path) -> None:
    """The files a build reads (SOURCES), copied into ``src``."""
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    _copy_sources(src)
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the venv's setuptools builds it (no download).
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(out), str(src)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    (path,) = out.glob("hear2act-*.whl")
    return path


@pytest.mark.slow
def test_wheel_top_level_names(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
        assert top == {"hear2act", "hear2act_env"}
        for required in ("hear2act/__init__.py", "hear2act/agents/__init__.py", "hear2act/agents/llm/__init__.py",
                         "hear2act/eval/report/__init__.py", "hear2act/eval/grids/quick.toml",
                         "hear2act/training/configs/ddp.yaml", "hear2act_env/cli.py"):
            assert required in names, required
        assert any(n.startswith("hear2act/agents/prompts/templates/") and n.endswith(".txt") for n in names)
        # The router fit's training rows stay in the source checkout (training/data/routing/), and no test data ships.
        assert not [n for n in names if n.startswith("hear2act/training/data/") or "/tests/" in n]
        metadata = next(z.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
        licences = [n for n in names if "/licenses/" in n]
    assert "License-Expression: Apache-2.0 AND CC-BY-SA-4.0" in metadata
    assert any(n.endswith("/LICENSE") for n in licences) and any(n.endswith("CC-BY-SA-4.0.txt") for n in licences)


@pytest.mark.slow
def test_wheel_installs_next_to_a_package_named_agents(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                             str(wheel)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not any((target / name).exists() for name in ("agents", "eval", "training"))
    sdk = target / "agents"  # what the OpenAI Agents SDK installs: a top-level `agents` with an `Agent`
    sdk.mkdir()
    (sdk / "__init__.py").write_text('class Agent:\n    SDK = "openai-agents stand-in"\n', encoding="utf-8")
    code = """
import json, sys
from agents import Agent as SDKAgent
from hear2act.agents import Agent, make_agent
import hear2act_env, gymnasium as gym
from hear2act.eval.rollout import run_episode
import hear2act.training.wrappers, hear2act.eval.cli
env = gym.make("Hear2Act-Prosody-v5", access="T+S")
scenario = hear2act_env.load_scenarios()[0].id
outcome = run_episode(env, make_agent("state-rule"), scenario, 0)
files = {name: sys.modules[name].__file__ for name in ("agents", "hear2act.agents", "hear2act_env",
                                                     "hear2act.training.wrappers")}
print(json.dumps({"sdk": SDKAgent.SDK, "ours": Agent.__module__, "files": files,
                  "outcome_keys": sorted(outcome)}))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["sdk"] == "openai-agents stand-in"
    assert seen["ours"] == "hear2act.agents.base"
    for name, file in seen["files"].items():
        assert Path(file).resolve().is_relative_to(target.resolve()), (name, file)
    assert "success" in seen["outcome_keys"]


@pytest.mark.slow
def test_editable_install_maps_the_namespace(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """``pip install -e .``: setuptools' editable wheel maps hear2act.agents/.eval/.training onto the folders."""
    src = tmp_path_factory.mktemp("editable-src")
    _copy_sources(src)
    out = tmp_path / "wheel"
    out.mkdir()
    backend = f"from setuptools import build_meta; build_meta.build_editable({str(out)!r})"
    build = subprocess.run([sys.executable, "-c", backend], cwd=src, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                              str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    (finder,) = target.glob("__editable___*_finder.py")
    assert "hear2act" in (target / f"__editable__.{wheel.name.split('-')[0]}-0.1.0.pth").read_text()
    # This interpreter may carry its own editable install of the project under the same finder module name:
    # take it off sys.meta_path and load the new wheel's finder from its file (what its .pth does).
    code = f"""
import importlib.util, json, sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
spec = importlib.util.spec_from_file_location("new_editable_finder", {str(finder)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.install()
names = ["hear2act", "hear2act.agents", "hear2act.eval", "hear2act.training", "hear2act.agents.llm", "hear2act_env"]
import hear2act.agents.llm, hear2act.eval, hear2act.training, hear2act_env
print(json.dumps({{n: sys.modules[n].__file__ for n in names}}))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    files = json.loads(run.stdout.strip().splitlines()[-1])
    assert files == {"hear2act": str(src / "hear2act" / "__init__.py"),
                     "hear2act.agents": str(src / "agents" / "__init__.py"),
                     "hear2act.eval": str(src / "eval" / "__init__.py"),
                     "hear2act.training": str(src / "training" / "__init__.py"),
                     "hear2act.agents.llm": str(src / "agents" / "llm" / "__init__.py"),
                     "hear2act_env": str(src / "hear2act_env" / "__init__.py")}
