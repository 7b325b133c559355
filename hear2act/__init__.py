"""The ``hear2act`` namespace: ``hear2act.agents``, ``hear2act.eval`` and ``hear2act.training``.

In the repository they are the top-level ``agents/``, ``eval/`` and ``training/`` folders (next to
``hear2act_env/``). The wheel installs them under this package (``package_dir`` in ``setup.py``), so they never
collide with another top-level ``agents`` (the OpenAI Agents SDK's import name) or a user's own ``training/``.

Imported from a checkout (``PYTHONPATH=.``, or a script that puts the repository on ``sys.path``), this package's
search path also covers the repository root, where those three folders live; in an installed wheel they sit
inside this folder and nothing is added.
"""

from __future__ import annotations

from pathlib import Path

SUBPACKAGES = ("agents", "eval", "training")

_here = Path(__file__).resolve().parent
_root = _here.parent
if not (_here / "agents").is_dir() and all((_root / name / "__init__.py").is_file() for name in SUBPACKAGES):
    __path__.append(str(_root))  # a checkout: hear2act.agents -> ROOT/agents, ...
