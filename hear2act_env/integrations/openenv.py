"""Hear2Act as an `OpenEnv <https://pypi.org/project/openenv-core/>`_ environment: server, client, models.

OpenEnv is the environment protocol TRL documents for remote rollouts: an
``Environment`` (``reset`` / ``step`` / ``state``) served by
``openenv.core.env_server.create_app`` (FastAPI; a WebSocket session per
client, each with its own env), and an ``EnvClient`` subclass that speaks it.

Server (one process; every WebSocket session gets its own Hear2Act env)::

    python -m hear2act_env.integrations.openenv --host 127.0.0.1 --port 8000 --access T+S

or ``uvicorn`` on :func:`make_app`. Client::

    from hear2act_env.integrations.openenv import Hear2ActAction, Hear2ActClient

    with Hear2ActClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=5, scenario_id="budget-airline-tickets-01")
        prompt = result.observation.prompt            # the P6 messages of the next decision
        result = env.step(Hear2ActAction(message="[ACTION: ASK] What matters most to you?"))
        result.reward, result.done, result.observation.outcome

An observation carries the Gymnasium observation's text fields
(``transcript``, ``options``, and the access condition's channel: ``state``,
``inferred_state`` or ``affect``), ``prompt`` (the P6 chat messages
:func:`hear2act.agents.llm.policy.decision_messages` builds for it, what ``hear2act
rollout`` sends a model), the public part of ``info`` (parsed action,
invalid-action reason, turn, question routing, disclosed levels, current
option) and, on the last step, ``outcome``. The hidden ground truth of
``info`` (``state``, ``delivery``) stays on the server. ``reward`` is the
env's reward: 1.0 on the step that ends a successful episode. Text access only
(``T``, ``T+S``, ``T+S_hat``, ``T+affect``).

For TRL's ``GRPOTrainer(environment_factory=...)`` (its OpenEnv path),
:func:`tool_env_factory` binds :class:`RemoteToolEnv` -- the four tools of
:class:`hear2act.training.tools_env.Hear2ActToolEnv` -- to a server.
"""

from __future__ import annotations

import argparse
import math
import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

try:
    from openenv.core import EnvClient
    from openenv.core.client_types import StepResult
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError('the OpenEnv integration needs openenv-core: pip install "hear2act[openenv]"') from exc

from hear2act.training.tools_env import Hear2ActTools, observation_text

from .episode import TEXT_ACCESS, check_access, decision_messages, env_id, make_env

HIDDEN_INFO = frozenset({"state", "delivery"})  # ground truth for evaluation: never sent to the client
CHANNELS = ("state", "inferred_state", "affect")


class Hear2ActAction(Action):
    """One assistant turn in the paper's grammar, e.g. ``[ACTION: RECOMMEND] [OPTION: 3] How about ...``."""

    message: str = Field(..., description="The assistant's turn; the env's [ACTION: ...] parser reads it")


class Hear2ActObservation(Observation):
    """What the assistant sees after a reset or a step (see the module docstring)."""

    transcript: str = ""
    options: str = ""
    state: str = ""
    inferred_state: str = ""
    affect: str = ""
    scenario_id: str = ""
    prompt: list[dict[str, Any]] = Field(default_factory=list)
    info: dict[str, Any] = Field(default_factory=dict)
    outcome: dict[str, Any] = Field(default_factory=dict)


class Hear2ActState(State):
    scenario_id: str = ""
    seed: int | None = None
    access: str = "T"
    realization: str = "prosody"
    done: bool = False


