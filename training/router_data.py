"""The learned router's training rows, in declared sources (a tool's data reading, not the simulator's).

Every row the fit sees comes from one of :data:`SOURCES`, read in this order
(the order fixes the fitted bytes). The sources are declared so that each is
reported on its own (``python -m hear2act.training.router_fit --report``) and any can be
left out of a fit (``--exclude``). They live beside the tool, in ``training/data/routing/`` (:data:`DATA`):
fitting is a tool of the training kit, not part of the simulator (which ships only the fitted weights,
``hear2act_env/data/router.json.gz``) nor a test (``tests/data`` keeps only what tests and benchmarks
measure: the validation set v2, the held-out sets v4/v5, the development set ``dev_questions.jsonl``). The
wheel does not ship them: refit from a source checkout.

- ``routing_train``: domain-level questions (``routing_train/*.txt``)
  written by separate processes that saw only the attribute sheets and
  ``hear2act scenarios show``, never the keyword lists;
- ``dev_sources``: the development sources (``dev_questions_src/dev_*.txt``; expanded over the
  scenarios by ``tools/build_dev_questions.py`` into the lexical matcher's development set
  ``tests/data/dev_questions.jsonl``);
- ``general_templates``: generic assistant questions (``general_templates.txt``),
  once per domain;
- ``team_questions``: the team's first hand-written set (``targeted_questions.json``);
- ``own_agents``: **the questions the project's own agents ask** (the oracle's
  "How do you feel about ...?", the full PPO wrapper's column questions, the rule
  agents' general question), so that the router keeps routing them. They are in-house
  wording, so they are a separate subset: reported apart and never counted as evidence
  that routing is right (the held-out sets v4/v5 are);
- ``routing_train_scenario``: rows written per scenario (``routing_train/*.jsonl``);
- ``former_heldout``: v1 and v3 (``former_heldout/``), held-out sets that became development sets once
  measured and read (v1: the lexical matcher's frames; v3: the first router's figure), then training rows.

``tests/data/heldout_questions_v2.jsonl`` is the validation set (it chose the fitting settings,
:mod:`hear2act.training.router_fit`); v4 and v5 are never read here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hear2act_env.dialogue.router import GENERAL, candidates, slug
from hear2act_env.scenarios import Scenario

DATA = Path(__file__).resolve().parent / "data" / "routing"  # the training rows (a source checkout's)
SOURCES = ("routing_train", "dev_sources", "general_templates", "team_questions", "own_agents",
           "routing_train_scenario", "former_heldout")
OWN_AGENTS = "own_agents"  # the project's own agents' questions: a declared, separately reported subset


@dataclass(frozen=True)
class Example:
    scenario: Scenario
    question: str
    labels: frozenset[str]  # the right candidates (attribute names, GENERAL); "other" rows allow any non-need
    source: str = ""  # one of SOURCES


def scenario_example(scenario: Scenario, question: str, expect: str, source: str = "") -> Example:
    """A row written for one scenario: ``expect`` is L1/L2/L3, general, or other (any candidate but a need)."""
    if expect == "general":
        return Example(scenario, question, frozenset({GENERAL}), source)
    if expect == "other":
        needs = {n.attribute for n in scenario.needs}
        labels = frozenset(c.name for c in candidates(scenario) if c.name not in needs)
        return Example(scenario, question, labels, source)
    if expect in ("L1", "L2", "L3"):
        level = int(expect[1])
        need = next(n.attribute for n in scenario.needs if n.level == level)
        return Example(scenario, question, frozenset({need}), source)
    raise ValueError(f"expect must be L1, L2, L3, general or other, got {expect!r} (question {question!r})")


def read_domain_lines(path: Path) -> Iterable[tuple[str, str, str]]:
    """``(domain slug, attribute or general, question)`` from a ``# slug`` / ``attr: S:q | S:q`` file."""
    domain = ""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if line.startswith("#"):
            domain = line[1:].strip()
            continue
        if not line or ":" not in line:
            continue
        attr, rest = line.split(":", 1)
        for item in rest.split(" | "):
            item = item.strip()
            if len(item) > 2 and item[1] == ":" and item[0].isalpha():
                item = item[2:].strip()
            if not item:
                continue
            if not domain:
                raise ValueError(f"{path}:{n}: a question before any '# domain' header")
            yield domain, attr.strip(), item


Row = tuple[str, str, str]  # (domain slug, attribute or "general", question)


def domain_examples(rows: Iterable[Row], by_domain: dict[str, list[Scenario]], per_question: int,
                    sources: Sequence[str] | None = None) -> list[Example]:
    """Each domain-level row placed in ``per_question`` of its domain's scenarios (which ones rotates with its
    index); ``sources``: the source of each row (same length), else ``""``."""
    out = []
    for i, (domain, attr, q) in enumerate(rows):
        scen = by_domain.get(domain)
        if not scen:
            raise ValueError(f"unknown domain {domain!r} (question {q!r})")
        names = {c.name for c in candidates(scen[0])} | {GENERAL}
        label = GENERAL if attr == "general" else attr
        if label not in names:
            raise ValueError(f"{domain}: unknown attribute {attr!r} (question {q!r})")
        source = sources[i] if sources is not None else ""
        for j in range(per_question):
            out.append(Example(scen[(i * 3 + j * 7) % len(scen)], q, frozenset({label}), source))
    return out


