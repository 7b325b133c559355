"""Fit the learned router's weights (:mod:`.router`) from labelled questions.

Training data are domain-level questions, each labelled with the attribute it
asks about or ``general`` (``tests/data/routing_train/*.txt`` and the older
development sources). A domain-level question is placed in several of its
domain's scenarios (which ones rotates with the question's index), because the
lexical evidence depends on the scenario (a need's own keywords, attributes
the scenario lacks); its label is the same in each.

The objective is the softmax cross-entropy over each row's candidates plus an
L2 penalty (``l2_domain`` on a domain's classes, ``l2_shared`` on the
cross-domain ones, ``l2_beta`` on the lexical weights), minimised by full-batch
Adam for a fixed number of steps from zeros: the same data give the same
weights. Weights below ``prune`` in magnitude are dropped and the rest rounded
to four decimals, which keeps the file small; accuracy is measured on the
pruned weights.

Settings were chosen on ``tests/data/heldout_questions_v2.jsonl`` (a
validation set, never fitted on): L2 1e-6 (1e-3 left rare words near zero:
paraphrases 0.63 -> 0.83), pruning at 0.1 (no change), and ``general_offset``
0.75, added to general's score at decision time (v2: need 0.958 -> 0.955,
general 0.927 -> 0.958). ``tests/data/heldout_questions_v4.jsonl`` and
``heldout_questions_v5.jsonl`` were never used for anything but the final
measurement.

Run ``python -m hear2act_env.dialogue.router_fit`` (``--help``); it needs
scipy (``pip install "hear2act[dev]"``), the router itself does not.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..scenarios import Scenario
from .router import GENERAL, PSI, WEIGHTS_PATH, Router, candidates, lexical_evidence, question_features, slug

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


@dataclass(frozen=True)
class Example:
    scenario: Scenario
    question: str
    labels: frozenset[str]  # the right candidates (attribute names, GENERAL); "other" rows allow any non-need


def scenario_example(scenario: Scenario, question: str, expect: str) -> Example:
    """A row written for one scenario: ``expect`` is L1/L2/L3, general, or other (any candidate but a need)."""
    if expect == "general":
        return Example(scenario, question, frozenset({GENERAL}))
    if expect == "other":
        needs = {n.attribute for n in scenario.needs}
        return Example(scenario, question, frozenset(c.name for c in candidates(scenario) if c.name not in needs))
    if expect in ("L1", "L2", "L3"):
        level = int(expect[1])
        return Example(scenario, question, frozenset({next(n.attribute for n in scenario.needs if n.level == level)}))
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


def domain_examples(rows: Iterable[tuple[str, str, str]], by_domain: dict[str, list[Scenario]],
                    per_question: int) -> list[Example]:
    out = []
    for i, (domain, attr, q) in enumerate(rows):
        scen = by_domain.get(domain)
        if not scen:
            raise ValueError(f"unknown domain {domain!r} (question {q!r})")
        names = {c.name for c in candidates(scen[0])} | {GENERAL}
        label = GENERAL if attr == "general" else attr
        if label not in names:
            raise ValueError(f"{domain}: unknown attribute {attr!r} (question {q!r})")
        for j in range(per_question):
            out.append(Example(scen[(i * 3 + j * 7) % len(scen)], q, frozenset({label})))
    return out


def default_examples(bank: list[Scenario], per_question: int = 4, data: Path = DATA) -> list[Example]:
    """The shipped training set: routing_train/, the development sources, the project's own questions, v1."""
    by_domain: dict[str, list[Scenario]] = defaultdict(list)
    for s in bank:
        by_domain[slug(s.domain)].append(s)
    rows: list[tuple[str, str, str]] = []
    for path in sorted((data / "routing_train").glob("*.txt")):
        rows += read_domain_lines(path)
    for path in sorted((data / "dev_questions_src").glob("dev_*.txt")):
        rows += read_domain_lines(path)
    templates = [t for t in (data / "dev_questions_src" / "general_templates.txt").read_text().splitlines() if t]
    for d in sorted(by_domain):
        rows += [(d, "general", t.format(thing=by_domain[d][0].domain)) for t in templates]
    own = json.loads((data / "targeted_questions.json").read_text())
    for d, entry in sorted(own.items()):
        rows += [(d, x["attribute"], x["question"]) for x in entry.get("targeted", [])]
        rows += [(d, "general", q) for q in entry.get("general", [])]
    out = domain_examples(rows, by_domain, per_question)
    out += domain_examples(own_templates(by_domain), by_domain, 1)  # many and alike: one scenario each
    ids = {s.id: s for s in bank}
    # Rows written per scenario: routing_train/*.jsonl, and two former held-out sets that became development
    # sets once measured and read (v1: the lexical matcher's frames; v3: the first router's held-out figure).
    dev_sets = [data / "heldout_questions.jsonl", data / "heldout_questions_v3.jsonl"]
    for path in [*sorted((data / "routing_train").glob("*.jsonl")), *dev_sets]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                r = json.loads(line)
                if r["scenario_id"] not in ids:
                    raise ValueError(f"{path}:{n}: unknown scenario_id {r['scenario_id']!r}")
                out.append(scenario_example(ids[r["scenario_id"]], r["question"], r["expect"]))
    return out


