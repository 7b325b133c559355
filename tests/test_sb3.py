"""SB3 wrappers and PPO: check_env on every id x access, info never read, reproducible tiny PPO runs."""

from __future__ import annotations

import importlib.util
import json
import warnings

import gymnasium as gym
import numpy as np
import pytest

from hear2act.training.reader import CATEGORIES, read, split_opener
from hear2act.training.wrappers import BASE_SIZE, MACRO, DiscreteDialogue, make_env
from hear2act_env import ENV_IDS, load_scenarios
from hear2act_env.dialogue.engine import assess

pytest.importorskip("stable_baselines3")
SPEECH = all(importlib.util.find_spec(m) for m in ("hibari", "parselmouth", "scipy"))
TEXT_ACCESS = ("T", "T+S")
AUDIO_ACCESS = ("A+T", "T+S_hat", "A", "T+affect")
SCENARIOS = load_scenarios()[:12]


def _checks(env: gym.Env) -> None:
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "different from the unwrapped version": a wrapper is what we check
        gym_check(env, skip_render_check=True)
    sb3_check(env, warn=False)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
@pytest.mark.parametrize("access", TEXT_ACCESS)
@pytest.mark.parametrize("action_set", ["macro", "full"])
def test_check_env_text(env_id: str, access: str, action_set: str) -> None:
    env = make_env(env_id, access, action_set=action_set, scenarios=SCENARIOS)
    _checks(env)
    assert isinstance(env.observation_space, gym.spaces.Box) and env.observation_space.shape is not None


@pytest.mark.slow
@pytest.mark.skipif(not SPEECH, reason="needs the speech extra")
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
@pytest.mark.parametrize("access", AUDIO_ACCESS)
def test_check_env_audio(env_id: str, access: str) -> None:
    env = make_env(env_id, access, episode_pool=1, scenarios=SCENARIOS[:2])
    _checks(env)


class PoisonedInfo(dict):
    """An info dict that fails the test if anything looks inside it."""

    def _boom(self, *a, **k):
        raise AssertionError("the wrapper read info")

    __getitem__ = get = __contains__ = keys = items = values = __iter__ = __len__ = _boom  # type: ignore[assignment]


class PoisonInfo(gym.Wrapper):
    def reset(self, **kw):
        obs, _ = self.env.reset(**kw)
        return obs, PoisonedInfo()

    def step(self, action):
        obs, reward, terminated, truncated, _ = self.env.step(action)
        return obs, reward, terminated, truncated, PoisonedInfo()


@pytest.mark.parametrize("access", TEXT_ACCESS)
@pytest.mark.parametrize("action_set", ["macro", "full"])
def test_wrapper_never_reads_info(access: str, action_set: str) -> None:
    """Same observations with a poisoned info as with the real one, over whole episodes."""
    base = gym.make("Hear2Act-Prosody-v5", access=access, scenarios=SCENARIOS, disable_env_checker=True)
    poisoned = DiscreteDialogue(PoisonInfo(gym.make("Hear2Act-Prosody-v5", access=access, scenarios=SCENARIOS,
                                                    disable_env_checker=True)), action_set)
    clean = DiscreteDialogue(base, action_set)
    rng = np.random.default_rng(0)
    for ep in range(6):
        a, _ = clean.reset(seed=ep)
        b, info = poisoned.reset(seed=ep)
        assert isinstance(info, PoisonedInfo)
        done = False
        while not done:
            np.testing.assert_array_equal(a, b)
            act = int(rng.integers(clean.action_space.n))
            a, ra, ta, tra, _ = clean.step(act)
            b, rb, tb, trb, _ = poisoned.step(act)
            assert (ra, ta, tra) == (rb, tb, trb)
            done = ta or tra


def test_macro_actions_render_the_text_format_and_keep_the_rules() -> None:
    """A scripted macro policy that reads only the observation vector: the state tag says when to confirm."""
    env = make_env("Hear2Act-Prosody-v5", "T+S", scenarios=load_scenarios()[:48])
    status = slice(BASE_SIZE, BASE_SIZE + 2)  # the T+S channel starts with the tag's status
    wins = 0
    for sid in [s.id for s in env.unwrapped.scenarios]:
        obs, _ = env.reset(seed=1, options={"scenario_id": sid})
        asked, done, info = False, False, {}
        while not done:
            resolved, unresolved = obs[status]
            assert resolved + unresolved == 1.0
            act = MACRO.index("confirm") if resolved else MACRO.index("recommend" if asked else "ask")
            asked = act == MACRO.index("ask")
            text = env.render_action(act)
            assert text.startswith("[ACTION: " + MACRO[act].upper() + "]")
            obs, _, terminated, truncated, info = env.step(act)
            done = terminated or truncated
        wins += info["outcome"]["success"]  # scoring only
    # Env -v5: in budget-airline-tickets-05 the gold comes after nine other options on the macro's walk, and asking
    # before every recommendation spends the 20 turns first (48 of 48 on -v4's bank).
    assert wins >= 47


