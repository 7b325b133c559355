"""``hear2act scenarios export --format hf DIR``: the bank as a Hugging Face ``datasets`` folder.

The folder holds ``data/test.parquet`` (one row per scenario) and a dataset
card ``README.md`` whose YAML header declares the split, so
``datasets.load_dataset(DIR)`` (or ``huggingface-cli upload``) reads it as it
is. Each row carries the scenario's fields as typed columns plus ``scenario``,
its canonical JSON line, from which :meth:`Scenario.from_dict` rebuilds it
exactly. ``datasets`` is imported here only (``pip install datasets``); the
core never imports it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .model import Scenario

SPLIT = "test"  # the benchmark is an evaluation set: every scenario is a test scenario
CITATION = """@misc{liu2026hear2act,
  title         = {Hear2Act: Benchmarking When Prosody Should Change What an Assistant Does},
  author        = {Liu, Xinyi and Nayyeri, Hooshang and Hakkani-Tur, Dilek and Yilmaz, Emine and
                   Kim, Joo-Kyung and Zhang, Yifei and Peris, Charith and Thadakamalla, Hari},
  year          = {2026},
  eprint        = {2608.19515},
  archivePrefix = {arXiv}
}"""


# The card's field table: (column, type, meaning).
FIELDS = (
    ("`id`", "string", "`<domain-slug>-<nn>`"),
    ("`domain`, `family`", "string", "the shopping domain and its family"),
    ("`persona`", "struct", "`situation`, `urgency` (low/medium/high), `budget` (tight/moderate/flexible), "
                            "`expertise` (novice/intermediate/expert)"),
    ("`request`", "string", "the user's opening request"),
    ("`requirements`", "list of struct", "visible requirements: numeric (`attribute`, `op` one of `<` `<=` `>` `>=`, "
                                         "`value`) or categorical (`op` = `in`, `values`), and the user's "
                                         "`statement` when an option breaks it"),
    ("`priority`", "string", "the visible attribute the request ranks by"),
    ("`attributes`", "list of struct", "`kind` is `visible` (shown: numeric with `better` lower/higher and its print "
                                       "format, or categorical), `need` (a hidden need's attribute) or `distractor`; "
                                       "`keywords` make a question targeted at it"),
    ("`needs`", "list of struct", "L1..L3: `attribute`, `accept` (values that satisfy it), `statement`, "
                                  "`keywords`, `hint` (L1 only)"),
    ("`options`", "list of struct", "`number` (1..11), `name`, `description` (what the agent is shown), "
                                    "`values_json` (attribute -> value, a JSON object)"),
    ("`gold`, `safe`, `opening`", "int32", "option numbers of the three roles"),
    ("`request_violating`", "list of int32", "the two options that break a visible requirement"),
    ("`scenario`", "string", "the canonical JSON of the scenario (what the JSONL file holds)"),
)


def _fields_table() -> str:
    rows = ["| column | type | meaning |", "| --- | --- | --- |"]
    return "\n".join(rows + [f"| {c} | {t} | {m} |" for c, t, m in FIELDS])


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise ImportError("hear2act scenarios export --format hf needs the datasets package: "
                          "pip install datasets") from None
    return datasets


def _features(datasets: Any) -> Any:
    V = datasets.Value
    text_list = datasets.Sequence(V("string"))
    return datasets.Features({
        "id": V("string"), "domain": V("string"), "family": V("string"),
        "persona": {"situation": V("string"), "urgency": V("string"), "budget": V("string"),
                    "expertise": V("string")},
        "request": V("string"),
        "requirements": [{"attribute": V("string"), "op": V("string"), "value": V("float64"),
                          "values": text_list, "statement": V("string")}],
        "priority": V("string"),
        "attributes": [{"name": V("string"), "label": V("string"), "kind": V("string"), "keywords": text_list,
                        "values": text_list, "better": V("string"), "prefix": V("string"), "suffix": V("string"),
                        "decimals": V("int32"), "worse": V("string")}],
        "needs": [{"level": V("int32"), "attribute": V("string"), "accept": text_list, "statement": V("string"),
                   "keywords": text_list, "hint": V("string")}],
        "options": [{"number": V("int32"), "name": V("string"), "description": V("string"),
                     "values_json": V("string")}],
        "gold": V("int32"), "safe": V("int32"), "opening": V("int32"),
        "request_violating": datasets.Sequence(V("int32")),
        "scenario": V("string"),
    })


def scenario_row(s: Scenario) -> dict[str, Any]:
    """One dataset row: typed columns (hidden needs and roles included) and the canonical JSON."""
    return {
        "id": s.id, "domain": s.domain, "family": s.family, "persona": s.persona.to_dict(), "request": s.request,
        "requirements": [{"attribute": r.attribute, "op": r.op, "value": r.value, "values": list(r.values),
                          "statement": r.statement} for r in s.requirements],
        "priority": s.priority,
        "attributes": [{"name": a.name, "label": a.label, "kind": a.kind, "keywords": list(a.keywords),
                        "values": list(a.values), "better": a.better, "prefix": a.prefix, "suffix": a.suffix,
                        "decimals": a.decimals, "worse": a.worse} for a in s.attributes],
        "needs": [{"level": n.level, "attribute": n.attribute, "accept": list(n.accept), "statement": n.statement,
                   "keywords": list(n.keywords), "hint": n.hint} for n in s.needs],
        "options": [{"number": o.number, "name": o.name, "description": o.description,
                     "values_json": json.dumps(dict(o.values), ensure_ascii=False, sort_keys=True)}
                    for o in s.options],
        "gold": s.gold, "safe": s.safe, "opening": s.opening, "request_violating": list(s.request_violating),
        "scenario": json.dumps(s.to_dict(), ensure_ascii=False, separators=(",", ":")),
    }


def export_hf(out: str | Path, source: str | Path | None = None, *, name: str | None = None) -> Path:
    """Write the bank at ``source`` (default: the default bank) as a datasets folder at ``out``."""
    from . import load_scenarios
    from .generator import BANK_FILE
    from .userbank import default_bank_path

    datasets = _datasets()
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(17, "Output folder exists and is not empty", str(out))
    path = Path(source) if source is not None else default_bank_path()
    scenarios = load_scenarios(path)
    paper = path.resolve() == BANK_FILE.resolve()
    ds = datasets.Dataset.from_list([scenario_row(s) for s in scenarios], features=_features(datasets))
    (out / "data").mkdir(parents=True, exist_ok=True)
    ds.to_parquet(str(out / "data" / f"{SPLIT}.parquet"))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    title = name or ("hear2act-scenarios" if paper else f"hear2act-scenarios-{path.stem}")
    (out / "README.md").write_text(dataset_card(scenarios, title, path.name, digest, paper), encoding="utf-8")
    return out


def dataset_card(scenarios: Sequence[Scenario], title: str, source: str, digest: str, paper: bool) -> str:
    """The README.md of the exported folder: YAML header (licence, split, features) and the card text."""
    from .. import __version__

    domains = sorted({s.domain for s in scenarios})
    families = sorted({s.family for s in scenarios})
    origin = ("the paper's bank: 480 scenarios, 10 per domain, of the 48 domains of its Table 6 in 8 families"
              if paper else f"a user bank of {len(scenarios)} scenarios in {len(domains)} domain(s) "
              f"({', '.join(domains)}), built with `hear2act scenarios build --domains`")
    return f"""---
