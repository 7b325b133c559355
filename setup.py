"""Package layout only (everything else is in pyproject.toml).

The repository keeps ``agents/``, ``eval/`` and ``training/`` at the top level; the wheel installs them as
``hear2act.agents``, ``hear2act.eval`` and ``hear2act.training`` (``package_dir``), next to ``hear2act_env``.
Subpackages are found here, so a new one needs no edit.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
NAMESPACED = ("agents", "eval", "training")

# Namespace-style discovery (as pyproject's packages.find did): data folders without __init__.py (eval/grids,
# hear2act_env/data) are packages too, so their package-data is not "absent from the packages configuration".
# training/data/ is the router fit's training rows (read from a source checkout, training/router_data.py): not
# shipped, so it is no package either.
SKIP = ["*.__pycache__", "*.__pycache__.*", "training.data", "training.data.*"]


def find(top: str) -> list[str]:
    return find_namespace_packages(str(ROOT), include=[top, f"{top}.*"], exclude=SKIP)


packages = ["hear2act", *find("hear2act_env")]
package_dir = {"hear2act": "hear2act"}
for top in NAMESPACED:
    packages += [f"hear2act.{name}" for name in find(top)]
    package_dir[f"hear2act.{top}"] = top

setup(packages=packages, package_dir=package_dir)
