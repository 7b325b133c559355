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

The phrase pools are the observation grammar's (:data:`hear2act_env.protocol.GRAMMAR`),
looked up at each call, so readers that parse with :func:`hear2act_env.protocol.parse_turn`
read exactly what is written here.
"""

from __future__ import annotations

from .. import protocol
from ..protocol import format_priority, join
from ..scenarios import Scenario
from .engine import Draws, Reaction


class Realizer:
    """Words for reactions in one episode (stateless apart from the draws)."""

    def __init__(self, scenario: Scenario, realization: str, draws: Draws) -> None:
        self.s = scenario
        self.realization = realization
        self.draws = draws

    def _pick(self, name: str, turn: int, purpose: str) -> str:
        pool = protocol.GRAMMAR.pool(name)
        return pool[self.draws.pick(len(pool), purpose, self.s.id, turn)]

    def assent(self, turn: int) -> str:
        """The shared-pool assent for this turn: independent of state by construction."""
        return self._pick("ASSENT", turn, "assent")

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
                return join(pick("REJECT", turn, "reject"), self._about(r))
            if r.topic == "safe":
                worse = s.attribute(s.priority).worse
                return f"{pick('SAFE', turn, 'safe')} {worse}."
            if r.topic == "need" and r.level == 2:  # explicit L2: stated directly
                return f"{pick('DIRECT', turn, 'direct')} {self._about(r)}"
            if r.topic == "need":  # explicit L3: qualified assent
                return f"{self.assent(turn)} {pick('MILD', turn, 'qualifier')} {self._about(r)}"
            return self.assent(turn)  # resolved, or prosody-mediated L2/L3
        if r.act == "answer":
            if r.topic in ("need", "requirement"):
                opener = pick("RESTATE" if r.restated else "ANSWER", turn, "answer")
                return join(opener, self._about(r))
            if r.topic == "irrelevant":
                return pick("IRRELEVANT", turn, "irrelevant")
            if r.topic == "covers":
                return pick("COVERS", turn, "covers")
            if r.topic == "safe":
                return f"{pick('SAFE', turn, 'safe')} {s.attribute(s.priority).worse}."
            if r.topic == "hint":  # general question on an L1-violating option (G.6)
                return f"{pick('HINT', turn, 'hint')} {s.need(1).hint}"
            if r.topic == "priority":
                attr = s.attribute(s.priority)
                return format_priority(attr.label, attr.better)
        if r.act == "hint":
            return f"{pick('HINT', turn, 'hint')} {s.need(1).hint}"
        if r.act == "refuse":
            return f"{pick('REFUSE', turn, 'refuse')} {self._about(r)}"
        if r.act == "accept":
            settle = self.realization == "explicit" and not r.resolved
            return pick("SETTLE" if settle else "ACCEPT", turn, "accept")
        return pick("REPHRASE", turn, "rephrase")
