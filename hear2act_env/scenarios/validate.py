"""The structural validator: every rule of PROTOCOL.md "Scenario", one check each.

:func:`problems` returns every broken rule of one scenario as a
:class:`ScenarioError` (scenario id, field, rule); :func:`validate` raises the
first. :func:`validate_file` reads a JSONL file and reports every bad line with
its line number without stopping at the first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .content import DOMAIN_FAMILY, domain_topic, slugify, topic_words
from .errors import ScenarioError
from .fields import is_number, parse_json
from .model import KINDS, LEVELS, OPS, Scenario
from .quality import (
    artefacts,
    bound_words,
    compares_options,
    content_stems,
    is_bare_answer,
    phrases_in,
    shared_premise,
)
from .shortcuts import MIN_BANK
from .shortcuts import bank_problems as shortcut_problems

N_OPTIONS = 11
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*-\d{2}$")
ALL_PATTERNS = {f"{i:03b}" for i in range(8)}

Check = Callable[[Scenario], Iterator[tuple[str, str]]]
_CHECKS: list[Check] = []


def _check(fn: Check) -> Check:
    _CHECKS.append(fn)
    return fn


@_check
def _identity(s: Scenario) -> Iterator[tuple[str, str]]:
    if not ID_RE.match(s.id):
        yield "id", "must look like '<domain-slug>-<nn>'"
    # A Table 6 domain keeps its family; any other name is a user domain (docs/new-domain.md).
    if s.domain in DOMAIN_FAMILY and DOMAIN_FAMILY[s.domain] != s.family:
        yield "family", f"{s.domain!r} belongs to {DOMAIN_FAMILY[s.domain]!r}"
    elif not slugify(s.domain):
        yield "domain", f"{s.domain!r} has no letter or digit to make scenario ids from"
    elif not s.id.startswith(slugify(s.domain) + "-"):
        yield "id", f"must start with the domain slug {slugify(s.domain)!r}"
    if not s.request.strip():
        yield "request", "must not be empty"


def _keyword_problems(field: str, keywords: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for j, k in enumerate(keywords):
        if not k.strip():
            yield f"{field}[{j}]", "must not be empty"
        elif is_bare_answer(k):
            yield f"{field}[{j}]", f"{k!r} is a bare yes/no; it would make any answer-like question targeted"


@_check
def _attributes(s: Scenario) -> Iterator[tuple[str, str]]:
    names = [a.name for a in s.attributes]
    if len(set(names)) != len(names):
        yield "attributes", "attribute names must be distinct"
    for i, a in enumerate(s.attributes):
        yield from _keyword_problems(f"attributes[{i}].keywords", a.keywords)
        for j, v in enumerate(a.values):
            if is_bare_answer(v) or not v.strip():
                yield f"attributes[{i}].values[{j}]", f"{v!r} is not a descriptive value (bare yes/no or empty)"
        if a.kind not in KINDS:
            yield f"attributes[{i}].kind", f"must be one of {KINDS}, got {a.kind!r}"
        elif a.kind == "visible" and a.values:
            if len(a.values) < 2:
                yield f"attributes[{i}].values", "a categorical attribute needs at least 2 values"
            if a.better is not None:
                yield f"attributes[{i}].better", "a categorical visible attribute has no better direction"
        elif a.kind == "visible" and a.better not in ("lower", "higher"):
            yield f"attributes[{i}].better", "a visible attribute needs better='lower'|'higher'"
        elif a.kind == "visible" and not a.worse.strip():
            yield f"attributes[{i}].worse", "a visible attribute needs the user's words for its drawback"
        elif a.kind == "visible" and compares_options(a.worse):
            yield f"attributes[{i}].worse", f"must name the option's own drawback, not compare it: {a.worse!r}"
        elif a.kind != "visible" and len(a.values) < 2:
            yield f"attributes[{i}].values", "a categorical attribute needs at least 2 values"
    # A value that contains another would let one phrase read as two in a description.
    phrases = [(a.name, v) for a in s.attributes for v in a.values]
    for name, v in phrases:
        for other_name, w in phrases:
            if v != w and v.lower() in w.lower():
                yield f"attributes.{name}", f"value {v!r} is contained in {other_name} value {w!r}"
    kinds = [a.kind for a in s.attributes]
    if "distractor" not in kinds:
        yield "attributes", "at least one distractor attribute (no need depends on it)"
    if "visible" not in kinds:
        yield "attributes", "at least one visible attribute"
    if s.priority not in {a.name for a in s.attributes if a.numeric}:
        yield "priority", f"{s.priority!r} is not a numeric visible attribute"


@_check
def _requirements(s: Scenario) -> Iterator[tuple[str, str]]:
    attrs = {a.name: a for a in s.attributes}
    need_attrs = {n.attribute for n in s.needs}
    if not s.requirements:
        yield "requirements", "the request must state at least one visible requirement"
    for i, r in enumerate(s.requirements):
        f = f"requirements[{i}]"
        a = attrs.get(r.attribute)
        if r.attribute in need_attrs:
            yield f"{f}.attribute", f"{r.attribute!r} is a hidden need's attribute; the request never states a need"
        elif a is None or a.kind != "visible":
            yield f"{f}.attribute", f"{r.attribute!r} is not a visible attribute"
        elif r.categorical:
            if a.numeric:
                yield f"{f}.attribute", f"{r.attribute!r} is numeric; a categorical requirement needs a vocabulary"
            elif not r.values or set(r.values) >= set(a.values) or not set(r.values) <= set(a.values):
                yield f"{f}.in", f"must be a non-empty proper subset of {r.attribute}'s values {list(a.values)}"
        else:
            if r.op not in OPS:
                yield f"{f}.op", f"must be one of {(*OPS, 'in')}, got {r.op!r}"
            if not a.numeric:
                yield f"{f}.attribute", f"{r.attribute!r} is categorical; a numeric bound needs a numeric attribute"
            if r.value is None or not is_number(r.value):
                yield f"{f}.value", f"must be a finite number, got {r.value!r}"
        if not r.statement.strip():
            yield f"{f}.statement", "must not be empty"
    required = {r.attribute for r in s.requirements}
    for i, a in enumerate(s.attributes):
        if a.kind == "visible" and not a.numeric and a.name not in required:
            yield f"attributes[{i}].kind", f"categorical {a.name!r} is visible but no requirement uses it"


@_check
def _bound_wording(s: Scenario) -> Iterator[tuple[str, str]]:
    """PROTOCOL.md: "under/below/less than $X" is < X, "at most/up to/no more than $X" is <= X.

    And no option sits exactly on a strict bound: the requirement's statement ("I'll pay
    up to $200") may word the same bound inclusively, so a $200 option would read both ways.
    """
    for i, r in enumerate(s.requirements):
        if r.categorical or r.op not in OPS or not is_number(r.value):
            continue  # reported by _requirements
        worded = bound_words(s.request, float(r.value))
        strict = r.op in ("<", ">")
        if worded == "strict" and not strict:
            yield f"requirements[{i}].op", f"the request words the bound on {r.value:g} strictly; use {r.op[0]!r}"
        elif worded == "inclusive" and strict:
            yield f"requirements[{i}].op", f"the request words the bound on {r.value:g} inclusively; use {r.op + '='!r}"
        if strict:
            on = [o.number for o in s.options if is_number(o.values.get(r.attribute)) and
                  float(o.values[r.attribute]) == float(r.value)]
            if on:
                yield "options", f"options {on} sit exactly on the strict bound {r.attribute} {r.op} {r.value:g}"


@_check
def _needs(s: Scenario) -> Iterator[tuple[str, str]]:
    if len(s.needs) != 3:
        yield "needs", f"exactly 3 needs (L1, L2, L3), got {len(s.needs)}"
        return
    kinds = {a.name: a for a in s.attributes}
    if tuple(n.level for n in s.needs) != LEVELS:
        yield "needs", "levels must be 1, 2, 3 in order"
    if len({n.attribute for n in s.needs}) != 3:
        yield "needs", "the three needs must be on three different attributes"
    for i, n in enumerate(s.needs):
        f = f"needs[{i}]"
        attr = kinds.get(n.attribute)
        if attr is None or attr.kind != "need":
            yield f"{f}.attribute", f"{n.attribute!r} must be an attribute of kind 'need'"
            continue
        bad = [v for v in n.accept if v not in attr.values]
        if bad:
            yield f"{f}.accept", f"{bad} not in the vocabulary of {n.attribute!r}"
        if not n.accept or set(n.accept) >= set(attr.values):
            yield f"{f}.accept", "must be a non-empty proper subset of the attribute's values"
        if not n.statement.strip():
            yield f"{f}.statement", "must not be empty"
        if not n.keywords:
            yield f"{f}.keywords", "needs words that make a question targeted at it"
        yield from _keyword_problems(f"{f}.keywords", n.keywords)
        if n.level == 1 and not n.hint.strip():
            yield f"{f}.hint", "L1 needs a directional hint (what CLARIFY returns)"
    need_attrs = {n.attribute for n in s.needs}
    for i, a in enumerate(s.attributes):
        if a.kind == "need" and a.name not in need_attrs:
            yield f"attributes[{i}].kind", f"{a.name!r} is kind 'need' but no need uses it"


def need_phrases(need, attribute) -> list[str]:
    """Everything that names a need: its accepted values, its keywords, its attribute's keywords and label."""
    return [*need.accept, *need.keywords, *attribute.keywords, attribute.label]


