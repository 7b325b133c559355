"""Whole episodes as the unit of GRPO: the episode reward, reference policies, and scoring played episodes.

An episode is played by the evaluation engine (:func:`hear2act.eval.engine.run_episodes`)
with the same P6 prompts and ``[ACTION: ...]`` grammar as ``hear2act
rollout``; :class:`Recorder` wraps the policy and keeps, per decision, the
context the policy saw (transcript, options, tag) and its raw output, so every
process term is scored on the turn it belongs to.

The **episode reward** (:class:`EpisodeReward`, weights in the config)::

    R = success_weight * success - turn_cost * charged_turns
        + fit_credit * final_fit * [failed, closed by CONFIRM]     (graded credit of a wrong closing; default 0)
        - invalid_cost * [some answer was not a valid action]       (default 0)
        + sum_term  w_term * mean_over_turns(term(turn))             (CESAR's process terms, per turn)

    charged_turns = turns                     if the episode succeeded (the env's return with turn_cost)
                    horizon (max_turns, 20)   if it failed            (failure_cost="horizon", the default)
                    turns                     if it failed            (failure_cost="turns": the env's return)

Why a failed episode is charged the whole horizon: with the env's own return
(``failure_cost="turns"``) a failure that closes early (premature closure at
turn 3: ``-3c``) beats one that keeps searching (turn limit: ``-20c``), so
among failures the reward prefers closing early. A policy that cannot yet
read the tag (a warm start imitating a words-only teacher) can only move
along "confirm more / confirm less on assent"; along that line the env's
return *rises* as success *falls*, because shorter failures save turn cost
(``benchmarks/grpo_reward_landscape.py`` prints it), and GRPO follows the
reward there: premature closure up, success down (docs/training.md, the
earlier runs). Charging every failure the horizon makes all failures equal
(a failure has not done the task, however quickly it gave up), keeps the
turn cost where it means something (a faster success is better), and
leaves the optimum unchanged: the task-solving policy still wins, and now
stalling and confirming at once tie at the bottom.

Why a wrong closing may earn a little (``fit_credit``, off by default): charged the horizon, every
failure scores alike, so a GRPO group whose episodes all fail has no spread and trains nothing, and a
small policy whose episodes all fail alike stays where it is (docs/training.md, seeds 1 and 2).
``fit_credit * final_fit`` (``info["outcome"]["final_fit"]``: the confirmed option's need fit, L1-L3
weighted 3:2:1, 0 if it violates the request) orders the failures by how wrong the closing was --
confirming a rejected option is worse than confirming a reluctantly accepted one -- which is what the
state line's delivery label tells. It is bounded below ``success_weight / 2`` together with the process
terms, so a success still beats every failure, and a policy that stalls (it never closes) earns none.

``invalid_cost`` charges an episode in which some answer could not be parsed as an action (the
``decisive`` turn sampling of :mod:`hear2act.training.episode_rollout` trains that answer): without it such
an episode fails like any other, and a group whose episodes all derail alike has nothing to compare.

The process terms are *averaged* over the episode's turns, so a longer
episode cannot collect more of them; each is bounded (format, consistency,
keywords in [0, 1], overthinking in [-1, 0], evidence in [-1, 1]), and
:class:`EpisodeReward` refuses weights whose total process range reaches half
the success weight. Success therefore dominates: a policy that never wins
(stalling until the turn limit, confirming at once) scores below one that
solves the task, whatever its reasoning looks like
(``tests/test_episodes.py`` and ``tests/test_grpo_configs.py`` check it for
every shipped episode-mode config; the state-mode configs are shown not to).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hear2act.agents.base import PolicyInput, PolicyOutput
from hear2act.agents.rule import GENERAL_QUESTION
from hear2act_env import REALIZATION_ENV_IDS
from hear2act_env.dialogue.actions import INVALID, format_action, parse_action
from hear2act_env.env import MAX_TURNS

PROCESS_TERMS = ("format", "consistency", "keywords", "overthinking", "evidence")
# Per-term (min, max) of one turn's score.
TERM_RANGE = {"format": (0.0, 1.0), "consistency": (0.0, 1.0), "keywords": (0.0, 1.0), "overthinking": (-1.0, 0.0),
              "evidence": (-1.0, 1.0)}
DEFAULT_PROCESS = {"format": 0.1, "consistency": 0.1, "keywords": 0.05, "overthinking": 0.05, "evidence": 0.05}
FAILURE_COSTS = ("horizon", "turns")  # what a failed episode is charged: the whole horizon, or the turns it used


def parse_term_weights(text: str) -> dict[str, float]:
    """``"format=0.1,evidence=0.2"`` -> ``{"format": 0.1, "evidence": 0.2}`` (empty string: none).

    >>> parse_term_weights("format=0.1, evidence=0.2")
    {'format': 0.1, 'evidence': 0.2}
    """
    out: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in PROCESS_TERMS:
            raise ValueError(f"process_weights: {item!r} must be term=number with term in {PROCESS_TERMS}")
        out[name] = float(value)
    return out


@dataclass(frozen=True)
class EpisodeReward:
    """Weights of the episode reward (see the module docstring)."""

    success_weight: float = 1.0
    turn_cost: float = 0.05
    process: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_PROCESS))
    overthinking_norm: int = 256
    failure_cost: str = "horizon"
    horizon: int = MAX_TURNS
    fit_credit: float = 0.0
    invalid_cost: float = 0.0

    def __post_init__(self) -> None:
        if self.failure_cost not in FAILURE_COSTS:
            raise ValueError(f"failure_cost must be one of {FAILURE_COSTS}, got {self.failure_cost!r}")
        if not self.horizon >= 1:
            raise ValueError(f"horizon must be >= 1, got {self.horizon}")
        if not self.success_weight > 0:
            raise ValueError(f"success_weight must be > 0, got {self.success_weight}")
        if not self.turn_cost >= 0:
            raise ValueError(f"turn_cost must be >= 0, got {self.turn_cost}")
        if not self.fit_credit >= 0:
            raise ValueError(f"fit_credit must be >= 0, got {self.fit_credit}")
        if not self.invalid_cost >= 0:
            raise ValueError(f"invalid_cost must be >= 0, got {self.invalid_cost}")
        unknown = sorted(set(self.process) - set(PROCESS_TERMS))
        if unknown:
            raise ValueError(f"process weights: unknown term(s) {unknown}; choose from {PROCESS_TERMS}")
        if any(w < 0 for w in self.process.values()):
            raise ValueError(f"process weights must be >= 0, got {dict(self.process)}")
        if self.process_range() + self.fit_credit + self.invalid_cost >= self.success_weight / 2:
            raise ValueError(f"process weights {dict(self.process)} span {self.process_range():.3f}, fit_credit is "
                             f"{self.fit_credit} and invalid_cost {self.invalid_cost}: together not below half the "
                             f"success weight {self.success_weight}, so they could outweigh success")

    def charged_turns(self, turns: int, success: bool) -> int:
        """The turns the turn cost is charged for (see the module docstring).

        >>> EpisodeReward().charged_turns(3, success=False), EpisodeReward(failure_cost="turns").charged_turns(3, False)
        (20, 3)
        >>> EpisodeReward().charged_turns(7, success=True)
        7
        """
        return int(turns) if success or self.failure_cost == "turns" else max(int(turns), self.horizon)

    def process_range(self) -> float:
        """The most the process part can differ between two episodes."""
        return sum(w * (TERM_RANGE[t][1] - TERM_RANGE[t][0]) for t, w in self.process.items())

    @classmethod
    def from_args(cls, args: Any) -> EpisodeReward:
        """From :class:`hear2act.training.grpo.Hear2ActArgs` (``success_weight``, ``turn_cost``,
        ``process_weights``, ``failure_cost``, ``fit_credit``, ``invalid_cost``)."""
        return cls(float(args.success_weight), float(args.turn_cost), parse_term_weights(args.process_weights),
                   int(args.overthinking_norm), str(getattr(args, "failure_cost", "horizon")),
                   fit_credit=float(getattr(args, "fit_credit", 0.0)),
                   invalid_cost=float(getattr(args, "invalid_cost", 0.0)))


# -- reference policies (for the reward tests and the SFT data) ----------------------------------------------------
class StallingAgent:
    """ASK whenever the tag says unresolved, else CONFIRM: the maximiser of the old per-state accuracy."""

    name = "stall"

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, str]) -> str:
        if "unresolved" in observation.get("state", "").lower():
            return format_action("ask", GENERAL_QUESTION)
        return format_action("confirm", "Great, let's go with that.")


class AlwaysAskAgent:
    """ASK every turn."""

    name = "always-ask"

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, str]) -> str:
        return format_action("ask", GENERAL_QUESTION)


class ExploringAgent:
    """A random-search teacher: RECOMMEND a random other option until it CONFIRMs.

    After a recommendation the user reacts to, it CONFIRMs with probability
    ``confirm_prob`` if the words sound like assent (no :data:`hear2act.agents.rule.PROBLEM_CUES`)
    and never if they object; otherwise (and after a refused CONFIRM) it
    RECOMMENDs an option other than the current one, uniformly. With
    ``reads_tag`` it CONFIRMs exactly when the state tag says ``resolved``
    (what GRPO should discover). Words-only under Prosody this closes early on
    an unmet L2/L3 need about half the time; the replies are short and
    fixed, so a small model learns the format from a few hundred of them
    (the SFT warm start of ``benchmarks/grpo_learning.py``). Random draws come
    from :meth:`seed` (episode seed and scenario id; :class:`AgentPolicy` calls it).
    """

    def __init__(self, confirm_prob: float = 0.5, *, reads_tag: bool = False, salt: int = 0) -> None:
        if not 0.0 <= confirm_prob <= 1.0:
            raise ValueError(f"confirm_prob must be in [0, 1], got {confirm_prob}")
        self.confirm_prob = float(confirm_prob)
        self.reads_tag = reads_tag
        self.salt = int(salt)
        self.name = "explore-tag" if reads_tag else "explore"
        self._rng = np.random.default_rng([self.salt])
        self._n = 0

    def seed(self, episode_seed: int, scenario_id: str) -> None:
        self._rng = np.random.default_rng([self.salt, zlib.crc32(scenario_id.encode()), int(episode_seed)])

    def reset(self, observation: dict[str, str], info: dict[str, Any]) -> None:
        self._n = sum(1 for ln in str(observation.get("options", "")).splitlines()
                      if ln.partition(". ")[0].strip().isdigit())

    def act(self, observation: dict[str, str]) -> str:
        from hear2act.agents.rule import PROBLEM_CUES, UNRESOLVED, _last_recommended

        lines = str(observation.get("transcript", "")).splitlines()
        last = parse_action(lines[-2][len("Assistant: "):]) if len(lines) >= 2 else None
        current = _last_recommended(lines)
        if last is not None and last.kind == "recommend":
            if self.reads_tag:
                state = str(observation.get("state", ""))
                if state and not UNRESOLVED.search(state):
                    return format_action("confirm", "Great, let's go with that.")
            elif not PROBLEM_CUES.search(lines[-1]) and self._rng.random() < self.confirm_prob:
                return format_action("confirm", "Great, let's go with that.")
        others = [n for n in range(1, max(self._n, 1) + 1) if n != current] or [1]
        return format_action("recommend", "How about this one?", int(self._rng.choice(others)))


def make_reference(name: str, scenarios: Sequence[Any] | None = None) -> Any:
    """A built-in agent (``state-rule``, ``oracle``, ``confirm``, ...), ``stall``, ``always-ask``, or
    ``explore[:P]`` / ``explore-tag`` (:class:`ExploringAgent`, confirm probability P, default 0.5)."""
    if name == "stall":
        return StallingAgent()
    if name == "always-ask":
        return AlwaysAskAgent()
    if name == "explore-tag":
        return ExploringAgent(reads_tag=True)
    if name == "explore" or name.startswith("explore:"):
        return ExploringAgent(float(name.partition(":")[2] or 0.5))
    from hear2act.agents import make_agent

    return make_agent(name, **({"scenarios": scenarios} if name == "oracle" and scenarios is not None else {}))


def explain(observation: Mapping[str, Any], action: str) -> str:
    """A short reasoning for ``action`` from what the observation shows (the tag under ``T+S``).

    The same template for every agent, so that reasoning style never separates
    two reference policies: only what they do does.

    >>> explain({"transcript": "User: Okay, sounds good.", "state": "CONCERN STATE: flat (unresolved)"},
    ...         "[ACTION: ASK] What matters most?")
    'The user said "Okay, sounds good.". The state tag says flat (unresolved), so a concern remains. So I will ask.'
    """
    lines = [ln for ln in str(observation.get("transcript", "")).splitlines() if ln.startswith("User: ")]
    words = lines[-1][len("User: "):] if lines else ""
    parts = [f'The user said "{words}".'] if words else []
    state = str(observation.get("state", ""))
    if state:
        label = state.split(":", 1)[-1].strip()
        remains = "unresolved" in state.lower()
        parts.append(f"The state tag says {label}, so " + ("a concern remains." if remains else "the need is met."))
    parsed = parse_action(action)
    decision = {"ask": "ask", "clarify": "clarify", "confirm": "confirm"}.get(parsed.kind)
    if parsed.kind == "recommend":
        decision = f"recommend option {parsed.option}"
    parts.append(f"So I will {decision}." if decision else "I am not sure what to do.")
    return " ".join(parts)


class AgentPolicy:
    """A built-in agent as a batched :class:`hear2act.agents.base.Policy`, optionally in the reasoning format."""

    def __init__(self, make: Callable[[], Any], *, reasoning: bool = True, name: str = "agent") -> None:
        self.make = make
        self.reasoning = reasoning
        self.name = name
        self._agents: dict[str, Any] = {}

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        out = []
        for item in items:
            if item.turn == 0 or item.key not in self._agents:
                self._agents[item.key] = self.make()
                if hasattr(self._agents[item.key], "seed"):  # a stochastic teacher: draws from the episode
                    self._agents[item.key].seed(item.episode_seed, str(item.info_reset.get("scenario_id", "")))
                self._agents[item.key].reset(item.observation, dict(item.info_reset))
            action = self._agents[item.key].act(item.observation)
            reasoning = explain(item.observation, action) if self.reasoning else ""
            raw = f"<think>{reasoning}</think><answer>{action}</answer>" if self.reasoning else action
            out.append(PolicyOutput(action=action, raw=raw, reasoning=reasoning))
        return out

    def release(self, keys: Sequence[str]) -> None:
        for k in keys:
            self._agents.pop(k, None)


@dataclass
class TurnRecord:
    """One decision: what the policy saw and what it wrote."""

    transcript: str
    options: str
    state: str
    raw: str
    extra: dict[str, Any] = field(default_factory=dict)


class Recorder:
    """Wraps a policy; records every decision's context and output by episode key (``records[key][turn]``)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", "policy")
        self.records: dict[str, list[TurnRecord]] = {}

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        outputs = self.policy.act_batch(items)
        for item, out in zip(items, outputs, strict=True):
            obs = item.observation
            self.records.setdefault(item.key, []).append(TurnRecord(
                str(obs.get("transcript", "")), str(obs.get("options", "")), str(obs.get("state", "")),
                out.raw, dict(out.extra)))
        return outputs

    def release(self, keys: Sequence[str]) -> None:
        release = getattr(self.policy, "release", None)
        if release is not None:
            release(keys)


