"""Name -> "module:Class" registries, resolved on use so heavy modules load only when asked for."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def resolve(registry: Mapping[str, str], name: str, kind: str) -> Any:
    """The class registered as ``name``; a clear ValueError listing the choices otherwise."""
    try:
        module, attr = registry[name].split(":")
    except KeyError:
        raise ValueError(f"unknown {kind} {name!r}; choose from {sorted(registry)}") from None
    return getattr(importlib.import_module(module), attr)
