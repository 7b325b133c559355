"""Discrete actions and a numeric observation for SB3-style agents, without changing the rules.

:class:`DiscreteDialogue` wraps a ``Hear2Act-*-v5`` env. Every discrete action
is rendered to the env's text action format and played through ``env.step``
(so the user engine, the turn budget and the rewards are the env's own), and
every observation is computed from the env's *observation* only -- the
options and transcript text (through :mod:`hear2act.training.reader`), plus the one
channel the access condition shows. ``info`` is passed through to the caller
untouched for scoring, and never read.

Action sets (``action_set=``):

* ``"macro"`` (4): ``ASK`` a general question; ``CLARIFY``; ``RECOMMEND`` the
  next untried option that *fits what has been disclosed*, in the order the
  request implies (the column the opening recommendation leads on); ``CONFIRM``.
  "Fits" is the reader's verdict (:mod:`hear2act.training.reader`): the disclosed needs
  read from the user's words and the options text as a careful reader of the
  transcript would, never from the scenario's hidden fields. When nothing
  untried fits, RECOMMEND takes the next untried option the words never
  counted against, then any other option, so the macro can always move on.
* ``"full"`` (3 + 8 + 11 = 22): ``ASK`` general, ``CLARIFY``, ``CONFIRM``,
  ``ASK`` about column k of the options text (k = 0..7; the question names the
  column's values; a column the scenario lacks is asked as a general
  question), ``RECOMMEND`` option n (n = 1..11).

Observation (``Box``, float32): turn / max turns, last action (one-hot),
category of the user's last words (one-hot, :data:`hear2act.training.reader.CATEGORIES`),
disclosed statements / 3, hint heard, per option (numbered as shown) fit /
tried / current / counted-against / said-to-cover, and for the current
option fits / counted-against / covered plus the share of untried fitting
options -- then the access condition's channel (:data:`CHANNELS`):
``T+S`` the tag's status and delivery label, ``T+S_hat`` the perceiver
sentence's status and graded wording, ``A``/``A+T`` nine speaker-normalised
acoustic features of the current user turn (:mod:`hear2act.training.acoustic`),
``T+affect`` the affect label.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear2act.agents.rule import GENERAL_QUESTION, Catalog
from hear2act_env.access import CONDITIONS, Access
from hear2act_env.dialogue.actions import format_action
from hear2act_env.protocol import AFFECT_LABELS, DESCRIPTORS, LABELS, parse_tag, read_descriptor, read_status

from .reader import CATEGORIES, Reading, read

N_OPTIONS = 11
N_COLUMNS = 8
ACTIONS = ("recommend", "ask", "clarify", "confirm", "invalid")
CLARIFY_TEXT = "Could you tell me more about what you need?"
MACRO = ("ask", "clarify", "recommend", "confirm")
PER_OPTION = 5
BASE_SIZE = 1 + len(ACTIONS) + len(CATEGORIES) + 2 + PER_OPTION * N_OPTIONS + 4
_STATES = tuple(DESCRIPTORS)  # the graded states a perceiver sentence words (hear2act_env.protocol)
_STATUSES = ("resolved", "unresolved")


def _one_hot(index: int | None, n: int) -> list[float]:
    out = [0.0] * n
    if index is not None:
        out[index] = 1.0
    return out


def _status(status: str | None) -> list[float]:
    return _one_hot(None if status is None else _STATUSES.index(status), 2)


def _tag(text: str) -> list[float]:
    """The true tag (hear2act_env.protocol.parse_tag): status and delivery label; zeros for no tag."""
    tag = parse_tag(text)
    return _status(None if tag is None else tag[1]) + _one_hot(None if tag is None else LABELS.index(tag[0]),
                                                              len(LABELS))


def _inferred(text: str) -> list[float]:
    """A perceiver's sentence: its status and graded wording (read leniently: an LLM perceiver words its own)."""
    graded = read_descriptor(text)
    return _status(read_status(text)) + _one_hot(None if graded is None else _STATES.index(graded), len(_STATES))


def _affect(label: str) -> list[float]:
    return _one_hot(AFFECT_LABELS.index(label) if label in AFFECT_LABELS else None, len(AFFECT_LABELS))


# State-tag source -> (size, reader of the channel's text), from the access table's ``state_tag``.
_TAG_READERS: dict[str, tuple[int, Callable[[str], list[float]]]] = {
    "none": (0, lambda text: []),
    "true": (2 + len(LABELS), _tag),
    "inferred": (2 + len(_STATES), _inferred),
    "affect": (len(AFFECT_LABELS), _affect),
}
N_ACOUSTIC = 9  # hear2act.training.acoustic's features of the current user turn