def turn_terms(turn: TurnRecord, config: EpisodeReward) -> dict[str, float]:
    """Every process term of one turn, scored in that turn's context (text access: no audio)."""
    from . import rewards

    c = [turn.raw]
    ctx = {"transcript": [turn.transcript], "options": [turn.options]}
    ids = turn.extra.get("completion_ids")
    out = {"format": rewards.format_reward(c)[0],
           "consistency": rewards.consistency_reward(c, **ctx)[0],
           "keywords": rewards.keywords_reward(c, **ctx)[0],
           "overthinking": rewards.overthinking_reward(c, completion_ids=[ids] if ids is not None else None,
                                                      norm=config.overthinking_norm)[0],
           "evidence": rewards.evidence_reward(c, **ctx)[0]}
    return {k: out[k] for k in PROCESS_TERMS}


def state_tag(state: str) -> str:
    """``resolved``, ``unresolved`` or ``""`` (no tag): the value a P6b state line carries.

    >>> [state_tag(s) for s in ("CONCERN STATE: satisfied (resolved)", "CONCERN STATE: x (unresolved)", "")]
    ['resolved', 'unresolved', '']
    """
    from hear2act.agents.rule import UNRESOLVED

    return "" if not state else "unresolved" if UNRESOLVED.search(state) else "resolved"


