"""CESAR process rewards for Hear2Act, plus verified acoustic evidence.

Each reward is a small function ``(completions, **kwargs) -> list[float]``
with TRL's reward-function signature (``trl/rewards/format_rewards.py``):
``completions`` are strings or ``[{"role": "assistant", "content": ...}]``;
the dataset columns (``realization``, ``scenario_id``, ``seed``, ``history``,
``transcript``, ...) and ``prompts`` / ``completion_ids`` arrive as keyword
lists, one entry per completion. Weights live in ``GRPOConfig.reward_weights``
(CESAR: accuracy 5, the others 1); TRL logs each term as
``rewards/<name>/mean``.

| name | range | what it checks |
| --- | --- | --- |
| ``accuracy`` | 0..1 | the answer's verifiable value from the env (:func:`hear2act.training.grpo_data.action_value`) |
| ``format`` | 0/1 | ``<think>R</think><answer>A</answer>``, R non-empty, A a valid action |
| ``consistency`` | 0/1 | the decision the reasoning states is the action the answer takes |
| ``keywords`` | 0..1 | reasoning grounded in the dialogue (user's words), the delivery, needs, logic |
| ``overthinking`` | -1..0 | completion length / 256 tokens (CESAR's normalised length penalty) |
| ``evidence`` | -1..1 | acoustic claims re-derived from the audio: (verified - fabricated) / claims |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint
from typing import Any

from hear2act.agents.llm.reasoning import split_reasoning
from hear2act_env.access import names
from hear2act_env.dialogue.actions import INVALID, parse_action
from hear2act_env.dialogue.lexicon import STOP
from hear2act_env.plugins import PluginError, PluginRegistry, describe, load_entry_point
from hear2act_env.speech.claims import QUOTED, Claim, acoustic_claims, base_rate, check_claim, clip_features

N_OPTIONS = 11
MAX_COMPLETION = 256  # CESAR's normaliser of the overthinking penalty


class _Weights(dict):
    """The terms' default weights; a plugin term ("hear2act.rewards" entry point) weighs its ``weight``
    attribute, else 1."""

    def __missing__(self, name: str) -> float:
        if name in REWARDS:
            return float(getattr(REWARDS[name], "weight", 1.0))
        raise KeyError(name)


REWARD_WEIGHTS: dict[str, float] = _Weights(accuracy=5.0, format=1.0, consistency=1.0, keywords=1.0,
                                            overthinking=1.0, evidence=1.0)


def completion_text(completion: Any) -> str:
    """The text of one completion, plain or conversational.

    >>> completion_text([{"role": "assistant", "content": "hi"}])
    'hi'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        return content if isinstance(content, str) else " ".join(
            p.get("text", "") for p in content if isinstance(p, dict))
    raise TypeError(f"a completion must be a str or a list of messages, got {type(completion).__name__}")