@_check
def _request_hides_needs(s: Scenario) -> Iterator[tuple[str, str]]:
    """PROTOCOL.md: the request never states a hidden need, neither its value nor its words."""
    attrs = {a.name: a for a in s.attributes}
    for i, n in enumerate(s.needs):
        if n.attribute not in attrs:
            continue  # reported by _needs
        found = phrases_in(s.request, need_phrases(n, attrs[n.attribute]))
        if found:
            yield "request", f"states hidden need L{n.level} ({n.attribute}) via {found}; needs[{i}] must stay hidden"


def premise_topic(s: Scenario, requests: Sequence[str] | None = None) -> frozenset[str]:
    """Words a request may share with a need's reasons: the domain's topic and what the options show.

    The topic is the domain name's stems and those in two or more of the domain's requests: the
    built-in content file's, or ``requests`` (a user bank's requests of that domain). Every word the
    options text prints (attribute labels and values, names) is visible anyway, so it is not a premise.
    """
    topic = set(domain_topic(s.domain) if requests is None else topic_words(s.domain, requests))
    for a in s.visible_attributes:
        topic |= content_stems(" ".join((a.label, *a.keywords)))
    for o in s.options:
        topic |= content_stems(o.description)
    return frozenset(topic)


def _premises(s: Scenario, topic: frozenset[str]) -> Iterator[tuple[str, str]]:
    for i, n in enumerate(s.needs):
        shared = shared_premise(s.request, f"{n.statement} {n.hint}", topic)
        if shared:
            yield "request", (f"gives the premise of hidden need L{n.level} ({n.attribute}): shares {shared} "
                              f"with needs[{i}].statement/hint")


