"""The scenario data model: immutable, hashable, JSON round-trippable.

A :class:`Scenario` is pure data plus derived views. Need satisfaction, request
fit and the roles (gold, safe, opening) are *computed* from option attribute
values and the need/requirement predicates, never stored by hand: a data
author cannot make an option "gold" by labelling it so.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from .errors import ScenarioError
from .fields import Fields, is_number

_T = TypeVar("_T")

KINDS = ("need", "visible", "distractor")
# Numeric bounds, as the request words them (PROTOCOL.md: "under $X" is < X, "up to $X" is <= X).
OPS = ("<", "<=", ">", ">=")
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
LEVELS = (1, 2, 3)
Value = str | float


class FrozenMap(Mapping[str, Value]):
    """A read-only, hashable mapping (attribute name -> value), insertion ordered."""

    __slots__ = ("_dict", "_items")

    def __init__(self, items: Mapping[str, Value] | Any = ()) -> None:
        pairs = tuple(dict(items).items())
        object.__setattr__(self, "_items", pairs)
        object.__setattr__(self, "_dict", dict(pairs))

    def __getitem__(self, key: str) -> Value:
        return self._dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({dict(self._items)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (dict(self._items),))


@dataclass(frozen=True)
class Attribute:
    """One attribute options are described by.

    ``need`` and ``distractor`` attributes are categorical: ``values`` is the
    vocabulary, each value a phrase that reads well inside a product record
    ("nonstop", "instant push alerts"). ``visible`` attributes are what the
    opening request talks about: numeric (price, rating, ...; ``values`` is
    empty) or categorical (a vocabulary, e.g. a privacy policy the request
    names; then ``better``/``worse`` are unused).
    """

    name: str
    label: str
    kind: str
    keywords: tuple[str, ...]
    values: tuple[str, ...] = ()
    better: str | None = None  # visible only: "lower" or "higher"
    prefix: str = ""  # visible only: text before the number ("$")
    suffix: str = ""  # visible only: text after the number ("/month")
    decimals: int = 0
    worse: str = ""  # visible only: how the user says an option is worse here

    @property
    def numeric(self) -> bool:
        """A numeric visible attribute (price, rating, ...)."""
        return self.kind == "visible" and not self.values

    def format(self, value: Value) -> str:
        """The value as it appears in an option description."""
        if not self.numeric:
            return str(value)
        number = f"{float(value):,.{self.decimals}f}"
        return f"{self.prefix}{number}{self.suffix}"

    def is_better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b`` on this attribute."""
        return a < b if self.better == "lower" else a > b

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "kind": self.kind,
            "keywords": list(self.keywords),
        }
        if self.numeric:
            d.update(
                better=self.better,
                prefix=self.prefix,
                suffix=self.suffix,
                decimals=self.decimals,
                worse=self.worse,
            )
        else:
            d["values"] = list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | Fields) -> Attribute:
        f = d if isinstance(d, Fields) else Fields(d, "<attribute>")
        f.only(("name", "label", "kind", "keywords", "values", "better", "prefix", "suffix", "decimals", "worse"))
        return cls(
            name=f.text("name"),
            label=f.text("label"),
            kind=f.text("kind"),
            keywords=f.texts("keywords"),
            values=f.texts("values", ()),
            better=f.optional_text("better"),
            prefix=f.text("prefix", ""),
            suffix=f.text("suffix", ""),
            decimals=f.integer("decimals", 0, 6, default=0),
            worse=f.text("worse", ""),
        )


@dataclass(frozen=True)
class Requirement:
    """A visible requirement stated in the opening request.

    Numeric: a bound on a numeric visible attribute (``price <= 200``).
    Categorical (``op == "in"``): a categorical visible attribute must take one
    of ``values`` ("a system that respects guests' privacy"). Build one with
    :meth:`one_of`.
    """

    attribute: str
    op: str  # "<", "<=", ">", ">=" (numeric) or "in" (categorical)
    value: float | None
    statement: str  # how the user says it when an option breaks it
    values: tuple[str, ...] = ()  # categorical only: the values that meet it

    @classmethod
    def one_of(cls, attribute: str, values: tuple[str, ...], statement: str) -> Requirement:
        return cls(attribute, "in", None, statement, tuple(values))

    @property
    def categorical(self) -> bool:
        return self.op == "in"

    def holds(self, value: Value) -> bool:
        if self.categorical:
            return value in self.values
        if not is_number(value) or self.value is None:
            return False
        return _COMPARE[self.op](value, self.value)

    def to_dict(self) -> dict[str, Any]:
        if self.categorical:
            return {"attribute": self.attribute, "in": list(self.values), "statement": self.statement}
        return {
            "attribute": self.attribute,
            "op": self.op,
            "value": self.value,
            "statement": self.statement,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | Fields) -> Requirement:
        f = d if isinstance(d, Fields) else Fields(d, "<requirement>")
        f.only(("attribute", "op", "value", "in", "statement"))
        if f.has("in"):
            if f.has("op") or f.has("value"):
                raise f.fail("in", "a requirement is numeric (op, value) or categorical (in), not both")
            return cls.one_of(f.text("attribute"), f.texts("in"), f.text("statement"))
        return cls(f.text("attribute"), f.text("op"), float(f.number("value")), f.text("statement"))


