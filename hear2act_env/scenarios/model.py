"""The scenario data model: immutable, hashable, JSON round-trippable.

A :class:`Scenario` is pure data plus derived views. Need satisfaction, request
fit and the roles (gold, safe, opening) are *computed* from option attribute
values and the need/requirement predicates, never stored by hand: a data
author cannot make an option "gold" by labelling it so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import ScenarioError

KINDS = ("need", "visible", "distractor")
OPS = ("<=", ">=")
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
    ("nonstop", "instant push alerts"). ``visible`` attributes are numeric
    (price, rating, ...) and are what the opening request talks about.
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

    def format(self, value: Value) -> str:
        """The value as it appears in an option description."""
        if self.kind != "visible":
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
        if self.kind == "visible":
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
    def from_dict(cls, d: Mapping[str, Any]) -> Attribute:
        return cls(
            name=d["name"],
            label=d["label"],
            kind=d["kind"],
            keywords=tuple(d.get("keywords", ())),
            values=tuple(d.get("values", ())),
            better=d.get("better"),
            prefix=d.get("prefix", ""),
            suffix=d.get("suffix", ""),
            decimals=int(d.get("decimals", 0)),
            worse=d.get("worse", ""),
        )


@dataclass(frozen=True)
class Requirement:
    """A visible requirement stated in the opening request (``price <= 200``)."""

    attribute: str
    op: str
    value: float
    statement: str  # how the user says it when an option breaks it

    def holds(self, value: Value) -> bool:
        v = float(value)
        return v <= self.value if self.op == "<=" else v >= self.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "attribute": self.attribute,
            "op": self.op,
            "value": self.value,
            "statement": self.statement,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Requirement:
        return cls(d["attribute"], d["op"], float(d["value"]), d["statement"])


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
    def from_dict(cls, d: Mapping[str, Any]) -> Need:
        return cls(
            level=int(d["level"]),
            attribute=d["attribute"],
            accept=tuple(d["accept"]),
            statement=d["statement"],
            keywords=tuple(d["keywords"]),
            hint=d.get("hint", ""),
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
    def from_dict(cls, d: Mapping[str, Any]) -> Persona:
        return cls(d["situation"], d["urgency"], d["budget"], d["expertise"])


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
    def from_dict(cls, d: Mapping[str, Any]) -> Option:
        return cls(int(d["number"]), d["name"], FrozenMap(d["values"]), d["description"])


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
        by_name = {a.name: a for a in self.attributes}
        for opt in self.options:
            sat = tuple(
                n.attribute in opt.values and n.holds(opt.values[n.attribute])
                for n in self.needs
            )
            sat = (*sat, False, False, False)[:3]
            meets = all(
                r.attribute in opt.values
                and by_name.get(r.attribute) is not None
                and _is_number(opt.values[r.attribute])
                and r.holds(opt.values[r.attribute])
                for r in self.requirements
            )
            object.__setattr__(opt, "satisfies", sat)
            object.__setattr__(opt, "meets_request", meets)
        object.__setattr__(self, "_roles", self._compute_roles())

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild through __init__ so the options' derived fields and the roles are recomputed.
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

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
        value = float(opt.values[self.priority])
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
        """Build from a dict; missing or mistyped fields raise :class:`ScenarioError`."""
        sid = str(d.get("id", "<no id>")) if isinstance(d, Mapping) else "<not an object>"
        if not isinstance(d, Mapping):
            raise ScenarioError(sid, "<root>", "a scenario must be a JSON object")
        field_name = "<root>"
        try:
            field_name = "persona"
            persona = Persona.from_dict(d["persona"])
            field_name = "requirements"
            reqs = tuple(Requirement.from_dict(r) for r in d["requirements"])
            field_name = "attributes"
            attrs = tuple(Attribute.from_dict(a) for a in d["attributes"])
            field_name = "needs"
            needs = tuple(Need.from_dict(n) for n in d["needs"])
            field_name = "options"
            opts = tuple(Option.from_dict(o) for o in d["options"])
            field_name = "id"
            return cls(
                id=str(d["id"]),
                domain=str(d["domain"]),
                family=str(d["family"]),
                persona=persona,
                request=str(d["request"]),
                requirements=reqs,
                priority=str(d["priority"]),
                attributes=attrs,
                needs=needs,
                options=opts,
            )
        except ScenarioError:
            raise
        except KeyError as exc:
            raise ScenarioError(sid, field_name, f"missing field {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ScenarioError(sid, field_name, f"malformed value ({exc})") from None


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)
