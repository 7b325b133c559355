"""The Hear2Act Gymnasium environment."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium import spaces

from . import protocol
from .access import ACCESS, SPEECH_KEYS, Access, get  # noqa: F401 -- SPEECH_KEYS re-exported (the table's home: .access)
from .audio_space import AudioSpace
from .charset import charset as observation_charset
from .charset import sanitize
from .dialogue.actions import INVALID, KINDS, Action, format_action, parse_action
from .dialogue.engine import Draws, Reaction, UserEngine
from .dialogue.matchers import DEFAULT_MATCHER, resolve_matcher
from .dialogue.matching import Matcher
from .dialogue.realizer import Realizer
from .env_args import check_arguments, check_renderer, scenario_list
from .info import NOT_ASKED, step_info  # noqa: F401 -- NOT_ASKED re-exported (its home: .info)
from .info import outcome as episode_outcome
from .privileged import GroundTruth, fork, ground_truth
from .scenarios import Scenario
from .scenarios.validate import N_OPTIONS  # every valid scenario has exactly this many options
from .state_tags import INTERVENTIONS, StateChannel  # noqa: F401 -- INTERVENTIONS re-exported (home: .state_tags)
from .vector import ObsText

# The env's parts, one module each: argument checks (env_args), the observation charset and the sanitizer of
# agent text (charset), the info dicts (info), the access table (access), the text formats (protocol), the
# state-tag channel (state_tags), the privileged training API (privileged). This module plays the episode.
MAX_TURNS = 20
RESET_OPTIONS = ("scenario_id",)  # the keys reset(options=...) accepts; any other is an error
MAX_UTTERANCE = 1000  # characters of an assistant turn kept in the transcript
MAX_TEXT = 64_000
MAX_AUDIO_S = 30
# What each access condition shows, beyond the options: the table in hear2act_env.access (ACCESS[name].keys).
SPOKEN = protocol.SPOKEN  # what replaces a user turn's words under an access that hides them
_NO_SPEECH: dict[str, Any] = {}  # the speech part of a text-only observation (shared: never written to)
_CACHED_ACTION_CHARS = 400  # action strings up to this length are memoised per env ...
_ACTION_CACHE_SIZE = 4096  # ... up to this many (then the memo starts over)


def options_text(s: Scenario) -> str:
    """The observation's ``options`` text: one numbered line per option."""
    return "\n".join(f"{o.number}. {o.description}" for o in s.options)


