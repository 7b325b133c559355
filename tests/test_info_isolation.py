"""Nothing that builds a policy's input reads ``info``'s diagnostics.

``info`` carries the hidden ``state`` and ``delivery`` (and the disclosed
needs) under every access condition, for diagnostics. A policy must act on
the observation alone: scrambling those info fields must not change a single
action of any non-privileged agent, nor any prompt a model policy is given.
(The oracle is privileged by design and is not checked.)
"""

from __future__ import annotations

import hashlib
import json

import pytest

from hear2act.agents import make_policy
from hear2act.agents.llm.policy import ModelPolicy
from hear2act.agents.llm.scripted import ScriptedBackend
from hear2act.eval.engine import make_specs, run_episodes
from hear2act_env import env as env_module
from hear2act_env import load_scenarios

IDS = [s.id for s in load_scenarios()[5::40]]  # 12 scenarios over 12 domains
_SCRAMBLE = {"resolved": "rejection", "reluctant": "resolved", "concern": "resolved", "rejection": "resolved"}


def _scrambled_info(original):
    def _info(self, reaction, action):
        info = original(self, reaction, action)
        info["state"] = _SCRAMBLE.get(info["state"], "resolved")
        info["delivery"] = "enthusiastic" if info["delivery"] != "enthusiastic" else "frustrated"
        info["disclosed"] = (1, 2, 3)
        info["question"] = {"target": "general", "attribute": "", "level": 0}
        return info

    return _info


def _prompted_choice(request) -> str:
    """A deterministic 'model' whose answer depends on every byte of its prompt."""
    h = int(hashlib.sha256(json.dumps(request.messages, sort_keys=True).encode()).hexdigest(), 16)
    choices = ("[ACTION: ASK] Anything else that matters to you?", "[ACTION: RECOMMEND] [OPTION: {n}] This one?",
               "[ACTION: CONFIRM] Let's book it.")
    return choices[h % 3].format(n=1 + (h >> 4) % 11)


def _play(policy, access: str) -> list[list[str]]:
    trajs = []
    for env_id in ("Hear2Act-Prosody-v5", "Hear2Act-Explicit-v5"):
        specs = make_specs(env_id, IDS, seed=11, access=access)
        trajs += run_episodes(specs, policy, batch_size=4, record_prompts=True)
    return [[json.dumps([t.get("prompt"), t["action"]], sort_keys=True) for t in traj["turns"]] for traj in trajs]


POLICIES = {
    "random": lambda access: make_policy("random", access=access),
    "transcript-rule": lambda access: make_policy("transcript-rule", access=access),
    "state-rule": lambda access: make_policy("state-rule", access=access),
    "model": lambda access: ModelPolicy(ScriptedBackend(_prompted_choice), access=access),
}


@pytest.mark.parametrize("access", ["T", "T+S"])
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_scrambled_info_changes_no_action_and_no_prompt(name: str, access: str, monkeypatch) -> None:
    plain = _play(POLICIES[name](access), access)
    monkeypatch.setattr(env_module.Hear2ActEnv, "_info", _scrambled_info(env_module.Hear2ActEnv._info))
    scrambled = _play(POLICIES[name](access), access)
    assert scrambled == plain


def test_the_scramble_is_visible_to_a_reader_of_info(monkeypatch) -> None:
    """Control: the scramble really changes what info says (so the test above can fail)."""
    import gymnasium as gym

    env = gym.make("Hear2Act-Prosody-v5", access="T+S")
    _, info = env.reset(seed=0, options={"scenario_id": IDS[0]})
    monkeypatch.setattr(env_module.Hear2ActEnv, "_info", _scrambled_info(env_module.Hear2ActEnv._info))
    _, scrambled = env.reset(seed=0, options={"scenario_id": IDS[0]})
    assert (info["state"], info["delivery"]) != (scrambled["state"], scrambled["delivery"])
