"""Hear2Act as a TRL ``environment_factory``: the assistant's actions are tools, the outcome is the reward.

With stock ``trl.GRPOTrainer(..., environment_factory=Hear2ActToolEnv)`` a
text model plays whole episodes in TRL's own multi-turn loop: TRL exposes
every public method of the class (``ask``, ``clarify``, ``recommend``,
``confirm``) as a tool, calls ``reset(**row)`` with the dataset row before
each rollout (its return is appended to the prompt), feeds each tool's return
(the user's reply) back to the model, and scores the rollout with
``get_reward()`` -- 1.0 when the assistant confirmed the gold option.

Dataset rows carry ``scenario_id`` and ``seed`` (and optionally
``realization``, ``access`` in ``T`` / ``T+S``, and ``history``: actions to
replay first, so training can start mid-dialogue). :func:`tool_rows` builds
them. Only text access: TRL's tool loop carries text (and images), not audio.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hear2act_env.access import names
from hear2act_env.dialogue.actions import format_action

from .grpo_data import DialogueState, make_env, replay

TEXT_ACCESS = names(lambda a: a.text_only)  # TRL's tool loop carries text only: the conditions without speech
SYSTEM = (
    "You are a service assistant helping a user choose one of the numbered options. The user has needs they "
    "have not stated yet. Use the tools: ask (a question), clarify (ask the user to say more), recommend (an "
    "option by number), confirm (close the deal on the current recommendation). The task succeeds only if you "
    "confirm the option that meets all of the user's needs."
)


def observation_text(options: str, transcript: str, state: str = "") -> str:
    """What a tool-calling model reads at reset: the options, the dialogue so far and the state line, if any
    (one format for the local env and for an OpenEnv client).

    >>> print(observation_text("1. A", "User: hi", "[STATE: resolved]"))
    OPTIONS:
    1. A
    <BLANKLINE>
    DIALOGUE SO FAR:
    User: hi
    <BLANKLINE>
    [STATE: resolved]
    """
    parts = [f"OPTIONS:\n{options}", f"DIALOGUE SO FAR:\n{transcript}"]
    if state:
        parts.append(state)
    return "\n\n".join(parts)


class Hear2ActTools:
    """The four tools TRL exposes to the model (every public method is a tool) and the episode's reward.

    A subclass supplies ``_act(action_text) -> reply`` and sets ``self.outcome`` when the episode ends:
    :class:`Hear2ActToolEnv` plays a local env, the OpenEnv ``RemoteToolEnv`` a server's.
    """

    outcome: dict[str, Any] | None = None

    def _act(self, action: str) -> str:
        raise NotImplementedError

    def ask(self, question: str) -> str:
        """Ask the user a question about what they need.

        Args:
            question: The question to ask the user.

        Returns:
            The user's reply.
        """
        return self._act(format_action("ask", question))

    def clarify(self, request: str) -> str:
        """Ask the user to say more about what they need.

        Args:
            request: What to ask the user to clarify.

        Returns:
            The user's reply.
        """
        return self._act(format_action("clarify", request))

    def recommend(self, option: int, message: str) -> str:
        """Recommend one of the numbered options to the user.

        Args:
            option: The number of the option to recommend.
            message: What to say to the user about it.

        Returns:
            The user's reaction.
        """
        return self._act(format_action("recommend", message, int(option)))

    def confirm(self, message: str) -> str:
        """Confirm the current recommendation and close the conversation.

        Args:
            message: What to say to the user.

        Returns:
            The user's reply.
        """
        return self._act(format_action("confirm", message))

    def get_reward(self) -> float:
        """1.0 if the episode ended on the gold option, else 0.0 (also when the model never confirmed)."""
        return 1.0 if self.outcome is not None and self.outcome.get("success") else 0.0

class Hear2ActToolEnv(Hear2ActTools):
    """One Hear2Act episode behind four tools. TRL makes one instance per concurrent rollout and reuses it."""

    def __init__(self) -> None:
        self._envs: dict[tuple[str, str], Any] = {}
        self.env: Any = None
        self.outcome: dict[str, Any] | None = None
        self.done = False

    def reset(self, scenario_id: str, seed: int, realization: str = "prosody", access: str = "T",
              history: Sequence[str] | None = None, **_: Any) -> str:
        """Start (or replay into) an episode; returns what the assistant sees: options, transcript, state tag."""
        if access not in TEXT_ACCESS:
            raise ValueError(f"Hear2ActToolEnv serves text access {TEXT_ACCESS}, got {access!r}")
        key = (realization, access)
        if key not in self._envs:
            self._envs[key] = make_env(realization, access)
        self.env, obs = replay(DialogueState(realization, scenario_id, int(seed), tuple(history or ())),
                               self._envs[key])
        self.outcome, self.done = None, False
        return observation_text(obs["options"], obs["transcript"], obs.get("state") or "")

    def _act(self, action: str) -> str:
        if self.env is None:
            raise RuntimeError("call reset() before using a tool")
        if self.done:
            return "The conversation is over."
        obs, _, terminated, truncated, info = self.env.step(action)
        reply = obs["transcript"].splitlines()[-1]
        if terminated or truncated:
            self.done, self.outcome = True, info["outcome"]
            reply += " (The conversation is over.)"
        if obs.get("state"):
            reply += f"\n{obs['state']}"
        return reply



def tool_rows(states: Sequence[DialogueState], access: str = "T") -> list[dict[str, Any]]:
    """Dataset rows for :class:`Hear2ActToolEnv`: a system + user prompt (reset appends the observation)."""
    if access not in TEXT_ACCESS:
        raise ValueError(f"access must be one of {TEXT_ACCESS}, got {access!r}")
    prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Help me choose."}]
    return [{"prompt": prompt, **s.to_columns(), "access": access} for s in states]


__all__ = ["SYSTEM", "TEXT_ACCESS", "Hear2ActToolEnv", "tool_rows"]
