"""The observation grammar: the public, versioned language of what an agent observes.

Everything the simulator writes into an observation's text, and everything a
reader outside the simulator may parse out of it, is defined here as
``format_*`` / ``parse_*`` pairs:

- **User turns.** The realizer (:mod:`hear2act_env.dialogue.realizer`)
  draws its words from the phrase pools of :data:`GRAMMAR` (:class:`Grammar`):
  a turn is a whole phrase ("Okay, sounds good."), an opener and a statement
  ("No, that won't work. <need>"), a qualified assent ("<assent> <mild>
  <need>") or the priority sentence. :func:`parse_turn` splits a turn back
  into its form's category and its statement.
- **The state tag** of ``T+S``: :func:`format_tag` / :func:`parse_tag`
  (``CONCERN STATE: <delivery label> (<status>)``).
- **The perceiver sentence** of ``T+S_hat``: :func:`format_perception` /
  :func:`parse_perception` (the CPU perceiver's sentence and its cited figures),
  :func:`format_inferred` / :func:`strip_inferred` (the observation's prefix).
- **Labels**: delivery labels (:data:`LABELS`), the graded states' descriptors
  (:data:`DESCRIPTORS`), the affect labels (:data:`AFFECT_LABELS`), the
  placeholder of a hidden user turn (:data:`SPOKEN`).

:data:`GRAMMAR_VERSION` changes whenever any of this changes wording, so a
reader written against one version can check the one it meets. Readers
(``hear2act.training.reader``, ``hear2act.training.wrappers``, ``hear2act.training.rewards``) parse only
through these functions; the pools are looked up at call time, so a grammar
swapped in (``Grammar.with_phrase``) is what both the realizer writes and
the readers read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType

from .dialogue.engine import DELIVERY, LABELS, STATES, collapsed

GRAMMAR_VERSION = "1"
SPOKEN = "(spoken)"  # what a user turn's words show as when the access condition hides them
AFFECT_LABELS = ("happy", "sad", "angry", "neutral")
STATUSES = ("resolved", "unresolved")
LABEL_STATUS: Mapping[str, str] = MappingProxyType(
    {label: collapsed(state) for state, labels in DELIVERY.items() for label in labels})
DESCRIPTORS: Mapping[str, str] = MappingProxyType({
    "resolved": "bright and settled",
    "reluctant": "flat and half-hearted",
    "concern": "uneasy",
    "rejection": "firmly negative",
})
assert tuple(DESCRIPTORS) == STATES

# -- user turns ---------------------------------------------------------------------------------------------------
_POOLS: dict[str, tuple[str, ...]] = {
    # Shared assent pool: the *same* words can be bright or hesitant.
    "ASSENT": ("Okay, sounds good.", "That could work...", "Sure, that one.", "Alright, I think that works.",
               "Okay, that one then.", "Yeah, that should be fine.", "Mm, okay.", "Right, okay.",
               "Okay, I can see that.", "I guess that works."),
    # Explicit L2 openers: direct, never assent, each with a word that flags a problem.
    "DIRECT": ("Hold on, that one is missing something I need.", "Wait, that's not quite it.",
               "Actually, that's missing something important."),
    "MILD": ("One minor thing, though:", "It's not a dealbreaker, though.", "Though if I'm honest:"),
    "REJECT": ("No, that won't work.", "That's not going to work for me.", "No, sorry, not that one.", "Hmm, no."),
    "ANSWER": ("", "Good question.", "Let me think.", "Right, so:", "Honestly:"),
    "RESTATE": ("Like I said:", "As I mentioned:", "Again:"),
    "IRRELEVANT": ("That doesn't matter much to me.", "Honestly, I don't mind either way on that.",
                   "That's not something I care much about."),
    "COVERS": ("Honestly, that one covers what I need.", "No, that one has everything I was looking for.",
               "I think that one covers it."),
    "SAFE": ("It covers everything I need, but", "It has what I need, but", "It would do, but"),
    "HINT": ("Let me put it this way.", "What I can tell you is this.", "Here's the thing."),
    "REFUSE": ("No, I can't go with that one.", "I can't accept that one.", "Wait, no, not that one."),
    "ACCEPT": ("Great, let's go with that.", "Okay, let's do it.", "Perfect, thank you.",
               "Alright, let's go ahead with it."),
    # Explicit only: confirming an option the user has said falls short is accepted (the outcome rule), but not
    # with delight. Prosody-mediated words stay in ACCEPT whatever the state (the delivery carries it).
    "SETTLE": ("Okay, I'll go with it, even if it's not everything I wanted.",
               "Fine, I'll take it, though it's not quite what I had in mind.",
               "Alright, if that's the pick, I'll go with it."),
    "REPHRASE": ("Sorry, I didn't follow. Could you put that another way?",
                 "I'm not sure what you mean. Can you rephrase that?", "Sorry, what are you suggesting exactly?"),
}
PRIORITY_PREFIX = "The main thing for me is"
PRIORITY_GOALS: Mapping[str, str] = MappingProxyType({"lower": "keeping the {} down", "higher": "a strong {}"})

# How a user turn is read back, tried in order: (category, form, pool). Forms: "whole" (the turn is one phrase of
# the pool), "prefix" (the turn starts with PRIORITY_PREFIX), "qualified" (an ASSENT phrase, then a phrase of the
# pool, then the statement), "opener" (a non-empty phrase of the pool, a space, the statement). A turn no form
# matches is a bare statement (the empty ANSWER opener). SETTLE has no form: an accepting turn ends the episode,
# and it reads as a bare statement.
TURN_FORMS: tuple[tuple[str, str, str], ...] = (
    ("assent", "whole", "ASSENT"), ("irrelevant", "whole", "IRRELEVANT"), ("covers", "whole", "COVERS"),
    ("accept", "whole", "ACCEPT"), ("rephrase", "whole", "REPHRASE"), ("priority", "prefix", ""),
    ("qualified", "qualified", "MILD"), ("safe", "opener", "SAFE"), ("hint", "opener", "HINT"),
    ("refuse", "opener", "REFUSE"), ("reject", "opener", "REJECT"), ("direct", "opener", "DIRECT"),
    ("restate", "opener", "RESTATE"), ("answer", "opener", "ANSWER"),
)
_FORMS = ("whole", "prefix", "qualified", "opener")


@dataclass(frozen=True, eq=False)  # compared (and cached on) by identity: a changed grammar is a new object
class Grammar:
    """The phrase pools of one grammar version (see the module docstring)."""

    version: str
    pools: tuple[tuple[str, tuple[str, ...]], ...]

    def __post_init__(self) -> None:
        for name, phrases in self.pools:
            if not phrases or not all(isinstance(p, str) for p in phrases):
                raise ValueError(f"grammar {self.version}: pool {name!r} must be a non-empty tuple of str")
        for category, form, pool in TURN_FORMS:
            if form not in _FORMS:
                raise ValueError(f"grammar {self.version}: turn form {category!r} has unknown form {form!r}")
            if pool:
                self.pool(pool)  # a form that names a missing pool is an error here, not an empty reading later

    @cached_property
    def _by_name(self) -> Mapping[str, tuple[str, ...]]:
        return MappingProxyType(dict(self.pools))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def pool(self, name: str) -> tuple[str, ...]:
        """The phrases of pool ``name``; a missing pool is an error naming the pools there are."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"grammar {self.version} has no phrase pool {name!r}; pools: {list(self.names)}") from None

    def phrases(self) -> tuple[str, ...]:
        """Every phrase of every pool (and the priority sentence's fixed words)."""
        return (*(p for _, ps in self.pools for p in ps), PRIORITY_PREFIX, *PRIORITY_GOALS.values())

    def with_phrase(self, name: str, index: int, phrase: str, version: str | None = None) -> Grammar:
        """A copy with ``pool(name)[index]`` replaced (a new version: ``<version>+edit`` unless given)."""
        size = len(self.pool(name))
        if not 0 <= index < size:
            raise IndexError(f"grammar {self.version}: pool {name!r} has {size} phrases, no index {index}")
        pools = tuple((n, (*ps[:index], phrase, *ps[index + 1:]) if n == name else ps) for n, ps in self.pools)
        return Grammar(version or f"{self.version}+edit", pools)


