"""hear2act_env: the Hear2Act benchmark as a Gymnasium environment.

``import hear2act_env`` registers ``Hear2Act-Prosody-v0`` and
``Hear2Act-Explicit-v0``; the scenario bank is :func:`load_scenarios`.
"""

from __future__ import annotations

from .scenarios import (
    Scenario,
    ScenarioError,
    load_scenarios,
    validate,
)

__version__ = "0.1.0"

__all__ = ["Scenario", "ScenarioError", "__version__", "load_scenarios", "validate"]
