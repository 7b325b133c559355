"""docs/environment.md agrees with the env and its docstring (the page's one source is the code):
the example prints what its comments say, and the tables list exactly the env's arguments (with their
defaults), observation keys per access condition, and the keys of ``info`` and ``info["outcome"]``."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path

import gymnasium as gym

import hear2act_env  # noqa: F401  (registers the ids)
from hear2act_env import env as env_module
from hear2act_env.access import ACCESS
from hear2act_env.env import Hear2ActEnv

PAGE = (Path(__file__).parent.parent / "docs" / "environment.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return PAGE.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _first_column(section: str, table: int = 0) -> list[str]:
    """The first cells of the body rows of the ``table``-th table of a section."""
    tables = re.findall(r"((?:^\|.*\|\n)+)", section, flags=re.M)
    return [re.split(r"(?<!\\)\|", line)[1].strip() for line in tables[table].splitlines()[2:]]


def _codes(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_example_prints_what_its_comments_say():
    code = PAGE.split("```python\n", 1)[1].split("```", 1)[0]
    checks = []
    lines = []
    for line in code.splitlines():
        m = re.match(r"print\((.+)\)\s+# (.+)$", line)
        if m:
            checks.append(m.group(2).strip())
            line = f"_seen.append(str({m.group(1)}))"
        lines.append(line)
    seen: list[str] = []
    exec("\n".join(lines), {"_seen": seen})  # the page's own example
    assert checks and seen == checks


def test_arguments_table_is_the_signature():
    params = inspect.signature(Hear2ActEnv.__init__).parameters
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \|", _section("Arguments"), flags=re.M)
    assert [name for name, _ in rows] == [p for p in params if p not in ("self", "realization")]
    for name, default in rows:
        value = params[name].default
        literal = re.fullmatch(r"`([^`]+)`", default.strip())
        if literal and isinstance(value, str | int | float | type(None)):
            shown = literal.group(1)
            assert shown == (f'"{value}"' if isinstance(value, str) else repr(value)), name


def test_access_table_lists_each_conditions_keys():
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \| (?:core|speech extra) \|", _section("Access conditions and "
                                                                                   "observation keys"), flags=re.M)
    assert {a for a, _ in rows} == set(ACCESS)
    for access, cell in rows:
        assert tuple(c for c in _codes(cell) if re.fullmatch(r"\w+", c)) == ACCESS[access].keys, access


def test_info_and_outcome_tables_list_the_env_keys_and_values():
    env = gym.make("Hear2Act-Prosody-v5", access="T")
    _, reset_info = env.reset(seed=0)
    _, _, _, _, step_info = env.step("[ACTION: CLARIFY] Could you say more?")
    _, _, terminated, _, final = env.step("[ACTION: CONFIRM] Great, I'll book it.")
    assert terminated
    section = _section("`info`")
    info_keys = [k for cell in _first_column(section, 0) for k in _codes(cell)]
    assert set(info_keys) == set(step_info)
    assert set(reset_info) - set(step_info) == {"scenario_id", "realization"}
    assert "Reset adds `scenario_id` and `realization`" in section
    outcome_keys = [k for cell in _first_column(section, 1) for k in _codes(cell)]
    assert set(outcome_keys) == set(final["outcome"])
    # the values the page states for a non-ASK step and an episode without agent recommendations
    assert step_info["question"] == env_module.NOT_ASKED and str(env_module.NOT_ASKED) in section
    assert final["outcome"]["recommendations"] == 0 and math.isnan(final["outcome"]["accept_rate"])
    rate_row = next(line for line in section.splitlines() if line.startswith("| `accept_rate`"))
    assert "NaN" in rate_row and "None" not in rate_row
    # and the docstring says the same
    doc = inspect.getdoc(Hear2ActEnv) or ""
    assert "NaN when there were none" in doc and '``target`` is ``""`` on every' in doc