def default_examples(bank: list[Scenario], per_question: int = 4, data: Path = DATA,
                     exclude: Iterable[str] = ()) -> list[Example]:
    """The shipped training set, every row tagged with its source (:data:`SOURCES`); ``exclude``: sources left out.

    With nothing excluded the rows and their order are those the shipped weights were fitted on.
    """
    skip = set(exclude)
    unknown = skip - set(SOURCES)
    if unknown:
        raise ValueError(f"exclude: unknown source(s) {sorted(unknown)}; choose from {list(SOURCES)}")
    by_domain: dict[str, list[Scenario]] = defaultdict(list)
    for s in bank:
        by_domain[slug(s.domain)].append(s)
    rows: list[Row] = []
    tags: list[str] = []

    def add(source: str, new: Iterable[Row]) -> None:
        if source in skip:
            return
        new = list(new)
        rows.extend(new)
        tags.extend([source] * len(new))

    for path in sorted((data / "routing_train").glob("*.txt")):
        add("routing_train", read_domain_lines(path))
    for path in sorted((data / "dev_questions_src").glob("dev_*.txt")):
        add("dev_sources", read_domain_lines(path))
    templates = [t for t in (data / "dev_questions_src" / "general_templates.txt").read_text().splitlines() if t]
    for d in sorted(by_domain):
        add("general_templates", [(d, "general", t.format(thing=by_domain[d][0].domain)) for t in templates])
    team = json.loads((data / "targeted_questions.json").read_text())
    for d, entry in sorted(team.items()):
        add("team_questions", [(d, x["attribute"], x["question"]) for x in entry.get("targeted", [])])
        add("team_questions", [(d, "general", q) for q in entry.get("general", [])])
    out = domain_examples(rows, by_domain, per_question, tags)
    if OWN_AGENTS not in skip:  # many and alike: one scenario each
        own = own_agent_questions(by_domain)
        out += domain_examples(own, by_domain, 1, [OWN_AGENTS] * len(own))
    ids = {s.id: s for s in bank}
    per_scenario = [(p, "routing_train_scenario") for p in sorted((data / "routing_train").glob("*.jsonl"))]
    per_scenario += [(data / "former_heldout" / "heldout_questions.jsonl", "former_heldout"),
                     (data / "former_heldout" / "heldout_questions_v3.jsonl", "former_heldout")]
    for path, source in per_scenario:
        if source in skip:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                r = json.loads(line)
                if r["scenario_id"] not in ids:
                    raise ValueError(f"{path}:{n}: unknown scenario_id {r['scenario_id']!r}")
                out.append(scenario_example(ids[r["scenario_id"]], r["question"], r["expect"], source))
    return out


def own_agent_questions(by_domain: dict[str, list[Scenario]]) -> list[Row]:
    """The questions the project's own agents ask (the ``own_agents`` source), so the router keeps routing them.

    The oracle's "How do you feel about <keyword or label>?", the full PPO wrapper's question naming a
    column's values (labelled with the column's attribute), and the rule agent's general question. A
    keyword question is kept only where the lexical matcher routes it to its attribute in every scenario
    that has the attribute (a keyword several attributes share says nothing alone).
    """
    from hear2act.agents.rule import GENERAL_QUESTION
    from hear2act_env.dialogue.matching import match_question
    from hear2act_env.env import options_text

    from .reader import Options
    from .wrappers import column_question

    rows: list[Row] = []
    for d, scen in sorted(by_domain.items()):
        rows.append((d, "general", GENERAL_QUESTION))
        seen: dict[str, set[str]] = {}
        columns: set[tuple[str, str]] = set()
        for s in scen:
            for a in s.attributes:
                for q in (f"How do you feel about {a.label}?", *(f"How do you feel about {k}?" for k in a.keywords)):
                    seen.setdefault(a.name, set()).add(q)
            # The full wrapper's column questions, exactly as it words them (column k is the k-th value).
            opts = Options.parse(options_text(s))
            names = list(s.options[0].values)
            for k in range(opts.width if opts.width == len(names) else 0):
                q = column_question(list(opts.column(k).values()))
                if q:
                    columns.add((names[k], q))
        for name, questions in sorted(seen.items()):
            having = [s for s in scen if name in {a.name for a in s.attributes}]
            for q in sorted(questions):
                hits = [match_question(s, q) for s in having]
                if all(t is not None and t.attribute == name for t in hits):
                    rows.append((d, name, q))
        rows += [(d, name, q) for name, q in sorted(columns)]
    return rows
