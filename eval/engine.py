"""The batched rollout engine: many episodes in flight, one policy call per round.

Each episode in flight has its own env (reset with its own scenario and
seed). Every round the engine collects the pending decision of every episode
in flight, asks the policy for all of them in one ``act_batch`` call (one
batched ``generate`` for transformers, concurrent requests for a server),
and steps each env with its answer. Finished episodes free their slot for
the next spec.

An episode's trajectory depends only on its spec and on the policy's answers
to its own prompts, never on which other episodes share a batch: the same
seeds and the same model outputs give the same trajectories whatever the
batch size.

Trajectory dict (JSON-serialisable)::

    key, env_id, scenario_id, seed, access, intervention, agent, prompt_version,
    failed (reason or None), outcome (env's info["outcome"] or None),
    opening: {user_words, state, delivery, audio_seed},
    turns: [{turn, prompt_hash, raw, reasoning, action, parsed_kind, option, parse_error, parse_note,
             user_words, state, delivery, audio_seed, reward[, prompt]}],
    parse_failures, n_tokens

The audio of any user turn is ``renderer(user_words, delivery, audio_seed)``
(the env's ``utterance``); a prompt is rebuilt by replaying the recorded
actions from the same seed (or stored in full with ``record_prompts=True``).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import hear2act_env
from hear2act.agents.base import Policy, PolicyInput, PolicyOutput
from hear2act.agents.llm.perceiver_llm import PerceptionError

# Failures of an external model the env calls for its observation (an audio-LLM perceiver):
# they end that one episode as failed, with the reason, instead of stopping the run.
EPISODE_ERRORS: tuple[type[BaseException], ...] = (PerceptionError,)


@dataclass(frozen=True)
class EpisodeSpec:
    """One rollout to play: which env, scenario, seed and access condition."""

    env_id: str
    scenario_id: str
    seed: int
    access: str = "T"
    intervention: str = "correct"
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""  # rollout id; default "<index>:<scenario_id>:<seed>"


def make_specs(env_id: str, scenario_ids: Iterable[str], *, seed: int = 0, access: str = "T",
               intervention: str = "correct", env_kwargs: Mapping[str, Any] | None = None) -> list[EpisodeSpec]:
    """One spec per scenario with seeds ``seed + i`` (as :func:`hear2act.eval.rollout.run_condition`)."""
    return [
        EpisodeSpec(env_id, sid, seed + i, access, intervention, dict(env_kwargs or {}),
                    key=f"{env_id}/{access}/{intervention}/{sid}/{seed + i}")
        for i, sid in enumerate(scenario_ids)
    ]


class _EnvPool:
    """Envs by configuration; one per episode in flight, reused (reset) by later episodes."""

    def __init__(self) -> None:
        self._free: dict[Hashable, list[gym.Env]] = {}

    @staticmethod
    def config(spec: EpisodeSpec) -> Hashable:
        kwargs = tuple(sorted((k, v if isinstance(v, Hashable) else id(v)) for k, v in spec.env_kwargs.items()))
        return spec.env_id, spec.access, spec.intervention, kwargs

    def take(self, spec: EpisodeSpec) -> gym.Env:
        free = self._free.setdefault(self.config(spec), [])
        if free:
            return free.pop()
        return gym.make(spec.env_id, access=spec.access, state_intervention=spec.intervention,
                        disable_env_checker=True, **dict(spec.env_kwargs))

    def give(self, spec: EpisodeSpec, env: gym.Env) -> None:
        self._free.setdefault(self.config(spec), []).append(env)

    def close(self) -> None:
        for envs in self._free.values():
            for env in envs:
                env.close()
        self._free.clear()


@dataclass
class _Episode:
    index: int
    spec: EpisodeSpec
    key: str
    env: gym.Env
    observation: dict[str, Any]
    info_reset: dict[str, Any]
    trajectory: dict[str, Any]
    turn: int = 0

    def pending(self) -> PolicyInput:
        return PolicyInput(self.observation, self.info_reset, self.spec.seed, self.turn, self.key)

    def step(self, out: PolicyOutput, record_prompts: bool) -> bool:
        """Apply the policy's answer; True when the episode is over (ended or failed)."""
        traj = self.trajectory
        record: dict[str, Any] = {
            "turn": self.turn, "prompt_hash": out.prompt_hash, "raw": out.raw, "reasoning": out.reasoning,
            "action": out.action,
        }
        if out.extra.get("no_text"):  # the model answered with no text: played below as an invalid action
            record["no_text"] = str(out.extra["no_text"])
        if record_prompts and out.prompt is not None:
            record["prompt"] = out.prompt
        traj["n_tokens"] += int(out.n_tokens)
        if out.error:
            record.update(parsed_kind=None, option=None, parse_error="", error=out.error)
            traj["turns"].append(record)
            traj["failed"] = out.error
            return True
        try:
            obs, reward, terminated, truncated, info = self.env.step(out.action)
        except EPISODE_ERRORS as exc:
            reason = f"{type(exc).__name__}: {exc}"
            record.update(parsed_kind=None, option=None, parse_error="", error=reason)
            traj["turns"].append(record)
            traj["failed"] = reason
            return True
        kind = info["action"]
        words, delivery, audio_seed = self.env.unwrapped.utterance
        record.update(
            parsed_kind=kind, option=info["current"] if kind == "recommend" else None,
            parse_error=info["invalid_action"], parse_note=info["action_note"], user_words=words, state=info["state"],
            delivery=delivery,
            audio_seed=int(audio_seed), reward=float(reward),
        )
        traj["turns"].append(record)
        if kind == "invalid":
            traj["parse_failures"] += 1
        self.observation = obs
        self.turn += 1
        if terminated or truncated:
            traj["outcome"] = _jsonable(info["outcome"])
            return True
        return False


