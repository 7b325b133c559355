"""Entry-point plugins: a user's own package adds renderers, backends, matchers and reward terms by name.

Declare them in the package's ``pyproject.toml`` (no installed file is edited)::

    [project.entry-points."hear2act.renderers"]
    tone = "mypackage.tone:ToneRenderer"        # renderer="tone", [renderers] in a grid

    [project.entry-points."hear2act.backends"]
    mine = "mypackage.backend:MyBackend"        # agent spec "mine:TARGET"

    [project.entry-points."hear2act.matchers"]
    keywords = "mypackage.match:match"          # matcher="keywords"

    [project.entry-points."hear2act.rewards"]
    brevity = "mypackage.rewards:brevity"       # --rewards accuracy,brevity

Each registry (``RENDERERS``, ``hear2act.agents.llm.BACKENDS``, ``MATCHERS``,
``hear2act.training.rewards.REWARDS``) is a :class:`PluginRegistry`: the built-in
entries, plus the group's entry points, looked up the first time a name is
not built in (or the registry is listed). Nothing is imported until a plugin
is used; a plugin that fails to import raises :class:`PluginError` naming the
entry point and its distribution. A built-in name always wins over a plugin
of the same name (a warning names the plugin that was ignored).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

V = TypeVar("V")

GROUPS = {
    "renderer": "hear2act.renderers",
    "backend": "hear2act.backends",
    "matcher": "hear2act.matchers",
    "reward": "hear2act.rewards",
}


class PluginError(ImportError):
    """A plugin's entry point could not be loaded (the message names it and its package)."""


def describe(ep: EntryPoint) -> str:
    """``'tone = myplug.tone:ToneRenderer' (group hear2act.renderers, package myplug 0.1)``."""
    dist = getattr(ep, "dist", None)
    package = f", package {dist.name} {dist.version}" if dist is not None else ""
    return f"'{ep.name} = {ep.value}' (group {ep.group}{package})"


def load_entry_point(ep: EntryPoint, kind: str) -> Any:
    """``ep.load()``, or a :class:`PluginError` naming the entry point when anything goes wrong."""
    try:
        return ep.load()
    except Exception as exc:  # a plugin's import may fail in any way; say which plugin it was
        raise PluginError(f"{kind} plugin {ep.name!r}: entry point {describe(ep)} failed to load: "
                          f"{type(exc).__name__}: {exc}") from exc


class PluginRegistry(MutableMapping[str, V]):
    """A name -> value registry: built-in entries plus the entry points of ``group``, found lazily.

    ``convert(ep)`` turns an entry point into the registry's value the first
    time its name is looked up (for "module:Class" registries, ``ep.value``:
    nothing is imported until the class is resolved).
    """

    def __init__(self, kind: str, builtin: Mapping[str, V], convert: Callable[[EntryPoint], V]) -> None:
        self.kind = kind
        self.group = GROUPS[kind]
        self._data: dict[str, V] = dict(builtin)
        self._convert = convert
        self._eps: dict[str, EntryPoint] | None = None  # None: not scanned yet

    def _plugins(self) -> dict[str, EntryPoint]:
        if self._eps is None:
            found: dict[str, EntryPoint] = {}
            for ep in entry_points(group=self.group):
                if ep.name in self._data:
                    warnings.warn(f"{self.kind} plugin {describe(ep)} ignored: {ep.name!r} is built in",
                                  stacklevel=3)
                elif ep.name in found and found[ep.name].value != ep.value:
                    warnings.warn(f"{self.kind} plugin {describe(ep)} ignored: {ep.name!r} is already "
                                  f"{describe(found[ep.name])}", stacklevel=3)
                else:
                    found.setdefault(ep.name, ep)
            self._eps = found
        return self._eps

    def rescan(self) -> None:
        """Look the entry points up again (after installing a package into the running process)."""
        self._eps = None

    def entry_point(self, name: str) -> EntryPoint | None:
        """The entry point ``name`` comes from, or ``None`` for a built-in or directly set entry."""
        if name in self._data and (self._eps is None or name not in self._eps):
            return None
        return self._plugins().get(name)

    def __getitem__(self, name: str) -> V:
        if name in self._data:
            return self._data[name]
        ep = self._plugins().get(name)
        if ep is None:
            raise KeyError(name)
        value = self._data[name] = self._convert(ep)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._data or (isinstance(name, str) and name in self._plugins())

    def __iter__(self) -> Iterator[str]:
        plugins = self._plugins()
        yield from self._data
        yield from (n for n in plugins if n not in self._data)

    def __len__(self) -> int:
        return len(self._data) + sum(n not in self._data for n in self._plugins())

    def __setitem__(self, name: str, value: V) -> None:
        self._data[name] = value
        if self._eps is not None:
            self._eps.pop(name, None)  # set by hand: no longer the plugin's

    def __delitem__(self, name: str) -> None:
        found = self._data.pop(name, None) is not None
        if self._plugins().pop(name, None) is None and not found:
            raise KeyError(name)

    def __repr__(self) -> str:
        return f"PluginRegistry({self.group!r}, {sorted(self)})"


def spec_value(ep: EntryPoint) -> str:
    """For "module:Class" registries: the entry point's own ``module:attr`` string."""
    return ep.value
