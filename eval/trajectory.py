"""One rollout's record: :class:`Trajectory`, what the engine returns and every trajectory file holds.

A trajectory is written as one JSON object (``rollout --out`` lines, the ``trajectory`` field of a run
directory's rows) with exactly these keys, in this order (schema ``hear2act-trajectory/1``, unchanged from
the dicts the engine wrote before this class)::

    key, env_id, scenario_id, seed, access, intervention, agent, prompt_version,
    failed (reason or None), outcome (env's info["outcome"] or None),
    opening: {user_words, state, delivery, audio_seed} or None,
    turns: [{turn, prompt_hash, raw, reasoning, action, parsed_kind, option, parse_error, parse_note,
             user_words, state, delivery, audio_seed, reward[, prompt][, no_text][, error]}],
    parse_failures, n_tokens

It reads like that dict too (``t["outcome"]``, ``t.get("failed")``, ``dict(t)``, ``t == row``), so code
written against the dicts keeps working; :meth:`Trajectory.to_dict` is the JSON object and
:meth:`Trajectory.from_dict` reads one back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

SCHEMA = "hear2act-trajectory/1"


@dataclass(eq=False)
class Trajectory(Mapping[str, Any]):
    """One episode as played: identity, the opening, every turn record, the outcome (or why it failed)."""

    key: str
    env_id: str
    scenario_id: str
    seed: int
    access: str
    intervention: str
    agent: str
    prompt_version: str = ""  # model policies: the template set
    failed: str | None = None
    outcome: dict[str, Any] | None = None
    opening: dict[str, Any] | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)
    parse_failures: int = 0
    n_tokens: int = 0

    # -- the dict view ------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        if name not in _KEYS:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    def __repr__(self) -> str:
        return (f"Trajectory(key={self.key!r}, scenario_id={self.scenario_id!r}, seed={self.seed}, "
                f"failed={self.failed!r}, turns={len(self.turns)})")

    @property
    def scored(self) -> bool:
        """Whether the episode counts in the metrics: it ended (not failed) with an outcome."""
        return self.failed is None and self.outcome is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this trajectory (the schema in the module docstring)."""
        return {k: getattr(self, k) for k in _KEYS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        """A trajectory from its JSON object; a missing or unknown key is a ValueError naming it."""
        missing = [k for k in _KEYS if k not in data]
        extra = sorted(set(data) - set(_KEYS))
        if missing or extra:
            raise ValueError(f"not a {SCHEMA} trajectory: missing {missing}, unknown {extra}")
        return cls(**{k: data[k] for k in _KEYS})


_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Trajectory))
