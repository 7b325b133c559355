"""Strictly typed reading of scenario JSON: no silent coercion.

``keywords: "train"`` must not become ``('t','r','a','i','n')``, ``level: 3.9``
must not become 3, ``"1"`` must not become 1, ``NaN`` must not pass as a
price. :class:`Fields` wraps one JSON object and reads each field with its
exact type, raising a :class:`ScenarioError` that names the scenario and the
field's full path (``needs[0].level``) on the first mismatch.

Sizes are capped before any work is done on a value: a scenario line is at
most ``MAX_LINE_BYTES`` (the bank's longest is about 11 KB), a text field at
most ``MAX_TEXT_CHARS`` characters, a number at most ``MAX_MAGNITUDE`` in
magnitude (a 400-digit integer is an error, not an OverflowError), JSON at
most ``MAX_DEPTH`` levels deep; text must be valid Unicode (a lone surrogate
such as ``"\\ud800"``, legal in JSON, is refused). An unknown field is an
error listing the known ones (:meth:`Fields.only`), so a misspelled ``hint``
cannot just disappear. :func:`parse_json` reads one line (bytes or str) with
all of these caps, raising ``ValueError`` with a one-line reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ScenarioError

_MISSING = object()
MAX_LINE_BYTES = 1_000_000
MAX_TEXT_CHARS = 4_000
MAX_MAGNITUDE = 10**15
MAX_DEPTH = 64
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def is_number(value: object) -> bool:
    """A finite int or float of magnitude at most ``MAX_MAGNITUDE`` (``bool`` is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE  # never converted: a huge int cannot overflow
    return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE


def parse_json(line: str | bytes) -> Any:
    """One JSON value with every cap applied first; ``ValueError`` (one line) on anything else."""
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"line is {len(line):,} {'bytes' if isinstance(line, bytes) else 'characters'}; "
                         f"a scenario line is at most {MAX_LINE_BYTES:,}")
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"not UTF-8 text (byte {e.object[e.start]:#04x} at column {e.start + 1}); "
                             "a scenario file is UTF-8 JSON lines") from None
    if _max_depth(line) > MAX_DEPTH:
        raise ValueError(f"JSON nested more than {MAX_DEPTH} levels deep (a scenario needs 4)")
    try:
        return json.loads(line, parse_constant=reject_constant)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"JSON nested too deeply; at most {MAX_DEPTH}") from None


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]')


def _max_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings, counted up to ``MAX_DEPTH + 1`` (linear; strings
    are skipped whole by one regex)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif c in "]}":
            depth -= 1
    return deepest


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

    def only(self, known: Iterable[str]) -> None:
        """Refuse any field not in ``known``, naming the known ones (a misspelling never just disappears)."""
        known = tuple(known)
        for key in self.data:
            if key not in known:
                shown = key if isinstance(key, str) and len(key) <= 40 else f"{str(key)[:37]}..."
                raise self.fail(ascii(shown)[1:-1], f"unknown field; known fields: {', '.join(known)}")

    def text(self, key: str, default: Any = _MISSING) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_kind(value)}")
        return check_text(value, lambda rule: self.fail(key, rule))

    def optional_text(self, key: str) -> str | None:
        value = self.raw(key, None)
        return None if value is None else self.text(key)

    def integer(self, key: str, low: int | None = None, high: int | None = None, default: Any = _MISSING) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
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
            check_text(item, lambda rule, i=i: self.fail(f"{key}[{i}]", rule))
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
            if isinstance(value, str):
                check_text(value, lambda rule, name=name: sub.fail(name, rule))
            out[name] = value
        return out


def check_text(value: str, fail: Any) -> str:
    """``value`` if it is short enough and valid Unicode, else raises ``fail(rule)``."""
    if len(value) > MAX_TEXT_CHARS:
        raise fail(f"text of {len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
    if not value.isascii() and (m := _SURROGATE.search(value)) is not None:
        raise fail(f"holds a lone surrogate {m.group()!a} at character {m.start() + 1}; text must be "
                   "valid Unicode")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r}"
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    kind = names.get(type(value), type(value).__name__)
    if isinstance(value, int) and not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        return f"{kind} of {len(str(abs(value))):,} digits (at most {MAX_MAGNITUDE:.0e} in magnitude)"
    shown = repr(value) if not isinstance(value, dict | list) else ""
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}".strip() if value is not None else "null"