def _channel(access: Access) -> tuple[int, Callable[[dict[str, Any]], list[float]] | None]:
    """(size, reader) of one condition's channel; ``None``: the audio, read by the acoustic reader (a stateful memo)."""
    if "audio" in access.keys:
        return N_ACOUSTIC, None
    size, reader = _TAG_READERS[access.state_tag]
    key = access.channel
    return size, (lambda obs: []) if key is None else (lambda obs: reader(obs.get(key, "") or ""))


# Access condition -> (size, reader of the channel), for every row of hear2act_env.access.
CHANNELS: dict[str, tuple[int, Callable[[dict[str, Any]], list[float]] | None]] = {
    a.name: _channel(a) for a in CONDITIONS}


def column_question(values: list[str]) -> str | None:
    """A question that names a column's values (so the env's matcher routes it to that attribute)."""
    words = [re.sub(r"[\d$€£.,/%]+", " ", v).strip() for v in values]
    words = list(dict.fromkeys(" ".join(w.split()) for w in words if w.strip()))
    if not words:
        return None
    return f"How do you feel about {' or '.join(words[:4])}?"


class DiscreteDialogue(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Discrete actions, Box observations; see the module docstring for both.

    ``episode_pool`` > 0 bounds the episodes a reset can draw to (scenario,
    variant < episode_pool) pairs, each with a fixed env seed, so the audio
    conditions replay cached speech instead of rendering new voices forever.
    """

    def __init__(self, env: gym.Env, action_set: str = "macro", episode_pool: int = 0) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, action_set=action_set, episode_pool=episode_pool)
        gym.Wrapper.__init__(self, env)
        if action_set not in ("macro", "full"):
            raise ValueError(f"action_set must be 'macro' or 'full', got {action_set!r}")
        base = env.unwrapped
        self.access: str = base.access
        if self.access not in CHANNELS:
            raise ValueError(f"no observation channel for access {self.access!r}; choose from {sorted(CHANNELS)}")
        self.action_set = action_set
        self.episode_pool = int(episode_pool)
        self.max_turns: int = base.max_turns
        self._scenario_ids = [s.id for s in base.scenarios]  # the public list the env was built with
        size, self._channel = CHANNELS[self.access]
        self._acoustic = None
        if self._channel is None:
            from .acoustic import AcousticReader

            speech = base.speech
            renderer = speech.renderer_spec if isinstance(speech.renderer_spec, str) else "hibari"
            self._acoustic = AcousticReader(renderer, speech.voice)
        self.action_space = spaces.Discrete(len(MACRO) if action_set == "macro" else 3 + N_COLUMNS + N_OPTIONS)
        dim = BASE_SIZE + size
        self.observation_space = spaces.Box(-6.0, 6.0, shape=(dim,), dtype=np.float32)
        self._obs: dict[str, Any] | None = None
        self._reading: Reading | None = None
        self._order: tuple[int, ...] = ()
        self._asked: dict[int, int] = {}

    # -- episode -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if self.episode_pool > 0 and not (options or {}).get("scenario_id"):
            if seed is not None:
                self._pool_rng = np.random.default_rng(seed)
            elif not hasattr(self, "_pool_rng"):
                self._pool_rng = np.random.default_rng()
            index = int(self._pool_rng.integers(len(self._scenario_ids)))
            variant = int(self._pool_rng.integers(self.episode_pool))
            obs, info = self.env.reset(seed=index * 1009 + variant,
                                       options={**(options or {}), "scenario_id": self._scenario_ids[index]})
            if seed is not None:  # the env's own generator is unused in pool mode; keep reset(seed) semantics
                self.env.unwrapped.np_random, _ = gym.utils.seeding.np_random(seed)
        else:
            obs, info = self.env.reset(seed=seed, options=options)
        self._asked = {}
        self._update(obs)
        assert self._reading is not None
        opening = self._reading.current or 1
        self._order = Catalog.parse(obs["options"], opening).order
        return self._vector(obs), info

    def step(self, action: Any):
        text = self.render_action(int(action))
        obs, reward, terminated, truncated, info = self.env.step(text)
        self._update(obs)
        return self._vector(obs), reward, terminated, truncated, info

    # -- actions -------------------------------------------------------------
    def render_action(self, action: int) -> str:
        """The text action a discrete action stands for in the current dialogue."""
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        r = self._reading
        assert r is not None, "call reset() first"
        if self.action_set == "macro":
            kind = MACRO[action]
            if kind == "recommend":
                n = self.next_fitting()
                return format_action("recommend", f"How about {r.options.names[n]}?", n)
        elif action < 3:
            kind = ("ask", "clarify", "confirm")[action]
        elif action < 3 + N_COLUMNS:
            k = action - 3
            question = column_question(list(r.options.column(k).values())) if k < r.options.width else None
            if question is None:
                return format_action("ask", GENERAL_QUESTION)
            self._asked[r.turn + 1] = k
            return format_action("ask", question)
        else:
            n = action - 3 - N_COLUMNS + 1
            return format_action("recommend", f"How about {r.options.names.get(n, 'this one')}?", n)
        text = {"ask": GENERAL_QUESTION, "clarify": CLARIFY_TEXT, "confirm": "Great, let's go with that one."}
        return format_action(kind, text[kind])

    def next_fitting(self) -> int:
        """The macro RECOMMEND's choice: next untried fitting option, else untried not counted against, else any."""
        r = self._reading
        assert r is not None
        rest = [n for n in self._order if n != r.current]
        for ok in (lambda n: r.fit[n] and n not in r.tried, lambda n: n not in r.tried and n not in r.flagged,
                   lambda n: n not in r.flagged, lambda n: True):
            for n in rest:
                if ok(n):
                    return n
        return r.current or 1

    # -- observation ---------------------------------------------------------
    def _update(self, obs: dict[str, Any]) -> None:
        self._obs = obs
        self._reading = read(obs["options"], obs["transcript"], self._asked)

    def _vector(self, obs: dict[str, Any]) -> np.ndarray:
        r = self._reading
        assert r is not None
        numbers = r.options.numbers
        per_option: list[float] = []
        for n in range(1, N_OPTIONS + 1):
            if n in r.fit:
                per_option += [float(r.fit[n]), float(n in r.tried), float(n == r.current), float(n in r.flagged),
                               float(n in r.covered)]
            else:
                per_option += [0.0] * PER_OPTION
        cur = r.current
        untried_fit = sum(r.fit[n] and n not in r.tried for n in numbers)
        vec = [min(r.turn / self.max_turns, 1.0), *_one_hot(ACTIONS.index(r.last_action), len(ACTIONS)),
               *_one_hot(CATEGORIES.index(r.category), len(CATEGORIES)), min(len(r.statements) / 3, 2.0),
               float(r.hint_heard), *per_option, float(cur is not None and r.fit.get(cur, False)),
               float(cur in r.flagged), float(cur in r.covered), untried_fit / N_OPTIONS]
        if self._channel is not None:
            vec += self._channel(obs)
        else:
            assert self._acoustic is not None
            vec += list(self._acoustic(obs.get("audio")))
        return np.asarray(vec, dtype=np.float32)


def make_env(env_id: str = "Hear2Act-Prosody-v5", access: str = "T", *, action_set: str = "macro",
             episode_pool: int = 0, **env_kwargs: Any) -> DiscreteDialogue:
    """``gym.make(env_id, access=..., **env_kwargs)`` wrapped in :class:`DiscreteDialogue`."""
    import hear2act_env  # registers the ids

    if env_id not in hear2act_env.ENV_IDS:
        raise ValueError(f"env_id must be one of {sorted(hear2act_env.ENV_IDS)}, got {env_id!r}")
    env = gym.make(env_id, access=access, disable_env_checker=True, **env_kwargs)
    return DiscreteDialogue(env, action_set, episode_pool)


def make_discrete(env_id: str = "Hear2Act-Prosody-v5", access: str = "T", *, action_set: str = "macro",
                  render_mode: str | None = None, **env_kwargs: Any) -> DiscreteDialogue:
    """Entry point of the registered discrete ids (``gym.make("Hear2Act-Prosody-Macro-v5", access="T+S")``).

    The env renders text (``ansi`` / ``human``). ``render_mode="rgb_array"`` -- what SB3's ``make_vec_env`` asks
    for unless told otherwise -- raises TypeError, on which ``make_vec_env`` retries without a render mode.
    """
    if render_mode == "rgb_array":
        raise TypeError("the Hear2Act envs render text (render_mode 'ansi' or 'human'), not 'rgb_array'")
    if render_mode is not None:
        env_kwargs["render_mode"] = render_mode
    return make_env(env_id, access, action_set=action_set, **env_kwargs)
