"""The characters an observation may contain, and the sanitizer that keeps agent text inside them.

The env's ``Text`` spaces declare one charset: printable ASCII, every phrase of
the observation grammar (:data:`hear2act_env.protocol.GRAMMAR`), the bundled
bank's texts and the texts of the scenarios the env plays. An assistant turn
enters the transcript through :func:`sanitize` (whitespace collapsed, cut to
a length, '?' for characters outside the charset), so every observation lies
in the observation space (Gymnasium's ``check_env``).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from functools import lru_cache

from . import protocol
from .scenarios import BANK_FILE, Scenario, load_scenarios


def _chars_of(s: Scenario) -> frozenset[str]:
    """Every character one scenario's texts can put into an observation."""
    chars = set(s.request + "".join(o.description for o in s.options))
    chars.update("".join(r.statement for r in s.requirements))
    chars.update("".join(n.statement + n.hint for n in s.needs))
    chars.update("".join(a.worse + a.label for a in s.attributes))
    return frozenset(chars)


def _scenario_chars(scenarios: Sequence[Scenario]) -> set[str]:
    # Kept per scenario object (Scenario.derived), so building another env on the same scenarios costs a union.
    return set().union(*(s.derived("chars", _chars_of) for s in scenarios))


@lru_cache(maxsize=1)
def _base_charset() -> frozenset[str]:
    """Printable ASCII, the observation grammar's phrases and the bundled bank's texts."""
    chars = set(string.printable) | _scenario_chars(load_scenarios(BANK_FILE))  # never a user bank
    chars.update("".join(protocol.GRAMMAR.phrases()))
    return frozenset(chars - {"\x0b", "\x0c"})


def charset(scenarios: Sequence[Scenario]) -> frozenset[str]:
    """Every character an observation of an env on ``scenarios`` may contain (agent text outside it becomes '?')."""
    base = _base_charset()
    extra = _scenario_chars(scenarios) - base
    return base | extra if extra else base


def sanitize(text: str, allowed: frozenset[str], max_chars: int) -> str:
    """Whitespace collapsed, at most ``max_chars`` characters, '?' for characters outside ``allowed``.

    Only a bounded prefix is split (linear in the input, cheap for a 1 MB string), and
    plain printable ASCII, which the charset always holds, skips the per-character check.

    >>> sanitize("  Ask \\n me\\tnow \\u2603 ", frozenset(string.printable), 12)
    'Ask me now ?'
    """
    words = text.split(maxsplit=max_chars)
    if len(words) > max_chars:  # the unsplit remainder lies past the kept prefix
        words.pop()
    text = " ".join(words)[:max_chars]
    if text.isascii() and text.isprintable():
        return text
    bad = set(text).difference(allowed)
    return text.translate(dict.fromkeys(map(ord, bad), "?")) if bad else text


__all__ = ["charset", "sanitize"]