def tag_decisions(turns: Sequence[TurnRecord]) -> dict[str, int]:
    """The closing decisions of an episode by state tag: after a RECOMMEND, did the policy CONFIRM?

    Counts the turns that follow one of the policy's recommendations, split by the tag the policy saw
    (``resolved`` / ``unresolved``; none without a tag), and how many of them it CONFIRMed. Their ratios are
    the policy's ``P(confirm | resolved)`` and ``P(confirm | unresolved)``: a policy that reads the tag has the
    first near 1 and the second near 0, one that ignores it has them equal.

    >>> t = [TurnRecord("User: Hi.", "", "CONCERN STATE: flat (unresolved)", "[ACTION: RECOMMEND] [OPTION: 1] A?"),
    ...      TurnRecord("User: Hi.\\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] A?\\nUser: Fine.", "",
    ...                 "CONCERN STATE: calm (resolved)", "[ACTION: CONFIRM] Done.")]
    >>> tag_decisions(t)
    {'resolved': 1, 'confirm_resolved': 1, 'unresolved': 0, 'confirm_unresolved': 0}
    """
    out = {"resolved": 0, "confirm_resolved": 0, "unresolved": 0, "confirm_unresolved": 0}
    for turn in turns:
        lines = turn.transcript.splitlines()
        if len(lines) < 2 or not turn.state or not lines[-2].startswith("Assistant: "):
            continue
        if parse_action(lines[-2][len("Assistant: "):]).kind != "recommend":
            continue
        tag = state_tag(turn.state)
        out[tag] += 1
        out[f"confirm_{tag}"] += int(parse_action(_answer(turn.raw)).kind == "confirm")
    return out


