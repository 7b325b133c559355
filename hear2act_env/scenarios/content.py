"""Hand-curated domain content: one JSON file per domain under ``data/domains/``.

The content is data, not code. Each file gives a domain's attribute vocabulary,
option-name pool and ten personas (situation, opening request, visible
requirements, need ladder). :mod:`.generator` assembles scenarios from it.
The format is documented in ``docs/domain-content.md``; :func:`load_domain`
checks every rule a content author can break and names the file and field.

Two kinds of file share the format. The paper's files (``paper=True``, the
default) must name one of the 48 Table 6 domains with its family, be named
``<slug>.json`` and hold exactly ten personas; :func:`load_all_domains` also
insists on all 48. A user's file (``paper=False``, ``docs/new-domain.md``)
names a domain of its own (a Table 6 name is reserved for the paper bank), any
non-empty family, and 1 to :data:`MAX_USER_PERSONAS` personas; every other
rule is the same.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .fields import reject_constant
from .model import OPS, Attribute, Need, Persona, Requirement
from .quality import compares_options, content_stems, is_bare_answer

DOMAINS_DIR = Path(__file__).resolve().parent.parent / "data" / "domains"

# The paper's Table 6: 48 domains in 8 families, in the canonical bank order.
TABLE6: dict[str, tuple[str, ...]] = {
    "Travel & Events": (
        "budget airline tickets", "vacation rental properties", "restaurant reservations",
        "concert ticket purchases", "wedding venue selection",
    ),
    "Home & Property": (
        "home cleaning services", "home renovation contractors", "home security systems",
        "landscaping contractors", "lawn care contractors", "solar panel installation",
        "kitchen appliance upgrades", "mattress replacement",
    ),
    "Finance & Insurance": (
        "credit card applications", "mortgage lender comparison",
        "investment portfolio allocation", "retirement planning advisors",
        "tax preparation services", "car insurance policies", "health insurance plans",
        "pet insurance policies", "business insurance coverage",
    ),
    "Health & Wellness": (
        "dermatologist appointments", "pediatrician selection", "mental health therapists",
        "meditation apps", "gym membership options", "fitness tracker devices",
        "prescription eyeglasses",
    ),
    "Education & Career": (
        "college major selection", "online coding bootcamps", "language learning platforms",
        "professional development courses", "laptop purchase for students",
    ),
    "Family & Lifestyle": (
        "children's daycare centers", "dog training classes", "online dating platforms",
        "wine club memberships", "meal delivery subscriptions", "video game purchases",
    ),
    "Media & Devices": (
        "cable TV packages", "streaming service subscriptions", "podcast hosting services",
        "smartphone upgrades",
    ),
    "Professional Services": (
        "legal consultation services", "auto mechanic services",
        "business accounting software", "freelance graphic designers",
    ),
}
FAMILIES = tuple(TABLE6)
DOMAIN_FAMILY = {d: f for f, ds in TABLE6.items() for d in ds}
DOMAIN_ORDER = {d: i for i, d in enumerate(DOMAIN_FAMILY)}
URGENCY = ("low", "medium", "high")
BUDGET = ("tight", "moderate", "flexible")
EXPERTISE = ("novice", "intermediate", "expert")
PERSONAS_PER_DOMAIN = 10
MAX_USER_PERSONAS = 99  # scenario ids end in two digits: <slug>-01 .. <slug>-99
MIN_NAMES = 14
MIN_ATTRIBUTES = 5


@dataclass(frozen=True)
class VisibleRange:
    """The realistic numeric range of a visible attribute in a domain."""

    low: float
    high: float
    step: float


@dataclass(frozen=True)
class PersonaContent:
    persona: Persona
    request: str
    requirements: tuple[Requirement, ...]
    priority: str
    needs: tuple[Need, ...]  # L1, L2, L3


@dataclass(frozen=True)
class DomainContent:
    domain: str
    slug: str
    family: str
    sgd_services: tuple[str, ...]
    visible: tuple[Attribute, ...]
    ranges: Mapping[str, VisibleRange]
    attributes: tuple[Attribute, ...]  # categorical; kind "need" (ladders pick from these)
    names: tuple[str, ...]
    personas: tuple[PersonaContent, ...]

    def attribute(self, name: str) -> Attribute:
        for a in (*self.visible, *self.attributes):
            if a.name == name:
                return a
        raise KeyError(name)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("'", "")).strip("-")


class _Checker:
    """Collects typed fields from raw JSON, raising ScenarioError on the first bad one."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, rule: str) -> ScenarioError:
        return ScenarioError(self.where, field, rule)

    def get(self, d: Mapping[str, Any], key: str, typ: type | tuple[type, ...], field: str) -> Any:
        if not isinstance(d, Mapping):
            raise self.fail(field, "must be a JSON object")
        if key not in d:
            raise self.fail(f"{field}.{key}".lstrip("."), "missing")
        value = d[key]
        if not isinstance(value, typ) or (isinstance(value, bool) and typ is not bool):
            raise self.fail(f"{field}.{key}".lstrip("."), f"must be {_type_name(typ)}")
        return value

    def text(self, d: Mapping[str, Any], key: str, field: str) -> str:
        value = self.get(d, key, str, field).strip()
        if not value:
            raise self.fail(f"{field}.{key}".lstrip("."), "must not be empty")
        return value

    def texts(self, d: Mapping[str, Any], key: str, field: str, min_len: int = 1) -> tuple[str, ...]:
        items = self.get(d, key, list, field)
        path = f"{field}.{key}".lstrip(".")
        if key in ("keywords", "values", "accept", "in"):
            for i, item in enumerate(items):
                if isinstance(item, str) and is_bare_answer(item):
                    raise self.fail(f"{path}[{i}]", f"{item!r} is a bare yes/no; it never counts as a keyword or value")
        if len(items) < min_len:
            raise self.fail(path, f"needs at least {min_len} entries, has {len(items)}")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                raise self.fail(f"{path}[{i}]", "must be a non-empty string")
            out.append(item.strip())
        if len(set(out)) != len(out):
            raise self.fail(path, "entries must be distinct")
        return tuple(out)


