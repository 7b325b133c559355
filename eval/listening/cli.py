"""``hear2act listen``: a local web page for the human listening test.

Annotators hear a user utterance with its preceding dialogue context and judge
the speaker's state, either 4-way over the graded states (resolved / reluctant /
concern / rejection) or binary (resolved / unresolved).

``hear2act listen DIR --annotator NAME`` serves the test for one annotator
(:mod:`hear2act.eval.listening.server`); the clip manifest and the answer files are described
in :mod:`hear2act.eval.listening.data`.

``hear2act listen DIR --score`` prints per-annotator accuracy, Cohen's kappa
(annotator pairs, and each annotator vs the intended labels) and confusion matrices.
This module holds the scoring and the CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hear2act_env.cli import port_int

from .data import MODES, Answer, Manifest, ManifestError, _warn, latest_answers, load_manifest, read_answers
from .server import make_server
from .stats import (
    BINARY,
    GRADED,
    UNRESOLVED,
    accuracy,
    cohen_kappa,
    collapse,
    confusion_matrix,
    per_class_accuracy,
)

# ---------------------------------------------------------------- scoring


def load_all_answers(root: str | os.PathLike[str]) -> dict[str, dict[str, Answer]]:
    """annotator -> clip id -> last answer, from every ``answers-*.csv`` in the directory."""
    rows: list[Answer] = []
    for path in sorted(Path(root).glob("answers-*.csv")):
        rows.extend(read_answers(path, warn=_warn))
    by_annotator: dict[str, list[Answer]] = {}
    for a in rows:
        by_annotator.setdefault(a.annotator, []).append(a)
    return {name: latest_answers(answers) for name, answers in sorted(by_annotator.items())}


def _acc(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    correct = sum(g == p for g, p in zip(gold, pred, strict=True))
    return {"correct": correct, "total": len(gold), "value": accuracy(gold, pred) if gold else None}


def _per_class(gold: Sequence[str], pred: Sequence[str], order: Sequence[str]) -> dict[str, dict[str, Any]]:
    table = per_class_accuracy(gold, pred)
    return {
        k: {"correct": table[k][0], "total": table[k][1], "value": table[k][0] / table[k][1]}
        for k in order if k in table
    }


def _kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    return cohen_kappa(a, b) if a else None


def annotator_mode(labels: Iterable[str], default: str) -> str:
    """How an annotator answered: ``binary`` if any answer is ``unresolved``, ``4way`` if any is
    ``reluctant``/``concern``/``rejection``, else (all ``resolved``) ``default``.

    >>> annotator_mode(["resolved", "unresolved"], "4way"), annotator_mode(["concern"], "binary")
    ('binary', '4way')
    >>> annotator_mode(["resolved"], "binary")
    'binary'
    """
    labels = set(labels)
    if UNRESOLVED in labels:
        return "binary"
    if labels & set(GRADED[1:]):
        return "4way"
    return default


def score(
    manifest: Manifest, answers: Mapping[str, Mapping[str, Answer]], mode: str | None = None
) -> dict[str, Any]:
    """The whole report as plain data (see :func:`format_report`).

    ``answers``: annotator -> clip id -> answer (as from :func:`load_all_answers`).
    Answers naming clips or labels the manifest does not know are counted as ``ignored``.
    """
    default_mode = mode or manifest.mode
    clips = manifest.by_id()
    valid = set(GRADED) | {UNRESOLVED}
    labels: dict[str, dict[str, str]] = {}
    report: dict[str, Any] = {
        "clips": len(manifest.clips),
        "mode": manifest.mode,
        "renderer": manifest.renderer,
        "annotators": {},
        "pairs": [],
    }
    rows = list(GRADED) + ([UNRESOLVED] if any(c.intended == UNRESOLVED for c in manifest.clips) else [])
    for name, given in answers.items():
        kept = {cid: a.label for cid, a in given.items() if cid in clips and a.label in valid}
        labels[name] = kept
        amode = annotator_mode(kept.values(), default_mode)
        ids = [c.id for c in manifest.clips if c.id in kept]  # manifest order
        gold = [clips[cid].intended for cid in ids]
        pred = [kept[cid] for cid in ids]
        gold2, pred2 = [collapse(x) for x in gold], [collapse(x) for x in pred]
        four = amode == "4way" and all(g in GRADED for g in gold)
        entry: dict[str, Any] = {
            "mode": amode,
            "answered": len(ids),
            "ignored": len(given) - len(kept),
            "accuracy_4way": _acc(gold, pred) if four else None,
            "per_class_4way": _per_class(gold, pred, GRADED) if four else None,
            "accuracy_binary": _acc(gold2, pred2),
            "per_class_binary": _per_class(gold2, pred2, BINARY),
            "kappa_vs_intended": {
                "4way": _kappa(gold, pred) if four else None,
                "binary": _kappa(gold2, pred2),
            },
            "confusion": {
                "rows": rows,
                "cols": list(GRADED) if amode == "4way" else list(BINARY),
                "matrix": confusion_matrix(gold, pred, rows, GRADED if amode == "4way" else BINARY),
            },
            "confusion_binary": {"rows": list(BINARY), "cols": list(BINARY),
                                 "matrix": confusion_matrix(gold2, pred2, BINARY)},
        }
        report["annotators"][name] = entry
    names = list(report["annotators"])
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = [c.id for c in manifest.clips if c.id in labels[a] and c.id in labels[b]]
            la, lb = [labels[a][c] for c in common], [labels[b][c] for c in common]
            both4 = report["annotators"][a]["mode"] == report["annotators"][b]["mode"] == "4way"
            report["pairs"].append({
                "a": a, "b": b, "n": len(common),
                "kappa_4way": _kappa(la, lb) if both4 else None,
                "kappa_binary": _kappa([collapse(x) for x in la], [collapse(x) for x in lb]),
            })
    return report


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _acc_line(acc: Mapping[str, Any]) -> str:
    return f"{_num(acc['value'])} ({acc['correct']}/{acc['total']})"


def _matrix(conf: Mapping[str, Any], indent: str) -> list[str]:
    rows, cols, matrix = conf["rows"], conf["cols"], conf["matrix"]
    w0 = max(len("intended"), *(len(r) for r in rows))
    widths = [max(len(c), 3) for c in cols]
    def line(first: str, cells: Sequence[Any]) -> str:
        return indent + first.ljust(w0) + "".join(f"  {x:>{w}}" for x, w in zip(cells, widths, strict=True))

    lines = [line("intended", cols)]
    lines += [line(r, counts) for r, counts in zip(rows, matrix, strict=True)]
    return lines


def format_report(report: Mapping[str, Any]) -> str:
    """The human-readable form of :func:`score`'s report."""
    out = [f"Listening test: {report['clips']} clips, manifest mode {report['mode']}, "
           f"renderer {report['renderer'] or 'unknown'}"]
    if not report["annotators"]:
        out.append("No answers yet (no answers-*.csv in the clip directory).")
        return "\n".join(out)
    for name, e in report["annotators"].items():
        out.append("")
        ignored = f", {e['ignored']} ignored (unknown clip or label)" if e["ignored"] else ""
        answered = f"{e['answered']}/{report['clips']} clips answered"
        out.append(f"Annotator {name} ({e['mode']}): {answered}{ignored}")
        if e["answered"] == 0:
            continue
        if e["accuracy_4way"] is not None:
            out.append(f"  accuracy 4-way:  {_acc_line(e['accuracy_4way'])}")
            out += [f"    {k:<11}{_acc_line(v)}" for k, v in e["per_class_4way"].items()]
        out.append(f"  accuracy binary: {_acc_line(e['accuracy_binary'])}")
        out += [f"    {k:<11}{_acc_line(v)}" for k, v in e["per_class_binary"].items()]
        k = e["kappa_vs_intended"]
        four = f"4-way {_num(k['4way'])}, " if k["4way"] is not None else ""
        out.append(f"  kappa vs intended: {four}binary {_num(k['binary'])}")
        out.append("  confusion (rows intended, columns answered):")
        out += _matrix(e["confusion"], "    ")
        if e["mode"] == "4way":
            out.append("  confusion, collapsed binary:")
            out += _matrix(e["confusion_binary"], "    ")
    if report["pairs"]:
        out.append("")
        out.append("Cohen's kappa between annotators (on the clips both answered):")
        for p in report["pairs"]:
            four = f"4-way {_num(p['kappa_4way'])}, " if p["kappa_4way"] is not None else ""
            out.append(f"  {p['a']} vs {p['b']}: n={p['n']}, {four}binary {_num(p['kappa_binary'])}")
    return "\n".join(out)