@dataclass(frozen=True)
class Need:
    """A hidden need: a predicate over one categorical attribute."""

    level: int  # 1 hard constraint, 2 strong preference, 3 moderate preference
    attribute: str
    accept: tuple[str, ...]  # attribute values that satisfy the need
    statement: str  # the need said plainly, first person
    keywords: tuple[str, ...]  # words that make a question targeted at it
    hint: str = ""  # L1 only: the directional hint CLARIFY returns

    def holds(self, value: Value) -> bool:
        return value in self.accept

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "level": self.level,
            "attribute": self.attribute,
            "accept": list(self.accept),
            "statement": self.statement,
            "keywords": list(self.keywords),
        }
        if self.level == 1:
            d["hint"] = self.hint
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | Fields) -> Need:
        f = d if isinstance(d, Fields) else Fields(d, "<need>")
        f.only(("level", "attribute", "accept", "statement", "keywords", "hint"))
        return cls(
            level=f.integer("level", 1, 3),
            attribute=f.text("attribute"),
            accept=f.texts("accept"),
            statement=f.text("statement"),
            keywords=f.texts("keywords"),
            hint=f.text("hint", ""),
        )


@dataclass(frozen=True)
class Persona:
    """Who the user is and the situation behind the request."""

    situation: str
    urgency: str  # low / medium / high
    budget: str  # tight / moderate / flexible
    expertise: str  # novice / intermediate / expert

    def to_dict(self) -> dict[str, Any]:
        return {
            "situation": self.situation,
            "urgency": self.urgency,
            "budget": self.budget,
            "expertise": self.expertise,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | Fields) -> Persona:
        f = d if isinstance(d, Fields) else Fields(d, "<persona>")
        f.only(("situation", "urgency", "budget", "expertise"))
        return cls(f.text("situation"), f.text("urgency"), f.text("budget"), f.text("expertise"))


@dataclass(frozen=True)
class Option:
    """One candidate, as shown to the assistant (numbered 1..11).

    ``satisfies`` and ``meets_request`` are bound by the owning
    :class:`Scenario` from the values; they are not part of equality.
    """

    number: int
    name: str
    values: FrozenMap
    description: str
    satisfies: tuple[bool, bool, bool] = field(
        default=(False, False, False), init=False, compare=False
    )
    meets_request: bool = field(default=False, init=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.values, FrozenMap):
            object.__setattr__(self, "values", FrozenMap(self.values))

    @property
    def pattern(self) -> str:
        """Need-satisfaction pattern as a string, L1 first: ``"101"``."""
        return "".join("1" if s else "0" for s in self.satisfies)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "name": self.name,
            "values": dict(self.values),
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | Fields) -> Option:
        f = d if isinstance(d, Fields) else Fields(d, "<option>")
        f.only(("number", "name", "values", "description"))
        return cls(f.integer("number"), f.text("name"), FrozenMap(f.values("values")), f.text("description"))