def score_episode(trajectory: Mapping[str, Any], turns: Sequence[TurnRecord], config: EpisodeReward) -> dict[str, Any]:
    """The episode reward and its parts: ``reward``, ``outcome`` (success - turn cost of the charged turns),
    ``charged_turns`` (:meth:`EpisodeReward.charged_turns`), ``process/<term>``."""
    outcome = trajectory.get("outcome") or {}
    success = float(bool(outcome.get("success", False)))
    n_turns = int(outcome.get("turns", len(turns)))
    charged = config.charged_turns(n_turns, bool(success))
    outcome_part = config.success_weight * success - config.turn_cost * charged
    if not success and outcome.get("confirmed", False):
        outcome_part += config.fit_credit * float(outcome.get("final_fit", 0.0))
    invalid = len(invalid_turns(turns))
    outcome_part -= config.invalid_cost * (invalid > 0)
    means = {t: 0.0 for t in PROCESS_TERMS}
    if turns:
        scored = [turn_terms(t, config) for t in turns]
        means = {t: sum(s[t] for s in scored) / len(scored) for t in PROCESS_TERMS}
    process = sum(config.process.get(t, 0.0) * means[t] for t in PROCESS_TERMS)
    return {"reward": outcome_part + process, "outcome": outcome_part, "success": success, "turns": n_turns,
            "charged_turns": charged,
            "premature_closure": float(bool(outcome.get("premature_closure", False))), "invalid": invalid,
            "decisions": tag_decisions(turns), **{f"process/{t}": means[t] for t in PROCESS_TERMS}}