GRAMMAR = Grammar(GRAMMAR_VERSION, tuple(_POOLS.items()))


def grammar() -> Grammar:
    """The grammar in use (the realizer and :func:`parse_turn` read it at call time)."""
    return GRAMMAR


def join(opener: str, sentence: str) -> str:
    """Opener + sentence; the sentence (a need or requirement statement) stays verbatim."""
    return f"{opener} {sentence}" if opener else sentence


def format_priority(label: str, better: str) -> str:
    """The sentence naming the user's priority attribute (``better``: ``"lower"`` or ``"higher"``)."""
    goal = PRIORITY_GOALS["lower" if better == "lower" else "higher"]
    return f"{PRIORITY_PREFIX} {goal.format(label)}."


def parse_turn(words: str, g: Grammar | None = None) -> tuple[str, str]:
    """(category, statement) of one user turn, read by :data:`TURN_FORMS`.

    >>> parse_turn("No, that won't work. I need a window seat.")
    ('reject', 'I need a window seat.')
    >>> parse_turn("Okay, sounds good.")
    ('assent', '')
    """
    return _parse_turn(words, g or GRAMMAR)


@lru_cache(maxsize=65_536)
def _parse_turn(words: str, g: Grammar) -> tuple[str, str]:
    words = words.strip()
    for category, form, name in TURN_FORMS:
        if form == "whole" and words in g.pool(name):
            return category, ""
        if form == "prefix" and words.startswith(PRIORITY_PREFIX):
            return category, ""
        if form == "qualified":
            for assent in g.pool("ASSENT"):
                if words.startswith(assent + " "):
                    rest = words[len(assent) + 1:]
                    for opener in g.pool(name):
                        if rest.startswith(opener):
                            return category, rest[len(opener):].strip()
        if form == "opener":
            for opener in g.pool(name):
                if opener and words.startswith(opener + " "):
                    return category, words[len(opener) + 1:].strip()
    return "answer", words  # a bare statement (the empty answer opener)


