"""The env's constructor arguments, checked at ``make`` (never mid-episode).

Each check raises a one-line ``ValueError`` naming the argument and the bad
value (a bad scenario list: :class:`~hear2act_env.scenarios.ScenarioError`
naming the index). The arguments themselves are documented on
:class:`hear2act_env.env.Hear2ActEnv` (its ``## Arguments`` section).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .access import Access
from .dialogue.engine import REALIZATIONS
from .scenarios import Scenario, ScenarioError, load_scenarios, validate
from .state_tags import INTERVENTIONS


def check_arguments(*, realization: str, condition: Access, state_intervention: str, render_mode: str | None,
                    render_modes: Sequence[str], max_turns: object, turn_cost: object) -> None:
    """The scalar arguments: realization, state intervention (and whether the access takes one), render mode,
    ``max_turns`` (an integer >= 2) and ``turn_cost`` (a finite number >= 0).

    >>> from hear2act_env.access import get
    >>> check_arguments(realization="prosody", condition=get("T"), state_intervention="none", render_mode=None,
    ...                 render_modes=("ansi",), max_turns=20, turn_cost=0.0)
    Traceback (most recent call last):
    ...
    ValueError: state_intervention='none' needs an access with a state tag
    """
    if state_intervention not in INTERVENTIONS:
        raise ValueError(f"state_intervention must be one of {INTERVENTIONS}, got {state_intervention!r}")
    if state_intervention != "correct" and not condition.takes_intervention:
        raise ValueError(f"state_intervention={state_intervention!r} needs an access with a state tag")
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be one of {list(render_modes)}, got {render_mode!r}")
    if realization not in REALIZATIONS:
        raise ValueError(f"realization must be one of {REALIZATIONS}, got {realization!r}")
    if not isinstance(max_turns, numbers.Integral) or isinstance(max_turns, bool) or max_turns < 2:
        raise ValueError(f"max_turns must be an integer of at least 2, got {max_turns!r}")
    if not isinstance(turn_cost, numbers.Real) or isinstance(turn_cost, bool) \
            or not math.isfinite(turn_cost) or turn_cost < 0:
        raise ValueError(f"turn_cost must be a finite number >= 0, got {turn_cost!r}")


def scenario_list(scenarios: object) -> list[Scenario]:
    """The scenarios to play, each checked here (at ``make``), not mid-episode.

    A path is loaded (and validated) by :func:`load_scenarios`; a sequence must
    hold valid :class:`Scenario` objects with distinct ids. Anything else raises
    :class:`ScenarioError` naming the offending index.
    """
    if scenarios is None or isinstance(scenarios, str | Path):
        return load_scenarios(scenarios)
    if isinstance(scenarios, Scenario):
        scenarios = [scenarios]
    if isinstance(scenarios, Mapping | bytes) or not isinstance(scenarios, Iterable):
        raise ScenarioError("scenarios", "<argument>",
                            f"expected a JSONL path or a list of Scenario, got {type(scenarios).__name__}")
    scenarios = list(scenarios)  # any iterable of Scenario (a tuple, a generator, dict.values(), ...)
    if not scenarios:
        raise ScenarioError("scenarios", "<argument>", "the list is empty: no scenarios to play")
    seen: dict[str, int] = {}
    for i, s in enumerate(scenarios):
        if not isinstance(s, Scenario):
            hint = " (build it with Scenario.from_dict)" if isinstance(s, Mapping) else ""
            raise ScenarioError(f"scenarios[{i}]", "<item>", f"expected a Scenario, got {type(s).__name__}{hint}")
        if s.id in seen:
            raise ScenarioError(f"scenarios[{i}]", "id", f"duplicate of scenarios[{seen[s.id]}] ({s.id!r})")
        seen[s.id] = i
        try:
            validate(s)
        except ScenarioError as exc:
            raise ScenarioError(f"scenarios[{i}] ({s.id})", exc.field, exc.rule) from None
    return list(scenarios)


def check_renderer(renderer: object, voice: object, speech: bool) -> None:
    """Renderer and voice are checked at ``make``; under a speech access the renderer is built here too."""
    from .speech.renderers.base import RENDERERS

    if isinstance(renderer, str):
        if renderer not in RENDERERS:
            raise ValueError(f"unknown renderer {renderer!r}; choose from {sorted(RENDERERS)} or pass a Renderer")
    elif renderer is None or not callable(getattr(renderer, "render", None)) \
            or not all(hasattr(renderer, a) for a in ("name", "version", "sample_rate", "voices")):
        raise ValueError(f"renderer must be a registered name {sorted(RENDERERS)} or a Renderer object "
                         f"(name, version, sample_rate, voices, render), got {renderer!r}")
    if voice is not None and not isinstance(voice, str):
        raise ValueError(f"voice must be a voice name or None, got {voice!r}")
    if voice is None or not (speech or not isinstance(renderer, str)):
        return
    built = renderer
    if isinstance(renderer, str):
        from .speech.renderers import make_renderer

        built = make_renderer(renderer)
    voices = tuple(getattr(built, "voices", ()))
    if voice not in voices:
        raise ValueError(f"unknown voice {voice!r} for renderer {getattr(built, 'name', renderer)!r}; "
                         f"choose from {voices}")


__all__ = ["check_arguments", "check_renderer", "scenario_list"]
