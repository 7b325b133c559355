"""Hostile scenario files and reset options (issue 20): one-line errors, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import hear2act_env  # noqa: F401  (registers the env ids)
from hear2act_env.cli import main as cli_main
from hear2act_env.scenarios import BANK_FILE, load_scenarios
from hear2act_env.scenarios.errors import ScenarioError
from hear2act_env.scenarios.fields import MAX_TEXT_CHARS
from hear2act_env.scenarios.validate import read_jsonl


def _good() -> dict:
    return json.loads(BANK_FILE.read_text(encoding="utf-8").splitlines()[0])


def _write(tmp_path: Path, line: str | bytes, name: str = "bad.jsonl") -> Path:
    path = tmp_path / name
    data = line if isinstance(line, bytes) else line.encode("utf-8")
    path.write_bytes(_good_line().encode() + b"\n" + data + b"\n")
    return path


def _good_line() -> str:
    return json.dumps(_good())


def _validate(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert cli_main(["scenarios", "validate", str(path)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return [line for line in out.out.splitlines() if line.startswith("INVALID")]


def _with(path: tuple, value: object) -> str:
    d = _good()
    d["id"] = d["id"] + "-x"
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(d)


@pytest.mark.parametrize("where", [("options", 0, "number"), ("needs", 0, "level"), ("requirements", 0, "value")])
def test_a_400_digit_integer_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                where: tuple) -> None:
    line = _with(where, int("9" * 400))
    [msg] = _validate(_write(tmp_path, line), capsys)
    assert "line 2:" in msg and "400 digits" in msg


def test_an_attribute_value_of_400_digits_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    d = _good()
    name = next(k for k, v in d["options"][0]["values"].items() if isinstance(v, int | float))
    d["options"][0]["values"][name] = int("9" * 400)
    [msg] = _validate(_write(tmp_path, json.dumps(d)), capsys)
    assert f"options[0].values.{name}" in msg and "400 digits" in msg


def test_json_nested_100000_deep_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    deep = '{"id": "x", "persona": ' + "[" * 100_000 + "]" * 100_000 + "}"
    [msg] = _validate(_write(tmp_path, deep), capsys)
    assert "line 2:" in msg and "nested more than 64 levels deep" in msg


def test_brackets_inside_strings_do_not_count_as_depth(tmp_path: Path) -> None:
    d = _good()
    d["request"] = d["request"] + " [" * 100
    _, errors = read_jsonl(_write(tmp_path, json.dumps(d).replace(_good()["id"], "other-id-01")))
    assert not any("nested" in str(e) for e in errors)


def test_non_utf8_through_the_python_api_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"id": "caf\xe9"}')
    scenarios, errors = read_jsonl(path)
    assert len(scenarios) == 1
    [e] = errors
    assert str(e).startswith("line 2: bad.jsonl: <json>: not UTF-8 text (byte 0xe9 at column 12)")
    with pytest.raises(ScenarioError, match=r"line 2: bad.jsonl.*not UTF-8"):
        load_scenarios(path)


@pytest.mark.parametrize("where, bad", [((), "hnt"), (("needs", 0), "hnt"), (("options", 0), "colour"),
                                       (("persona",), "mood"), (("attributes", 0), "unit"),
                                       (("requirements", 0), "strict")])
def test_unknown_fields_are_refused_listing_the_known_ones(tmp_path: Path, capsys, where: tuple, bad: str) -> None:
    d = _good()
    node = d
    for key in where:
        node = node[key]
    node[bad] = "x"
    [msg] = _validate(_write(tmp_path, json.dumps(d)), capsys)
    assert f"{bad}: unknown field; known fields:" in msg
    if where == ("needs", 0):
        assert "needs[0].hnt" in msg and "hint" in msg


def test_a_10_mb_text_field_is_refused_by_size_first(tmp_path: Path, capsys) -> None:
    [msg] = _validate(_write(tmp_path, _with(("request",), "a" * 10_000_000)), capsys)
    assert "line 2:" in msg and "a scenario line is at most" in msg


def test_a_long_text_field_is_refused_through_from_dict(tmp_path: Path, capsys) -> None:
    [msg] = _validate(_write(tmp_path, _with(("needs", 0, "statement"), "a" * (MAX_TEXT_CHARS + 1))), capsys)
    assert "needs[0].statement: text of" in msg


@pytest.mark.parametrize("field", [("needs", 0, "statement"), ("request",), ("needs", 0, "keywords")])
def test_a_lone_surrogate_in_scenario_text_is_refused_at_load(tmp_path: Path, capsys, field: tuple) -> None:
    value = ["ok", "\ud800"] if field[-1] == "keywords" else "I need \ud800 this"
    line = _with(field, value)  # json.dumps escapes it: valid JSON, invalid Unicode
    assert "\\ud800" in line
    [msg] = _validate(_write(tmp_path, line), capsys)
    assert "lone surrogate '\\ud800'" in msg


def test_the_bundled_bank_still_validates(capsys) -> None:
    assert cli_main(["scenarios", "validate"]) == 0


@pytest.mark.parametrize("options", ["x", ["scenario_id"], 3])
def test_reset_options_that_are_not_a_dict_are_a_clear_error(options: object) -> None:
    env = gym.make("Hear2Act-Prosody-v5").unwrapped
    with pytest.raises(TypeError, match="reset options must be a dict"):
        env.reset(seed=0, options=options)


def test_an_unknown_reset_option_is_a_clear_error() -> None:
    env = gym.make("Hear2Act-Prosody-v5").unwrapped
    sid = load_scenarios()[0].id
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['scenarioid'\]; known: \['scenario_id'\]"):
        env.reset(seed=0, options={"scenarioid": sid})
    assert env.reset(seed=0, options={"scenario_id": sid})[1]["scenario_id"] == sid
    assert env.reset(seed=0, options={})[1]["scenario_id"]
