"""Hear2Act as a `verifiers <https://pypi.org/project/verifiers/>`_ (v1) environment.

``load_environment(access="T+S", realization="prosody")`` returns a
``verifiers.v1.Env`` whose episodes are Hear2Act episodes: the env steps the
real Gymnasium env host-side as the run's *user* (as verifiers' own TextArena
env steps its game), every assistant turn is one model call through verifiers'
interception (so its eval CLI, its traces and its RL trainers see every
call), and the rubric is the verifiable outcome:

* reward ``success`` (weight ``success_weight``, default 1): 1.0 when the
  episode ended on the gold option, else 0.0 -- the env's return;
* optional ``turn_cost`` (``-turn_cost * charged turns``: the episode's turns, or the
  whole horizon when it failed, as :class:`hear2act.training.episodes.EpisodeReward`
  charges them) and CESAR's process terms
  ``process/<term>`` (:data:`hear2act.training.episodes.PROCESS_TERMS`, the mean over
  the episode's turns, weighted by ``process={"format": 0.1, ...}``), so the
  trace's total reward is :func:`hear2act.training.episodes.score_episode`'s.

Prompts and grammar are the evaluation's: each decision is prompted with the
P6 messages of :func:`hear2act.agents.llm.policy.decision_messages` and each reply is
read as :class:`hear2act.agents.llm.policy.ModelPolicy` reads it
(:mod:`hear2act_env.integrations.episode`). Two ``context`` modes:

* ``"p6"`` (default): every decision is a fresh model call on exactly the
  prompt ``hear2act rollout`` sends (P6 rebuilds the whole prompt each turn);
  one verifiers trace per decision, each scored with its episode's rubric
  (the per-turn samples of :mod:`hear2act.training.episode_rollout`);
* ``"chat"``: one multi-turn conversation per episode: the first user message
  is the first decision's P6 prompt, each later one the next decision's P6
  user prompt; one trace per episode.

Only text access (``T``, ``T+S``, ``T+S_hat``, ``T+affect``): verifiers' chat
messages carry no audio arrays.

verifiers resolves a taskset id by importing a top-level module, so importing
this module also registers it as ``hear2act_verifiers`` (:data:`TASKSET_ID`).
``python -m hear2act_env.integrations.verifiers [vf-eval options]`` runs
verifiers' eval CLI on it, e.g. ``-m MODEL --client.base-url URL -n 8
--env.taskset.access T+S --no-push``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, Literal

try:
    import verifiers.v1 as vf
    from pydantic import Field, field_validator
    from verifiers.v1.dialects.chat import message_to_wire
    from verifiers.v1.runtimes import ProgramResult, SubprocessConfig
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError('the verifiers integration needs verifiers: pip install "hear2act[verifiers]"') from exc

from .episode import ENV_IDS, TEXT_ACCESS, check_access, decision_messages, make_env, read_reply

TASKSET_ID = "hear2act_verifiers"
CONTEXTS = ("p6", "chat")


class Hear2ActTasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: which episodes, under which condition, scored how."""

    access: str = "T"
    realization: str = "prosody"
    scenario_ids: list[str] | None = None
    """Scenarios to play, in order (default: the bundled bank)."""
    seed: int = 0
    """Episode ``i`` is reset with seed ``seed + i`` (as ``hear2act rollout``)."""
    context: Literal["p6", "chat"] = "p6"
    assistant: Literal["spoken", "text"] = "spoken"
    reasoning: bool = False
    success_weight: float = Field(1.0, gt=0)
    turn_cost: float = Field(0.0, ge=0)
    process: dict[str, float] = Field(default_factory=dict)
    """CESAR process-term weights, e.g. ``{"format": 0.1, "evidence": 0.05}``."""
    max_turns: int = 20

    @field_validator("access")
    @classmethod
    def _access(cls, v: str) -> str:
        return check_access(v)

    @field_validator("realization")
    @classmethod
    def _realization(cls, v: str) -> str:
        if v not in ENV_IDS:
            raise ValueError(f"realization must be one of {tuple(ENV_IDS)}, got {v!r}")
        return v

    @field_validator("process")
    @classmethod
    def _process(cls, v: dict[str, float]) -> dict[str, float]:
        from hear2act.training.episodes import EpisodeReward

        EpisodeReward(process=v)  # unknown term, negative weight, or process outweighing success: one-line error
        return v

    def episode_reward(self) -> Any:
        from hear2act.training.episodes import EpisodeReward

        return EpisodeReward(success_weight=self.success_weight, turn_cost=self.turn_cost, process=self.process)


class Hear2ActData(vf.TaskData):
    info: dict
    """``scenario_id`` and ``seed``: the env reproduces the episode from them."""