def invalid_turns(turns: Sequence[TurnRecord]) -> list[int]:
    """Indices of the turns whose answer is not a valid action (what ``score_episode`` counts as ``invalid``,
    what ``invalid_cost`` charges, what ``turn_sampling="decisive"`` trains).

    >>> invalid_turns([TurnRecord("", "", "", "[ACTION: CONFIRM] ok"), TurnRecord("", "", "", "B?")])
    [1]
    """
    return [i for i, t in enumerate(turns) if parse_action(_answer(t.raw)).kind == INVALID]


def _answer(raw: str) -> str:
    from hear2act.agents.llm.reasoning import split_reasoning

    return split_reasoning(raw)[1]


def play(policy: Any, scenario_ids: Sequence[str], *, access: str = "T+S", realization: str = "prosody",
         seed: int = 0, config: EpisodeReward | None = None, batch_size: int = 16,
         keys: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Play one episode per scenario id with the evaluation engine; one scored row per episode, in order.

    Seeds are ``seed + i`` (GRPO's held-out convention) unless ``seeds`` is given;
    ``keys`` names the episodes (default: the engine's). Each row has the
    trajectory (``trajectory``), its turn records (``records``) and
    :func:`score_episode`'s fields.
    """
    from hear2act.eval.engine import EpisodeSpec, run_episodes

    config = config or EpisodeReward()
    env_id = REALIZATION_ENV_IDS.get(realization)
    if env_id is None:
        raise ValueError(f"realization must be prosody or explicit, got {realization!r}")
    seeds = list(seeds) if seeds is not None else [seed + i for i in range(len(scenario_ids))]
    keys = list(keys) if keys is not None else [f"{env_id}/{access}/{sid}/{s}" for sid, s in zip(scenario_ids, seeds,
                                                                                                   strict=True)]
    specs = [EpisodeSpec(env_id, sid, int(s), access, "correct", {}, key=k)
             for sid, s, k in zip(scenario_ids, seeds, keys, strict=True)]
    recorder = Recorder(policy)
    trajectories = run_episodes(specs, recorder, batch_size=batch_size)
    rows = []
    for spec, traj in zip(specs, trajectories, strict=True):
        turns = recorder.records.get(spec.key, [])
        rows.append({"key": spec.key, "scenario_id": spec.scenario_id, "seed": spec.seed, "trajectory": traj,
                     "records": turns, **score_episode(traj, turns, config)})
    return rows


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Mean success, premature closure, reward, turns and invalid actions per turn over scored rows, and the
    pooled ``P(confirm | resolved)`` / ``P(confirm | unresolved)`` after a recommendation (:func:`tag_decisions`;
    NaN when no such turn was played)."""
    n = max(len(rows), 1)
    n_turns = max(sum(r["turns"] for r in rows), 1)
    counts = {k: sum(r.get("decisions", {}).get(k, 0) for r in rows) for k in
              ("resolved", "confirm_resolved", "unresolved", "confirm_unresolved")}
    return {"episodes": len(rows), "success": sum(r["success"] for r in rows) / n,
            "premature_closure": sum(r["premature_closure"] for r in rows) / n,
            "reward": sum(r["reward"] for r in rows) / n, "turns": sum(r["turns"] for r in rows) / n,
            "invalid_rate": sum(r["invalid"] for r in rows) / n_turns,
            **{f"confirm_if_{t}": counts[f"confirm_{t}"] / counts[t] if counts[t] else float("nan")
               for t in ("resolved", "unresolved")}}


__all__ = [
    "DEFAULT_PROCESS",
    "FAILURE_COSTS",
    "PROCESS_TERMS",
    "AgentPolicy",
    "AlwaysAskAgent",
    "EpisodeReward",
    "ExploringAgent",
    "Recorder",
    "StallingAgent",
    "TurnRecord",
    "explain",
    "invalid_turns",
    "make_reference",
    "parse_term_weights",
    "play",
    "score_episode",
    "summarize",
    "tag_decisions",
    "turn_terms",
]
