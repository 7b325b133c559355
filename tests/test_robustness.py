"""Hostile input: huge and odd actions in linear time, a cache that cannot lie or crash, a scenario
cache keyed by content. (Speed itself is measured in benchmarks/, not here: the time bounds below
are generous guards against quadratic behaviour, which takes minutes on these inputs.)"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import time
import warnings

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hear2act_env
from hear2act_env.dialogue import actions
from hear2act_env.dialogue.actions import parse_action
from hear2act_env.env import MAX_UTTERANCE
from hear2act_env.scenarios import BANK_FILE, load_scenarios
from hear2act_env.speech.cache import AudioCache

MB = 1_000_000
GENEROUS_S = 2.0  # linear parsing of 1 MB takes milliseconds; the quadratic parser took minutes


def _timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


# -- the parser ----------------------------------------------------------------------------------------


def _unbounded_greedy(pattern: str) -> list[str]:
    """Every ``*``/``+`` quantifier that is not possessive (``*+``/``++``), outside escapes and classes."""
    plain = re.sub(r"\[(?:\\.|[^\]\\])*\]", "C", re.sub(r"\\.", "E", pattern))
    return re.findall(r"(?<![*+?])[*+](?!\+)", plain)


@pytest.mark.parametrize("pattern", [actions._UNQUOTED, actions._QUOTED, actions._LABEL, actions._FIRST_LABEL,
                                     actions._OPTION, actions._NUMBER])
def test_every_repetition_in_the_action_patterns_is_possessive(pattern):
    assert _unbounded_greedy(pattern.pattern) == []


@pytest.mark.parametrize("pattern", [actions._LAST_TAG, actions._LAST_UNQUOTED, actions._LAST_LABEL])
def test_last_match_patterns_give_back_only_their_leading_run(pattern):
    # "(?s:.*)" then a literal: the run is given back one character at a time, once (linear).
    assert pattern.pattern.startswith("(?s:.*)") and pattern.pattern[7] in "\\["
    assert _unbounded_greedy(pattern.pattern[7:]) == []


def test_the_possessive_check_sees_backtracking_patterns():
    assert _unbounded_greedy(r"\[?\s*action\s*[:=]?\s*(ask)") == ["*", "*", "*"]
    assert _unbounded_greedy(r"\s*+[a*]x++") == []


@pytest.mark.parametrize("make, kind", [
    (lambda: " " * MB + "[ACTION: CONFIRM] ok", "confirm"),
    (lambda: "\t\n " * (MB // 3) + "[ACTION: ASK] why?", "ask"),
    (lambda: "action" + " " * MB, "invalid"),
    (lambda: "action " * (MB // 7), "invalid"),
    (lambda: "[ACTION: RECOMMEND]" + " " * MB, "invalid"),
    (lambda: "[ACTION: RECOMMEND] option" + " " * MB + "#", "invalid"),
    (lambda: "[ACTION: RECOMMEND] [OPTION: " + "7" * MB + "]", "invalid"),
    (lambda: "[ACTION: RECOMMEND] [OPTION: " + "0" * MB + "3]", "recommend"),
    (lambda: "[ACTION: ASK] " + "a " * (MB // 2), "ask"),
    (lambda: "9" * MB, "invalid"),
])
def test_one_megabyte_inputs_parse_in_linear_time(make, kind):
    text = make()
    action, seconds = _timed(parse_action, text)
    assert action.kind == kind
    assert seconds < GENEROUS_S
    assert len(action.text) <= 2000 and len(action.error) < 120


@pytest.mark.parametrize("token, option", [
    ("3", 3), ("03", 3), ("000003", 3), ("11", 11), ("3.", 3), ("3,", 3),
    ("1e1", None), ("3.5", None), ("\u0663", None), ("\uff13", None), ("3\u0663", None), ("+3", None),
    ("0x3", None), ("three", None), ("", None), ("12", None), ("0", None), ("-1", None), ("9" * 5000, None),
])
def test_only_an_ascii_integer_is_an_option_number(token, option):
    a = parse_action(f"[ACTION: RECOMMEND] [OPTION: {token}] this one")
    assert a.option == option
    assert a.valid == (option is not None)
    if option is None:
        assert a.error and len(a.error) < 120


@settings(max_examples=150, deadline=None)
@given(prefix=st.text(max_size=30), spaces=st.integers(0, 50_000), digits=st.integers(0, 50_000),
       tag=st.sampled_from(["[ACTION: CONFIRM] x", "[ACTION: RECOMMEND] [OPTION: ", "action", "option", ""]),
       filler=st.sampled_from([" ", "\t", "9", "0", "a ", "\u3000"]))
def test_parser_never_raises_on_long_runs(prefix, spaces, digits, tag, filler):
    text = prefix + filler * spaces + tag + "7" * digits + filler * spaces
    a = parse_action(text)
    assert a.kind in (*actions.KINDS, actions.INVALID)
    assert a.valid == (a.error == "")
    assert a.option is None or 1 <= a.option <= 11
    assert len(a.error) < 120


def test_env_steps_on_megabyte_actions_without_echoing_them():
    env = gym.make("Hear2Act-Prosody-v5").unwrapped
    env.reset(seed=0)
    for hostile in (" " * MB + "[ACTION: ASK] anything else?", "[ACTION: CLARIFY] " + "9" * MB,
                    "\u202e" * MB, "x" * MB):
        (obs, *_), seconds = _timed(env.step, hostile)
        assert seconds < GENEROUS_S
        line = obs["transcript"].splitlines()[-2]
        assert line.startswith("Assistant: ") and len(line) <= len("Assistant: ") + MAX_UTTERANCE
        assert env.observation_space.contains(obs)


# -- the audio cache -------------------------------------------------------------------------------------


class ToneRenderer:
    name, version, sample_rate, voices = "tone", "1", 16_000, ("tone",)

    def __init__(self) -> None:
        self.calls = 0

    def render(self, text, label, voice, seed):
        self.calls += 1
        h = int.from_bytes(hashlib.sha256(f"{text}|{label}|{seed}".encode()).digest()[:4], "little")
        return (0.2 * np.sin(np.arange(400 + len(text)) * (0.01 + h % 100 / 1000))).astype(np.float32)


def test_an_entry_copied_over_another_is_not_served(tmp_path):
    cache = AudioCache(ToneRenderer(), tmp_path)
    turn3 = cache.get("turn three", "flat", 3).copy()
    turn4 = cache.get("turn four", "warm", 4).copy()
    shutil.copyfile(cache.path(cache.key("turn four", "warm", 4)), cache.path(cache.key("turn three", "flat", 3)))
    fresh = AudioCache(ToneRenderer(), tmp_path)
    got = fresh.get("turn three", "flat", 3)
    assert np.array_equal(got, turn3) and not np.array_equal(got, turn4)
    assert (fresh.stats.repaired, fresh.stats.misses) == (1, 1)
    again = AudioCache(ToneRenderer(), tmp_path)  # repaired on disk
    assert np.array_equal(again.get("turn three", "flat", 3), turn3) and again.stats.hits == 1


def test_a_renderer_version_change_is_not_served_old_audio(tmp_path):
    old = ToneRenderer()
    AudioCache(old, tmp_path).get("same words", "flat", 1)
    new = ToneRenderer()
    new.version = "2"
    cache = AudioCache(new, tmp_path)
    cache.get("same words", "flat", 1)
    assert new.calls == 1 and cache.stats.misses == 1


def _unusable_roots(tmp_path):
    a_file = tmp_path / "cache-is-a-file"
    a_file.write_text("not a folder")
    yield "a file as root", a_file, None
    blocked = tmp_path / "blocked"
    yield "a folder where the entry goes", blocked, "mkdir-entry"
    yield "a full disk", tmp_path / "full", "enospc"


@pytest.mark.parametrize("case", ["a file as root", "a folder where the entry goes", "a full disk"])
def test_an_unusable_cache_renders_without_caching_and_warns_once(tmp_path, monkeypatch, case):
    _, root, trick = next(c for c in _unusable_roots(tmp_path) if c[0] == case)
    renderer = ToneRenderer()
    cache = AudioCache(renderer, root)
    if trick == "mkdir-entry":
        cache.path(cache.key("one", "flat", 1)).mkdir(parents=True)
    if trick == "enospc":
        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")
        monkeypatch.setattr(os, "replace", full)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            wave = cache.get("one", "flat", 1) if i == 0 else cache.get(f"turn {i}", "warm", i)
            assert wave.dtype == np.float32 and len(wave) > 400
    unusable = [w for w in caught if "not usable" in str(w.message)]
    assert len(unusable) == 1 and str(root) in str(unusable[0].message)
    assert renderer.calls == 3
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary files left behind


def test_env_steps_with_an_unwritable_cache(tmp_path, monkeypatch):
    a_file = tmp_path / "cache"
    a_file.write_text("x")
    env = gym.make("Hear2Act-Prosody-v5", access="A+T", renderer=ToneRenderer(), audio_cache=str(a_file),
                   disable_env_checker=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        obs, _ = env.reset(seed=0)
        obs, *_ = env.step("[ACTION: CLARIFY] more?")
    assert obs["audio"].dtype == np.float32 and len(obs["audio"]) > 400
    assert sum("not usable" in str(w.message) for w in caught) == 1


# -- the scenario cache -------------------------------------------------------------------------------


def test_load_scenarios_sees_a_different_file_with_the_same_mtime(tmp_path):
    lines = BANK_FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    path, other = tmp_path / "bank.jsonl", tmp_path / "other.jsonl"
    path.write_text("".join(lines[:3]), encoding="utf-8")
    other.write_text("".join(lines[3:6]), encoding="utf-8")
    first = [s.id for s in load_scenarios(path)]
    stat = path.stat()
    shutil.copyfile(other, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime as the cached load
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    second = [s.id for s in load_scenarios(path)]
    assert second == [s.id for s in hear2act_env.load_scenarios(other)] and second != first
    assert load_scenarios(path) is not load_scenarios(path)  # callers own their lists