class Hear2ActTask(vf.Task[Hear2ActData, vf.State, vf.TaskConfig]):
    @property
    def key(self) -> str:
        return f"{self.data.info['scenario_id']}/{self.data.info['seed']}"


class Hear2ActTaskset(vf.Taskset[Hear2ActTask, Hear2ActTasksetConfig]):
    """One task per episode start ``(scenario_id, seed)``; its prompt is the first decision's P6 prompt."""

    def load(self) -> Iterator[Hear2ActTask]:
        c = self.config
        env = make_env(c.realization, c.access, max_turns=c.max_turns)
        ids = c.scenario_ids if c.scenario_ids is not None else [s.id for s in env.unwrapped.scenarios]
        try:
            for i, sid in enumerate(ids):
                seed = c.seed + i
                obs, _ = env.reset(seed=seed, options={"scenario_id": sid})
                system, user = _p6(obs, sid, c, turn=0)
                yield Hear2ActTask(Hear2ActData(id=f"{sid}/{seed}", name=f"{sid}#{seed}", prompt=user,
                                                system_prompt=system, info={"scenario_id": sid, "seed": seed}),
                                   c.task)
        finally:
            env.close()


def _p6(obs: dict[str, Any], sid: str, c: Hear2ActTasksetConfig, turn: int) -> tuple[str, str]:
    system, user = decision_messages(obs, sid, c.access, turn=turn, assistant=c.assistant, reasoning=c.reasoning)
    return str(system["content"]), str(user["content"])


class Hear2ActHarnessConfig(vf.HarnessConfig):
    pass


class Hear2ActChatHarness(vf.Harness[Hear2ActHarnessConfig]):
    """One chat completion per segment, in-process, through the rollout's interception endpoint.

    verifiers' ``null`` harness does the same in a ``uv``-provisioned subprocess;
    Hear2Act needs no tools, so the call is made here (the contract is the
    endpoint, not the process: see ``verifiers.v1.Harness.launch``).
    """

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any, tool_interception_url: str | None = None) -> ProgramResult:
        from openai import AsyncOpenAI

        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt:
            messages.extend(message_to_wire(m) for m in prompt)
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        return ProgramResult(exit_code=0, stdout="", stderr="")


class Hear2ActEnvConfig(vf.EnvConfig):
    assistant: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())
    """The model under evaluation or training (the in-process chat harness needs no sandbox)."""


class Hear2ActVfEnv(vf.Env[Hear2ActEnvConfig]):
    """The Hear2Act Gymnasium env as the user; the assistant agent plays each decision."""

    _idle: list[Any] | None = None  # Gymnasium envs between episodes (one per episode in flight)

    async def run(self, task: Hear2ActTask, agents: Any) -> None:
        c: Hear2ActTasksetConfig = self.taskset.config
        sid, seed = str(task.data.info["scenario_id"]), int(task.data.info["seed"])
        if self._idle is None:
            self._idle = []
        env = self._idle.pop() if self._idle else make_env(c.realization, c.access, max_turns=c.max_turns)
        try:
            obs, _ = env.reset(seed=seed, options={"scenario_id": sid})
            if c.context == "chat":
                traces, turns, info = await self._chat(task, agents, env, obs, sid, c)
            else:
                traces, turns, info = await self._p6_turns(task, agents, env, obs, sid, c)
        finally:
            self._idle.append(env)  # every episode starts with reset(seed, scenario): nothing carries over
        _score(traces, turns, info, c)

    async def stop(self) -> None:
        for env in self._idle or ():
            env.close()
        self._idle = None

    async def _p6_turns(self, task: Hear2ActTask, agents: Any, env: Any, obs: dict[str, Any], sid: str,
                        c: Hear2ActTasksetConfig) -> tuple[list[Any], list[Any], dict[str, Any]]:
        traces, turns = [], []
        for turn in range(c.max_turns):
            system, user = _p6(obs, sid, c, turn)
            decision = type(task)(task.data.model_copy(update={"prompt": user, "system_prompt": system}),
                                  task.config)
            async with agents.assistant.interaction(decision) as interaction:
                segment = await interaction.turn()
            traces.append(interaction.trace)
            reply = _reply(segment, interaction.trace, sid, turn)
            obs, info, done = _step(env, obs, reply, turns, c)
            if done:
                return traces, turns, info
        raise RuntimeError(f"{sid}: the episode did not end within max_turns={c.max_turns}")

    async def _chat(self, task: Hear2ActTask, agents: Any, env: Any, obs: dict[str, Any], sid: str,
                    c: Hear2ActTasksetConfig) -> tuple[list[Any], list[Any], dict[str, Any]]:
        turns: list[Any] = []
        async with agents.assistant.interaction(task) as interaction:
            segment = await interaction.turn()
            for turn in range(c.max_turns):
                reply = _reply(segment, interaction.trace, sid, turn)
                obs, info, done = _step(env, obs, reply, turns, c)
                if done:
                    break
                segment = await interaction.turn(_p6(obs, sid, c, turn + 1)[1])
            else:
                raise RuntimeError(f"{sid}: the episode did not end within max_turns={c.max_turns}")
        return [interaction.trace], turns, info