def public_info(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` as sent to a client: no hidden ground truth, no ``outcome`` (sent apart), JSON types, NaN as None."""
    return {k: _jsonable(v) for k, v in info.items() if k not in HIDDEN_INFO and k != "outcome"}


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class Hear2ActEnvironment(Environment[Hear2ActAction, Hear2ActObservation, Hear2ActState]):
    """The Hear2Act Gymnasium env behind OpenEnv's ``Environment`` interface (one per session)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every instance owns its env: sessions share nothing

    def __init__(self, realization: str = "prosody", access: str = "T", **env_kwargs: Any) -> None:
        super().__init__()
        check_access(access, TEXT_ACCESS)
        env_id(realization)
        self.access, self.realization = access, realization
        self.env = make_env(realization, access, **env_kwargs)
        self._state = Hear2ActState(access=access, realization=realization)
        self._turn = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None, scenario_id: str | None = None,
              **kwargs: Any) -> Hear2ActObservation:
        if kwargs:
            raise ValueError(f"unknown reset argument(s) {sorted(kwargs)}; known: seed, episode_id, scenario_id")
        options = {"scenario_id": scenario_id} if scenario_id is not None else None
        obs, info = self.env.reset(seed=seed, options=options)
        self._turn = 0
        self._state = Hear2ActState(episode_id=episode_id or str(uuid.uuid4()), step_count=0,
                                    scenario_id=info["scenario_id"], seed=seed, access=self.access,
                                    realization=self.realization)
        return self._observation(obs, info, reward=0.0, done=False)

    def step(self, action: Hear2ActAction, timeout_s: float | None = None, **kwargs: Any) -> Hear2ActObservation:
        if self._state.done:
            raise RuntimeError("the episode has ended; call reset()")
        obs, reward, terminated, truncated, info = self.env.step(action.message)
        self._turn += 1
        self._state.step_count += 1
        self._state.done = bool(terminated or truncated)
        return self._observation(obs, info, reward=float(reward), done=self._state.done)

    def _observation(self, obs: dict[str, Any], info: dict[str, Any], *, reward: float,
                     done: bool) -> Hear2ActObservation:
        sid = self._state.scenario_id
        prompt = [] if done else decision_messages(obs, sid, self.access, turn=self._turn)
        return Hear2ActObservation(
            transcript=obs["transcript"], options=obs["options"], scenario_id=sid, prompt=prompt,
            **{k: str(obs[k]) for k in CHANNELS if k in obs},
            info=public_info(info), outcome=_jsonable(info.get("outcome", {})), reward=reward, done=done)

    @property
    def state(self) -> Hear2ActState:
        return self._state

    def close(self) -> None:
        self.env.close()


class Hear2ActClient(EnvClient[Hear2ActAction, Hear2ActObservation, Hear2ActState]):
    """OpenEnv client of a Hear2Act server (async; ``.sync()`` for the blocking API)."""

    def _step_payload(self, action: Hear2ActAction) -> dict[str, Any]:
        return {"message": action.message}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Hear2ActObservation]:
        fields = set(Hear2ActObservation.model_fields) - {"reward", "done", "metadata"}
        data = {k: v for k, v in payload.get("observation", {}).items() if k in fields}
        obs = Hear2ActObservation(**data, reward=payload.get("reward"), done=bool(payload.get("done", False)))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> Hear2ActState:
        return Hear2ActState(**payload)


class RemoteToolEnv(Hear2ActTools):
    """:class:`hear2act.training.tools_env.Hear2ActToolEnv` over an OpenEnv server: TRL's ``environment_factory``.

    The same four tools, the same texts and the same reward as the local tool
    env, but every step runs on the server: ``GRPOTrainer(...,
    environment_factory=tool_env_factory("http://HOST:PORT"))`` trains on
    remote Hear2Act episodes (rows from :func:`hear2act.training.tools_env.tool_rows`;
    their ``access`` and ``realization`` must be the server's).
    """

    base_url = ""

    def __init__(self) -> None:
        if not self.base_url:
            raise ValueError("RemoteToolEnv needs a server: use tool_env_factory(base_url)")
        self._client: Any = None
        self._served: tuple[str, str] | None = None
        self.outcome: dict[str, Any] | None = None
        self.done = False

    def _connect(self) -> Any:
        if self._client is None:
            self._client = Hear2ActClient(base_url=self.base_url).sync()
            self._client.connect()
        return self._client

    def reset(self, scenario_id: str, seed: int, realization: str = "prosody", access: str = "T",
              history: Sequence[str] | None = None, **_: Any) -> str:
        """Start (or replay into) an episode; returns what the assistant sees: options, transcript, state tag."""
        client = self._connect()
        result = client.reset(seed=int(seed), scenario_id=scenario_id)
        if self._served is None:
            state = client.state()
            self._served = (state.realization, state.access)
        if (realization, access) != self._served:
            raise ValueError(f"row asks for realization={realization!r} access={access!r}; the server at "
                             f"{self.base_url} serves realization={self._served[0]!r} access={self._served[1]!r}")
        for i, action in enumerate(history or ()):
            result = client.step(Hear2ActAction(message=action))
            if result.done:
                raise ValueError(f"history[{i}] ({action!r}) ends the episode of {scenario_id} seed {seed}")
        self.outcome, self.done = None, False
        obs = result.observation
        return observation_text(obs.options, obs.transcript, obs.state or "")

    def _act(self, action: str) -> str:
        if self._client is None:
            raise RuntimeError("call reset() before using a tool")
        if self.done:
            return "The conversation is over."
        result = self._client.step(Hear2ActAction(message=action))
        obs = result.observation
        reply = obs.transcript.splitlines()[-1]
        if result.done:
            self.done, self.outcome = True, obs.outcome
            reply += " (The conversation is over.)"
        if obs.state:
            reply += f"\n{obs.state}"
        return reply

    def _close(self) -> None:
        """Close the connection (private: TRL exposes every public method as a tool)."""
        if self._client is not None:
            self._client.close()
            self._client = None


def tool_env_factory(base_url: str) -> type[RemoteToolEnv]:
    """A :class:`RemoteToolEnv` class bound to the server at ``base_url`` (TRL calls it with no argument)."""
    return type("Hear2ActRemoteToolEnv", (RemoteToolEnv,), {"base_url": base_url.rstrip("/")})


def make_app(access: str = "T", realization: str = "prosody", max_concurrent_envs: int = 8,
             **env_kwargs: Any) -> Any:
    """The FastAPI app serving Hear2Act (checked here: a bad access or realization fails at startup)."""
    check_access(access, TEXT_ACCESS)
    env_id(realization)
    factory = partial(Hear2ActEnvironment, realization=realization, access=access, **env_kwargs)
    return create_app(factory, Hear2ActAction, Hear2ActObservation, env_name="hear2act",
                      max_concurrent_envs=max_concurrent_envs)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m hear2act_env.integrations.openenv``: serve Hear2Act over OpenEnv's protocol."""
    parser = argparse.ArgumentParser(prog="python -m hear2act_env.integrations.openenv", description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--access", default="T", choices=TEXT_ACCESS)
    parser.add_argument("--realization", default="prosody", choices=("prosody", "explicit"))
    parser.add_argument("--max-concurrent-envs", type=int, default=8)
    args = parser.parse_args(argv)
    import uvicorn

    app = make_app(args.access, args.realization, args.max_concurrent_envs)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


__all__ = [
    "Hear2ActAction",
    "Hear2ActClient",
    "Hear2ActEnvironment",
    "Hear2ActObservation",
    "Hear2ActState",
    "RemoteToolEnv",
    "main",
    "make_app",
    "public_info",
    "tool_env_factory",
]

if __name__ == "__main__":
    main()
