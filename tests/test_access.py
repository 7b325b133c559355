"""The access table (hear2act_env.access): every layer asks it, and no code outside it branches on a name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hear2act.agents.prompts import AUDIO_ACCESS, build_messages
from hear2act.training.wrappers import CHANNELS
from hear2act_env.access import ACCESS, CONDITIONS, NAMES, SPEECH_KEYS, Access, get, name_with, names

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hear2act_env", "agents", "training", "eval")
HOME = ROOT / "hear2act_env" / "access.py"
MARK = "# access-literal:"  # a line that must name conditions says why, after this marker


def _names_in(node: ast.AST) -> list[str]:
    """Access names that ``node`` is, or directly holds (a tuple / list / set, or frozenset/set/tuple of one)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ACCESS:
        return [node.value]
    wrapped = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
    if wrapped and node.func.id in ("frozenset", "set", "tuple"):
        return _names_in(node.args[0])
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for elt in node.elts for n in _names_in(elt) if isinstance(elt, ast.Constant)]
    return []


def literal_branches(source: str) -> list[tuple[int, str]]:
    """(line, what) for each comparison with an access name, and each collection or dict of two or more names."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []
    for node in ast.walk(tree):
        hits: list[str] = []
        if isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn)
                                                 for op in node.ops):
            hits = [n for operand in (node.left, *node.comparators) for n in _names_in(operand)]
            what = "comparison with"
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            hits = _names_in(node)
            hits = hits if len(hits) >= 2 else []
            what = "collection of"
        elif isinstance(node, ast.Dict):
            hits = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in ACCESS]
            hits = hits if len(hits) >= 2 else []
            what = "dict keyed by"
        if hits and MARK not in lines[node.lineno - 1]:
            found.append((node.lineno, f"{what} {sorted(set(hits))}"))
    return sorted(found)


def test_the_detector_catches_literal_branches_and_passes_table_lookups():
    bad = 'if access == "T+S":\n    pass\nAUDIO = frozenset({"A", "A+T"})\nx = access in ("T", "T+S")\n' \
          'CH = {"T": 0, "T+S": 2}\nif ACCESS[a].state_tag == "true":\n    pass\ny = f(access="T")\n'
    assert [line for line, _ in literal_branches(bad)] == [1, 3, 4, 4, 5]
    assert literal_branches('x = a in ("T", "T+S")  ' + MARK + " the paper's pair\n") == []


def test_no_literal_branch_on_an_access_name_outside_the_table():
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == HOME:
                continue
            for line, what in literal_branches(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not offenders, ("branch on a property of hear2act_env.access.ACCESS instead of a name:\n"
                           + "\n".join(offenders))


# -- the table itself ---------------------------------------------------------------------------------------------
def test_table_is_frozen_and_named_in_order():
    assert NAMES == tuple(a.name for a in CONDITIONS) == tuple(ACCESS)
    with pytest.raises(TypeError):
        ACCESS["X"] = CONDITIONS[0]  # type: ignore[index]
    with pytest.raises(AttributeError):
        CONDITIONS[0].keys = ()  # type: ignore[misc]
    with pytest.raises(ValueError, match="access must be one of"):
        get("T+X")
    with pytest.raises(ValueError, match="state_tag"):
        Access("X", "X", "X", ("transcript",), state_tag="guessed")
    assert name_with(state_tag="true") == "T+S" and names(lambda a: a.words_hidden) == ("A",)


@pytest.mark.parametrize("access", CONDITIONS, ids=NAMES)
def test_row_is_consistent(access: Access):
    assert access.keys[0] == "transcript" and len(set(access.keys)) == len(access.keys)
    assert access.needs_speech == bool(SPEECH_KEYS & set(access.keys))
    assert access.audio_in_prompt == ("audio" in access.keys)
    assert (access.channel is None) == (access.state_tag == "none")
    assert access.takes_intervention == (access.channel == "state")
    assert access.name in CHANNELS  # the SB3 wrapper has a channel reader for every row
    assert (access.name in AUDIO_ACCESS) == access.audio_in_prompt


@pytest.mark.parametrize("access", [a for a in CONDITIONS if not a.audio_in_prompt], ids=lambda a: a.name)
def test_text_prompt_shows_exactly_the_channel(access: Access):
    obs = {"options": "1. A: x", "transcript": "User: hi", "state": "CONCERN STATE: flat (unresolved)",
           "inferred_state": "AUDIO-INFERRED STATE: uneasy, so unresolved.", "affect": "sad"}
    obs = {k: v for k, v in obs.items() if k == "options" or k in access.keys}
    text = "\n".join(m["content"] for m in build_messages(obs, access.name))
    shown = {"state": "CONCERN STATE" in text, "inferred_state": "uneasy" in text, "affect": "sad" in text}
    assert {k for k, v in shown.items() if v} == {access.channel} - {None}