# -- the state tag (T+S) ------------------------------------------------------------------------------------------
TAG_PREFIX = "CONCERN STATE: "
_TAG = re.compile(r"CONCERN STATE: (.+?) \((resolved|unresolved)\)")
_STATUS = re.compile(r"\b(resolved|unresolved)\b")


def format_tag(label: str, status: str | None = None) -> str:
    """``CONCERN STATE: <label> (<status>)``; the status defaults to the label's own.

    >>> format_tag("hesitant")
    'CONCERN STATE: hesitant (unresolved)'
    """
    return f"{TAG_PREFIX}{label} ({LABEL_STATUS[label] if status is None else status})"


def parse_tag(text: str) -> tuple[str, str] | None:
    """(delivery label, status) of a state tag; ``None`` for no tag (the ``none`` intervention shows ``""``).

    >>> parse_tag(format_tag("hesitant"))
    ('hesitant', 'unresolved')
    """
    m = _TAG.search(text or "")
    return None if m is None else (m.group(1), m.group(2))


def read_status(text: str) -> str | None:
    """The first ``resolved`` / ``unresolved`` in a text (a tag, or any perceiver's sentence), else ``None``."""
    m = _STATUS.search(text or "")
    return None if m is None else m.group(1)


# -- the perceiver sentence (T+S_hat) -----------------------------------------------------------------------------
INFERRED_PREFIX = "AUDIO-INFERRED STATE: "
# The figures the CPU perceiver's sentence cites: (feature, how the sentence names it, unit, number first?).
PERCEPTION_FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("f0_range", "pitch range", "st", False), ("f0_final", "final pitch movement", "st", False),
    ("speech_rate", "syllables/s", "", True), ("energy_fade", "loudness", "dB over the turn", False),
)
_NUM = r"([+-]?\d+(?:\.\d+)?)"
_PERCEPTION = re.compile(
    r"The user's delivery sounds (?P<descriptor>.+?) \(pitch range " + _NUM + r" st, final pitch movement " + _NUM
    + r" st, " + _NUM + r" syllables/s, loudness " + _NUM
    + r" dB over the turn\), so the current recommendation seems (?P<status>resolved|unresolved)\.")


@dataclass(frozen=True)
class Perceived:
    """What a perceiver sentence says: the graded state, the status and the cited figures."""

    state: str
    status: str
    figures: Mapping[str, float]


def format_perception(state: str, status: str, f0_range: float, f0_final: float, speech_rate: float,
                      energy_fade: float) -> str:
    """The CPU perceiver's sentence for one user turn."""
    return (f"The user's delivery sounds {DESCRIPTORS[state]} (pitch range {f0_range:.1f} st, "
            f"final pitch movement {f0_final:+.1f} st, {speech_rate:.1f} syllables/s, "
            f"loudness {energy_fade:+.1f} dB over the turn), so the current recommendation seems {status}.")


def parse_perception(text: str) -> Perceived | None:
    """The reading of a sentence :func:`format_perception` wrote (prefixed or not); ``None`` for any other text.

    >>> p = parse_perception(format_perception("concern", "unresolved", 6.24, -1.5, 4.2, -3.0))
    >>> p.state, p.status, p.figures["f0_range"]
    ('concern', 'unresolved', 6.2)
    """
    m = _PERCEPTION.search(text or "")
    if m is None:
        return None
    state = next((s for s, d in DESCRIPTORS.items() if d == m.group("descriptor")), None)
    if state is None:
        return None
    figures = {f[0]: float(m.group(i)) for i, f in enumerate(PERCEPTION_FIGURES, start=2)}
    return Perceived(state, m.group("status"), MappingProxyType(figures))


def read_descriptor(text: str) -> str | None:
    """The graded state whose descriptor a text names first in :data:`DESCRIPTORS` order (any perceiver's words)."""
    return next((s for s, d in DESCRIPTORS.items() if d in (text or "")), None)


def format_inferred(sentence: str) -> str:
    """The ``inferred_state`` observation: the prefix and a perceiver's sentence."""
    return INFERRED_PREFIX + sentence


def strip_inferred(text: str) -> str:
    """A perceiver's sentence without the observation's prefix (matched case-insensitively; spaces trimmed)."""
    text = text.strip()
    head = INFERRED_PREFIX.strip()
    return text[len(head):].strip() if text.upper().startswith(head) else text


__all__ = ["AFFECT_LABELS", "DESCRIPTORS", "GRAMMAR", "GRAMMAR_VERSION", "INFERRED_PREFIX", "LABELS", "LABEL_STATUS",
           "PERCEPTION_FIGURES", "PRIORITY_PREFIX", "SPOKEN", "STATUSES", "TAG_PREFIX", "TURN_FORMS", "Grammar",
           "Perceived", "format_inferred", "format_perception", "format_priority", "format_tag", "grammar", "join",
           "parse_perception", "parse_tag", "parse_turn", "read_descriptor", "read_status", "strip_inferred"]