license: cc-by-sa-4.0
pretty_name: {title}
language:
- en
task_categories:
- text-generation
tags:
- dialogue
- prosody
- clarification
- reinforcement-learning
- benchmark
size_categories:
- {"n<1K" if len(scenarios) < 1000 else "1K<n<10K"}
configs:
- config_name: default
  data_files:
  - split: {SPLIT}
    path: data/{SPLIT}.parquet
---

# {title}

Hear2Act scenarios exported from `{source}` (sha256 prefix `{digest}`) by hear2act {__version__}:
{origin}. Families: {", ".join(families)}.

Hear2Act: Benchmarking When Prosody Should Change What an Assistant Does (Liu et al.,
arXiv 2608.19515). Each scenario is a shopping task: a user's opening request states visible requirements
(a budget, a minimum rating) and what to rank by; three hidden needs (L1 hard constraint,
L2 strong, L3 moderate preference) are never stated in the request; eleven options are
shown. One option (the *gold*) meets the request and every need and is best on the
priority among those; a *safe* option also meets every need but is worse on the priority;
the *opening* option leads on the priority and misses a need. An assistant has to find
out what the user needs (the Hear2Act environment plays the user, whose prosody tells
whether a need is still unresolved) before it commits.

**The columns hold the hidden state** (`needs`, `gold`, `safe`, the attribute kinds): use
them to score and to train reward models, never as an agent's input. What an agent sees
is the `request` and the option `description`s (and, in the environment, the user's replies).

## Loading

```python
import datasets
from hear2act_env.scenarios import Scenario
import json

ds = datasets.load_dataset("path/to/this/folder", split="{SPLIT}")
scenario = Scenario.from_dict(json.loads(ds[0]["scenario"]))   # the exact scenario object
```

To play them: `gym.make("Hear2Act-Prosody-v5", scenarios=[...])` with those objects, or the
JSONL file itself (`scenarios="{source}"`).

## Splits

| split | rows | what |
| --- | --- | --- |
| `{SPLIT}` | {len(scenarios)} | every scenario: the benchmark is an evaluation set |

The RL kit's held-out split (whole domains, then scenarios per domain) is a function of
the ids: `hear2act.training.splits.split_scenarios(scenarios, 8, 2, 0)` for the defaults.

## Fields

{_fields_table()}

## How it was generated

Hand-written domain content files (attribute vocabularies, option names and ten personas
per domain, each with a request, visible requirements and a three-level need ladder) are
assembled by a deterministic generator (`hear2act_env/scenarios/generator.py`): one
`numpy` generator per scenario seeded from the bank version and the scenario id, so the
bank regenerates byte-identically. Option values follow a premium model (options that
offer more cost more and rate higher, with seeded noise); every scenario passes the
structural validator (`hear2act scenarios validate`), and banks of 100 or more scenarios
also pass the bank-wide rules that keep the visible numbers from ranking the gold.
No personal data: the personas and names are invented.

## Licence

CC BY-SA 4.0. The attribute vocabulary of the domains with a Schema-Guided Dialogue
counterpart (their content files list `sgd_services`) is adapted from the SGD service
schemas (Rastogi et al., AAAI 2020, CC BY-SA 4.0), so the scenario data carries that
licence; the hear2act code is Apache-2.0. A user bank is its author's: change the
`license` line of this card to the licence of the domain files it was built from.

## Citation

```bibtex
{CITATION}
```
"""
