"""Branched episodes for GRPO (``turn_sampling="branch"``): K continuations from one on-policy decision state.

Why. With ``closing`` (:mod:`hear2act.training.episode_rollout`) a group is K
episodes of the same *start*; each trains the CONFIRM that closed it, so the
K trained turns sit in K different states, every trained token is a CONFIRM,
and a group carries a learning signal only when its closed episodes differ in
outcome. A warm start that confirms on a quarter of its assents gives a few
such contrasts per step (``docs/training.md``: 25 in 352 episodes).

What a group is here. For each episode start the model plays one **prefix
episode** on-policy; one of its decision turns is drawn (seeded), among the
turns that answer a recommendation -- the decisions the state tag is about:
CONFIRM the current option, or look further -- half the time from those under
a ``resolved`` tag when the prefix has both (:func:`draw_branch_turn` says why). The K samples of the group then
**replay that prefix** (the recorded outputs, through the same env with the
same seed: the same observations, checked turn by turn) and, from the drawn
turn on, **sample their own continuation to the end** with the model. Each
sample trains the drawn turn (its prompt is the same for all K, as in
single-turn GRPO) with its whole episode's reward
(:class:`hear2act.training.episodes.EpisodeReward`). The group-relative
advantage is then an on-policy estimate of ``Q(s, a) - V(s)`` at that state:
under an unresolved tag a CONFIRM fails and a RECOMMEND that searches on can
still win; under a resolved tag CONFIRM wins at once and searching on pays turn
cost or worse. Both actions get credit, and the optimum is the policy that
solves the task (the episode's verifiable outcome decides every reward).

A sample's reward (:func:`branch_reward`) is the episode's verifiable outcome
(success with the turn cost, :class:`hear2act.training.episodes.EpisodeReward`) plus
CESAR's process terms **of the trained turn only**. The episode-mean process
terms of the other modes would credit the drawn turn with the style of the
continuation's later turns -- and among failures a continuation that closes at
once averages fewer bad turns than one that searches on, so they would pay a
CONFIRM under an unresolved tag (seen in a first run: held-out
``P(confirm | unresolved)`` 0.13 -> 0.39 in 12 steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hear2act.agents.base import PolicyInput, PolicyOutput
from hear2act.agents.llm.reasoning import split_reasoning
from hear2act_env.dialogue.actions import INVALID, parse_action

from .episodes import PROCESS_TERMS, EpisodeReward, TurnRecord, play, state_tag, turn_terms


def decision_turns(records: Sequence[TurnRecord]) -> dict[str, list[int]]:
    """The turns that answer one of the policy's recommendations (the opening included), by the state tag they saw:
    ``resolved``, ``unresolved``, or ``untagged`` (no tag in the observation, e.g. access T).

    >>> r = [TurnRecord("User: A\\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] a\\nUser: ok", "",
    ...                 "CONCERN STATE: x (unresolved)", "[ACTION: ASK] Which?"),
    ...      TurnRecord("User: A\\nAssistant: [ACTION: ASK] Which?\\nUser: b", "", "CONCERN STATE: x (unresolved)",
    ...                 "[ACTION: RECOMMEND] [OPTION: 2] b"),
    ...      TurnRecord("User: b\\nAssistant: [ACTION: RECOMMEND] [OPTION: 2] b\\nUser: ok", "",
    ...                 "CONCERN STATE: y (resolved)", "[ACTION: CONFIRM] ok")]
    >>> decision_turns(r)
    {'resolved': [2], 'unresolved': [0], 'untagged': []}
    """
    out: dict[str, list[int]] = {"resolved": [], "unresolved": [], "untagged": []}
    for t, turn in enumerate(records):
        lines = turn.transcript.splitlines()
        if len(lines) < 2 or not lines[-2].startswith("Assistant: "):
            continue
        if parse_action(lines[-2][len("Assistant: "):]).kind != "recommend":
            continue
        tag = state_tag(turn.state) or "untagged"
        out[tag].append(t)
    return out


def draw_branch_turn(records: Sequence[TurnRecord], rng: np.random.Generator, resolved_share: float = 0.5,
                     tag: str | None = None) -> int:
    """The turn a group branches at: a :func:`decision_turns` turn, from those under a ``resolved`` tag with
    probability ``resolved_share`` when the prefix has both tags (else from those it has; any turn if none).
    ``tag`` (``resolved``/``unresolved``) is a share already drawn (by :func:`pick_prefix`): the turn is then
    drawn among that tag's turns when the prefix has any, and the share is not drawn again.

    Why stratify: a random search meets a resolved state only when it has recommended an option that meets every
    need, one turn in ten or fewer, and that is where CONFIRM is right; drawn uniformly, almost every group would
    compare continuations of an unresolved state. Which states are trained changes no sample's advantage (each
    is the outcome of a continuation from that state, against the group's mean), only where the update looks.

    >>> r = [TurnRecord("User: A\\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] a\\nUser: ok", "",
    ...                 "CONCERN STATE: x (unresolved)", "[ACTION: RECOMMEND] [OPTION: 2] b"),
    ...      TurnRecord("User: b\\nAssistant: [ACTION: RECOMMEND] [OPTION: 2] b\\nUser: ok", "",
    ...                 "CONCERN STATE: y (resolved)", "[ACTION: CONFIRM] ok")]
    >>> [draw_branch_turn(r, np.random.default_rng(s), tag="resolved") for s in range(4)]
    [1, 1, 1, 1]
    """
    by = decision_turns(records)
    tagged = [t for t in ("resolved", "unresolved") if by[t]]
    if tag is not None and by.get(tag):
        pool = by[tag]
    elif len(tagged) == 2:
        pool = by["resolved"] if rng.random() < resolved_share else by["unresolved"]
    elif tagged:
        pool = by[tagged[0]]
    else:
        pool = by["untagged"] or list(range(len(records)))
    return int(rng.choice(pool))


def branch_reward(row: dict[str, Any], tau: int, config: EpisodeReward) -> float:
    """A branched sample's reward: the episode's outcome (``row["outcome"]``: success - turn cost) plus the
    weighted process terms of turn ``tau``, the turn the sample trains. An unparseable answer at ``tau`` is
    scored as a failed episode whatever followed: in the env it only wastes a turn, so under an unresolved tag
    it would otherwise be credited like a RECOMMEND (it keeps the episode going) -- a first run drifted into
    93% invalid answers that way."""
    terms = turn_terms(row["records"][tau], config)
    process = sum(config.process.get(t, 0.0) * terms[t] for t in PROCESS_TERMS)
    if parse_action(split_reasoning(row["records"][tau].raw)[1]).kind == INVALID:
        return -config.turn_cost * config.charged_turns(config.horizon, False) + process
    return float(row["outcome"]) + process


class PrefixReplay:
    """A batched policy that replays recorded outputs for the first turns of named episodes, then defers.

    ``prefixes[key]`` are the turn records to replay for the episode ``key`` (turns ``0..len-1``); a replayed
    turn must see the observation it was recorded in, or the replay stops with an error naming the episode.
    """

    def __init__(self, policy: Any, prefixes: dict[str, Sequence[TurnRecord]]) -> None:
        self.policy, self.prefixes = policy, prefixes
        self.name = getattr(policy, "name", "policy")

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        outputs: list[PolicyOutput | None] = [None] * len(items)
        live = []
        for i, item in enumerate(items):
            prefix = self.prefixes.get(item.key, ())
            if item.turn >= len(prefix):
                live.append(i)
                continue
            rec = prefix[item.turn]
            if str(item.observation.get("transcript", "")) != rec.transcript:
                raise RuntimeError(f"branch replay of {item.key}: turn {item.turn} sees another transcript than "
                                   "the prefix episode did (the env is not deterministic in its seed)")
            reasoning, answer = split_reasoning(rec.raw)
            outputs[i] = PolicyOutput(action=answer, raw=rec.raw, reasoning=reasoning, extra=dict(rec.extra))
        if live:
            for i, out in zip(live, self.policy.act_batch([items[i] for i in live]), strict=True):
                outputs[i] = out
        return [o for o in outputs if o is not None]

    def release(self, keys: Sequence[str]) -> None:
        release = getattr(self.policy, "release", None)
        if release is not None:
            release(keys)


def pick_prefix(rows: Sequence[dict[str, Any]], rng: np.random.Generator,
                resolved_share: float = 0.5) -> tuple[int, str | None]:
    """Which of a group's prefix episodes it branches from, and under which tag: with probability
    ``resolved_share`` one that has a decision under a ``resolved`` tag (if any has), else one that has an
    ``unresolved`` one (if any has), else the first (tag ``None``). The tag is passed on to
    :func:`draw_branch_turn`, so the share is drawn once per group. Why several prefixes: an on-policy random
    search meets a resolved state in few episodes, so with one prefix per group most groups compare continuations
    of unresolved states, where nearly every continuation fails alike (a group with no spread trains nothing); a
    state may come from any episode of the current policy, since a sample's advantage is its continuation's
    outcome against the group's, whatever the state.

    >>> rows = [{"records": []}, {"records": []}]
    >>> pick_prefix(rows, np.random.default_rng(0))
    (0, None)
    """
    by = [decision_turns(r["records"]) for r in rows]
    want = ("resolved", "unresolved") if rng.random() < resolved_share else ("unresolved", "resolved")
    for tag in want:
        having = [i for i, b in enumerate(by) if b[tag]]
        if having:
            return int(rng.choice(having)), tag
    return 0, None


def play_branched(policy: Any, scenario_ids: Sequence[str], seeds: Sequence[int], keys: Sequence[str], k: int, *,
                  access: str, realization: str, config: EpisodeReward, rng: np.random.Generator,
                  resolved_share: float = 0.5, prefixes: int = 1) -> tuple[list[dict[str, Any]], list[int]]:
    """Play ``len(scenario_ids) / k`` groups of ``k`` consecutive samples (each group one start): ``prefixes``
    prefix episodes per group (one is picked, :func:`pick_prefix`), a branch turn drawn from it
    (:func:`draw_branch_turn`), then every sample replays the prefix up to that turn and plays on with
    ``policy``. Returns the samples' scored rows (:func:`play`) and branch turns."""
    if k < 1 or len(scenario_ids) % k:
        raise ValueError(f"branch: {len(scenario_ids)} samples do not make groups of num_generations={k}")
    if prefixes < 1:
        raise ValueError(f"branch: prefixes must be >= 1, got {prefixes}")
    starts = range(0, len(scenario_ids), k)
    for g in starts:
        if len({(scenario_ids[i], int(seeds[i])) for i in range(g, g + k)}) != 1:
            raise ValueError(f"branch: the samples {g}..{g + k - 1} are not one episode start (scenario, seed)")
    played = play(policy, [scenario_ids[g] for g in starts for _ in range(prefixes)],
                  seeds=[int(seeds[g]) for g in starts for _ in range(prefixes)],
                  keys=[f"{keys[g]}/prefix{j or ''}" for g in starts for j in range(prefixes)], access=access,
                  realization=realization, config=config, batch_size=len(starts) * prefixes)
    groups = [played[n * prefixes:(n + 1) * prefixes] for n in range(len(starts))]
    # One prefix draws nothing here, so the rng stream (and every run) of prefixes=1 is the one before this option.
    # With several, the share is drawn once, by pick_prefix, and its tag picks the turn.
    picks = [pick_prefix(rows, rng, resolved_share) if prefixes > 1 else (0, None) for rows in groups]
    prefix_rows = [rows[i] for rows, (i, _) in zip(groups, picks, strict=True)]
    taus = [draw_branch_turn(row["records"], rng, resolved_share, tag=tag)
            for row, (_, tag) in zip(prefix_rows, picks, strict=True)]
    prefixes = {keys[g + j]: row["records"][:tau] for g, row, tau in zip(starts, prefix_rows, taus, strict=True)
                for j in range(k)}
    rows = play(PrefixReplay(policy, prefixes), list(scenario_ids), seeds=[int(s) for s in seeds], keys=list(keys),
                access=access, realization=realization, config=config, batch_size=len(scenario_ids))
    return rows, [taus[i // k] for i in range(len(scenario_ids))]


__all__ = ["PrefixReplay", "branch_reward", "decision_turns", "draw_branch_turn", "pick_prefix", "play_branched"]
