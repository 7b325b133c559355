"""The matcher registry: a matcher name (the env's ``matcher=`` argument) -> its factory.

``"learned"`` (:mod:`.router`, the default: a linear model over words and the
lexical matcher's evidence, fitted on independently written questions),
``"lexical"`` (:mod:`.matching` alone) and ``"semantic"`` (:mod:`.semantic`:
lexical first, then a sentence encoder for near misses;
``pip install "hear2act[semantic]"``), plus the ``"hear2act.matchers"`` entry
points. It sits above the matchers it names, so none of them imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint

from ..plugins import PluginError, PluginRegistry, describe, load_entry_point
from .matching import Matcher, match_question

__all__ = ["DEFAULT_MATCHER", "MATCHERS", "Matcher", "default_matcher", "resolve_matcher"]


def _semantic() -> Matcher:
    from .semantic import SemanticMatcher  # torch + transformers: imported only when asked for

    return SemanticMatcher()


def _learned() -> Matcher:
    from .router import route  # loads the weights: imported on first use

    return route


def _plugin_matcher(ep: EntryPoint) -> Callable[[], Matcher]:
    """A "hear2act.matchers" entry point: a matcher function, or a class whose no-argument instance is one."""

    def make() -> Matcher:
        obj = load_entry_point(ep, "matcher")
        matcher = obj() if isinstance(obj, type) else obj
        if not callable(matcher):
            raise PluginError(f"matcher plugin {ep.name!r}: entry point {describe(ep)} gave {matcher!r}, "
                              "not a callable (scenario, question) -> Target | None")
        return matcher

    return make


# name -> factory of the matcher; plus the "hear2act.matchers" entry points (hear2act_env.plugins).
MATCHERS: PluginRegistry[Callable[[], Matcher]] = PluginRegistry(
    "matcher", {"learned": _learned, "lexical": lambda: match_question, "semantic": _semantic}, _plugin_matcher)
DEFAULT_MATCHER = "learned"


def default_matcher() -> Matcher:
    """The matcher envs and the user engine use unless told otherwise (:data:`DEFAULT_MATCHER`)."""
    return MATCHERS[DEFAULT_MATCHER]()


def resolve_matcher(matcher: str | Matcher) -> Matcher:
    """A matcher from its registered name, or a callable ``(scenario, question) -> Target | None``."""
    if callable(matcher):
        return matcher
    if isinstance(matcher, str) and matcher in MATCHERS:
        return MATCHERS[matcher]()
    raise ValueError(f"matcher must be one of {tuple(MATCHERS)} or a callable, got {matcher!r}")
