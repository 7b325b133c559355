"""The language realizer: structured :class:`Reaction` -> the user's words.

Two matched realizations of the same reaction:

* ``explicit`` (Explicit lexical): an unresolved L2/L3 need is stated in
  words: L2 directly, with no assent (paper §3.2: "L2 preferences are stated
  directly"), L3 as qualified assent (shared-pool assent + the need).
* ``prosody`` (Prosody-mediated): an unresolved L2/L3 need is *not* in the
  words; genuine acceptance, voiced concern and reluctant acceptance all take
  their words from one shared pool of assent phrases, chosen by the same keyed
  draw whatever the state. The delivery label carries the difference.

Requirement violations, L1 rejections and the safe option's own drawback on
the priority attribute (never a comparison with other options) are lexical in
both. Every phrase choice is a keyed draw on (seed, scenario,
turn, purpose), so the same turn gets the same words in matched rollouts.
"""

from __future__ import annotations

from ..scenarios import Scenario
from .engine import Draws, Reaction

# Shared assent pool: the *same* words can be bright or hesitant.
ASSENT = (
    "Okay, sounds good.",
    "That could work...",
    "Sure, that one.",
    "Alright, I think that works.",
    "Okay, that one then.",
    "Yeah, that should be fine.",
    "Mm, okay.",
    "Right, okay.",
    "Okay, I can see that.",
    "I guess that works.",
)
# Explicit L2 openers: direct, never assent, each with a word that flags a problem.
DIRECT = ("Hold on, that one is missing something I need.", "Wait, that's not quite it.",
          "Actually, that's missing something important.")
MILD = ("One minor thing, though:", "It's not a dealbreaker, though.", "Though if I'm honest:")
REJECT = ("No, that won't work.", "That's not going to work for me.", "No, sorry, not that one.",
          "Hmm, no.")
ANSWER = ("", "Good question.", "Let me think.", "Right, so:", "Honestly:")
RESTATE = ("Like I said:", "As I mentioned:", "Again:")
IRRELEVANT = ("That doesn't matter much to me.", "Honestly, I don't mind either way on that.",
              "That's not something I care much about.")
COVERS = ("Honestly, that one covers what I need.", "No, that one has everything I was looking for.",
          "I think that one covers it.")
SAFE = ("It covers everything I need, but", "It has what I need, but", "It would do, but")
HINT = ("Let me put it this way.", "What I can tell you is this.", "Here's the thing.")
REFUSE = ("No, I can't go with that one.", "I can't accept that one.", "Wait, no, not that one.")
ACCEPT = ("Great, let's go with that.", "Okay, let's do it.", "Perfect, thank you.",
          "Alright, let's go ahead with it.")
# Explicit only: confirming an option the user has said falls short is accepted (the
# outcome rule), but not with delight. Prosody-mediated words stay in ACCEPT whatever the
# state (the delivery carries it), so the words never tell the state there.
SETTLE = ("Okay, I'll go with it, even if it's not everything I wanted.",
          "Fine, I'll take it, though it's not quite what I had in mind.",
          "Alright, if that's the pick, I'll go with it.")
REPHRASE = ("Sorry, I didn't follow. Could you put that another way?",
            "I'm not sure what you mean. Can you rephrase that?",
            "Sorry, what are you suggesting exactly?")


def _join(opener: str, sentence: str) -> str:
    """Opener + sentence; the sentence (a need or requirement statement) stays verbatim."""
    return f"{opener} {sentence}" if opener else sentence


class Realizer:
    """Words for reactions in one episode (stateless apart from the draws)."""

    def __init__(self, scenario: Scenario, realization: str, draws: Draws) -> None:
        self.s = scenario
        self.realization = realization
        self.draws = draws

    def _pick(self, pool: tuple[str, ...], turn: int, purpose: str) -> str:
        return pool[self.draws.pick(len(pool), purpose, self.s.id, turn)]

    def assent(self, turn: int) -> str:
        """The shared-pool assent for this turn: independent of state by construction."""
        return self._pick(ASSENT, turn, "assent")

    def _about(self, r: Reaction) -> str:
        """The plain sentence a reaction's words state (need, requirement, ...)."""
        if r.topic == "requirement":
            assert r.requirement is not None
            return self.s.requirements[r.requirement].statement
        assert r.level is not None
        return self.s.need(r.level).statement

    def words(self, r: Reaction, turn: int) -> str:
        s, pick = self.s, self._pick
        if r.act == "react":
            if r.topic in ("requirement",) or (r.topic == "need" and r.level == 1):
                return _join(pick(REJECT, turn, "reject"), self._about(r))
            if r.topic == "safe":
                worse = s.attribute(s.priority).worse
                return f"{pick(SAFE, turn, 'safe')} {worse}."
            if r.topic == "need" and r.level == 2:  # explicit L2: stated directly
                return f"{pick(DIRECT, turn, 'direct')} {self._about(r)}"
            if r.topic == "need":  # explicit L3: qualified assent
                return f"{self.assent(turn)} {pick(MILD, turn, 'qualifier')} {self._about(r)}"
            return self.assent(turn)  # resolved, or prosody-mediated L2/L3
        if r.act == "answer":
            if r.topic in ("need", "requirement"):
                opener = pick(RESTATE if r.restated else ANSWER, turn, "answer")
                return _join(opener, self._about(r))
            if r.topic == "irrelevant":
                return pick(IRRELEVANT, turn, "irrelevant")
            if r.topic == "covers":
                return pick(COVERS, turn, "covers")
            if r.topic == "safe":
                return f"{pick(SAFE, turn, 'safe')} {s.attribute(s.priority).worse}."
            if r.topic == "hint":  # general question on an L1-violating option (G.6)
                return f"{pick(HINT, turn, 'hint')} {s.need(1).hint}"
            if r.topic == "priority":
                attr = s.attribute(s.priority)
                goal = "keeping the {} down" if attr.better == "lower" else "a strong {}"
                return f"The main thing for me is {goal.format(attr.label)}."
        if r.act == "hint":
            return f"{pick(HINT, turn, 'hint')} {s.need(1).hint}"
        if r.act == "refuse":
            return f"{pick(REFUSE, turn, 'refuse')} {self._about(r)}"
        if r.act == "accept":
            settle = self.realization == "explicit" and not r.resolved
            return pick(SETTLE if settle else ACCEPT, turn, "accept")
        return pick(REPHRASE, turn, "rephrase")