def run_episodes(
    specs: Sequence[EpisodeSpec],
    policy: Policy,
    *,
    batch_size: int = 16,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    record_prompts: bool = False,
) -> list[dict[str, Any]]:
    """Play every spec with ``policy``, ``batch_size`` episodes in flight; one trajectory per spec, in order.

    ``on_done`` is called with each trajectory as soon as its episode ends (in
    completion order), so callers can stream results to disk. A policy output
    with ``error`` ends that episode as failed (``failed`` = the reason,
    ``outcome`` None): it is never scored.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    keys = [spec.key or f"{i}:{spec.scenario_id}:{spec.seed}" for i, spec in enumerate(specs)]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"episode keys must be unique; {dup!r} appears more than once")
    pool = _EnvPool()
    _check_specs(specs, pool)
    results: list[dict[str, Any] | None] = [None] * len(specs)
    queue = deque(range(len(specs)))
    active: list[_Episode] = []
    release = getattr(policy, "release", None)
    try:
        while queue or active:
            while queue and len(active) < batch_size:
                i = queue.popleft()
                started = _start(i, specs[i], keys[i], pool, policy)
                if isinstance(started, _Episode):
                    active.append(started)
                    continue
                results[i] = started  # failed at reset: recorded, never scored
                if on_done is not None:
                    on_done(started)
            if not active:
                continue
            outputs = policy.act_batch([ep.pending() for ep in active])
            if len(outputs) != len(active):
                raise RuntimeError(f"policy {policy.name!r} returned {len(outputs)} outputs for {len(active)} inputs")
            still, finished = [], []
            for ep, out in zip(active, outputs, strict=True):
                (finished if ep.step(out, record_prompts) else still).append(ep)
            active = still
            for ep in finished:
                pool.give(ep.spec, ep.env)
                results[ep.index] = ep.trajectory
                if on_done is not None:
                    on_done(ep.trajectory)
            if release is not None and finished:
                release([ep.key for ep in finished])
    finally:
        pool.close()
    return [r for r in results if r is not None]


def _start(index: int, spec: EpisodeSpec, key: str, pool: _EnvPool, policy: Policy) -> _Episode | dict[str, Any]:
    """The episode in flight, or (when the env's reset fails on an external model) its failed trajectory."""
    env = pool.take(spec)
    try:
        obs, info = env.reset(seed=spec.seed, options={"scenario_id": spec.scenario_id})
    except EPISODE_ERRORS as exc:
        pool.give(spec, env)
        return {
            "key": key, "env_id": spec.env_id, "scenario_id": spec.scenario_id, "seed": spec.seed,
            "access": spec.access, "intervention": spec.intervention, "agent": policy.name,
            "prompt_version": getattr(policy, "prompt_version", ""), "failed": f"{type(exc).__name__}: {exc}",
            "outcome": None, "opening": None, "turns": [], "parse_failures": 0, "n_tokens": 0,
        }
    words, delivery, audio_seed = env.unwrapped.utterance
    trajectory: dict[str, Any] = {
        "key": key, "env_id": spec.env_id, "scenario_id": info["scenario_id"], "seed": spec.seed,
        "access": spec.access, "intervention": spec.intervention, "agent": policy.name,
        "prompt_version": getattr(policy, "prompt_version", ""),  # model policies: the template set
        "failed": None, "outcome": None,
        "opening": {"user_words": words, "state": info["state"], "delivery": delivery, "audio_seed": int(audio_seed)},
        "turns": [], "parse_failures": 0, "n_tokens": 0,
    }
    return _Episode(index, spec, key, env, obs, {"scenario_id": info["scenario_id"]}, trajectory)


def _check_specs(specs: Sequence[EpisodeSpec], pool: _EnvPool) -> None:
    """Fail before playing anything on an unknown env id or scenario id (naming the spec)."""
    known: dict[Hashable, set[str]] = {}
    for i, spec in enumerate(specs):
        if spec.env_id not in hear2act_env.ENV_IDS:
            raise ValueError(f"spec {i}: unknown env_id {spec.env_id!r}; choose from {sorted(hear2act_env.ENV_IDS)}")
        config = pool.config(spec)
        if config not in known:
            env = pool.take(spec)
            known[config] = {s.id for s in env.unwrapped.scenarios}
            pool.give(spec, env)
        if spec.scenario_id not in known[config]:
            raise ValueError(f"spec {i}: unknown scenario_id {spec.scenario_id!r} for env {spec.env_id!r}")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and value != value:  # NaN (a rate with no denominator) -> JSON null
        return None
    return value


def write_jsonl(trajectories: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write trajectories one JSON object per line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", errors="backslashreplace") as f:  # lone surrogates stay JSON escapes
        for t in trajectories:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read trajectories written by :func:`write_jsonl`; a bad line is reported with its number."""
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not a JSON trajectory ({e.msg})") from None
    return out