@_check
def _request_hides_premises(s: Scenario) -> Iterator[tuple[str, str]]:
    """The assistant sees the request, not the persona: the request never gives a need's reason.

    A user domain (no built-in content file) is judged by :func:`premise_problems` over its bank,
    whose requests give the domain's topic words.
    """
    if s.domain in DOMAIN_FAMILY:
        yield from _premises(s, premise_topic(s))


def premise_problems(scenarios: Sequence[Scenario]) -> list[ScenarioError]:
    """The premise rule for the user domains of a bank, topic words from the bank's own requests."""
    by_domain: dict[str, list[str]] = {}
    for s in scenarios:
        by_domain.setdefault(s.domain, []).append(s.request)
    return [ScenarioError(s.id, f, rule) for s in scenarios if s.domain not in DOMAIN_FAMILY
            for f, rule in _premises(s, premise_topic(s, by_domain[s.domain]))]


@_check
def _options(s: Scenario) -> Iterator[tuple[str, str]]:
    if len(s.options) != N_OPTIONS:
        yield "options", f"exactly {N_OPTIONS} options, got {len(s.options)}"
    attrs = {a.name: a for a in s.attributes}
    for i, o in enumerate(s.options):
        f = f"options[{i}]"
        if o.number != i + 1:
            yield f"{f}.number", f"options must be numbered 1..{N_OPTIONS} in order, got {o.number}"
        for name, a in attrs.items():
            if name not in o.values:
                yield f"{f}.values.{name}", "missing"
                continue
            v = o.values[name]
            if a.numeric:
                if not is_number(v):
                    yield f"{f}.values.{name}", f"must be a finite number, got {v!r}"
                elif not _prints(o.description, a.format(v)):
                    yield f"{f}.description", f"does not print the {name} value {a.format(v)!r}"
            elif v not in a.values:
                yield f"{f}.values.{name}", f"{v!r} not in the vocabulary {list(a.values)}"
            elif str(v) not in o.description:
                yield f"{f}.description", f"does not mention the {name} value {v!r}"
            else:
                clash = [w for w in a.values if w != v and w in o.description]
                if clash:
                    yield f"{f}.description", f"prints {name} values {clash} but the value is {v!r}"
        extra = set(o.values) - set(attrs)
        if extra:
            yield f"{f}.values", f"values for unknown attributes {sorted(extra)}"
        if not o.description.startswith(o.name):
            yield f"{f}.description", "must start with the option name"
    if len({o.name for o in s.options}) != len(s.options):
        yield "options", "option names must be distinct"
    if len({o.description for o in s.options}) != len(s.options):
        yield "options", "option descriptions must be distinct"


