"""Entry-point plugins (hear2act_env.plugins): a user's own package, installed next to hear2act, adds a
renderer, a backend, a matcher and a reward term by name, without editing any installed file.

The package is made in a tmp dir the way pip installs one (a module plus ``myplug-0.1.dist-info`` with
METADATA and entry_points.txt), put on ``sys.path`` of a fresh interpreter, and used through the public
API only: ``gym.make(renderer=...)``, ``hear2act.agents.make_policy``, the ``hear2act rollout`` CLI, ``matcher=``
and ``hear2act.training.rewards.make_reward_funcs``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PLUGIN = '''
import numpy as np

from hear2act.agents.llm.backend import Generation, text_only


class ToneRenderer:
    """One tone per word; the label picks the pitch."""

    name, version, sample_rate, voices = "tone", "1", 16_000, ("default",)

    def render(self, text, label, voice, seed):
        f0 = 150.0 + 10.0 * (sum(map(ord, label)) % 7)
        n = int(self.sample_rate * 0.2 * max(1, len(text.split())))
        t = np.arange(n) / self.sample_rate
        return (0.1 * np.sin(2 * np.pi * f0 * t)).astype(np.float32)


class AskOnce:
    """Asks once, then confirms the option the assistant is discussing."""

    name = "ask-once"
    accepts_audio = False

    def __init__(self, target, **kwargs):
        self.target = target

    def generate(self, requests):
        out = []
        for r in requests:
            transcript = text_only(r.messages, self.name)[-1]["content"]
            out.append(Generation("[ACTION: CONFIRM] Let's book it." if "[ACTION: ASK]" in transcript
                                  else "[ACTION: ASK] Is there anything else that matters to you?"))
        return out


def never_targeted(scenario, question):
    return None


def brevity(completions, **kwargs):
    return [-len(str(c)) / 100 for c in completions]


brevity.weight = 0.25
'''

ENTRY_POINTS = """
[hear2act.renderers]
tone = myplug:ToneRenderer
broken = myplug_missing.module:Renderer

[hear2act.backends]
askonce = myplug:AskOnce

[hear2act.matchers]
never = myplug:never_targeted

[hear2act.rewards]
brevity = myplug:brevity
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A site dir holding the tiny package as pip would install it (module + dist-info)."""
    root = tmp_path_factory.mktemp("site")
    (root / "myplug.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "myplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return root


def _run(site: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    env.pop("HEAR2ACT_SCENARIOS", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=env, cwd=site, timeout=300)


def test_plugins_are_listed_without_importing_them(site):
    out = _run(site, """
        import json, sys
        from hear2act_env.speech.renderers import RENDERERS
        from hear2act.agents.llm import BACKENDS
        from hear2act_env.dialogue.matchers import MATCHERS
        from hear2act.training.rewards import REWARDS
        print(json.dumps([sorted(RENDERERS), sorted(BACKENDS), sorted(MATCHERS), sorted(REWARDS),
                          "myplug" in sys.modules]))
    """)
    assert out.returncode == 0, out.stderr
    renderers, backends, matchers, rewards, imported = json.loads(out.stdout)
    assert {"tone", "broken", "hibari"} <= set(renderers)
    assert {"askonce", "openai"} <= set(backends)
    assert {"never", "learned"} <= set(matchers)
    assert {"brevity", "accuracy"} <= set(rewards)
    assert imported is False  # listed from metadata; the module loads only when a plugin is used


def test_plugin_renderer_and_backend_play_through_the_public_api(site):
    out = _run(site, """
        import json
        import gymnasium as gym
        import numpy as np
        import hear2act_env
        from hear2act.agents import make_policy
        from hear2act.eval.engine import make_specs, run_episodes

        env = gym.make("Hear2Act-Prosody-v5", access="A+T", renderer="tone", voice="default",
                       audio_cache=None)
        obs, info = env.reset(seed=0)
        obs2, *_ = env.step("[ACTION: ASK] Is there anything else that matters to you?")
        policy = make_policy("askonce:anything", access="T")
        specs = make_specs("Hear2Act-Prosody-v5", ["budget-airline-tickets-01", "budget-airline-tickets-02"])
        trajs = list(run_episodes(specs, policy, batch_size=2))
        print(json.dumps({"samples": int(np.count_nonzero(obs2["audio"])), "dtype": str(obs2["audio"].dtype),
                          "backend": type(policy.backend).__name__,
                          "kinds": [[t["parsed_kind"] for t in tr["turns"]] for tr in trajs]}))
    """)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["samples"] > 1000 and got["dtype"] == "float32"  # the user's reply, spoken by the plugin
    assert got["backend"] == "AskOnce"
    assert all(kinds[:2] == ["ask", "confirm"] for kinds in got["kinds"]), got["kinds"]


def test_plugin_backend_is_a_cli_agent_spec(site):
    out = _run(site, "from hear2act_env.cli import main; raise SystemExit(main())",
               "rollout", "--agent", "askonce:x", "--n", "2", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "askonce:x" in out.stdout


def test_plugin_matcher_and_reward_term(site):
    out = _run(site, """
        import json
        import gymnasium as gym
        import hear2act_env
        from hear2act.training.rewards import REWARD_WEIGHTS, make_reward_funcs

        targets = []
        for matcher in ("learned", "never"):
            env = gym.make("Hear2Act-Prosody-v5", access="T", matcher=matcher)
            env.reset(seed=0, options={"scenario_id": "budget-airline-tickets-01"})
            _, _, _, _, info = env.step("[ACTION: ASK] Does it have Wi-Fi on board?")
            targets.append(info["question"]["target"])
        funcs = make_reward_funcs(["format", "brevity"])
        print(json.dumps({"targets": targets, "names": [f.__name__ for f in funcs],
                          "score": funcs[1](["abcd"]), "weight": REWARD_WEIGHTS["brevity"]}))
    """)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["targets"] == ["distractor", "general"]  # the plugin's matcher reads every question as general
    assert got["names"] == ["format", "brevity"] and got["score"] == [-0.04] and got["weight"] == 0.25


def test_a_broken_plugin_names_its_entry_point(site):
    out = _run(site, """
        import gymnasium as gym
        import hear2act_env
        gym.make("Hear2Act-Prosody-v5", access="A+T", renderer="broken", voice="default")
    """)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "PluginError" in last and "renderer plugin 'broken'" in last
    assert "broken = myplug_missing.module:Renderer" in last and "myplug 0.1" in last
    assert "ModuleNotFoundError" in last
    cli = _run(site, """
        from hear2act_env.speech.renderers import make_renderer
        try:
            make_renderer("broken")
        except ImportError as exc:  # PluginError is an ImportError: the CLI reports it in one line
            print(type(exc).__name__, exc)
    """)
    assert cli.stdout.startswith("PluginError renderer plugin 'broken'"), cli.stdout + cli.stderr


def test_builtin_names_win_over_plugins(tmp_path):
    (tmp_path / "shadow.py").write_text("class Fake: pass\n", encoding="utf-8")
    info = tmp_path / "shadow-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[hear2act.renderers]\nhibari = shadow:Fake\n", encoding="utf-8")
    out = _run(tmp_path, """
        import warnings
        from hear2act_env.speech.renderers import RENDERERS
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = sorted(RENDERERS)
        print(RENDERERS["hibari"], names.count("hibari"), [str(w.message) for w in caught])
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("hear2act_env.speech.renderers.hibari:HibariRenderer 1 ")
    assert "'hibari = shadow:Fake'" in out.stdout and "is built in" in out.stdout