def _type_name(typ: type | tuple[type, ...]) -> str:
    names = {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)


def _visible(c: _Checker, raw: Mapping[str, Any], i: int) -> tuple[Attribute, VisibleRange]:
    f = f"visible[{i}]"
    better = c.text(raw, "better", f)
    if better not in ("lower", "higher"):
        raise c.fail(f"{f}.better", f"must be 'lower' or 'higher', got {better!r}")
    low = float(c.get(raw, "min", (int, float), f))
    high = float(c.get(raw, "max", (int, float), f))
    step = float(c.get(raw, "step", (int, float), f))
    if not (low < high and step > 0 and round((high - low) / step, 6) >= 20):
        raise c.fail(f, "need min < max and at least 20 steps between them")
    attr = Attribute(
        name=c.text(raw, "name", f),
        label=c.text(raw, "label", f),
        kind="visible",
        keywords=c.texts(raw, "keywords", f, 2),
        better=better,
        prefix=raw.get("prefix", ""),
        suffix=raw.get("suffix", ""),
        decimals=int(raw.get("decimals", 0)),
        worse=c.text(raw, "worse", f),
    )
    if compares_options(attr.worse):
        raise c.fail(f"{f}.worse", f"must name the option's own drawback, not compare it with others: {attr.worse!r}")
    return attr, VisibleRange(low, high, step)


def _attribute(c: _Checker, raw: Mapping[str, Any], i: int) -> Attribute:
    f = f"attributes[{i}]"
    return Attribute(
        name=c.text(raw, "name", f),
        label=c.text(raw, "label", f),
        kind="need",
        keywords=c.texts(raw, "keywords", f, 2),
        values=c.texts(raw, "values", f, 2),
    )


