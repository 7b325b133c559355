"""GRPO training data: dialogue states collected from env rollouts, and the env-side scoring of a next action.

One training example is a *dialogue state* -- ``(realization, scenario_id,
seed, history)``, the agent actions taken so far -- reached by a behaviour
policy. GRPO samples K next actions from that state; each is scored by
stepping a *copy* of the env (:func:`action_value`), optionally continued to
the episode's end by a fixed policy for outcome credit
(:func:`continued_success`).

Copying must be cheap because every completion of every group needs one:

* :func:`fork_env` is the env's public :meth:`~hear2act_env.env.Hear2ActEnv.fork`:
  a deep copy of the live episode that shares everything immutable (scenario
  bank, spaces, charset, speech channel and its caches), so a fork costs the
  size of one episode's state, not of the 480 scenarios;
* :func:`replay` rebuilds a state from its key alone: the user engine draws
  every choice from keyed hashes of ``(seed, key)`` (``Draws``), so resetting
  with the same seed and re-stepping the same actions reproduces the dialogue
  byte for byte. Text-only replay costs ~0.1 ms per step.

Scoring uses a text env with the ``T+S`` view (the continuation policy reads
the tag): the user engine is identical under every access condition, only the
observation differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from hear2act_env.access import TRUE_STATE
from hear2act_env.dialogue.actions import INVALID, parse_action
from hear2act_env.dialogue.engine import RESOLVED, assess
from hear2act_env.env import Hear2ActEnv

from .splits import DEFAULT_SPLIT, SplitSpec, bundled_split, train_ids

# Behaviour policies that reach the training states, picked per episode by a seeded draw: a mix of a
# premature closer (transcript-rule under Prosody), a careful rule agent, and the privileged oracle.
BEHAVIOURS = ("transcript-rule", "state-rule", "oracle", "random")
CONTINUATION = "state-rule"
SCORING_ACCESS = TRUE_STATE  # the true-tag view: the continuation policy reads the tag


@dataclass(frozen=True)
class DialogueState:
    """A point in an episode where the agent must act: the key that replays it exactly."""

    realization: str
    scenario_id: str
    seed: int
    history: tuple[str, ...] = field(default_factory=tuple)  # agent actions after the standard opening

    def to_columns(self) -> dict[str, Any]:
        """The dataset columns that reward functions receive (JSON-friendly)."""
        return {"realization": self.realization, "scenario_id": self.scenario_id, "seed": int(self.seed),
                "history": list(self.history)}


def make_env(realization: str, access: str = SCORING_ACCESS, **kwargs: Any) -> Hear2ActEnv:
    return Hear2ActEnv(realization=realization, access=access, **kwargs)


@lru_cache(maxsize=8)
def _scoring_env(realization: str) -> Hear2ActEnv:
    return make_env(realization, SCORING_ACCESS)


def fork_env(env: Hear2ActEnv) -> Hear2ActEnv:
    """An independent copy of a live env (:meth:`Hear2ActEnv.fork`); stepping it leaves ``env`` untouched."""
    return env.fork()


def replay(state: DialogueState, env: Hear2ActEnv | None = None) -> tuple[Hear2ActEnv, dict[str, Any]]:
    """Reset ``env`` (default: a cached text env of the state's realization) and re-step the history.

    Returns the env, positioned at the state, and its observation there. The
    default env is shared: the next ``replay`` resets it, so :func:`fork_env` it
    to keep a state. Raises
    ``ValueError`` naming the step if the history ends the episode early.
    """
    env = env if env is not None else _scoring_env(state.realization)
    if env.realization != state.realization:
        raise ValueError(f"replay: env realization {env.realization!r} != state's {state.realization!r}")
    obs, _ = env.reset(seed=state.seed, options={"scenario_id": state.scenario_id})
    for i, action in enumerate(state.history):
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            raise ValueError(f"replay: history[{i}] ({action!r}) ends the episode of {state.scenario_id} "
                             f"seed {state.seed}; a training state must leave the agent a move")
    return env, obs


def action_value(env: Hear2ActEnv, action: str) -> float:
    """The verifiable value of ``action`` in the env's current state (read-only; the env is not stepped).

    * unparseable / out of range: 0;
    * CONFIRM: 1 if the current recommendation is the gold (the user is truly
      satisfied), else 0 -- confirming an unresolved recommendation is wrong;
    * ASK / CLARIFY: 0.5 while there is something to find out (the current
      recommendation is unresolved and the need it fails is not disclosed yet),
      else 0 (the user already said what is wrong, or the recommendation is
      resolved: a wasted turn). Asking is never worth as much as the decision
      (recommending the gold, confirming it): with ASK at 1, "ASK while the tag
      says unresolved" was the maximiser of this per-state reward and never won
      an episode (issue 19); now every state's best action is on the path to
      success, so the per-state optimum solves the task;
    * RECOMMEND n: 1 for the gold; 0 for an option that breaks a visible
      requirement or a need already disclosed, or repeats the current one;
      0.5 for any other option (fits everything known so far).
    """
    if env.scenario is None:
        raise RuntimeError("action_value: the env has not been reset")
    truth = env.ground_truth()
    s = truth.scenario
    parsed = parse_action(action, len(s.options))
    if parsed.kind == INVALID:
        return 0.0
    current = truth.current
    if parsed.kind == "confirm":
        return 1.0 if current == truth.gold else 0.0
    if parsed.kind in ("ask", "clarify"):
        if current is None or truth.current_state == RESOLVED:
            return 0.0
        level = assess(s, current).level
        return 0.5 if level is not None and level not in truth.disclosed else 0.0
    number = parsed.option
    if number == truth.gold:
        return 1.0
    a = assess(s, number)
    known_bad = a.issue == "requirement" or (a.level is not None and a.level in truth.disclosed)
    return 0.0 if known_bad or number == current else 0.5


def continued_success(env: Hear2ActEnv, action: str, policy: str = CONTINUATION, *, in_place: bool = False) -> float:
    """Step a fork of ``env`` with ``action``, let ``policy`` finish the episode; 1.0 if it ends on the gold.

    ``in_place=True`` steps ``env`` itself (for a scratch env that is replayed anyway).
    """
    from hear2act.agents import make_agent

    fork = env if in_place else fork_env(env)
    obs, _, terminated, truncated, info = fork.step(action)
    if not (terminated or truncated):
        agent = make_agent(policy, **({"scenarios": fork.scenarios} if policy == "oracle" else {}))
        agent.reset(obs, {"scenario_id": fork.scenario.id})
        while not (terminated or truncated):
            obs, _, terminated, truncated, info = fork.step(agent.act(obs))
    return 1.0 if info["outcome"]["success"] else 0.0


def score_action(state: DialogueState, action: str, *, outcome_weight: float = 0.0,
                 policy: str = CONTINUATION) -> float:
    """``(1 - w) * action_value + w * continued_success`` of one candidate next action from ``state``."""
    if not 0.0 <= outcome_weight <= 1.0:
        raise ValueError(f"outcome_weight must be in [0, 1], got {outcome_weight}")
    env, _ = replay(state)
    value = action_value(env, action)
    if outcome_weight > 0:
        value = (1 - outcome_weight) * value + outcome_weight * continued_success(env, action, policy, in_place=True)
    return value


def collect_states(realization: str, episodes: Iterable[tuple[str, int]], *,
                   behaviours: Sequence[str] = BEHAVIOURS, max_per_episode: int = 6) -> list[DialogueState]:
    """Every decision point (up to ``max_per_episode``) of one behaviour rollout per ``(scenario_id, seed)``.

    The behaviour of an episode is ``behaviours[seed % len(behaviours)]``, so the
    collection is a pure function of its arguments. The behaviour rollouts are played by the rollout engine
    (:func:`hear2act.eval.engine.run_episodes`, the loop every evaluation plays through); a state is the action
    history before each of an episode's first ``max_per_episode`` decisions.
    """
    from hear2act.agents import make_policy
    from hear2act.eval.engine import EpisodeSpec, run_episodes
    from hear2act_env import REALIZATION_ENV_IDS

    if not behaviours:
        raise ValueError("collect_states: behaviours is empty")
    env_id = REALIZATION_ENV_IDS.get(realization)
    if env_id is None:
        raise ValueError(f"collect_states: realization must be one of {sorted(REALIZATION_ENV_IDS)}, "
                         f"got {realization!r}")
    episodes = [(str(sid), int(seed)) for sid, seed in episodes]

    def factory() -> Hear2ActEnv:
        return make_env(realization, SCORING_ACCESS)

    specs = [EpisodeSpec(env_id, sid, seed, SCORING_ACCESS, key=f"{i}:{sid}:{seed}", make_env=factory)
             for i, (sid, seed) in enumerate(episodes)]
    groups: dict[tuple[str, int | None], list[int]] = {}  # one policy per behaviour (random: per seed)
    for i, (_sid, seed) in enumerate(episodes):
        name = behaviours[seed % len(behaviours)]
        groups.setdefault((name, seed if name == "random" else None), []).append(i)
    actions: list[list[str]] = [[] for _ in episodes]
    scenarios = _scoring_env(realization).scenarios
    for (name, seed), indices in groups.items():
        kwargs: dict[str, Any] = {"scenarios": scenarios} if name == "oracle" else {}
        if name == "random":
            kwargs["seed"] = seed
        policy = make_policy(name, access=SCORING_ACCESS, **kwargs)
        for i, traj in zip(indices, run_episodes([specs[i] for i in indices], policy), strict=True):
            actions[i] = [turn["action"] for turn in traj.turns]
    return [DialogueState(realization, sid, seed, tuple(acts[:k]))
            for (sid, seed), acts in zip(episodes, actions, strict=True)
            for k in range(min(len(acts), max_per_episode))]


def training_rows(states: Sequence[DialogueState], access: str, *, assistant: str = "spoken",
                  env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One GRPO example per state: the policy's prompt under ``access`` (reasoning format) plus scoring columns.

    The prompt is built by :func:`hear2act.agents.prompts.build_messages` from the
    observation alone; the extra columns (state key, visible transcript, and
    for ``T+S_hat`` / ``T+affect`` the user turn's audio as ``reference_audio``,
    which the model never sees) are read only by the reward functions. Under
    ``A`` / ``A+T`` the audio the model hears is the ``audio`` column.
    """
    from hear2act.agents.prompts import build_messages, domain_from_scenario_id

    envs: dict[str, Hear2ActEnv] = {}
    rows = []
    for state in states:
        if state.realization not in envs:
            envs[state.realization] = make_env(state.realization, access, **(env_kwargs or {}))
        env, obs = replay(state, envs[state.realization])
        prompt = build_messages(obs, access, assistant=assistant, domain=domain_from_scenario_id(state.scenario_id),
                                reasoning=True)
        text_prompt, audio = split_audio(prompt)
        row = {"prompt": text_prompt, **state.to_columns(), "access": access, "transcript": obs["transcript"],
               "options": obs["options"]}
        if audio is not None:
            row["audio"] = audio
        elif env.speech is not None:  # T+S_hat / T+affect: the model reads about the audio; evidence checks it
            row["reference_audio"] = np.asarray(env.speech.audio(*env.utterance), dtype=np.float32)
        rows.append(row)
    return rows


def split_audio(messages: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any | None]:
    """(messages with text-only contents, the audio of the last user turn or None).

    A ``datasets.Dataset`` cannot hold a message list whose contents mix str and
    part lists, so training rows keep the audio in their own column and
    :func:`attach_audio` puts it back, where :func:`hear2act.agents.prompts.build_messages`
    had it, just before generation.
    """
    out, audio = [], None
    for m in messages:
        content = m["content"]
        if isinstance(content, list):
            texts = [p["text"] for p in content if p.get("type") == "text"]
            clips = [p for p in content if p.get("type") == "audio"]
            if len(clips) > 1 or (clips and clips[0].get("sampling_rate", 16_000) != 16_000):
                raise ValueError("split_audio: expected at most one 16 kHz audio part per message")
            if clips:
                audio = clips[0]["audio"]
            content = "\n".join(texts)
        out.append({**m, "content": content})
    return out, audio


def attach_audio(messages: Sequence[dict[str, Any]], audio: Any) -> list[dict[str, Any]]:
    """The inverse of :func:`split_audio`: the last user message gets ``[text, audio]`` parts."""
    from hear2act.agents.prompts import audio_part

    out = [dict(m) for m in messages]
    last = max((i for i, m in enumerate(out) if m.get("role") == "user"), default=None)
    if last is None:
        raise ValueError("attach_audio: the prompt has no user message")
    out[last]["content"] = [{"type": "text", "text": out[last]["content"]}, audio_part(audio)]
    return out


def default_episodes(n_scenarios: int, seed: int = 0, *, per_scenario: int = 1,
                     split: SplitSpec = DEFAULT_SPLIT) -> list[tuple[str, int]]:
    """``(scenario_id, seed)`` pairs over ``n_scenarios`` scenarios of the *training* split (0: all of it).

    The scenarios are :func:`hear2act.training.splits.train_ids` of ``split`` (round-robin
    over the training domains), so no state ever comes from a held-out scenario;
    episode seeds count up from ``seed``.
    """
    ids = train_ids(bundled_split(split), n_scenarios)
    return [(sid, seed + i * per_scenario + k) for i, sid in enumerate(ids) for k in range(per_scenario)]


__all__ = [
    "BEHAVIOURS",
    "CONTINUATION",
    "DialogueState",
    "action_value",
    "attach_audio",
    "collect_states",
    "continued_success",
    "default_episodes",
    "fork_env",
    "make_env",
    "replay",
    "score_action",
    "split_audio",
    "training_rows",
]