def own_templates(by_domain: dict[str, list[Scenario]]) -> list[tuple[str, str, str]]:
    """The questions the project's own agents ask, so the router keeps routing them.

    The oracle's "How do you feel about <keyword or label>?", the full PPO wrapper's question naming a
    column's values (labelled with the column's attribute), and the rule agent's general question. A
    keyword question is kept only where the lexical matcher routes it to its attribute in every scenario
    that has the attribute (a keyword several attributes share says nothing alone).
    """
    from hear2act.agents.rule import GENERAL_QUESTION
    from hear2act.training.reader import Options
    from hear2act.training.wrappers import column_question

    from ..env import options_text
    from .matching import match_question

    rows: list[tuple[str, str, str]] = []
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


def fit(examples: list[Example], *, steps: int = 300, lr: float = 0.05, l2_domain: float = 1e-6,
        l2_shared: float = 1e-6, l2_beta: float = 1e-4, prune: float = 0.1, min_count: int = 1,
        general_offset: float = 0.75, log: bool = False) -> dict:
    """Weights for :class:`.router.Router` (a JSON-ready dict)."""
    try:
        from scipy import sparse
    except ImportError as exc:  # a development tool: the router itself needs only the standard library
        raise ImportError('fitting the router needs scipy: pip install "hear2act[dev]"') from exc
    questions = sorted({e.question for e in examples})
    qindex = {q: i for i, q in enumerate(questions)}
    counts: dict[str, int] = defaultdict(int)
    for q in questions:
        for f in question_features(q):
            counts[f] += 1
    vocab = sorted(f for f, c in counts.items() if c >= min_count)
    findex = {f: i for i, f in enumerate(vocab)}
    indptr, indices = [0], []
    for q in questions:
        indices += [findex[f] for f in question_features(q) if f in findex]
        indptr.append(len(indices))
    X = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(questions), len(vocab)))
    XT = X.T.tocsr()

    keys: dict[str, int] = {}
    rows_q, slot_keys, psi_rows, labels, masks = [], [], [], [], []
    width = max(len(candidates(e.scenario)) for e in examples)
    for e in examples:
        cands = candidates(e.scenario)
        psi = lexical_evidence(e.scenario, e.question, cands)
        k1 = [keys.setdefault(c.keys[0], len(keys)) for c in cands]
        k2 = [keys.setdefault(c.keys[1], len(keys)) if len(c.keys) > 1 else -1 for c in cands]
        pad = width - len(cands)
        rows_q.append(qindex[e.question])
        slot_keys.append((k1 + [0] * pad, k2 + [-1] * pad))
        psi_rows.append(psi + [(0.0,) * len(PSI)] * pad)
        labels.append([c.name in e.labels for c in cands] + [False] * pad)
        masks.append([True] * len(cands) + [False] * pad)
    rq = np.array(rows_q)
    K1 = np.array([a for a, _ in slot_keys])
    K2 = np.array([b for _, b in slot_keys])
    has2 = K2 >= 0
    K2c = np.where(has2, K2, 0)
    P = np.array(psi_rows)  # rows x slots x psi
    Y = np.array(labels)  # rows x slots: the right candidates
    M = np.array(masks)
    n, width = M.shape
    nk = len(keys)
    shared = np.array([k.startswith("*/") for k in sorted(keys, key=keys.get)])
    l2 = np.where(shared, l2_shared, l2_domain)[:, None]

    rr, k1, k2, h2 = np.repeat(rq, width), K1.ravel(), K2.ravel(), has2.ravel()
    W = np.zeros((nk, len(vocab)))
    beta = np.zeros(len(PSI))
    mW, vW = np.zeros_like(W), np.zeros_like(W)
    mb, vb = np.zeros_like(beta), np.zeros_like(beta)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        XW = np.asarray(X @ W.T)  # questions x keys
        S = XW[rq[:, None], K1] + np.where(has2, XW[rq[:, None], K2c], 0.0) + P @ beta
        S = np.where(M, S, -1e9)
        S -= S.max(axis=1, keepdims=True)
        E = np.exp(S)
        prob = E / E.sum(axis=1, keepdims=True)
        right = (prob * Y).sum(axis=1, keepdims=True)
        loss = -np.log(right + 1e-12).mean()
        d = (prob - prob * Y / (right + 1e-12)) / n  # d(-log sum of the right candidates' p)/d(score)
        # Per question and class, the summed score gradients (a COO matrix adds up duplicates).
        G = sparse.coo_matrix(
            (np.concatenate([d.ravel(), d.ravel()[h2]]), (np.concatenate([rr, rr[h2]]), np.concatenate([k1, k2[h2]]))),
            shape=(len(questions), nk),
        ).toarray()
        gW = np.asarray((XT @ G).T) + l2 * W
        gb = np.einsum("rs,rsp->p", d, P) + l2_beta * beta
        for g, m, v, p in ((gW, mW, vW, W), (gb, mb, vb, beta)):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        if log and (t % 50 == 0 or t == 1):
            acc = float(Y[np.arange(n), prob.argmax(axis=1)].mean())
            print(f"step {t:4d}  loss {loss:.4f}  train acc {acc:.4f}")
    names = sorted(keys, key=keys.get)
    weights = {}
    for ki, name in enumerate(names):
        row = W[ki]
        nz = np.flatnonzero(np.abs(row) >= prune)
        if len(nz):
            weights[name] = {vocab[j]: round(float(row[j]), 4) for j in nz}
    return {"version": 1, "psi": list(PSI), "beta": [round(float(b), 4) for b in beta], "weights": weights,
            "general_offset": general_offset}