def _persona(
    c: _Checker, raw: Mapping[str, Any], i: int, visible: Mapping[str, Attribute],
    ranges: Mapping[str, VisibleRange], attrs: Mapping[str, Attribute],
) -> PersonaContent:
    f = f"personas[{i}]"
    persona = Persona(
        situation=c.text(raw, "situation", f),
        urgency=c.text(raw, "urgency", f),
        budget=c.text(raw, "budget", f),
        expertise=c.text(raw, "expertise", f),
    )
    for key, allowed in (("urgency", URGENCY), ("budget", BUDGET), ("expertise", EXPERTISE)):
        if getattr(persona, key) not in allowed:
            raise c.fail(f"{f}.{key}", f"must be one of {allowed}")
    reqs = []
    for j, r in enumerate(c.get(raw, "requirements", list, f)):
        rf = f"{f}.requirements[{j}]"
        attr = c.text(r, "attribute", rf)
        if isinstance(r, Mapping) and "in" in r:
            reqs.append(_categorical_requirement(c, r, rf, attr, attrs))
            continue
        if attr not in visible:
            raise c.fail(f"{rf}.attribute", f"{attr!r} is not a visible attribute")
        op = c.text(r, "op", rf)
        if op not in OPS:
            raise c.fail(f"{rf}.op", f"must be one of {OPS}")
        value = float(c.get(r, "value", (int, float), rf))
        rng = ranges[attr]
        # Room on both sides: 9 request-meeting values and 2 violating ones.
        # Grid values on each side. The bound itself meets an inclusive bound; under a strict
        # one it is on neither side (the generator keeps options off it).
        steps_in = round((value - rng.low if op[0] == "<" else rng.high - value) / rng.step, 6)
        n_in = int(steps_in) + (op in ("<=", ">="))
        n_out = int(round((rng.high - value if op[0] == "<" else value - rng.low) / rng.step, 6))
        # The priority attribute needs 9 distinct request-meeting values.
        need_in = 12 if attr == raw.get("priority") else 3
        if n_in < need_in or n_out < 3:
            raise c.fail(
                f"{rf}.value",
                f"{value:g} leaves too little of {attr}'s range [{rng.low:g}, {rng.high:g}] "
                f"on one side (need {need_in} values meeting it and 3 violating it)",
            )
        reqs.append(Requirement(attr, op, value, c.text(r, "statement", rf)))
    if not reqs:
        raise c.fail(f"{f}.requirements", "the request must state at least one visible requirement")
    priority = c.text(raw, "priority", f)
    if priority not in visible:
        raise c.fail(f"{f}.priority", f"{priority!r} is not a visible attribute")
    raw_needs = c.get(raw, "needs", list, f)
    if len(raw_needs) != 3:
        raise c.fail(f"{f}.needs", f"exactly 3 needs (L1, L2, L3), got {len(raw_needs)}")
    needs = []
    for j, n in enumerate(raw_needs):
        nf = f"{f}.needs[{j}]"
        attr_name = c.text(n, "attribute", nf)
        if attr_name not in attrs:
            raise c.fail(f"{nf}.attribute", f"{attr_name!r} is not a categorical attribute")
        accept = _proper_subset(c, c.texts(n, "accept", nf), attrs[attr_name], f"{nf}.accept", "need")
        hint = c.text(n, "hint", nf) if j == 0 else ""
        needs.append(
            Need(
                level=j + 1,
                attribute=attr_name,
                accept=accept,
                statement=c.text(n, "statement", nf),
                keywords=c.texts(n, "keywords", nf, 2),
                hint=hint,
            )
        )
    if len({n.attribute for n in needs}) != 3:
        raise c.fail(f"{f}.needs", "the three needs must be on three different attributes")
    for j, r in enumerate(reqs):
        if r.categorical and r.attribute in {n.attribute for n in needs}:
            raise c.fail(
                f"{f}.requirements[{j}].attribute",
                f"{r.attribute!r} is one of this persona's hidden needs; the request never states a need",
            )
    return PersonaContent(persona, c.text(raw, "request", f), tuple(reqs), priority, tuple(needs))


def _categorical_requirement(
    c: _Checker, r: Mapping[str, Any], rf: str, attr: str, attrs: Mapping[str, Attribute]
) -> Requirement:
    """``{"attribute": "pets", "in": [...], "statement": ...}``: a categorical attribute the request names."""
    if "op" in r or "value" in r:
        raise c.fail(rf, "a requirement is numeric (op, value) or categorical (in), not both")
    if attr not in attrs:
        raise c.fail(f"{rf}.attribute", f"{attr!r} is not a categorical attribute of this domain")
    allowed = _proper_subset(c, c.texts(r, "in", rf), attrs[attr], f"{rf}.in", "requirement")
    return Requirement.one_of(attr, allowed, c.text(r, "statement", rf))


def _proper_subset(c: _Checker, values: tuple[str, ...], attr: Attribute, f: str, what: str) -> tuple[str, ...]:
    """``values``: some, not all, of ``attr``'s values (a need's accepted or a requirement's allowed set)."""
    for v in values:
        if v not in attr.values:
            raise c.fail(f, f"{v!r} is not a value of {attr.name} {list(attr.values)}")
    if len(values) >= len(attr.values):
        raise c.fail(f, f"must leave at least one value that violates the {what}")
    return values


def _identity(c: _Checker, raw: Mapping[str, Any], paper: bool) -> tuple[str, str]:
    """The domain name and family: Table 6's for a paper file, the author's own for a user file."""
    domain = c.text(raw, "domain", "")
    family = c.text(raw, "family", "")
    if paper:
        if domain not in DOMAIN_FAMILY:
            raise c.fail("domain", f"{domain!r} is not one of the 48 Table 6 domains")
        if family != DOMAIN_FAMILY[domain]:
            raise c.fail("family", f"{domain!r} belongs to {DOMAIN_FAMILY[domain]!r}, not {family!r}")
        return domain, family
    if domain in DOMAIN_FAMILY or slugify(domain) in {slugify(d) for d in DOMAIN_FAMILY}:
        raise c.fail("domain", f"{domain!r} is a Table 6 domain of the paper bank (its scenario ids are taken); "
                               "give a user domain a name of its own")
    if not slugify(domain):
        raise c.fail("domain", f"{domain!r} has no letter or digit to make scenario ids from")
    return domain, family