def _prints(description: str, shown: str) -> bool:
    """``shown`` appears as a whole number in the description ("$18" is not in "$189")."""
    return re.search(r"(?<![\d.,])" + re.escape(shown) + r"(?!\d|[.,]\d)", description) is not None


@_check
def _roles(s: Scenario) -> Iterator[tuple[str, str]]:
    """One option per canonical role, and the gold/safe/opening relations."""
    if len(s.options) != N_OPTIONS or len(s.needs) != 3:
        return  # reported by the shape checks; roles are meaningless here
    try:
        prio = s.attribute(s.priority)
    except KeyError:
        return  # reported by _attributes
    if not prio.numeric or not all(is_number(o.values.get(s.priority)) for o in s.options):
        return  # reported by _options/_attributes
    violators = [o for o in s.options if not o.meets_request]
    if len(violators) != 2:
        yield "options", f"exactly 2 options must violate the request, found {len(violators)}"
    meeting = [o for o in s.options if o.meets_request]
    patterns = sorted(o.pattern for o in meeting)
    expected = sorted([*ALL_PATTERNS, "111"])
    if patterns != expected:
        yield "options", (
            "request-meeting options must realise the 8 need patterns once each plus the "
            f"safe all-needs option; got {patterns}"
        )
    fits = sorted((o for o in meeting if all(o.satisfies)), key=s._rank_key)
    if len(fits) >= 2 and not prio.is_better(
        float(fits[0].values[s.priority]), float(fits[1].values[s.priority])
    ):
        yield "options", f"no unique gold: the safe option must be worse than the gold on {s.priority!r}"
    if meeting:
        lead = sorted(meeting, key=s._rank_key)
        top = float(lead[0].values[s.priority])
        if len(lead) > 1 and float(lead[1].values[s.priority]) == top:
            yield "options", f"the opening must lead on {s.priority!r} alone (tie)"
        if all(lead[0].satisfies):
            yield "options", "the opening option (the request-meeting leader) must miss at least one of L1/L2/L3"