_FORMAT = re.compile(r"^\s*<think>(.+?)</think>\s*<answer>(.+?)</answer>\s*$", re.DOTALL | re.IGNORECASE)


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 for ``<think>R</think><answer>A</answer>`` with a non-empty R and a valid action A, else 0.0.

    >>> format_reward(["<think>The user hesitated.</think><answer>[ACTION: ASK] Any concerns?</answer>",
    ...                "<think>ok</think><answer>sure</answer>", "[ACTION: CONFIRM] done"])
    [1.0, 0.0, 0.0]
    """
    out = []
    for c in completions:
        m = _FORMAT.match(completion_text(c))
        ok = m is not None and m.group(1).strip() and parse_action(m.group(2).strip(), N_OPTIONS).kind != INVALID
        out.append(1.0 if ok else 0.0)
    return out


def accuracy_reward(completions: Sequence[Any], realization: Sequence[str] | None = None,
                    scenario_id: Sequence[str] | None = None, seed: Sequence[int] | None = None,
                    history: Sequence[Sequence[str]] | None = None, *, outcome_weight: float = 0.0,
                    **kwargs: Any) -> list[float]:
    """The verifiable value of each answer's action, by stepping a replayed copy of the env.

    Confirming an unresolved recommendation is wrong (0), recommending the gold
    or confirming it is right (1), asking is worth 0.5 while there is
    something to find out and 0 otherwise; see
    :func:`hear2act.training.grpo_data.action_value`. ``outcome_weight`` > 0 mixes in the
    episode's success when a fixed policy continues from the action.

    >>> cols = dict(realization=["prosody"] * 3, scenario_id=["budget-airline-tickets-01"] * 3, seed=[0] * 3,
    ...             history=[[]] * 3)
    >>> accuracy_reward(["<think>t</think><answer>[ACTION: CONFIRM] Booked.</answer>",
    ...                  "<think>t</think><answer>[ACTION: ASK] Anything else?</answer>", "nonsense"], **cols)
    [0.0, 0.5, 0.0]
    """
    from .grpo_data import DialogueState, score_action

    columns = {"realization": realization, "scenario_id": scenario_id, "seed": seed, "history": history}
    missing = [k for k, v in columns.items() if v is None]
    if missing:
        raise ValueError(f"accuracy needs the dataset columns {missing} "
                         "(rows from hear2act.training.grpo_data.training_rows)")
    out = []
    for c, r, sid, s, h in zip(completions, realization, scenario_id, seed, history, strict=True):
        _, answer = split_reasoning(completion_text(c))
        state = DialogueState(str(r), str(sid), int(s), tuple(h))
        out.append(score_action(state, answer, outcome_weight=outcome_weight))
    return out


# -- consistency --------------------------------------------------------------------------------------------------
_DECISION_VERB = re.compile(
    r"\b(recommend|suggest|propose|offer|switch|confirm|book|finali[sz]e|lock\s+in|go\s+with|ask|question|"
    r"clarify)\w*\b(?:[^.;!?\n]{0,40}?\boption\s*(?:#|number\s*)?(\d+))?", re.IGNORECASE)
_DECISION_CUE = re.compile(r"\b(I will|I'll|I should|I need to|let me|let's|next|so|therefore|thus|best|decide|"
                           r"action|better to)\b", re.IGNORECASE)
_NEGATED = re.compile(r"(?:\bnot|\bnever|n't|\bno)\s+(?:\w+\s+)?$", re.IGNORECASE)
_VERB_KIND = {"recommend": "recommend", "suggest": "recommend", "propose": "recommend", "offer": "recommend",
              "switch": "recommend", "confirm": "confirm", "book": "confirm", "finalize": "confirm",
              "finalise": "confirm", "lock in": "confirm", "go with": "go with", "ask": "ask", "question": "ask",
              "clarify": "clarify"}
# What someone else said or asked is not the assistant's decision: quoted words (speech.claims.QUOTED), and
# clauses reporting the user.
_REPORTED = re.compile(
    r"\b(?:since|because|as|although|while|after|when|given that)?\s*(?:the user|the customer|they|she|he)\s+"
    r"(?:has\s+|had\s+|just\s+)?(?:asked|asks|said|says|mentioned|mentions|wanted|wants|requested|requests|"
    r"questioned|wondered|told me)\b[^,;.!?\n]*", re.IGNORECASE)
_REFUSAL = re.compile(r"^\s*(?:no\b|nope\b|not\b|that won't|that doesn't|that does not|it won't|it doesn't|"
                      r"that's not|that is not|i don't|i can't|that can't)", re.IGNORECASE)


def _strip_reported(sentence: str) -> str:
    return _REPORTED.sub(" ", QUOTED.sub(" ", sentence))


def stated_decision(reasoning: str, current: int | None = None) -> tuple[str, int | None] | None:
    """(kind, option) of the decision the reasoning states: the first action verb of its last decision sentence.

    Quoted words and reported speech ("Since the user asked ...") are not the
    decision. "go with option N" is CONFIRM when N is the ``current``
    recommendation (or no option is named) and RECOMMEND N otherwise.

    >>> stated_decision("The user sounds hesitant. So I should ask what bothers them.")
    ('ask', None)
    >>> stated_decision("Option 4 meets every need, so I will recommend option 4.")
    ('recommend', 4)
    >>> stated_decision("Nothing decided.") is None
    True
    >>> stated_decision("She sounds flat, so I won't confirm yet and will ask instead.")
    ('ask', None)
    >>> stated_decision("Since the user asked about the price, I will recommend option 9.")
    ('recommend', 9)
    >>> stated_decision("So let's go with option 4.", current=4), stated_decision("So let's go with option 4.")
    (('confirm', None), ('recommend', 4))
    """
    sentences = [s for s in re.split(r"(?<=[.!?;])\s+|\n+", reasoning) if s.strip()]
    ordered = [s for s in sentences if _DECISION_CUE.search(_strip_reported(s))] or sentences
    for sentence in reversed(ordered):
        sentence = _strip_reported(sentence)
        # "I won't confirm yet, I'll ask": a negated verb is not the decision
        m = next((m for m in _DECISION_VERB.finditer(sentence)
                  if not _NEGATED.search(sentence[max(0, m.start() - 24):m.start()])), None)
        if m is not None:
            verb = re.sub(r"\s+", " ", m.group(1).lower())
            kind = _VERB_KIND.get(verb) or _VERB_KIND.get(verb.rstrip("e")) or "confirm"
            option = int(m.group(2)) if m.group(2) else None
            if kind == "go with":
                kind = "confirm" if option is None or option == current else "recommend"
            return kind, option if kind == "recommend" else None
    return None


def dialogue_context(transcript: str) -> tuple[int | None, frozenset[int]]:
    """(current recommendation, options the user turned down) read off a transcript's ``Assistant:`` lines.

    >>> dialogue_context("User: hi\\nAssistant: [ACTION: RECOMMEND] [OPTION: 3] x\\nUser: No, that won't work."
    ...                  "\\nAssistant: [ACTION: RECOMMEND] [OPTION: 5] y\\nUser: Maybe.")
    (5, frozenset({3}))
    """
    current, refused = None, set()
    lines = transcript.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("Assistant: "):
            continue
        action = parse_action(line[len("Assistant: "):], N_OPTIONS)
        if action.kind != "recommend":
            continue
        current = action.option
        reply = next((ln[len("User: "):] for ln in lines[i + 1:i + 2] if ln.startswith("User: ")), "")
        if _REFUSAL.search(reply):
            refused.add(action.option)
    return current, frozenset(refused)


def _n_options(options: str | None) -> int:
    if not options:
        return N_OPTIONS
    numbers = [int(m.group(1)) for m in re.finditer(r"^\s*(\d+)\.", options, re.MULTILINE)]
    return max(numbers) if numbers else N_OPTIONS


def consistency_reward(completions: Sequence[Any], transcript: Sequence[str] | None = None,
                       options: Sequence[str] | None = None, **kwargs: Any) -> list[float]:
    """1.0 when the reasoning's stated decision is the answer's action and fits the dialogue, else 0.0.

    The decision (kind, and option for RECOMMEND) must be the answer's; with
    the dialogue given (``transcript``, ``options`` columns), a recommended
    option must exist and must not be one the user already turned down, and
    "go with option N" reads as CONFIRM only for the current recommendation.

    >>> consistency_reward([
    ...     "<think>She sounded flat, so I should ask.</think><answer>[ACTION: ASK] What matters?</answer>",
    ...     "<think>She sounded flat, so I should ask.</think><answer>[ACTION: CONFIRM] Done.</answer>",
    ...     "<think>So I will recommend option 2.</think><answer>[ACTION: RECOMMEND] [OPTION: 3] x</answer>"])
    [1.0, 0.0, 0.0]
    >>> t = "User: hi\\nAssistant: [ACTION: RECOMMEND] [OPTION: 3] x\\nUser: No, that won't work."
    >>> consistency_reward(["<think>I will recommend option 3.</think><answer>[ACTION: RECOMMEND] [OPTION: 3] x"
    ...                     "</answer>"], transcript=[t])
    [0.0]
    """
    n = len(completions)
    transcripts = list(transcript) if transcript is not None else [""] * n
    option_texts = list(options) if options is not None else [None] * n
    out = []
    for c, t, o in zip(completions, transcripts, option_texts, strict=True):
        reasoning, answer = split_reasoning(completion_text(c))
        n_options = _n_options(o)
        action = parse_action(answer, n_options)
        current, refused = dialogue_context(t or "")
        decision = stated_decision(reasoning, current)
        ok = (decision is not None and action.kind != INVALID and decision[0] == action.kind
              and (decision[1] is None or decision[1] == action.option))
        if ok and action.kind == "recommend":
            ok = 1 <= action.option <= n_options and action.option not in refused
        out.append(1.0 if ok else 0.0)
    return out


# -- keywords -----------------------------------------------------------------------------------------------------
# Delivery, read off the state (the tag under T+S, or words like "hesitant"): earned under every access.
_STATE_WORDS = re.compile(r"\b(hesita\w*|lukewarm|enthusias\w*|concern\w*|frustrat\w*|reluctan\w*|underwhelm\w*|"
                          r"satisf\w*|reliev\w*|disappoint\w*|resolved|unresolved|state tag|tag)\b", re.IGNORECASE)
# Delivery, heard: acoustic words. They earn the keyword only when there is audio; without it the evidence term
# penalises them as fabricated claims, so the two terms never pull opposite ways.
_ACOUSTIC_WORDS = re.compile(r"\b(tone|pitch|voice|deliver\w*|prosod\w*|sounded|sounding|flat|warm|pause\w*|slow\w*|"
                             r"energy|intonation|quiet\w*|loud\w*|soft\w*|monoton\w*)\b", re.IGNORECASE)
# The conditions whose agent meets acoustic evidence (the audio, or a perceiver's measurements): hear2act_env.access.
AUDIO_ACCESS = frozenset(names(lambda a: a.acoustic_evidence))
_NEEDS = re.compile(r"\b(need\w*|requirement\w*|prefer\w*|constraint\w*|must|budget|price|priority|"
                    r"option\s*\d+)\b", re.IGNORECASE)
_LOGIC = re.compile(r"\b(because|since|so|therefore|thus|however|but|although|which means|if)\b", re.IGNORECASE)
# Words that do not ground a reasoning in the user's turn: the stopwords (the one list) and assent's words.
_STOP = STOP | frozenset(("sound", "sounds", "good"))


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z']{4,}", text.lower()) if w not in _STOP}


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def _quotes(reasoning: str, turn: str) -> bool:
    """The reasoning repeats the user's turn (at least two words): assent like "Okay, sounds good." has no
    content words, yet quoting it is exactly what grounds a reading of its delivery."""
    said = _normal(turn)
    return len(said.split()) >= 2 and said in _normal(reasoning)


def _last_user_turn(transcript: str) -> str:
    lines = [ln for ln in transcript.splitlines() if ln.startswith("User: ")]
    return lines[-1][len("User: "):] if lines else ""


def has_audio(n: int, prompts: Sequence[Any] | None = None, audio: Sequence[Any] | None = None,
              reference_audio: Sequence[Any] | None = None, access: Sequence[str] | None = None) -> list[bool]:
    """Per completion: was there audio the reasoning could describe (an audio column / part, or an audio access)?"""
    out = []
    for i in range(n):
        clip = next((col[i] for col in (audio, reference_audio) if col is not None and col[i] is not None), None)
        if clip is None and prompts is not None:
            clip = prompt_audio(prompts[i])
        out.append(clip is not None or (access is not None and str(access[i]) in AUDIO_ACCESS))
    return out


def keywords_reward(completions: Sequence[Any], transcript: Sequence[str] | None = None,
                    prompts: Sequence[Any] | None = None, audio: Sequence[Any] | None = None,
                    reference_audio: Sequence[Any] | None = None, access: Sequence[str] | None = None,
                    **kwargs: Any) -> list[float]:
    """Mean of four checks on the reasoning: it cites the user's last words, the delivery, the needs, and reasons.

    * dialogue: the reasoning quotes the user's last turn or shares a content
      word with it (``(spoken)`` turns: with any transcript line);
    * delivery: it names the user's state (hesitant, unresolved, the tag, ...),
      or -- only when there is audio -- how they sounded (tone, flat, pause, ...):
      without audio those words are unverifiable claims that ``evidence`` penalises;
    * needs: it talks about needs / requirements / options;
    * logic: it uses a connective (because, so, but, ...).

    >>> t = ["User: I want the cheapest flight.\\nAssistant: ...\\nUser: That could work, I guess."]
    >>> keywords_reward(["<think>She said it could work but sounded hesitant, so a need is unmet.</think>"
    ...                  "<answer>[ACTION: ASK] x</answer>", "<think>ok</think><answer>y</answer>"], t * 2)
    [1.0, 0.0]
    >>> keywords_reward(["<think>'Okay, sounds good' but flat, so a need is unmet.</think>"],
    ...                 ["User: Okay, sounds good."], access=["A"])
    [1.0]
    >>> keywords_reward(["<think>'Okay, sounds good' but flat, so a need is unmet.</think>"],
    ...                 ["User: Okay, sounds good."], access=["T"])
    [0.75]
    """
    transcripts = list(transcript) if transcript is not None else [""] * len(completions)
    heard = has_audio(len(completions), prompts, audio, reference_audio, access)
    out = []
    for c, t, h in zip(completions, transcripts, heard, strict=True):
        reasoning, _ = split_reasoning(completion_text(c))
        last = _last_user_turn(t)
        source = t if last.strip() in ("", "(spoken)") else last
        grounded = bool(_content_words(source) & _content_words(reasoning)) or _quotes(reasoning, last)
        delivery = bool(_STATE_WORDS.search(reasoning)) or (h and bool(_ACOUSTIC_WORDS.search(reasoning)))
        checks = (grounded, delivery, bool(_NEEDS.search(reasoning)),
                  bool(_LOGIC.search(reasoning)))
        out.append(sum(checks) / len(checks))
    return out


def overthinking_reward(completions: Sequence[Any], completion_ids: Sequence[Sequence[int]] | None = None, *,
                        budget: int = 0, norm: int = MAX_COMPLETION, **kwargs: Any) -> list[float]:
    """``-min(1, max(0, n - budget) / norm)`` for ``n`` completion tokens (words when no ids are given).

    CESAR normalises its length penalty by the maximum output length (256);
    ``budget`` tokens can be made free.

    >>> overthinking_reward(["a", "b"], completion_ids=[[1] * 64, [1] * 300])
    [-0.25, -1.0]
    >>> overthinking_reward(["one two three"], budget=2, norm=4)
    [-0.25]
    """
    if norm <= 0 or budget < 0:
        raise ValueError(f"overthinking: norm must be > 0 and budget >= 0, got norm={norm}, budget={budget}")
    lengths = ([len(ids) for ids in completion_ids] if completion_ids is not None
               else [len(completion_text(c).split()) for c in completions])
    return [-min(1.0, max(0, n - budget) / norm) for n in lengths]


# -- evidence -----------------------------------------------------------------------------------------------------
# The claims about the user's voice, their checker and their base rates: hear2act_env.speech.claims.


def prompt_audio(prompt: Any) -> Any | None:
    """The last audio part of a chat prompt (the current user turn), or None."""
    if not isinstance(prompt, Sequence) or isinstance(prompt, str):
        return None
    for message in reversed(prompt):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in reversed(content):
                if isinstance(part, dict) and part.get("type") == "audio":
                    return part.get("audio")
    return None


def claim_score(claim: Claim, verified: bool) -> float:
    """``1 - p`` for a verified claim, ``-max(p, 0.5)`` for a false one (``p``: its base rate).

    A claim made whatever the audio then scores ``p (1 - p) - (1 - p) max(p, 0.5) <= 0`` in expectation: saying
    "slow" every turn cannot earn evidence reward, only hearing it can.

    >>> c = Claim("slow", "speech_rate", "<=", 4.0)
    >>> round(claim_score(c, True), 3), round(claim_score(c, False), 3)
    (0.505, -0.5)
    """
    p = base_rate(claim)
    return 1.0 - p if verified else -max(p, 0.5)


def evidence_reward(completions: Sequence[Any], prompts: Sequence[Any] | None = None,
                    audio: Sequence[Any] | None = None, reference_audio: Sequence[Any] | None = None,
                    **kwargs: Any) -> list[float]:
    """Mean calibrated score (:func:`claim_score`) of the voice claims of each reasoning; 0.0 without claims.

    Each claim is re-derived from the user turn's audio -- the ``audio`` column
    or the prompt's audio part (what the model heard under ``A`` / ``A+T``), else
    ``reference_audio`` (``T+S_hat``: the model read a perceiver's measurements
    of it) -- by the speech layer's feature extractor and checked with the
    verifier's 15 % tolerance; a cited value with a span goes through
    :func:`hear2act_env.speech.claims.check_evidence` whole (provenance, unit,
    span). With no audio at all (``T``, ``T+S``) the model cannot know the delivery, so
    every voice claim scores -1. Words that are not about the voice (option
    features such as "fast shipping", quoted words) are not claims
    (:func:`hear2act_env.speech.claims.acoustic_claims`).

    >>> import numpy as np
    >>> t = np.arange(int(1.2 * 16000)) / 16000
    >>> f0 = np.where(t < 0.8, 200.0, 200.0 - 150.0 * (t - 0.8))    # level, then a fall over the last 0.4 s
    >>> falling = (0.3 * np.sin(2 * np.pi * np.cumsum(f0) / 16000)).astype(np.float32)
    >>> think = "<think>Her pitch {} at the end.</think><answer>[ACTION: ASK] x</answer>"
    >>> [round(v, 3) for v in evidence_reward([think.format("falls"), think.format("rises"), "<think>no claim</think>"],
    ...                                                  audio=[falling] * 3)]
    [0.535, -0.5, 0.0]
    >>> evidence_reward([think.format("falls")])        # no audio to check against: fabricated
    [-1.0]
    """
    n = len(completions)
    clips = list(audio) if audio is not None else [None] * n
    if prompts is not None:
        clips = [c if c is not None else prompt_audio(p) for c, p in zip(clips, prompts, strict=True)]
    if reference_audio is not None:
        clips = [c if c is not None else r for c, r in zip(clips, reference_audio, strict=True)]
    out = []
    for c, clip in zip(completions, clips, strict=True):
        reasoning, _ = split_reasoning(completion_text(c))
        claims = acoustic_claims(reasoning)
        if not claims:
            out.append(0.0)
            continue
        if clip is None or len(clip) == 0:
            out.append(-1.0)
            continue
        feats = clip_features(clip)
        out.append(sum(claim_score(cl, check_claim(cl, feats)) for cl in claims) / len(claims))
    return out


RewardFunc = Callable[..., list[float]]


def _plugin_reward(ep: EntryPoint) -> RewardFunc:
    func = load_entry_point(ep, "reward")
    if not callable(func):
        raise PluginError(f"reward plugin {ep.name!r}: entry point {describe(ep)} gave {func!r}, "
                          "not a function (completions, **columns) -> list[float]")
    return func


# name -> term; plus the "hear2act.rewards" entry points (hear2act_env.plugins), loaded when named.
REWARDS: PluginRegistry[RewardFunc] = PluginRegistry("reward", {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "consistency": consistency_reward,
    "keywords": keywords_reward,
    "overthinking": overthinking_reward,
    "evidence": evidence_reward,
}, _plugin_reward)
DEFAULT_REWARDS = ("accuracy", "format", "consistency", "keywords", "overthinking", "evidence")  # plugins: opt in


def make_reward_funcs(names: Sequence[str] = DEFAULT_REWARDS, **options: dict[str, Any]) -> list[RewardFunc]:
    """The named reward functions, each with its options bound and ``__name__`` = its term name.

    TRL logs a reward under its function's ``__name__``, so each term appears
    as ``rewards/<name>/mean``. ``options`` maps a name to keyword arguments,
    e.g. ``accuracy={"outcome_weight": 0.5}``, ``overthinking={"norm": 256}``.

    >>> [f.__name__ for f in make_reward_funcs(("format", "overthinking"), overthinking={"norm": 8})]
    ['format', 'overthinking']
    """
    unknown = [n for n in [*names, *options] if n not in REWARDS]
    if unknown:
        raise ValueError(f"unknown reward(s) {unknown}; choose from {sorted(REWARDS)}")
    funcs = []
    for name in names:
        base, bound = REWARDS[name], dict(options.get(name, {}))

        def func(completions, _base=base, _bound=bound, **kwargs):
            return _base(completions, **{**kwargs, **_bound})

        func.__name__ = func.__qualname__ = name
        func.__doc__ = base.__doc__
        funcs.append(func)
    return funcs


__all__ = [
    "DEFAULT_REWARDS",
    "MAX_COMPLETION",
    "REWARDS",
    "REWARD_WEIGHTS",
    "accuracy_reward",
    "claim_score",
    "completion_text",
    "consistency_reward",
    "evidence_reward",
    "format_reward",
    "has_audio",
    "keywords_reward",
    "make_reward_funcs",
    "overthinking_reward",
    "prompt_audio",
    "stated_decision",
]
