"""The Hear2Act Gymnasium environment."""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium import spaces

from .audio_space import AudioSpace
from .dialogue.actions import INVALID, KINDS, Action, format_action, parse_action
from .dialogue.engine import Draws, Reaction, UserEngine, assess
from .dialogue.realizer import Realizer
from .scenarios import Scenario, load_scenarios
from .state_tags import StateChannel

MAX_TURNS = 20
MAX_UTTERANCE = 1000  # characters of an assistant turn kept in the transcript
MAX_TEXT = 64_000
MAX_AUDIO_S = 30
# What each access condition shows, beyond the options.
ACCESS: dict[str, tuple[str, ...]] = {
    "T": ("transcript",),
    "T+S": ("transcript", "state"),
    "A": ("transcript", "audio"),  # the transcript hides the user's words after the request
    "A+T": ("transcript", "audio"),
    "T+S_hat": ("transcript", "inferred_state"),
    "T+affect": ("transcript", "affect"),
}
WORDS_HIDDEN = frozenset({"A"})
SPOKEN = "(spoken)"  # what replaces a user turn's words under access "A"
SPEECH_KEYS = frozenset({"audio", "inferred_state", "affect"})
INTERVENTIONS = ("correct", "none", "always_resolved", "always_unresolved", "shuffled")


def _scenario_chars(scenarios: Sequence[Scenario]) -> set[str]:
    chars: set[str] = set()
    for s in scenarios:
        chars.update(s.request + "".join(o.description for o in s.options))
        chars.update("".join(r.statement for r in s.requirements))
        chars.update("".join(n.statement + n.hint for n in s.needs))
        chars.update("".join(a.worse + a.label for a in s.attributes))
    return chars


@lru_cache(maxsize=1)
def _base_charset() -> frozenset[str]:
    """Printable ASCII, the realizer's phrase pools and the bundled bank's texts."""
    from .dialogue import realizer

    chars = set(string.printable) | _scenario_chars(load_scenarios())
    for name in dir(realizer):
        pool = getattr(realizer, name)
        if isinstance(pool, tuple) and all(isinstance(p, str) for p in pool):
            chars.update("".join(pool))
    return frozenset(chars - {"\x0b", "\x0c"})


def _charset(scenarios: Sequence[Scenario]) -> frozenset[str]:
    """Every character an observation may contain (agent text outside it is replaced by '?')."""
    base = _base_charset()
    extra = _scenario_chars(scenarios) - base
    return base | extra if extra else base