def _reply(segment: Any, trace: Any, sid: str, turn: int) -> str:
    if segment.terminated or trace.errors:
        error = trace.last_error
        raise RuntimeError(f"{sid} turn {turn}: the assistant produced no reply"
                           + (f" ({error.type}: {error.message})" if error is not None else ""))
    return segment.last_reply


def _step(env: Any, obs: dict[str, Any], reply: str, turns: list[Any],
          c: Hear2ActTasksetConfig) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """One env step on the reply's action; the turn is recorded for the process terms."""
    from hear2act.agents.llm.stopping import truncate
    from hear2act.training.episodes import TurnRecord

    raw = truncate(reply, "answer" if c.reasoning else "action-line")
    turns.append(TurnRecord(str(obs.get("transcript", "")), str(obs.get("options", "")),
                            str(obs.get("state", "")), raw))
    obs, _, terminated, truncated, info = env.step(read_reply(reply, reasoning=c.reasoning))
    return obs, info, bool(terminated or truncated)


def _score(traces: list[Any], turns: list[Any], info: dict[str, Any], c: Hear2ActTasksetConfig) -> None:
    """Record the episode's rubric on every trace of the episode (see the module docstring)."""
    from hear2act.training.episodes import PROCESS_TERMS, score_episode

    outcome = info["outcome"]
    scored = score_episode({"outcome": outcome}, turns, c.episode_reward())
    for trace in traces:
        trace.record_reward("success", scored["success"], c.success_weight)
        if c.turn_cost:
            # a failure is charged the horizon, as score_episode charges it: the traces' total is its reward
            trace.record_reward("turn_cost", -c.turn_cost * scored["charged_turns"], 1.0)
        for term in PROCESS_TERMS:
            if c.process.get(term):
                trace.record_reward(f"process/{term}", scored[f"process/{term}"], c.process[term])
            else:
                trace.record_metric(f"process/{term}", scored[f"process/{term}"])
        trace.record_metrics({"turns": scored["turns"], "invalid": scored["invalid"],
                              "premature_closure": scored["premature_closure"],
                              "n_disclosed": float(outcome["n_disclosed"]),
                              "final_option": float(outcome["final_option"])})
        trace.info["outcome"] = {k: v for k, v in outcome.items() if k != "action_counts"}


def env_config(*, access: str = "T", realization: str = "prosody", model: str | None = None,
               **taskset: Any) -> Hear2ActEnvConfig:
    """The ``EnvConfig`` of a Hear2Act run (``taskset`` takes any :class:`Hear2ActTasksetConfig` field)."""
    assistant = vf.AgentConfig(runtime=SubprocessConfig(), **({"model": model} if model else {}))
    return Hear2ActEnvConfig(taskset={"id": TASKSET_ID, "access": access, "realization": realization, **taskset},
                             assistant=assistant)


def load_environment(access: str = "T", realization: str = "prosody", **taskset: Any) -> Hear2ActVfEnv:
    """A verifiers environment playing Hear2Act episodes (see the module docstring for the arguments)."""
    check_access(access, TEXT_ACCESS)
    return Hear2ActVfEnv(env_config(access=access, realization=realization, **taskset))


# verifiers imports a taskset id as a top-level module: make this one importable under TASKSET_ID.
if __name__ != "__main__":
    sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])

__all__ = [
    "CONTEXTS",
    "TASKSET_ID",
    "Hear2ActChatHarness",
    "Hear2ActData",
    "Hear2ActEnvConfig",
    "Hear2ActHarnessConfig",
    "Hear2ActTask",
    "Hear2ActTaskset",
    "Hear2ActTasksetConfig",
    "Hear2ActVfEnv",
    "env_config",
    "load_environment",
]


def main(argv: list[str] | None = None) -> None:
    """verifiers' eval CLI (``vf-eval``) on this taskset."""
    import importlib

    from verifiers.v1.cli.eval.main import main as vf_eval

    importlib.import_module("hear2act_env.integrations.verifiers")  # registers TASKSET_ID
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(a.startswith("--env.taskset.id") for a in args):
        args = ["--env.taskset.id", TASKSET_ID, *args]
    vf_eval(args)


if __name__ == "__main__":
    main()
