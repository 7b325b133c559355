"""The access conditions: one frozen table that every layer asks.

An *access condition* says what the agent observes of the user beyond the
options text: the transcript alone (``T``), plus the true state tag
(``T+S``), the user's audio (``A``, ``A+T``), a perceiver's reading of the
audio (``T+S_hat``) or a generic affect label (``T+affect``). The env, the
prompt builder, the training wrappers, the GRPO/PPO/SFT entry points and the
evaluation grid all read the properties of a condition from :data:`ACCESS`
instead of naming conditions in branches; a test fails when code outside
this module branches on an access name.

>>> ACCESS["T+S"].keys
('transcript', 'state')
>>> [a.name for a in CONDITIONS if a.audio_in_prompt]
['A', 'A+T']
>>> get("T+S_hat").label, get("T+S_hat").state_tag
('T+Ŝ', 'inferred')
>>> get("S")
Traceback (most recent call last):
...
ValueError: access must be one of ('T', 'T+S', 'A', 'A+T', 'T+S_hat', 'T+affect'), got 'S'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

# Observation keys filled from the user's speech (rendered audio, a perceiver's reading, an affect label).
SPEECH_KEYS = frozenset({"audio", "inferred_state", "affect"})
# Where a condition's state channel comes from.
STATE_TAGS = ("true", "inferred", "affect", "none")
GROUPS = ("direct", "state")


@dataclass(frozen=True)
class Access:
    """One access condition.

    - ``name``: the env argument (``access="T+S_hat"``), the grid and CLI spelling.
    - ``label``: the paper's label (``T+Ŝ``); ``title``: the paper's table name.
    - ``keys``: observation keys beyond ``options``, in order.
    - ``words_hidden``: user turns after the request show as :data:`hear2act_env.protocol.SPOKEN`.
    - ``audio_in_prompt``: the current user turn's audio goes into the agent's prompt (an audio LLM).
    - ``state_tag``: the source of the state channel: ``"true"`` (the env's tag, which takes the
      fidelity interventions), ``"inferred"`` (a perceiver's sentence), ``"affect"`` (an affect
      classifier's label) or ``"none"``.
    - ``group``: the paper's two groups: ``"direct"`` (the agent reads the dialogue itself:
      Table 3) or ``"state"`` (it is given a reading of the state: Table 4).
    """

    name: str
    label: str
    title: str
    keys: tuple[str, ...]
    words_hidden: bool = False
    audio_in_prompt: bool = False
    state_tag: str = "none"
    group: str = "direct"

    def __post_init__(self) -> None:
        if self.state_tag not in STATE_TAGS:
            raise ValueError(f"Access {self.name!r}: state_tag must be one of {STATE_TAGS}, got {self.state_tag!r}")
        if self.group not in GROUPS:
            raise ValueError(f"Access {self.name!r}: group must be one of {GROUPS}, got {self.group!r}")
        if self.audio_in_prompt and "audio" not in self.keys:
            raise ValueError(f"Access {self.name!r}: audio_in_prompt needs the 'audio' observation key")

    @property
    def needs_speech(self) -> bool:
        """The env renders the user's speech (the ``speech`` extra) for this condition."""
        return bool(SPEECH_KEYS & set(self.keys))

    @property
    def text_only(self) -> bool:
        """Every observation key is text (no speech is rendered)."""
        return not self.needs_speech

    @property
    def takes_intervention(self) -> bool:
        """The state-tag fidelity interventions (``state_intervention=``) apply."""
        return self.state_tag == "true"

    @property
    def acoustic_evidence(self) -> bool:
        """The agent meets acoustic evidence it could describe: the audio itself, or a perceiver's measurements."""
        return self.audio_in_prompt or self.state_tag == "inferred"

    @property
    def channel(self) -> str | None:
        """The observation key of the condition's state channel (``None`` without one)."""
        return next((k for k in self.keys if k != "transcript" and k != "audio"), None)


CONDITIONS: tuple[Access, ...] = (
    Access("T", "T", "Transcript only (T)", ("transcript",)),
    Access("T+S", "T+S", "Ground-truth state (T+S)", ("transcript", "state"), state_tag="true", group="state"),
    Access("A", "A", "Audio only (A)", ("transcript", "audio"), words_hidden=True, audio_in_prompt=True),
    Access("A+T", "A+T", "Audio + transcript (A+T)", ("transcript", "audio"), audio_in_prompt=True),
    Access("T+S_hat", "T+Ŝ", "Audio-inferred state (T+Ŝ)", ("transcript", "inferred_state"), state_tag="inferred",
           group="state"),
    Access("T+affect", "T+affect", "Generic affect", ("transcript", "affect"), state_tag="affect", group="state"),
)
ACCESS: Mapping[str, Access] = MappingProxyType({a.name: a for a in CONDITIONS})
NAMES: tuple[str, ...] = tuple(ACCESS)


def get(name: object) -> Access:
    """The condition called ``name``; a clear error naming the choices otherwise."""
    if not isinstance(name, str) or name not in ACCESS:
        raise ValueError(f"access must be one of {NAMES}, got {name!r}")
    return ACCESS[name]


def names(where: Callable[[Access], bool]) -> tuple[str, ...]:
    """The names of the conditions ``where`` holds for, in table order (``names(lambda a: a.text_only)``)."""
    return tuple(a.name for a in CONDITIONS if where(a))


def name_with(**fields: object) -> str:
    """The one condition whose fields equal ``fields`` (``name_with(state_tag="true")`` -> ``"T+S"``)."""
    found = [a.name for a in CONDITIONS if all(getattr(a, k) == v for k, v in fields.items())]
    if len(found) != 1:
        raise ValueError(f"{len(found)} access conditions have {fields}: {found}")
    return found[0]


# The plain transcript condition (the env's default) and the true-tag condition, named by property.
TRANSCRIPT = name_with(keys=("transcript",))
TRUE_STATE = name_with(state_tag="true")
# The paper's information ladder over the spoken conditions (its Table 9 steps): each step adds one thing the agent
# is given (the audio, the words with it, a perceiver's reading instead of the audio, the true state).
LADDER: tuple[str, ...] = (TRANSCRIPT, name_with(words_hidden=True),
                           name_with(audio_in_prompt=True, words_hidden=False), name_with(state_tag="inferred"),
                           TRUE_STATE)
SPOKEN_STEPS: tuple[tuple[str, str], ...] = ((LADDER[0], LADDER[1]), (LADDER[0], LADDER[2]), (LADDER[2], LADDER[3]),
                                             (LADDER[3], LADDER[4]))

__all__ = ["ACCESS", "CONDITIONS", "GROUPS", "LADDER", "NAMES", "SPEECH_KEYS", "SPOKEN_STEPS", "STATE_TAGS",
           "TRANSCRIPT", "TRUE_STATE", "Access", "get", "name_with", "names"]
