"""Fit the learned router's weights (:mod:`hear2act_env.dialogue.router`) from labelled questions: a tool.

Training rows come from the declared sources of :mod:`hear2act.training.router_data`
(domain-level questions, each labelled with the attribute it asks about or
``general``, and rows written per scenario). A domain-level question is placed
in several of its domain's scenarios (which ones rotates with the question's
index), because the lexical evidence depends on the scenario (a need's own
keywords, attributes the scenario lacks); its label is the same in each.

The objective is the softmax cross-entropy over each row's candidates plus an
L2 penalty (``l2_domain`` on a domain's classes, ``l2_shared`` on the
cross-domain ones, ``l2_beta`` on the lexical weights), minimised by full-batch
Adam for a fixed number of steps from zeros: the same data give the same
weights. Weights below ``prune`` in magnitude are dropped and the rest rounded
to four decimals, which keeps the file small; accuracy is measured on the
pruned weights.

Which data chose what: the weights are fitted on every source of
:data:`hear2act.training.router_data.SOURCES`; the settings were chosen on
``tests/data/heldout_questions_v2.jsonl`` (a validation set, never fitted on):
L2 1e-6 (1e-3 left rare words near zero: paraphrases 0.63 -> 0.83), pruning at
0.1 (no change), ``distractor_offset`` -1.0 (added to a shown distractor's score; chosen
when env -v4 showed 3-4 distractor columns: v2 need / general 0.948 / 0.948 -> 0.951 / 0.958, the
shipped weights being those fitted on -v3's bank; a refit on -v4's read 0.944 / 0.948), and
``general_offset`` 0.75, added to general's score at
decision time (v2: need 0.958 -> 0.955, general 0.927 -> 0.958).
``tests/data/heldout_questions_v4.jsonl`` and ``heldout_questions_v5.jsonl``
were never used for anything but the final measurement. The project's own
agents' questions (source ``own_agents``) are fitted on so the router keeps
routing them, and reported apart: ``--report`` prints the shipped router's
accuracy per source, ``--exclude own_agents`` fits without them (measured: held-out
v4/v5/v2 need-targeted 0.972/0.958/0.958 without them, 0.969/0.948/0.951 with; but only 0.461 of
the own agents' rows routed right without them, 0.999 with).

Run ``python -m hear2act.training.router_fit`` (``--help``) from a source checkout (the
rows are in ``training/data/routing/``, beside this tool; the wheel does not ship them); it needs
scipy (``pip install "hear2act[dev]"``), the router itself does not. Nothing under ``hear2act_env`` imports this module.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from hear2act_env.dialogue.router import PSI, WEIGHTS_PATH, Router, candidates, lexical_evidence, question_features

from .router_data import DATA, SOURCES, Example, default_examples

__all__ = ["fit", "main", "per_source_accuracy", "write"]


def fit(examples: list[Example], *, steps: int = 300, lr: float = 0.05, l2_domain: float = 1e-6,
        l2_shared: float = 1e-6, l2_beta: float = 1e-4, prune: float = 0.1, min_count: int = 1,
        general_offset: float = 0.75, distractor_offset: float = -1.0, log: bool = False) -> dict:
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
            "general_offset": general_offset, "distractor_offset": distractor_offset}


def write(weights: dict, path: Path = WEIGHTS_PATH) -> None:
    """Write gzip'd JSON with a fixed mtime, so the same weights give the same bytes."""
    text = json.dumps(weights, sort_keys=True, separators=(",", ":"))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
        fh.write(text.encode("utf-8"))


def per_source_accuracy(router: Router, examples: list[Example]) -> dict[str, tuple[int, int, int]]:
    """Per source: (rows, distinct questions, rows the router gets right), in :data:`SOURCES` order."""
    rows: Counter[str] = Counter()
    right: Counter[str] = Counter()
    questions: dict[str, set[str]] = {}
    for e in examples:
        rows[e.source] += 1
        questions.setdefault(e.source, set()).add(e.question)
        right[e.source] += router.best(e.scenario, e.question).name in e.labels
    order = [s for s in SOURCES if s in rows] + sorted(set(rows) - set(SOURCES))
    return {s: (rows[s], len(questions[s]), right[s]) for s in order}


def print_report(router: Router, examples: list[Example]) -> None:
    print(f"{'source':24s} {'rows':>7s} {'questions':>9s} {'accuracy':>8s}")
    for source, (n, q, ok) in per_source_accuracy(router, examples).items():
        note = "  (the project's own agents: in-house wording, not evidence)" if source == "own_agents" else ""
        print(f"{source:24s} {n:7d} {q:9d} {ok / n:8.4f}{note}")


def main(argv: list[str] | None = None) -> None:
    from hear2act_env.scenarios import load_scenarios

    ap = argparse.ArgumentParser(prog="python -m hear2act.training.router_fit", description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300, help="Adam steps (full batch)")
    ap.add_argument("--lr", type=float, default=0.05, help="Adam learning rate")
    ap.add_argument("--l2-domain", type=float, default=1e-6, help="L2 on a domain's attribute/general weights")
    ap.add_argument("--l2-shared", type=float, default=1e-6, help="L2 on cross-domain weights")
    ap.add_argument("--per-question", type=int, default=4, help="scenarios each domain-level question is placed in")
    ap.add_argument("--prune", type=float, default=0.1, help="drop weights smaller than this in magnitude")
    ap.add_argument("--general-offset", type=float, default=0.75,
                    help="added to general's score at decision time (0.75 balanced need/general on the v2 set)")
    ap.add_argument("--distractor-offset", type=float, default=-1.0,
                    help="added to a shown distractor's score (-1.0 on the v2 set with env -v4's bank)")
    ap.add_argument("--min-count", type=int, default=1, help="keep features seen in at least this many questions")
    ap.add_argument("--out", type=Path, default=WEIGHTS_PATH, help="where to write the weights")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="folder with routing_train/, dev_questions_src/, targeted_questions.json, former_heldout/ "
                         "(default: a source checkout's training/data/routing)")
    ap.add_argument("--exclude", action="append", default=[], choices=SOURCES, metavar="SOURCE",
                    help=f"leave a source out of the fit (repeatable; one of {', '.join(SOURCES)})")
    ap.add_argument("--report", action="store_true",
                    help="fit nothing: print the shipped router's (or --out's) accuracy on each source")
    args = ap.parse_args(argv)
    if not (args.data / "routing_train").is_dir():
        raise SystemExit(f"router_fit: no training data at {args.data / 'routing_train'} (run from a source checkout "
                         "or pass --data)")
    examples = default_examples(load_scenarios(), args.per_question, args.data, exclude=args.exclude)
    print(f"{len(examples)} training rows, {len({e.question for e in examples})} distinct questions")
    if args.report:
        print_report(Router.load(args.out), examples)
        return
    weights = fit(examples, steps=args.steps, lr=args.lr, l2_domain=args.l2_domain, l2_shared=args.l2_shared,
                  prune=args.prune, min_count=args.min_count, general_offset=args.general_offset,
                  distractor_offset=args.distractor_offset, log=True)
    write(weights, args.out)
    router = Router(weights)
    right = sum(router.best(e.scenario, e.question).name in e.labels for e in examples)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes); training accuracy {right / len(examples):.4f}")
    print_report(router, examples)


if __name__ == "__main__":
    main()