# ---------------------------------------------------------------- CLI


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "listen", help="serve the human listening test page, or score its answers",
        description="Serve the listening test for one annotator (--annotator), "
        "or score all answers (--score).",
    )
    p.add_argument("dir", metavar="DIR", help="clip directory holding manifest.json")
    p.add_argument("--annotator", help="annotator name (answers go to DIR/answers-NAME.csv)")
    p.add_argument("--port", type=port_int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--mode", choices=MODES, default=None, help="override the manifest's mode")
    p.add_argument("--score", action="store_true", help="score the answers in DIR instead of serving")
    p.add_argument("--json", action="store_true", help="with --score: print the report as JSON")
    p.add_argument("--verbose", action="store_true", help="log every HTTP request")
    p.set_defaults(func=_listen)


def _listen(args: argparse.Namespace) -> int:
    try:
        if args.score:
            manifest = load_manifest(args.dir, check_audio=False)
            report = score(manifest, load_all_answers(args.dir), args.mode)
            print(json.dumps(report, indent=2) if args.json else format_report(report))
            return 0
        if not args.annotator:
            print("hear2act listen: error: --annotator NAME is required to serve (or use --score)",
                  file=sys.stderr)
            return 2
        server = make_server(args.dir, args.annotator, args.host, args.port, args.mode, args.verbose)
    except (ManifestError, ValueError) as e:
        print(f"hear2act listen: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"hear2act listen: error: cannot serve on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    n, done = len(server.order), sum(c in server.store.answered for c in server.order)
    print(f"Listening test for {server.annotator} ({server.mode}, {n} clips, {done} already answered): "
          f"open {server.url}\nAnswers go to {server.store.path}. Ctrl-C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