def _opening_table(s: Scenario) -> tuple[str, str, Action]:
    """(options text, opening transcript line, opening action) of one scenario."""
    opening = s.opening
    text = format_action("recommend", f"Based on your request, I'd recommend {s.option(opening).name}.", opening)
    return options_text(s), f"Assistant: {text}", Action("recommend", option=opening)


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
    responses (``Hear2Act-Explicit-v5``) an unmet L2/L3 need is stated in
    words; under **Prosody-mediated** responses (``Hear2Act-Prosody-v5``)
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
    The scenario is ``options["scenario_id"]`` (the only options key; any
    other, or options that are not a dict, is an error) or drawn by the seed. The
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
    ``invalid``), ``invalid_action`` (reason or ``""``), ``action_note``
    (how an ambiguous action was read, e.g. several tags, or ``""``), ``disclosed``
    (levels disclosed so far), ``current`` (recommended option number),
    ``turn``, ``question`` (how an ASK question was routed:
    ``{"target": "need"|"visible"|"distractor"|"general", "attribute":
    name or "", "level": 1|2|3 or 0}``; ``target`` is ``""`` on every
    other step). Every key has one type on every step (no ``None``
    leaves), so Gymnasium's vector envs can stack infos of sub-envs that
    took different actions in the same step.
    Reset adds ``scenario_id`` and ``realization``. At the end
    ``info["outcome"]``: ``success``, ``final_option``, ``final_fit`` (its
    need fit, L1-L3 weighted 3:2:1, 0 if it violates the request), ``turns``,
    ``premature_closure``, ``full_disclosure``, ``n_disclosed``,
    ``accept_rate``, ``fullfit_rate`` (over agent recommendation turns;
    NaN when there were none), ``recommendations``, ``action_counts``.
    ``state`` and ``delivery`` are diagnostics (the hidden ground truth, for
    evaluation): they are in ``info`` under every access condition, and
    nothing that builds a policy's input (agents, prompt builders, wrappers)
    reads them.

    ## Arguments
    ``gymnasium.make("Hear2Act-Prosody-v5", access="T",
    state_intervention="correct", scenarios=None, max_turns=20,
    turn_cost=0.0, render_mode=None, renderer="hibari", voice=None,
    audio_cache=None, perceiver=None, affect=None, matcher="learned")``

    - ``access``: ``"T"``, ``"T+S"``, ``"A"``, ``"A+T"``, ``"T+S_hat"`` or
      ``"T+affect"`` (the last four need the speech extra); what each shows
      is the table :data:`hear2act_env.access.ACCESS`, the text formats are
      :mod:`hear2act_env.protocol`.
    - ``state_intervention`` (``"T+S"`` only): ``"correct"``, ``"none"``,
      ``"always_resolved"``, ``"always_unresolved"``, ``"shuffled"`` (each tag
      drawn independently from the shipped distribution of true tags).
    - ``scenarios``: a JSONL path (the bundled bank, or a user bank built by
      ``hear2act scenarios build --domains DIR --out FILE``) or a list of
      ``Scenario``; default the bundled 480 (``$HEAR2ACT_SCENARIOS`` if set).
    - ``render_mode``: ``"ansi"`` (returns the transcript) or ``"human"``.
    - ``renderer`` / ``voice``: a registered renderer name (``"hibari"``,
      ``"piper"``) or a :class:`~hear2act_env.speech.renderers.Renderer`.
    - ``audio_cache``: folder of the audio cache (default ``$HEAR2ACT_CACHE/audio``,
      i.e. ``~/.cache/hear2act/audio``; ``$HEAR2ACT_CACHE`` is the root of every cache).
    - ``perceiver``: a :class:`~hear2act_env.speech.perceiver.Perceiver` for
      ``"T+S_hat"`` (default: the CPU feature perceiver enrolled on the voice);
      ``affect``: an affect classifier for ``"T+affect"`` (default: the rule).
    - ``matcher``: how ASK questions are routed to attributes: ``"learned"``
      (default; deterministic, dependency-free: word weights fitted on
      independently written questions over the lexical evidence,
      :mod:`hear2act_env.dialogue.router`), ``"lexical"`` (the hand-written
      phrase tables alone), ``"semantic"`` (lexical first, then a sentence
      encoder for near misses; ``pip install "hear2act[semantic]"``) or a
      callable
      ``(scenario, question) -> Target | None``
      (:mod:`hear2act_env.dialogue.matching`).

    Every argument is checked here, at ``make``: a bad value raises
    ``ValueError`` (a bad scenario list ``ScenarioError`` naming the index),
    never an error mid-episode.

    ## Vector Environments
    ``gymnasium.make_vec(id, num_envs=n, vectorization_mode="async")`` (shared
    memory or not) and ``"sync"`` return the same observations under every
    access condition (:mod:`hear2act_env.vector`);
    ``hear2act_env.vector.reset_scenarios(envs, ids, seed)`` puts sub-env
    ``i`` on scenario ``ids[i]``.

    ## Version History
    - v5: results changed, so the version moved (``-v0`` to ``-v4`` raise
      Gymnasium's ``DeprecatedEnv`` naming ``-v5``). The bank was regenerated
      with cube designs (``hear2act_env.scenarios.design``): every scenario
      shows every categorical attribute of its domain, their meet/miss sides
      come from a table in which seven column triples form the protocol's
      pattern cube, each led by another candidate, and the needs are one of
      them drawn at random, so the options text leaves the gold any of seven
      candidates alike. The structural reader's top-1 0.209 -> 0.146, the
      in-repo options-only classifier 0.710 / 0.260 -> 0.580 / 0.146, the
      independent probe's boosting 0.331 / 0.755 -> 0.160 / 0.593 (top-1 /
      AUC). An option's numbers follow what it offers (its
      better values, needs and distractors alike); of the level orders the
      opening's pattern allows, one in which the never-asking value reader
      meets another L1-meeting option before the gold is taken, and a number
      draw on which that reader still ends at the gold is kept with chance
      0.25 (the never-ask agent 19.8% -> 15.8% under Prosody ``T``).
    - v4: results changed, so the version moved (``-v0`` to ``-v3`` raise
      Gymnasium's ``DeprecatedEnv`` naming ``-v4``). The bank was regenerated:
      every scenario shows three or four distractor columns (one or two before),
      each dealt as a decoy of the cube the need patterns form, and the deal also
      matches the gold's share of a structural reader's picks to an arbitrary
      candidate's. That reader (``hear2act_env.scenarios.cube``: three columns
      whose value splits give every pattern once plus the safe option's second
      111; it names the leader of that pair) named the gold in 0.879 of ``-v3``'s
      scenarios from the options text alone, 0.209 now (the independent
      options-only probe 0.548 -> 0.331, the in-repo classifier 0.737 / 0.348 ->
      0.710 / 0.260). The distractors' premium is capped at two columns' worth.
      Questions about a newly shown attribute now get the user's not-a-need
      answer rather than the general one; the learned router adds a
      ``distractor_offset`` of -1.0 to a shown distractor's score.
    - v3: results changed, so the version moved (``-v0``/``-v1``/``-v2`` raise
      Gymnasium's ``DeprecatedEnv`` naming ``-v3``). The bank was regenerated: the
      categorical deal also matches the gold's twin statistics (its nearest
      candidates on the categorical columns and whether it leads them on the
      priority) to an arbitrary candidate's, so the gold and the safe option are no
      longer the one candidate pair alike on every need column (an options-only
      rule reading that pair found the gold in 0.426 of scenarios, now 0.185; the
      learned options-only classifier AUC / top-1 0.834 / 0.590 -> 0.737 / 0.348);
      the six other options' numbers and the categorical values moved with it. The
      verifiers integration charges a failed episode's ``turn_cost`` over the
      horizon, as :class:`hear2act.training.episodes.EpisodeReward` does.
    - v2: results changed, so the version moved (``-v0``/``-v1`` raise Gymnasium's
      ``DeprecatedEnv`` naming ``-v2``). The bank's requests no longer give a hidden
      need's premise (155 rewritten, a validator rule), categorical option values are
      dealt blind (the options' categorical structure ranks the gold less) and the deal
      also matches the gold's count of "desirable" values (values the domain accepts
      for some need) to an arbitrary candidate's (a validator rule), four value texts
      softened. The requests and blind deal first shipped under ``-v1``, revised in
      place for one stop: results recorded under ``-v1`` after 2026-12-01 belong to
      neither version. The demo table was regenerated.
    - v1: results changed, so the version moved (``-v0`` now raises Gymnasium's
      ``DeprecatedEnv`` naming ``-v1``). The bank was regenerated: the options
      text no longer ranks the gold (the gold takes an arbitrary candidate's
      visible numbers, never the best deal; one missing value per need;
      request violators meet each need with probability 1/4), strict bound
      words are strict bounds (``<``/``>``, no option on one), every scenario
      still shows the attributes it showed. The audio speaks exactly the
      transcript (no filler), pauses, noise floor and level come from one
      mastering step for every delivery (delivery model v3), and the CPU
      perceiver reads delivery only. Actions are read by the published
      grammar (the last bracketed tag; prose never acts). Under Explicit, a
      confirmed option the user objected to is accepted with a settling reply.
      The learned router shares its tables per domain (same decisions).
    - v0: initial release (scenario bank v1, delivery model v2). Revised in
      place before release (issue 7, paper fidelity): Explicit L2 is stated
      directly (no assent); the safe option names only its own drawback; a
      general question on an L1-violating option returns L1's hint (G.6);
      requests may carry categorical requirements (76 of 480) and never state
      a hidden need; the opening may miss only L1; prices and ratings follow
      a premium model; roles are computed once per scenario; scenario JSON is
      strictly typed. The bank was regenerated. ASK questions are routed by
      the learned router (``matcher="learned"``, the new default; the
      hand-written ``"lexical"`` matcher stays available).
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
        matcher: str | Matcher = DEFAULT_MATCHER,
    ) -> None:
        condition = get(access)  # ValueError naming the choices
        check_arguments(realization=realization, condition=condition, state_intervention=state_intervention,
                        render_mode=render_mode, render_modes=self.metadata["render_modes"], max_turns=max_turns,
                        turn_cost=turn_cost)
        check_renderer(renderer, voice, speech=condition.needs_speech)
        self._matcher = resolve_matcher(matcher)
        self.scenarios = scenario_list(scenarios)
        self._by_id = {s.id: i for i, s in enumerate(self.scenarios)}
        self.realization = realization
        self.access = access
        self.keys = ("options", *condition.keys)
        self._with_state = "state" in self.keys
        self.speech = None
        if condition.needs_speech:
            from .speech.channel import SpeechChannel

            self.speech = SpeechChannel(renderer, voice, audio_cache, perceiver, affect)
        self.state_channel = StateChannel(state_intervention)
        self.max_turns = int(max_turns)
        self.turn_cost = float(turn_cost)
        self.render_mode = render_mode
        chars = observation_charset(self.scenarios)
        # ObsText: a Text whose values survive AsyncVectorEnv's shared memory (see hear2act_env.vector).
        text = ObsText(max_length=MAX_TEXT, min_length=0, charset=chars)
        obs_spaces: dict[str, spaces.Space[Any]] = {k: text for k in self.keys}
        if "audio" in self.keys:
            obs_spaces["audio"] = AudioSpace(MAX_AUDIO_S * 16_000)
        self.observation_space = spaces.Dict(obs_spaces)
        self.action_space = spaces.Text(max_length=MAX_UTTERANCE, min_length=0, charset=string.printable)
        self._charset = chars
        self.scenario: Scenario | None = None
        # Per-scenario tables built once here, not at every reset: the options text,
        # the opening recommendation's transcript line and its parsed action.
        self._tables = [s.derived("opening", _opening_table) for s in self.scenarios]
        self._lines_head = [f"User: {s.request}" for s in self.scenarios]
        self._action_cache: dict[str, tuple[Action, str]] = {}

    # -- episode -------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict such as {{'scenario_id': ...}} or None, "
                            f"got {type(options).__name__} {str(options)[:40]!r}")
        unknown = sorted(map(str, set(options or {}) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown[:5]}; known: {list(RESET_OPTIONS)}")
        super().reset(seed=seed)
        sid = (options or {}).get("scenario_id")
        if sid is None:
            index = int(self.np_random.integers(len(self.scenarios)))
        elif isinstance(sid, str) and sid in self._by_id:
            index = self._by_id[sid]
        else:
            raise ValueError(f"unknown scenario_id {sid!r}; one id (str) of this env's scenarios")
        self.scenario = s = self.scenarios[index]
        self.draws = Draws(int(self.np_random.integers(2**63 - 1)))
        self.engine = UserEngine(s, self.realization, self.draws, matcher=self._matcher)
        self.realizer = Realizer(s, self.realization, self.draws)
        self._options_text, opening_line, opening_action = self._tables[index]
        self._lines = [self._lines_head[index], opening_line]
        reaction = self.engine.open()
        self._user_turn(reaction, 1)
        self._counts = dict.fromkeys((*KINDS, INVALID), 0)
        self._recs: list[int] = []
        info = self._info(reaction, opening_action)
        info.update(scenario_id=s.id, realization=self.realization)
        return self._observation(), info

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.scenario is None:
            raise RuntimeError("call reset() before step()")
        if self.engine.done or self.engine.turn >= self.max_turns:
            raise RuntimeError("the episode has ended; call reset()")
        parsed, line = self._read_action(action)
        self._counts[parsed.kind] += 1
        if parsed.kind == "recommend":
            assert parsed.option is not None
            self._recs.append(parsed.option)
        reaction = self.engine.respond(parsed)
        turn = self.engine.turn
        self._lines.append(line)
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
        self._spoken = (words, reaction.delivery, turn)
        self._utterance: tuple[str, str, int] | None = None
        if self.speech is None:
            self._speech: dict[str, Any] = _NO_SPEECH
            return
        self._speech = {}
        audio = self.speech.audio(*self.utterance)
        if "audio" in self.keys:
            # A fresh array every time: Gymnasium requires that observations share no mutable
            # data (check_env), and callers may modify theirs; the cache's copy stays read-only.
            self._speech["audio"] = audio[: MAX_AUDIO_S * 16_000].copy()
        if "inferred_state" in self.keys:
            self._speech["inferred_state"] = self.speech.inferred_state(audio, words, self.transcript)
        if "affect" in self.keys:
            self._speech["affect"] = self.speech.affect_label(audio)

    def _read_action(self, action: object) -> tuple[Action, str]:
        """The parsed action and its transcript line; memoised for short strings (agents repeat themselves).

        Both are pure functions of the string (every scenario has 11 options and the
        env's charset is fixed), so a hit returns exactly what parsing would.
        """
        cache = self._action_cache
        if isinstance(action, str):
            hit = cache.get(action)
            if hit is not None:
                return hit
        parsed = parse_action(action, N_OPTIONS)
        text = action if isinstance(action, str) else repr(action)
        read = parsed, "Assistant: " + sanitize(text, self._charset, MAX_UTTERANCE)
        if isinstance(action, str) and len(action) <= _CACHED_ACTION_CHARS:
            if len(cache) >= _ACTION_CACHE_SIZE:
                cache.clear()
            cache[action] = read
        return read

    # -- views ---------------------------------------------------------------
    @property
    def utterance(self) -> tuple[str, str, int]:
        """What the current user turn sounds like: (words, delivery label, render seed).

        The seed is a keyed draw on (scenario, turn), so matched rollouts render the
        same delivery with the same seed; it is computed on first use (text-only
        steps never need it).
        """
        if self._utterance is None:
            words, delivery, turn = self._spoken
            assert self.scenario is not None
            self._utterance = (words, delivery, self.draws.pick(2**31, "audio", self.scenario.id, turn))
        return self._utterance

    def _visible_lines(self) -> list[str]:
        """The transcript lines the agent observes (under a words-hidden access, user turns after the request)."""
        lines = self._lines
        if self.condition.words_hidden:
            lines = [lines[0], *(f"User: {SPOKEN}" if ln.startswith("User: ") else ln for ln in lines[1:])]
        return lines

    def _observation(self) -> dict[str, Any]:
        lines = self._visible_lines() if self.condition.words_hidden else self._lines
        obs: dict[str, Any] = {"options": self._options_text, "transcript": "\n".join(lines)[-MAX_TEXT:]}
        if self._with_state:
            obs["state"] = self.state_channel.tag(self._last, self.draws, self.engine.turn)
        if self._speech:
            obs.update(self._speech)
        return obs

    def _info(self, reaction: Reaction, action: Action) -> dict[str, Any]:
        return step_info(reaction, action, self.engine)

    def _outcome(self, terminated: bool) -> dict[str, Any]:
        assert self.scenario is not None
        return episode_outcome(self.scenario, self.engine, self._recs, self._counts, terminated)

    @property
    def condition(self) -> Access:
        """This env's row of the access table (:data:`hear2act_env.access.ACCESS`)."""
        return ACCESS[self.access]

    @property
    def transcript(self) -> str:
        return "\n".join(self._lines)

    # -- privileged (training only; never an observation: see hear2act_env.privileged) --
    def fork(self) -> Hear2ActEnv:
        """An independent copy of the live episode that shares the immutable parts (scenarios, spaces, speech)."""
        return fork(self)

    def ground_truth(self) -> GroundTruth:
        """The hidden truth now: scenario, gold, current option and its true state, disclosed needs, turn."""
        return ground_truth(self)

    def render(self) -> str | None:
        """What the agent sees of the dialogue (under access "A" the user's words stay hidden)."""
        if self.scenario is None:
            return None
        lines = self._visible_lines()
        if self.render_mode == "ansi":
            return "\n".join(lines)
        if self.render_mode == "human":
            print(lines[-1] if len(lines) > 3 else "\n".join(lines))
        return None