class Hear2ActEnv(gym.Env[dict[str, Any], str]):
    """
    ## Description
    Hear2Act (arXiv 2608.19515) asks when a user's prosody, not their words,
    should change what a task assistant does. The agent plays a service
    assistant helping a simulated user pick one of 11 options. The user has
    three hidden needs: L1 (hard constraint), L2 (strong preference) and L3
    (moderate preference). The assistant uncovers them by asking, and
    succeeds when it confirms the single option that meets the request and
    all three needs (the *gold*).

    Two matched realizations of the same user: under **Explicit lexical**
    responses (``Hear2Act-Explicit-v0``) an unmet L2/L3 need is stated in
    words; under **Prosody-mediated** responses (``Hear2Act-Prosody-v0``)
    it is absent from the words: the user says the same assent ("That could
    work...") whether the option is right or not, and only the delivery
    (hesitant, concerned, ...) tells. The full rules are in PROTOCOL.md.

    ## Action Space
    ``gymnasium.spaces.Text``: one assistant turn in the paper's format
    (card P6a, plus CLARIFY)::

        [ACTION: RECOMMEND] [OPTION: 3] How about the Breeze Line 88?
        [ACTION: ASK] Do you mind a layover?
        [ACTION: CLARIFY] Could you say more about what you need?
        [ACTION: CONFIRM] Great, I'll book it.

    Case and spacing variants are accepted. Anything else (or an option
    number out of range) is an *invalid action*: it costs a turn, the user
    asks to rephrase, and ``info["invalid_action"]`` says why.
    ``step`` never raises on a string.

    ## Observation Space
    ``gymnasium.spaces.Dict`` of ``Text``:

    - ``"transcript"``: the dialogue so far, one ``User: ...`` /
      ``Assistant: ...`` line per turn;
    - ``"options"``: the 11 numbered option descriptions;
    - ``"state"`` (access ``"T+S"``): ``CONCERN STATE: <delivery>
      (resolved|unresolved)`` for the current recommendation, or what the
      state intervention puts there (empty for ``"none"``);
    - ``"audio"`` (``"A"``, ``"A+T"``): the current user turn, 16 kHz mono
      float32 (:class:`~hear2act_env.audio_space.AudioSpace`); under ``"A"``
      the transcript shows later user turns as ``User: (spoken)``;
    - ``"inferred_state"`` (``"T+S_hat"``): ``AUDIO-INFERRED STATE: <one
      sentence>`` from the perceiver reading the current user audio (the
      audio itself is not shown);
    - ``"affect"`` (``"T+affect"``): a generic affect label,
      ``happy``/``sad``/``angry``/``neutral``.

    ## Starting State
    The scenario is ``options["scenario_id"]`` or drawn by the seed. The
    first observation already holds the user's request, the standardised
    opening recommendation (the option that leads on the request's priority,
    e.g. the cheapest; it counts as assistant turn 1) and the user's reaction.

    ## Rewards
    1.0 at the end of a successful episode (final selection is the gold),
    else 0.0. ``turn_cost`` (default 0) subtracts a cost per agent turn.

    ## Episode End
    Terminated when the assistant CONFIRMs an option the user did not reject
    (final selection = that option). Truncated after ``max_turns`` (20)
    assistant turns, the opening included (final selection = the last
    recommended option).

    ## Information
    Every step: ``state`` (resolved/reluctant/concern/rejection, of the
    current recommendation), ``delivery`` (the label this user turn is
    delivered with; ``neutral`` for answers), ``action`` (parsed kind or
    ``invalid``), ``invalid_action`` (reason or ``""``), ``disclosed``
    (levels disclosed so far), ``current`` (recommended option number),
    ``turn``. Reset adds ``scenario_id`` and ``realization``. At the end
    ``info["outcome"]``: ``success``, ``final_option``, ``turns``,
    ``premature_closure``, ``full_disclosure``, ``n_disclosed``,
    ``accept_rate``, ``fullfit_rate`` (over agent recommendation turns;
    ``None`` when there were none), ``recommendations``, ``action_counts``.

    ## Arguments
    ``gymnasium.make("Hear2Act-Prosody-v0", access="T",
    state_intervention="correct", scenarios=None, max_turns=20,
    turn_cost=0.0, render_mode=None, renderer="hibari", voice=None,
    audio_cache=None, perceiver=None, affect=None)``

    - ``access``: ``"T"``, ``"T+S"``, ``"A"``, ``"A+T"``, ``"T+S_hat"`` or
      ``"T+affect"`` (the last four need the speech extra).
    - ``state_intervention`` (``"T+S"`` only): ``"correct"``, ``"none"``,
      ``"always_resolved"``, ``"always_unresolved"``, ``"shuffled"`` (each tag
      drawn independently from the shipped distribution of true tags).
    - ``scenarios``: a JSONL path or a list of ``Scenario``; default the
      bundled 480.
    - ``render_mode``: ``"ansi"`` (returns the transcript) or ``"human"``.
    - ``renderer`` / ``voice``: a registered renderer name (``"hibari"``,
      ``"piper"``) or a :class:`~hear2act_env.speech.renderers.Renderer`.
    - ``audio_cache``: folder of the audio cache (default ``$HEAR2ACT_CACHE``
      or ``~/.cache/hear2act/audio``).
    - ``perceiver``: a :class:`~hear2act_env.speech.perceiver.Perceiver` for
      ``"T+S_hat"`` (default: the CPU feature perceiver enrolled on the voice);
      ``affect``: an affect classifier for ``"T+affect"`` (default: the rule).

    ## Version History
    - v0: initial release (scenario bank v1, delivery model v2).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        realization: str = "prosody",
        access: str = "T",
        state_intervention: str = "correct",
        scenarios: str | Path | Sequence[Scenario] | None = None,
        max_turns: int = MAX_TURNS,
        turn_cost: float = 0.0,
        render_mode: str | None = None,
        renderer: str | Any = "hibari",
        voice: str | None = None,
        audio_cache: str | Path | None = None,
        perceiver: Any = None,
        affect: Any = None,
    ) -> None:
        if access not in ACCESS:
            raise ValueError(f"access must be one of {tuple(ACCESS)}, got {access!r}")
        if state_intervention not in INTERVENTIONS:
            raise ValueError(f"state_intervention must be one of {INTERVENTIONS}, got {state_intervention!r}")
        if state_intervention != "correct" and "state" not in ACCESS[access]:
            raise ValueError(f"state_intervention={state_intervention!r} needs an access with a state tag")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        if max_turns < 2:
            raise ValueError(f"max_turns must be at least 2, got {max_turns}")
        if scenarios is None or isinstance(scenarios, str | Path):
            self.scenarios = load_scenarios(scenarios)
        else:
            self.scenarios = list(scenarios)
        if not self.scenarios:
            raise ValueError("no scenarios to play")
        self._by_id = {s.id: i for i, s in enumerate(self.scenarios)}
        self.realization = realization
        self.access = access
        self.keys = ("options", *ACCESS[access])
        self.speech = None
        if SPEECH_KEYS & set(self.keys):
            from .speech.channel import SpeechChannel

            self.speech = SpeechChannel(renderer, voice, audio_cache, perceiver, affect)
        self.state_channel = StateChannel(state_intervention)
        self.max_turns = max_turns
        self.turn_cost = float(turn_cost)
        self.render_mode = render_mode
        charset = _charset(self.scenarios)
        text = spaces.Text(max_length=MAX_TEXT, min_length=0, charset=charset)
        obs_spaces: dict[str, spaces.Space[Any]] = {k: text for k in self.keys}
        if "audio" in self.keys:
            obs_spaces["audio"] = AudioSpace(MAX_AUDIO_S * 16_000)
        self.observation_space = spaces.Dict(obs_spaces)
        self.action_space = spaces.Text(max_length=MAX_UTTERANCE, min_length=0, charset=string.printable)
        self._charset = charset
        self.scenario: Scenario | None = None

    # -- episode -------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        sid = (options or {}).get("scenario_id")
        if sid is None:
            index = int(self.np_random.integers(len(self.scenarios)))
        elif sid in self._by_id:
            index = self._by_id[sid]
        else:
            raise ValueError(f"unknown scenario_id {sid!r}")
        self.scenario = s = self.scenarios[index]
        self.draws = Draws(int(self.np_random.integers(2**63 - 1)))
        self.engine = UserEngine(s, self.realization, self.draws)
        self.realizer = Realizer(s, self.realization, self.draws)
        self._lines = [f"User: {s.request}"]
        opening = format_action(
            "recommend", f"Based on your request, I'd recommend {s.option(s.opening).name}.", s.opening
        )
        reaction = self.engine.open()
        self._lines.append(f"Assistant: {opening}")
        self._user_turn(reaction, 1)
        self._counts = Counter({k: 0 for k in (*KINDS, INVALID)})
        self._recs: list[int] = []
        self._options_text = "\n".join(f"{o.number}. {o.description}" for o in s.options)
        info = self._info(reaction, Action("recommend", option=s.opening))
        info.update(scenario_id=s.id, realization=self.realization)
        return self._observation(), info

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.scenario is None:
            raise RuntimeError("call reset() before step()")
        if self.engine.done or self.engine.turn >= self.max_turns:
            raise RuntimeError("the episode has ended; call reset()")
        parsed = parse_action(action, len(self.scenario.options))
        self._counts[parsed.kind] += 1
        if parsed.kind == "recommend":
            assert parsed.option is not None
            self._recs.append(parsed.option)
        reaction = self.engine.respond(parsed)
        turn = self.engine.turn
        shown = self._sanitize(action if isinstance(action, str) else repr(action))
        self._lines.append(f"Assistant: {shown}")
        self._user_turn(reaction, turn)
        terminated = reaction.act == "accept"
        truncated = not terminated and turn >= self.max_turns
        info = self._info(reaction, parsed)
        reward = -self.turn_cost if self.turn_cost else 0.0
        if terminated or truncated:
            info["outcome"] = outcome = self._outcome(terminated)
            reward += 1.0 if outcome["success"] else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, truncated, info

    def _user_turn(self, reaction: Reaction, turn: int) -> None:
        """Words (and, under audio access, speech and its readings) of the user's reply."""
        words = self.realizer.words(reaction, turn)
        self._lines.append(f"User: {words}")
        self._last = reaction
        s = self.scenario
        assert s is not None
        # What this turn sounds like: the words, the delivery label and the render seed
        # (a keyed draw, so matched rollouts render the same delivery with the same seed).
        self.utterance = (words, reaction.delivery, self.draws.pick(2**31, "audio", s.id, turn))
        self._speech: dict[str, Any] = {}
        if self.speech is None:
            return
        audio = self.speech.audio(*self.utterance)
        if "audio" in self.keys:
            self._speech["audio"] = audio[: MAX_AUDIO_S * 16_000].copy()  # callers own their obs
        if "inferred_state" in self.keys:
            self._speech["inferred_state"] = self.speech.inferred_state(audio, words, self.transcript)
        if "affect" in self.keys:
            self._speech["affect"] = self.speech.affect_label(audio)

    # -- views ---------------------------------------------------------------
    def _sanitize(self, text: str) -> str:
        text = " ".join(text.split())[:MAX_UTTERANCE]
        charset = self._charset
        return text if all(c in charset for c in text) else "".join(c if c in charset else "?" for c in text)

    def _observation(self) -> dict[str, Any]:
        obs: dict[str, Any] = {"options": self._options_text}
        lines = self._lines
        if self.access in WORDS_HIDDEN:
            lines = [lines[0], *(f"User: {SPOKEN}" if ln.startswith("User: ") else ln for ln in lines[1:])]
        obs["transcript"] = "\n".join(lines)[-MAX_TEXT:]
        if "state" in self.keys:
            obs["state"] = self.state_channel.tag(self._last, self.draws, self.engine.turn)
        obs.update(self._speech)
        return obs

    def _info(self, reaction: Reaction, action: Action) -> dict[str, Any]:
        return {
            "state": reaction.state,
            "delivery": reaction.delivery,
            "action": action.kind,
            "invalid_action": action.error,
            "disclosed": tuple(sorted(self.engine.disclosed)),
            "current": self.engine.current,
            "turn": self.engine.turn,
        }

    def _outcome(self, terminated: bool) -> dict[str, Any]:
        s = self.scenario
        assert s is not None
        final = self.engine.current
        fits = [assess(s, n) for n in self._recs]
        accepts = sum(a.issue in ("none", "L3", "safe") for a in fits)
        fullfits = sum(a.issue in ("none", "safe") for a in fits)
        n = len(fits)
        return {
            "scenario_id": s.id,
            "success": final == s.gold,
            "final_option": final,
            "confirmed": terminated,
            "turns": self.engine.turn,
            "premature_closure": terminated and final != s.gold,
            "full_disclosure": len(self.engine.disclosed) == 3,
            "n_disclosed": len(self.engine.disclosed),
            "recommendations": n,
            "accepts": accepts,
            "fullfits": fullfits,
            "accept_rate": accepts / n if n else None,
            "fullfit_rate": fullfits / n if n else None,
            "action_counts": dict(self._counts),
        }

    @property
    def transcript(self) -> str:
        return "\n".join(self._lines)

    def render(self) -> str | None:
        if self.scenario is None:
            return None
        if self.render_mode == "ansi":
            return self.transcript
        if self.render_mode == "human":
            print(self._lines[-1] if len(self._lines) > 3 else self.transcript)
        return None