def test_reader_categories_and_fit_precision() -> None:
    """The reader sorts the realizer's phrases, and rarely rules out the gold (measured against hidden truth)."""
    assert split_opener("Okay, sounds good.") == ("assent", "")
    cat, text = split_opener("No, that won't work. It has to be a nonstop flight.")
    assert (cat, text) == ("reject", "It has to be a nonstop flight.")
    assert split_opener("I'd prefer a window seat.")[0] == "answer"
    env = make_env("Hear2Act-Explicit-v5", "T", scenarios=load_scenarios()[:96])
    gold_out = 0
    for i, s in enumerate(env.unwrapped.scenarios):
        env.reset(seed=i, options={"scenario_id": s.id})
        done = False
        for act in [0, 2] * 9:  # ask, recommend ... : discloses needs against the options tried
            if done:
                break
            _, _, te, tr, _ = env.step(act)
            done = te or tr
        r = env._reading
        assert r is not None and r.category in CATEGORIES
        gold_out += not r.fit[s.gold]
        # Every option the words counted against has a real problem (or is the safe option, worse than gold).
        assert all(assess(s, n).issue != "none" for n in r.flagged)
    # measured: 16 of 96 on the bank with blindly dealt categorical values (13 before); 13 of 96 (all 480: 62 -> 60)
    # since the reader stems with Porter2 and drops the one stopword list: statements that share no words with
    # their values
    assert gold_out <= 0.20 * 96


def test_reader_reads_text_only() -> None:
    options = "1. A: nonstop, $100 total\n2. B: two stops, $80 total\n3. C: two stops, $90 total"
    transcript = ("User: cheapest please\nAssistant: [ACTION: RECOMMEND] [OPTION: 2] B?\n"
                  "User: No, that won't work. It has to be a nonstop flight.")
    r = read(options, transcript)
    assert r.current == 2 and r.flagged == {2} and r.fit == {1: True, 2: False, 3: False}


@pytest.mark.slow  # end to end, over 15 s: make test runs it, make test-fast leaves it out
def test_vec_envs() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    def factory():
        return make_env("Hear2Act-Prosody-v5", "T+S", scenarios=SCENARIOS)

    for cls in (DummyVecEnv, SubprocVecEnv):
        venv = cls([factory, factory])
        venv.seed(3)
        obs = venv.reset()
        assert obs.shape == (2, *factory().observation_space.shape)
        for _ in range(12):
            obs, _, _, infos = venv.step(np.array([2, 3]))
        assert obs.dtype == np.float32 and len(infos) == 2
        venv.close()


def _tiny(out: str, seed: int = 0):
    from hear2act.training.ppo import Args

    return Args(access="T+S", total_timesteps=256, n_steps=64, n_envs=2, batch_size=64, n_epochs=2, seed=seed,
                out=out, max_scenarios=60, test_domains=1, test_per_domain=2, eval_every=128)


@pytest.mark.slow  # end to end, over 15 s: make test runs it, make test-fast leaves it out
def test_ppo_smoke_and_same_seed_same_eval(tmp_path) -> None:
    from hear2act.training.ppo import train

    a = train(_tiny(str(tmp_path / "a")))
    assert a["overall"]["n"] == 20 and a["n_train"] == 40
    assert {"success", "turns", "premature_closure", "n_disclosed"} <= set(a["overall"])
    assert [p["timesteps"] for p in a["curve"]][-1] == 256
    assert (tmp_path / "a" / "policy.zip").exists() and any((tmp_path / "a" / "tb").iterdir())
    train(_tiny(str(tmp_path / "b")))
    assert (tmp_path / "a" / "eval.json").read_bytes() == (tmp_path / "b" / "eval.json").read_bytes()
    assert json.loads((tmp_path / "a" / "eval.json").read_text())["seed"] == 0


def test_ppo_cli_arguments_all_documented() -> None:
    import dataclasses

    from hear2act.training.ppo import Args, parse_args, split_scenarios

    assert all(f.metadata.get("help") for f in dataclasses.fields(Args))
    args = parse_args(Args, ["--access", "T", "--total-timesteps", "5", "--no-wandb"])
    assert args.access == "T" and args.total_timesteps == 5 and args.wandb is False
    split = split_scenarios(load_scenarios(), 8, 2, 0)
    train_domains = {s.domain for s in split["train"]}
    assert not train_domains & {s.domain for s in split["unseen_domain"]}
    assert {s.domain for s in split["unseen_scenario"]} <= train_domains
    assert not {s.id for s in split["train"]} & {s.id for s in split["unseen_scenario"]}
    with pytest.raises(ValueError, match="test_domains"):
        split_scenarios(load_scenarios(), 48, 2, 0)
