"""Prompts for model policies: the paper's cards P6a-P6d as versioned templates.

Every prompt is built **only from the observation** (plus the service domain,
which the policy reads off the public scenario id): never from a scenario's
hidden fields or from ``info``. The templates live in ``templates/`` as
``<name>.<version>.txt``; :data:`PROMPT_VERSION` names the set in use and is
recorded with every trajectory.

Messages are OpenAI-style chat messages. Text content is a ``str``; under the
audio access conditions (``A``, ``A+T``) the last user message's content is a
list of parts: ``{"type": "text", "text": ...}`` and ``{"type": "audio",
"audio": float32 array at 16 kHz, "sampling_rate": 16000}``.

How each access condition is shown (appendix G.3-G.4: the same instructions
for every condition; only the channel differs):

* ``T``: system = P6a, user = the transcript.
* ``T+S``: system = P6a + the state definition (P6b), user = the transcript +
  the tag line ``CONCERN STATE: ...`` (omitted when the intervention shows no tag).
* ``A`` / ``A+T``: as ``T`` (under ``A`` the transcript shows user turns as
  ``(spoken)``), with the current user turn's audio attached.
* ``T+S_hat``: user = P6d (transcript + the audio-inferred state sentence);
  the first stage (P6c, :func:`build_infer_messages`) is the env's perceiver.
* ``T+affect``: as ``T`` plus the affect label line.

Which of these a condition gets is read from its row of
:data:`hear2act_env.access.ACCESS` (``state_tag``, ``audio_in_prompt``), not
from its name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from hear2act_env.access import ACCESS, NAMES, get
from hear2act_env.protocol import strip_inferred

PROMPT_VERSION = "v1"
TEMPLATES = Path(__file__).resolve().parent / "templates"
ASSISTANTS = {"spoken": "p6a_spoken", "text": "p6a_text"}  # text assistants also have CLARIFY (G.3)
ACCESS_CONDITIONS = NAMES  # the table's names, in its order (kept for callers of this name)
AUDIO_ACCESS = frozenset(a.name for a in ACCESS.values() if a.audio_in_prompt)
SAMPLING_RATE = 16_000
_SCENARIO_NUMBER = re.compile(r"-\d+$")


@cache
def template(name: str, version: str = PROMPT_VERSION) -> str:
    """The text of template ``name`` (e.g. ``"p6a_spoken"``) at ``version``."""
    path = TEMPLATES / f"{name}.{version}.txt"
    if not path.is_file():
        known = sorted(p.name for p in TEMPLATES.glob("*.txt"))
        raise ValueError(f"no prompt template {name!r} at version {version!r}; have {known}")
    return path.read_text(encoding="utf-8").rstrip("\n")


def domain_from_scenario_id(scenario_id: str) -> str:
    """``"budget-airline-tickets-03"`` -> ``"budget airline tickets"`` (the public service name)."""
    stem = _SCENARIO_NUMBER.sub("", scenario_id.strip())
    return stem.replace("-", " ").replace("_", " ").strip() or "a consumer service"


def system_prompt(obs: Mapping[str, Any], access: str, *, assistant: str = "spoken", domain: str = "",
                  reasoning: bool = False) -> str:
    """P6a (spoken or text variant), plus the state definition under the true-tag condition (``T+S``)."""
    if assistant not in ASSISTANTS:
        raise ValueError(f"assistant must be one of {sorted(ASSISTANTS)}, got {assistant!r}")
    text = template(ASSISTANTS[assistant]).format(
        domain=domain or "a consumer service", options_text=_field(obs, "options")
    )
    condition = ACCESS.get(access)
    if condition is not None and condition.state_tag == "true":
        text += "\n" + template("p6b_state")
    if reasoning:
        text += "\n" + template("reasoning")
    return text


def user_prompt(obs: Mapping[str, Any], access: str) -> str:
    """The decision input: transcript plus the condition's channel (P6b tag, P6d, affect, audio note)."""
    transcript = _field(obs, "transcript")
    condition = ACCESS.get(access)
    tag = condition.state_tag if condition is not None else "none"
    if tag == "inferred":
        inferred = strip_inferred(_field(obs, condition.channel))
        return template("p6d_twostage").format(transcript=transcript, inferred_state=inferred)
    channels = []
    if tag == "true" and (state := _field(obs, condition.channel)):  # empty under the "none" intervention: no tag
        channels.append(template("p6b_tag").format(state=state))
    if tag == "affect":
        channels.append(template("affect_tag").format(affect=_field(obs, condition.channel)))
    if condition is not None and condition.audio_in_prompt:
        channels.append(template("audio_note"))
    block = "".join(f"\n{c}\n" for c in channels)
    return template("decision_input").format(transcript=transcript, channels=block)


def build_messages(obs: Mapping[str, Any], access: str, *, assistant: str = "spoken", domain: str = "",
                   reasoning: bool = False) -> list[dict[str, Any]]:
    """Chat messages for one decision, built only from the observation.

    ``domain`` fills P6a's ``{domain}`` slot (see :func:`domain_from_scenario_id`);
    ``reasoning`` asks for CESAR's ``<think>...</think><answer>...</answer>`` format.
    """
    condition = get(access)  # ValueError naming the choices
    system = system_prompt(obs, access, assistant=assistant, domain=domain, reasoning=reasoning)
    user = user_prompt(obs, access)
    content: str | list[dict[str, Any]] = user
    if condition.audio_in_prompt:
        content = [{"type": "text", "text": user}, audio_part(_audio(obs))]
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def build_infer_messages(context: str, audio: Any, sampling_rate: int = SAMPLING_RATE) -> list[dict[str, Any]]:
    """P6c, the first call of ``T+S_hat``: the current user audio in its dialogue context."""
    text = template("p6c_infer").format(context=context)
    return [{"role": "user", "content": [{"type": "text", "text": text}, audio_part(audio, sampling_rate)]}]


def audio_part(audio: Any, sampling_rate: int = SAMPLING_RATE) -> dict[str, Any]:
    return {"type": "audio", "audio": np.asarray(audio, dtype=np.float32), "sampling_rate": int(sampling_rate)}


def _field(obs: Mapping[str, Any], key: str) -> str:
    if key not in obs:
        raise ValueError(f"observation has no {key!r} field (keys: {sorted(obs)}); wrong access condition?")
    value = obs[key]
    if not isinstance(value, str):
        raise ValueError(f"observation field {key!r} must be text, got {type(value).__name__}")
    return value


def _audio(obs: Mapping[str, Any]) -> Any:
    if "audio" not in obs:
        raise ValueError(f"observation has no 'audio' field (keys: {sorted(obs)}); the access needs audio")
    return obs["audio"]


__all__ = [
    "ACCESS_CONDITIONS",
    "AUDIO_ACCESS",
    "PROMPT_VERSION",
    "build_infer_messages",
    "build_messages",
    "domain_from_scenario_id",
    "system_prompt",
    "template",
    "user_prompt",
]