@dataclass(frozen=True)
class Scenario:
    """One Hear2Act scenario: request, three hidden needs, eleven options."""

    id: str
    domain: str
    family: str
    persona: Persona
    request: str
    requirements: tuple[Requirement, ...]
    priority: str  # the visible attribute the request ranks by
    attributes: tuple[Attribute, ...]
    needs: tuple[Need, ...]
    options: tuple[Option, ...]

    def __post_init__(self) -> None:
        for opt in self.options:
            sat = tuple(
                n.attribute in opt.values and n.holds(opt.values[n.attribute])
                for n in self.needs
            )
            sat = (*sat, False, False, False)[:3]
            meets = all(r.attribute in opt.values and r.holds(opt.values[r.attribute]) for r in self.requirements)
            object.__setattr__(opt, "satisfies", sat)
            object.__setattr__(opt, "meets_request", meets)
        object.__setattr__(self, "_roles", self._compute_roles())

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild through __init__ so the options' derived fields and the roles are recomputed.
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    def derived(self, name: str, build: Callable[[Scenario], _T]) -> _T:
        """``build(self)``, computed once per scenario object and kept on it.

        For tables that code derives from a scenario (assessments, observation texts,
        characters): not a field, so equality, hashing and JSON ignore it.
        """
        key = f"_derived_{name}"
        try:
            return self.__dict__[key]
        except KeyError:
            value = self.__dict__[key] = build(self)  # the instance dict: a frozen dataclass forbids setattr
            return value

    def derived_for(self, owner: object, name: str, build: Callable[[Scenario], _T]) -> _T:
        """``build(self)``, computed once per scenario object and ``owner`` (hashed by identity: a matcher
        with its own weights), kept on the scenario and dropped when the owner is collected.

        The one per-scenario cache for tables that depend on something besides the scenario (the learned
        router's plan, the semantic matcher's embeddings); :meth:`derived` for those that do not.
        """
        per_owner: weakref.WeakKeyDictionary[object, _T] = self.derived(
            f"per_owner_{name}", lambda _s: weakref.WeakKeyDictionary())
        try:
            return per_owner[owner]
        except KeyError:
            value = per_owner[owner] = build(self)
            return value

    # -- lookups ---------------------------------------------------------
    def attribute(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(name)

    def option(self, number: int) -> Option:
        if not 1 <= number <= len(self.options):
            raise ScenarioError(self.id, "option", f"no option {number} (1..{len(self.options)})")
        return self.options[number - 1]

    def need(self, level: int) -> Need:
        return self.needs[level - 1]

    # -- derived roles -----------------------------------------------------
    # Computed once, at construction (PROTOCOL.md: nothing observable varies with
    # the hidden state, step time included): a property that sorted the options
    # on every call made a step on the gold measurably slower than on a wrong one.
    def _rank_key(self, opt: Option) -> float:
        value = opt.values[self.priority]
        if not is_number(value):
            raise TypeError(f"option {opt.number}: {self.priority} = {value!r} is not a number")
        value = float(value)
        return value if self.attribute(self.priority).better == "lower" else -value

    def _compute_roles(self) -> dict[str, int | tuple[int, ...] | ScenarioError]:
        """gold / safe / opening numbers (or the error explaining why there is none)."""
        roles: dict[str, int | tuple[int, ...] | ScenarioError] = {
            "request_violating": tuple(o.number for o in self.options if not o.meets_request)
        }
        try:
            meeting = sorted((o for o in self.options if o.meets_request), key=self._rank_key)
        except (KeyError, TypeError, ValueError) as exc:
            bad = ScenarioError(self.id, "options", f"priority {self.priority!r} is not numeric everywhere ({exc})")
            roles.update(gold=bad, safe=bad, opening=bad)
            return roles
        fits = [o for o in meeting if all(o.satisfies)]
        if not fits or (len(fits) > 1 and self._rank_key(fits[0]) == self._rank_key(fits[1])):
            roles["gold"] = ScenarioError(self.id, "options", "no unique best-fitting (gold) option")
        else:
            roles["gold"] = fits[0].number
        if len(fits) != 2:
            roles["safe"] = ScenarioError(
                self.id, "options", f"expected gold and safe to fit all needs, found {len(fits)}"
            )
        else:
            roles["safe"] = fits[1].number
        roles["opening"] = (
            meeting[0].number if meeting else ScenarioError(self.id, "options", "no option meets the request")
        )
        return roles

    def _role_number(self, role: str) -> int:
        number = self._roles[role]
        if isinstance(number, ScenarioError):
            raise number
        return number  # type: ignore[return-value]

    @property
    def gold(self) -> int:
        """Number of the best-fitting option (meets request, all needs, best priority)."""
        return self._role_number("gold")

    @property
    def safe(self) -> int:
        """Number of the safe option: fits every need but is worse than gold on priority."""
        return self._role_number("safe")

    @property
    def opening(self) -> int:
        """Number of the opening option: best on the priority among request-meeting options."""
        return self._role_number("opening")

    @property
    def request_violating(self) -> tuple[int, ...]:
        return self._roles["request_violating"]  # type: ignore[return-value]

    def role(self, number: int) -> str:
        """Canonical role: ``gold``, ``safe``, ``request-violating`` or ``pattern-XYZ``."""
        opt = self.option(number)
        if not opt.meets_request:
            return "request-violating"
        if number == self.gold:
            return "gold"
        if all(opt.satisfies) and number == self.safe:
            return "safe"
        return f"pattern-{opt.pattern}"

    @property
    def visible_attributes(self) -> tuple[Attribute, ...]:
        return tuple(a for a in self.attributes if a.kind == "visible")

    # -- JSON ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "domain": self.domain,
            "family": self.family,
            "persona": self.persona.to_dict(),
            "request": self.request,
            "requirements": [r.to_dict() for r in self.requirements],
            "priority": self.priority,
            "attributes": [a.to_dict() for a in self.attributes],
            "needs": [n.to_dict() for n in self.needs],
            "options": [o.to_dict() for o in self.options],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scenario:
        """Build from a dict; a missing or mistyped field raises :class:`ScenarioError`
        naming the scenario and the field's path (``needs[0].level``). No coercion:
        a string is not a list, a float is not a level, ``"1"`` is not a number, and an unknown field
        is an error listing the known ones."""
        sid = d.get("id") if isinstance(d, Mapping) else None
        sid = sid if isinstance(sid, str) and sid else "<no id>"
        f = Fields(d, sid)
        f.only(("id", "domain", "family", "persona", "request", "requirements", "priority", "attributes", "needs",
                "options"))
        return cls(
            id=f.text("id"),
            domain=f.text("domain"),
            family=f.text("family"),
            persona=Persona.from_dict(f.object("persona")),
            request=f.text("request"),
            requirements=tuple(Requirement.from_dict(r) for r in f.objects("requirements")),
            priority=f.text("priority"),
            attributes=tuple(Attribute.from_dict(a) for a in f.objects("attributes")),
            needs=tuple(Need.from_dict(n) for n in f.objects("needs")),
            options=tuple(Option.from_dict(o) for o in f.objects("options")),
        )
