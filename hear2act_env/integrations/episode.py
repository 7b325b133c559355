"""What the integrations share: building the env, the P6 prompt of a decision, reading a reply.

One decision is prompted exactly as :class:`hear2act.agents.llm.policy.ModelPolicy`
prompts it (:func:`hear2act.agents.llm.policy.decision_messages`: the observation and
the public scenario id only) and a reply is read exactly as that policy reads
it (cut at the end of the action line, or at ``</answer>`` with reasoning,
then the answer part), so an episode played through an integration is the
episode ``hear2act rollout`` plays with the same replies.
"""

from __future__ import annotations

from typing import Any

from hear2act_env import REALIZATION_ENV_IDS
from hear2act_env.access import names

ENV_IDS = REALIZATION_ENV_IDS  # realization -> env id
# the prompt is text (the conditions with audio in the prompt attach audio arrays)
TEXT_ACCESS = names(lambda a: not a.audio_in_prompt)


def env_id(realization: str) -> str:
    """``"prosody"`` -> ``"Hear2Act-Prosody-v5"``; a clear error naming the choices otherwise."""
    if realization not in ENV_IDS:
        raise ValueError(f"realization must be one of {tuple(ENV_IDS)}, got {realization!r}")
    return ENV_IDS[realization]


def check_access(access: str, allowed: tuple[str, ...] = TEXT_ACCESS) -> str:
    if access not in allowed:
        raise ValueError(f"access must be one of {allowed} (text prompts), got {access!r}")
    return access


def make_env(realization: str, access: str, **kwargs: Any) -> Any:
    """``gymnasium.make`` of the realization's id with ``access`` and any env argument."""
    import gymnasium as gym

    import hear2act_env  # noqa: F401  (registers the ids)

    return gym.make(env_id(realization), access=access, **kwargs)


def decision_messages(observation: dict[str, Any], scenario_id: str, access: str, *, turn: int = 0,
                      assistant: str = "spoken", reasoning: bool = False) -> list[dict[str, Any]]:
    """The P6-family chat messages (system, user) of one pending decision."""
    from hear2act.agents.base import PolicyInput
    from hear2act.agents.llm.policy import decision_messages as p6

    item = PolicyInput(observation=observation, info_reset={"scenario_id": scenario_id}, episode_seed=0,
                       turn=turn, key="")
    return p6(item, access, assistant=assistant, reasoning=reasoning)


def read_reply(text: str, *, reasoning: bool = False) -> str:
    """The action a model reply stands for: cut where ModelPolicy cuts it, then its answer part."""
    from hear2act.agents.llm.reasoning import split_reasoning
    from hear2act.agents.llm.stopping import truncate

    return split_reasoning(truncate(text, "answer" if reasoning else "action-line"))[1]


__all__ = ["ENV_IDS", "TEXT_ACCESS", "check_access", "decision_messages", "env_id", "make_env", "read_reply"]
