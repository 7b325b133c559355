"""Gymnasium discipline: check_env, determinism, pickling, parser fuzzing."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import hear2act_env
from hear2act.agents import make_agent
from hear2act_env.access import ACCESS
from hear2act_env.dialogue.actions import parse_action
from hear2act_env.env import INTERVENTIONS

CONDITIONS = [
    (env_id, access, intervention)
    for env_id in hear2act_env.ENV_IDS
    for access in ACCESS
    for intervention in INTERVENTIONS
    if intervention == "correct" or ACCESS[access].takes_intervention
]


def test_ids_are_registered_with_string_entry_points():
    for env_id in hear2act_env.ENV_IDS:
        spec = gym.spec(env_id)
        assert spec.entry_point == "hear2act_env.env:Hear2ActEnv"


@pytest.mark.parametrize("env_id, access, intervention", CONDITIONS)
def test_check_env_passes_without_warnings(env_id, access, intervention):
    env = gym.make(env_id, access=access, state_intervention=intervention)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id, access, intervention", CONDITIONS)
def test_observations_stay_in_space(env_id, access, intervention):
    env = gym.make(env_id, access=access, state_intervention=intervention)
    agent = make_agent("random", seed=3)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        assert env.observation_space.contains(obs)
        done = False
        while not done:
            obs, _, term, trunc, _ = env.step(agent.act(obs))
            assert env.observation_space.contains(obs)
            done = term or trunc


def _rollout(env, seed, actions):
    obs, info = env.reset(seed=seed)
    trace = [(obs, info)]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        trace.append((obs, r, term, trunc, info))
        if term or trunc:
            break
    return trace


ACTIONS = [
    "[ACTION: ASK] Is there anything else?",
    "[ACTION: RECOMMEND] [OPTION: 2] this?",
    "[ACTION: RECOMMEND] [OPTION: 7] or this?",
    "[ACTION: CLARIFY] hmm",
    "nonsense",
    "[ACTION: CONFIRM] ok",
] * 4


@pytest.mark.parametrize("env_id", sorted(hear2act_env.ENV_IDS))
def test_same_seed_two_envs_identical_rollouts(env_id):
    a = gym.make(env_id, access="T+S", state_intervention="shuffled")
    b = gym.make(env_id, access="T+S", state_intervention="shuffled")
    for seed in (0, 1, 123):
        assert _rollout(a, seed, ACTIONS) == _rollout(b, seed, ACTIONS)
    assert _rollout(a, 0, ACTIONS) != _rollout(a, 1, ACTIONS)


def test_pickle_round_trip_mid_episode():
    env = gym.make("Hear2Act-Prosody-v5", access="T+S").unwrapped
    env.reset(seed=5)
    env.step(ACTIONS[0])
    clone = pickle.loads(pickle.dumps(env))
    for action in ACTIONS[1:6]:
        assert env.step(action) == clone.step(action)


def test_reset_with_scenario_id_and_unknown_id():
    env = gym.make("Hear2Act-Explicit-v5")
    sid = env.unwrapped.scenarios[3].id
    _, info = env.reset(seed=0, options={"scenario_id": sid})
    assert info["scenario_id"] == sid
    with pytest.raises(ValueError, match="unknown scenario_id 'nope'"):
        env.reset(seed=0, options={"scenario_id": "nope"})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"access": "X"}, "access must be one of"),
        ({"state_intervention": "maybe"}, "state_intervention must be one of"),
        ({"access": "T", "state_intervention": "shuffled"}, "needs an access with a state tag"),
        ({"scenarios": []}, "no scenarios"),
        ({"max_turns": 1}, "max_turns"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("Hear2Act-Prosody-v5", **kwargs)


def test_step_before_reset_and_after_end_raise():
    env = gym.make("Hear2Act-Prosody-v5", disable_env_checker=True).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step("[ACTION: CONFIRM]")
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step("[ACTION: ASK] anything else?")
        done = term or trunc
    with pytest.raises(RuntimeError, match="ended"):
        env.step("[ACTION: CONFIRM]")


# -- the action parser ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kind, option",
    [
        ("[ACTION: RECOMMEND] [OPTION: 3] How about it?", "recommend", 3),
        ("[action:recommend][option:11]", "recommend", 11),
        ("  [ Action : Recommend ]  [ Option: 4 ] x", "recommend", 4),
        ("ACTION: RECOMMEND OPTION 5 the fifth", "recommend", 5),
        ("Sure! [ACTION: ASK] Any budget flexibility?", "ask", None),
        ("[ACTION: CLARIFY]", "clarify", None),
        ("[ACTION: CONFIRM] Booking it.", "confirm", None),
    ],
)
def test_parser_accepts_variants(text, kind, option):
    a = parse_action(text)
    assert (a.kind, a.option) == (kind, option)
    assert a.error == ""


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[ACTION: RECOMMEND] [OPTION: 12] hi", "out of range 1..11"),
        ("[ACTION: RECOMMEND] [OPTION: 0]", "out of range"),
        ("[ACTION: RECOMMEND] the cheap one", "needs [OPTION: n]"),
        ("[ACTION: ASK]   ", "needs a question"),
        ("I recommend option 3", "no [ACTION"),
        ("", "no [ACTION"),
    ],
)
def test_parser_rejects_with_reason(text, reason):
    a = parse_action(text)
    assert a.kind == "invalid"
    assert reason in a.error


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_parser_never_raises(text):
    a = parse_action(text)
    assert a.kind in ("recommend", "ask", "clarify", "confirm", "invalid")
    assert a.valid == (a.error == "")
    if a.kind == "recommend":
        assert 1 <= a.option <= 11


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_env_step_never_raises_on_any_string(text):
    env = gym.make("Hear2Act-Prosody-v5", disable_env_checker=True).unwrapped
    env.reset(seed=0)
    obs, _, _, _, info = env.step(text)
    assert env.observation_space.contains(obs)
    assert info["action"] in ("recommend", "ask", "clarify", "confirm", "invalid")


def test_non_string_action_is_invalid_not_an_exception():
    env = gym.make("Hear2Act-Prosody-v5", disable_env_checker=True).unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(42)  # type: ignore[arg-type]
    assert info["action"] == "invalid"
    assert "must be a string" in info["invalid_action"]


def test_custom_scenarios_with_new_characters_stay_in_the_space():
    import dataclasses

    base = hear2act_env.load_scenarios()[0]
    odd = dataclasses.replace(base, request="Ich brauche einen Flug für 200 € — günstig, bitte.")
    env = gym.make("Hear2Act-Prosody-v5", scenarios=[odd], disable_env_checker=True)
    obs, _ = env.reset(seed=0)
    assert "€" in obs["transcript"]
    assert env.observation_space.contains(obs)
    obs, *_ = env.step("[ACTION: ASK] ¿Algo más? 🙂")
    assert env.observation_space.contains(obs)
    assert "?" in obs["transcript"].splitlines()[-2]


# -- arguments are checked at make, not mid-episode ------------------------------------------------


def _bank(n: int = 3):
    return hear2act_env.load_scenarios()[:n]


@pytest.mark.parametrize("kwargs, says", [
    ({"max_turns": 2.5}, "max_turns"),
    ({"max_turns": True}, "max_turns"),
    ({"max_turns": 1}, "max_turns"),
    ({"turn_cost": float("nan")}, "turn_cost"),
    ({"turn_cost": float("inf")}, "turn_cost"),
    ({"turn_cost": -0.1}, "turn_cost"),
    ({"turn_cost": "0.1"}, "turn_cost"),
    ({"renderer": None}, "renderer"),
    ({"renderer": "espeak"}, "espeak"),
    ({"renderer": object()}, "renderer"),
    ({"voice": 3}, "voice"),
    ({"access": "S"}, "access"),
])
def test_bad_arguments_fail_at_make(kwargs, says):
    with pytest.raises(ValueError, match=says):
        gym.make("Hear2Act-Prosody-v5", **kwargs)


@pytest.mark.parametrize("scenarios, says", [
    ([], "empty"),
    (7, "int"),
    ({"id": "x"}, "dict"),
    ("dummy", None),  # a path that does not exist: FileNotFoundError below
])
def test_bad_scenario_arguments_fail_at_make(scenarios, says):
    if says is None:
        with pytest.raises(FileNotFoundError):
            gym.make("Hear2Act-Prosody-v5", scenarios="/no/such/bank.jsonl")
        return
    with pytest.raises(hear2act_env.ScenarioError, match=says):
        gym.make("Hear2Act-Prosody-v5", scenarios=scenarios)


def test_scenario_list_items_are_checked_at_make_with_their_index():
    good = _bank(2)
    with pytest.raises(hear2act_env.ScenarioError, match=r"scenarios\[1\].*dict.*from_dict"):
        gym.make("Hear2Act-Prosody-v5", scenarios=[good[0], good[1].to_dict()])
    with pytest.raises(hear2act_env.ScenarioError, match=r"scenarios\[2\].*int"):
        gym.make("Hear2Act-Prosody-v5", scenarios=[*good, 3])
    with pytest.raises(hear2act_env.ScenarioError, match=r"scenarios\[1\].*duplicate"):
        gym.make("Hear2Act-Prosody-v5", scenarios=[good[0], good[0]])
    # a structurally broken scenario (no gold) fails at make, not at CONFIRM mid-episode
    d = good[1].to_dict()
    l1 = d["needs"][0]["attribute"]
    d["options"][good[1].gold - 1]["values"][l1] = _violating(good[1])  # the gold option breaks L1
    broken = hear2act_env.Scenario.from_dict(d)
    with pytest.raises(hear2act_env.ScenarioError, match=r"scenarios\[1\]"):
        gym.make("Hear2Act-Prosody-v5", scenarios=[good[0], broken])
    assert gym.make("Hear2Act-Prosody-v5", scenarios=good).unwrapped.scenarios == list(good)


def _violating(s):
    """A value of the L1 attribute that the L1 need does not accept (taken from another option)."""
    need = s.needs[0]
    return next(o.values[need.attribute] for o in s.options if not need.holds(o.values[need.attribute]))


def test_unknown_scenario_id_at_reset_is_a_clear_error():
    env = gym.make("Hear2Act-Prosody-v5")
    for sid in ("nope-01", ["budget-airline-tickets-01"], 3):
        with pytest.raises(ValueError, match="scenario_id"):
            env.reset(seed=0, options={"scenario_id": sid})


def test_render_under_audio_only_access_hides_the_words(monkeypatch):
    env = gym.make("Hear2Act-Prosody-v5", access="T", render_mode="ansi").unwrapped
    env.reset(seed=1, options={"scenario_id": "budget-airline-tickets-01"})
    env.step("[ACTION: ASK] Is there anything else that matters to you?")
    words = env.transcript.splitlines()[-1]
    # the same episode under access "A", without rendering speech (only the views are under test)
    hidden = gym.make("Hear2Act-Prosody-v5", access="T", render_mode="ansi").unwrapped
    hidden.access = "A"
    hidden.reset(seed=1, options={"scenario_id": "budget-airline-tickets-01"})
    hidden.step("[ACTION: ASK] Is there anything else that matters to you?")
    shown = hidden.render()
    assert words not in shown and shown.splitlines()[-1] == "User: (spoken)"
    assert shown == hidden._observation()["transcript"]
    assert env.render() == env.transcript  # text access shows everything
    hidden.render_mode = "human"
    printed: list[str] = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
    hidden.render()
    assert printed == ["User: (spoken)"]


def test_transcript_shows_non_charset_characters_as_question_marks():
    env = gym.make("Hear2Act-Prosody-v5").unwrapped
    env.reset(seed=0)
    obs, *_ = env.step("[ACTION: CLARIFY] \u0663 \uff13 \u202e ok\t\n  done")
    last_assistant = obs["transcript"].splitlines()[-2]
    assert last_assistant == "Assistant: [ACTION: CLARIFY] ? ? ? ok done"
    assert env.observation_space.contains(obs)


class _Tone:
    name, version, sample_rate, voices = "tone", "1", 16_000, ("low", "high")

    def render(self, text, label, voice, seed):
        import numpy as np

        return np.zeros(1600, dtype=np.float32)


def test_voice_is_checked_against_the_renderer_at_make():
    with pytest.raises(ValueError, match=r"unknown voice 'alto'.*\('low', 'high'\)"):
        gym.make("Hear2Act-Prosody-v5", access="A+T", renderer=_Tone(), voice="alto")
    with pytest.raises(ValueError, match="unknown voice"):  # checked even under text access for an object
        gym.make("Hear2Act-Prosody-v5", renderer=_Tone(), voice="alto")
    env = gym.make("Hear2Act-Prosody-v5", access="A+T", renderer=_Tone(), voice="high", disable_env_checker=True)
    obs, _ = env.reset(seed=0)
    assert obs["audio"].shape == (1600,) and obs["audio"].flags.writeable  # the caller's own copy


def test_doctests_of_the_env_parts():
    """The env's parts (argument checks, charset and sanitizer, info dicts) keep their examples true."""
    import doctest

    from hear2act_env import charset, env_args, info

    for module in (env_args, charset, info):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 1 and result.failed == 0, module.__name__