def parse_domain(raw: Any, where: str, *, paper: bool = True) -> DomainContent:
    """Check and convert one domain file's JSON value (``paper=False``: a user's domain)."""
    c = _Checker(where)
    if not isinstance(raw, Mapping):
        raise c.fail("<root>", "a domain file must hold one JSON object")
    domain, family = _identity(c, raw, paper)
    vis_pairs = [_visible(c, v, i) for i, v in enumerate(c.get(raw, "visible", list, ""))]
    if not vis_pairs:
        raise c.fail("visible", "at least one visible attribute (price, rating, ...)")
    visible = {a.name: a for a, _ in vis_pairs}
    ranges = {a.name: r for a, r in vis_pairs}
    attrs_list = [_attribute(c, a, i) for i, a in enumerate(c.get(raw, "attributes", list, ""))]
    if len(attrs_list) < MIN_ATTRIBUTES:
        raise c.fail("attributes", f"at least {MIN_ATTRIBUTES} categorical attributes")
    attrs = {a.name: a for a in attrs_list}
    phrases = [(a.name, v) for a in attrs_list for v in a.values]
    for name, v in phrases:
        if ", " in v:
            raise c.fail(
                f"attributes.{name}.values", f"{v!r} contains a comma and space; descriptions join values so"
            )
        for other, w in phrases:
            if v != w and v.lower() in w.lower():
                raise c.fail(
                    f"attributes.{name}.values",
                    f"{v!r} is contained in {other} value {w!r}; a description could read as both",
                )
    names_all = [*visible, *attrs]
    if len(set(names_all)) != len(names_all):
        raise c.fail("attributes", "attribute names must be distinct")
    names = c.texts(raw, "names", "", MIN_NAMES)
    raw_personas = c.get(raw, "personas", list, "")
    if paper and len(raw_personas) != PERSONAS_PER_DOMAIN:
        raise c.fail("personas", f"exactly {PERSONAS_PER_DOMAIN} personas, got {len(raw_personas)}")
    if not paper and not 1 <= len(raw_personas) <= MAX_USER_PERSONAS:
        raise c.fail("personas", f"1 to {MAX_USER_PERSONAS} personas, got {len(raw_personas)}")
    personas = tuple(
        _persona(c, p, i, visible, ranges, attrs) for i, p in enumerate(raw_personas)
    )
    requests = [p.request for p in personas]
    if len(set(requests)) != len(requests):
        raise c.fail("personas", "opening requests must be distinct")
    return DomainContent(
        domain=domain,
        slug=slugify(domain),
        family=family,
        sgd_services=tuple(raw.get("sgd_services", ())),
        visible=tuple(visible.values()),
        ranges=ranges,
        attributes=tuple(attrs_list),
        names=names,
        personas=personas,
    )


def load_domain(path: str | Path, *, paper: bool = True) -> DomainContent:
    """One domain file, checked (``paper=False``: a user's domain, which may have any file name)."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), parse_constant=reject_constant)
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, or not UTF-8
        raise ScenarioError(path.name, "<json>", f"not valid JSON ({exc})") from None
    content = parse_domain(raw, path.name, paper=paper)
    if paper and path.stem != content.slug:
        raise ScenarioError(path.name, "domain", f"file must be named {content.slug}.json")
    return content


def load_all_domains(directory: str | Path = DOMAINS_DIR) -> list[DomainContent]:
    """The paper's domain files, in the canonical Table 6 order: all 48, nothing else."""
    domains = [load_domain(p) for p in sorted(Path(directory).glob("*.json"))]
    missing = [d for d in DOMAIN_FAMILY if d not in {x.domain for x in domains}]
    if missing:
        raise ScenarioError(str(directory), "domains", f"the paper bank needs all 48 Table 6 domains; "
                                                       f"no file for {missing[:5]}")
    return sorted(domains, key=lambda d: DOMAIN_ORDER[d.domain])


@lru_cache(maxsize=64)
def domain_topic(domain: str, directory: str | Path = DOMAINS_DIR) -> frozenset[str]:
    """The domain's topic words: its name's stems and those in two or more of its requests.

    A word the domain's users say in several requests ("flight", "house") names the
    domain, not a premise. A domain without a content file has its name's stems only.
    """
    path = Path(directory) / f"{slugify(domain)}.json"
    requests: list[str] = []
    if path.is_file():
        raw = json.loads(path.read_text(encoding="utf-8"))
        requests = [p.get("request", "") for p in raw.get("personas", []) if isinstance(p, Mapping)]
    return topic_words(domain, requests)


def topic_words(domain: str, requests: Sequence[str]) -> frozenset[str]:
    """The stems of ``domain``'s name and those in two or more of ``requests``."""
    counts = Counter(s for r in requests for s in content_stems(r))
    return content_stems(domain) | frozenset(s for s, k in counts.items() if k >= 2)
