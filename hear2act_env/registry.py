"""Name -> "module:Class" registries, resolved on use so heavy modules load only when asked for.

A registry may be a :class:`~hear2act_env.plugins.PluginRegistry`, whose names
also come from a package's entry points; those resolve through the entry point.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .plugins import PluginRegistry, load_entry_point


def resolve(registry: Mapping[str, str], name: str, kind: str) -> Any:
    """The class registered as ``name``; a clear ValueError listing the choices otherwise."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; choose from {sorted(registry)}")
    ep = registry.entry_point(name) if isinstance(registry, PluginRegistry) else None
    if ep is not None:
        return load_entry_point(ep, kind)
    module, attr = registry[name].split(":")
    return getattr(importlib.import_module(module), attr)
