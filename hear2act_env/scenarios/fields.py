"""Strictly typed reading of scenario JSON: no silent coercion.

``keywords: "train"`` must not become ``('t','r','a','i','n')``, ``level: 3.9``
must not become 3, ``"1"`` must not become 1, ``NaN`` must not pass as a
price. :class:`Fields` wraps one JSON object and reads each field with its
exact type, raising a :class:`ScenarioError` that names the scenario and the
field's full path (``needs[0].level``) on the first mismatch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import ScenarioError

_MISSING = object()


def is_number(value: object) -> bool:
    """A finite int or float (``bool`` is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def reject_constant(name: str) -> float:
    """``json.loads(parse_constant=...)``: NaN and +/-Infinity are not valid scenario numbers."""
    raise ValueError(f"{name} is not allowed (numbers must be finite)")


class Fields:
    """Typed access to one JSON object of a scenario."""

    def __init__(self, data: Any, where: str, path: str = "") -> None:
        self.where = where
        self.path = path
        if not isinstance(data, Mapping):
            raise self.fail("", f"must be a JSON object, got {_kind(data)}")
        self.data = data

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, rule: str) -> ScenarioError:
        return ScenarioError(self.where, self._at(key) if key else (self.path or "<root>"), rule)

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise self.fail(key, "missing")
        return default

    def has(self, key: str) -> bool:
        return key in self.data

    def text(self, key: str, default: Any = _MISSING) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_kind(value)}")
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.raw(key, None)
        return None if value is None else self.text(key)

    def integer(self, key: str, low: int | None = None, high: int | None = None, default: Any = _MISSING) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {_kind(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(key, f"must be in {low}..{high}, got {value}")
        return value

    def number(self, key: str) -> int | float:
        value = self.raw(key)
        if not is_number(value):
            raise self.fail(key, f"must be a finite number, got {_kind(value)}")
        return value

    def texts(self, key: str, default: Any = _MISSING) -> tuple[str, ...]:
        value = self.raw(key, default)
        if not isinstance(value, list | tuple):
            raise self.fail(key, f"must be a list of strings, got {_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be a string, got {_kind(item)}")
        return tuple(value)

    def objects(self, key: str) -> list[Fields]:
        value = self.raw(key)
        if not isinstance(value, list | tuple):
            raise self.fail(key, f"must be a list of objects, got {_kind(value)}")
        return [Fields(item, self.where, f"{self._at(key)}[{i}]") for i, item in enumerate(value)]

    def object(self, key: str) -> Fields:
        return Fields(self.raw(key), self.where, self._at(key))

    def values(self, key: str) -> dict[str, str | int | float]:
        """An option's attribute values: each a string or a finite number."""
        sub = self.object(key)
        out: dict[str, str | int | float] = {}
        for name, value in sub.data.items():
            if not isinstance(name, str):
                raise sub.fail(str(name), "attribute names must be strings")
            if not (isinstance(value, str) or is_number(value)):
                raise sub.fail(name, f"must be a string or a finite number, got {_kind(value)}")
            out[name] = value
        return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r}"
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    kind = names.get(type(value), type(value).__name__)
    shown = repr(value) if not isinstance(value, dict | list) else ""
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}".strip() if value is not None else "null"