@_check
def _texts(s: Scenario) -> Iterator[tuple[str, str]]:
    texts = {"request": s.request, "persona.situation": s.persona.situation}
    for i, r in enumerate(s.requirements):
        texts[f"requirements[{i}].statement"] = r.statement
    for i, a in enumerate(s.attributes):
        if a.worse:
            texts[f"attributes[{i}].worse"] = a.worse
    for i, n in enumerate(s.needs):
        texts[f"needs[{i}].statement"] = n.statement
        if n.hint:
            texts[f"needs[{i}].hint"] = n.hint
    for i, o in enumerate(s.options):
        texts[f"options[{i}].description"] = o.description
    for field, text in texts.items():
        for msg in artefacts(text):
            yield field, msg


def problems(scenario: Scenario) -> list[ScenarioError]:
    """Every structural rule the scenario breaks (empty when valid)."""
    return [ScenarioError(scenario.id, f, rule) for check in _CHECKS for f, rule in check(scenario)]


def bank_problems(scenarios: list[Scenario]) -> list[ScenarioError]:
    """Rules over a whole bank (PROTOCOL.md: what is visible must not rank the gold).

    Rates need a bank-sized sample: files of fewer than
    :data:`~hear2act_env.scenarios.shortcuts.MIN_BANK` scenarios are not judged by them. The premise
    rule for user domains (:func:`premise_problems`) is judged on every bank.
    """
    return premise_problems(scenarios) + (shortcut_problems(scenarios) if len(scenarios) >= MIN_BANK else [])


def paper_bank_problems(scenarios: list[Scenario]) -> list[ScenarioError]:
    """The paper bank stays the paper's: ten scenarios of each of the 48 Table 6 domains, nothing else.

    User banks (``docs/new-domain.md``) pass :func:`problems` and :func:`bank_problems` but not this.
    """

    from .content import PERSONAS_PER_DOMAIN

    out = [ScenarioError(s.id, "domain", f"{s.domain!r} is not a Table 6 domain; the paper bank holds only those")
           for s in scenarios if s.domain not in DOMAIN_FAMILY]
    counts = Counter(s.domain for s in scenarios)
    out += [ScenarioError("<bank>", "domain", f"{d!r} has {counts[d]} scenarios, the paper bank {PERSONAS_PER_DOMAIN}")
            for d in DOMAIN_FAMILY if counts[d] != PERSONAS_PER_DOMAIN]
    return out


def validate(scenario: Scenario) -> Scenario:
    """Return the scenario if valid, else raise the first :class:`ScenarioError`."""
    found = problems(scenario)
    if found:
        raise found[0]
    return scenario


def read_jsonl(path: str | Path) -> tuple[list[Scenario], list[ScenarioError]]:
    """Parse and validate a JSONL scenario file; bad lines are reported, not fatal."""
    scenarios, errors = [], []
    seen: dict[str, int] = {}
    lines = 0
    with open(path, "rb") as fh:  # bytes: fields.parse_json caps sizes and names a non-UTF-8 line
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            lines += 1
            try:
                raw = parse_json(line)
            except ValueError as exc:  # JSONDecodeError, NaN/Infinity, too long/deep, not UTF-8
                errors.append(ScenarioError(f"{Path(path).name}", "<json>", str(exc), line=lineno))
                continue
            try:
                scenario = Scenario.from_dict(raw)
            except ScenarioError as exc:
                errors.append(exc.at_line(lineno))
                continue
            bad = problems(scenario)
            if scenario.id in seen:
                bad.append(ScenarioError(scenario.id, "id", f"duplicate of line {seen[scenario.id]}"))
            seen.setdefault(scenario.id, lineno)
            errors.extend(e.at_line(lineno) for e in bad)
            if not bad:
                scenarios.append(scenario)
    if not lines:
        errors.append(ScenarioError(Path(path).name, "<file>", "the file holds no scenarios (empty)", line=1))
    return scenarios, errors


def validate_file(path: str | Path) -> list[ScenarioError]:
    """Every problem in a JSONL scenario file, each with its line number."""
    return read_jsonl(path)[1]