def write(weights: dict, path: Path = WEIGHTS_PATH) -> None:
    """Write gzip'd JSON with a fixed mtime, so the same weights give the same bytes."""
    text = json.dumps(weights, sort_keys=True, separators=(",", ":"))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
        fh.write(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> None:
    from ..scenarios import load_scenarios

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300, help="Adam steps (full batch)")
    ap.add_argument("--lr", type=float, default=0.05, help="Adam learning rate")
    ap.add_argument("--l2-domain", type=float, default=1e-6, help="L2 on a domain's attribute/general weights")
    ap.add_argument("--l2-shared", type=float, default=1e-6, help="L2 on cross-domain weights")
    ap.add_argument("--per-question", type=int, default=4, help="scenarios each domain-level question is placed in")
    ap.add_argument("--prune", type=float, default=0.1, help="drop weights smaller than this in magnitude")
    ap.add_argument("--general-offset", type=float, default=0.75,
                    help="added to general's score at decision time (0.75 balanced need/general on the v2 set)")
    ap.add_argument("--min-count", type=int, default=1, help="keep features seen in at least this many questions")
    ap.add_argument("--out", type=Path, default=WEIGHTS_PATH, help="where to write the weights")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="folder with routing_train/, dev_questions_src/, targeted_questions.json (a source checkout's "
                         "tests/data)")
    args = ap.parse_args(argv)
    if not (args.data / "routing_train").is_dir():
        raise SystemExit(f"router_fit: no training data at {args.data / 'routing_train'} (run from a source checkout "
                         "or pass --data)")
    examples = default_examples(load_scenarios(), args.per_question, args.data)
    print(f"{len(examples)} training rows, {len({e.question for e in examples})} distinct questions")
    weights = fit(examples, steps=args.steps, lr=args.lr, l2_domain=args.l2_domain, l2_shared=args.l2_shared,
                  prune=args.prune, min_count=args.min_count, general_offset=args.general_offset, log=True)
    write(weights, args.out)
    router = Router(weights)
    right = sum(router.best(e.scenario, e.question).name in e.labels for e in examples)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes); training accuracy {right / len(examples):.4f}")


if __name__ == "__main__":
    main()
