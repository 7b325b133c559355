"""``hear2act listen``: a local web page for the human listening test.

Annotators hear a user utterance with its preceding dialogue context and judge
the speaker's state, either 4-way over the graded states (resolved / reluctant /
concern / rejection) or binary (resolved / unresolved).

``hear2act listen DIR --annotator NAME`` serves the test for one annotator
(stdlib ``http.server``, bound to 127.0.0.1 by default). ``DIR/manifest.json``::

    {"mode": "4way" | "binary", "renderer": "hibari",
     "clips": [{"id": "c001", "audio": "clips/c001.wav", "context": "User: ...\\nAssistant: ...",
                "utterance": "Okay, sounds good.", "intended": "concern"}, ...]}

Answers are appended, one whole line per write, to ``DIR/answers-NAME.csv``
(annotator, clip_id, label, elapsed_ms, timestamp). A restarted session skips the
clips already answered; if a clip is answered twice, the last answer wins.
The intended label never leaves the server.

``hear2act listen DIR --score`` prints per-annotator accuracy, Cohen's kappa
(annotator pairs, and each annotator vs the intended labels) and confusion matrices.

Routes: ``GET /`` the page; ``GET /api/clips`` the clips in this annotator's
order (seeded by the name); ``GET /clip/<id>`` the WAV; ``POST /answer`` a JSON
``{"clip_id", "label", "annotator", "elapsed_ms"}``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import os
import random
import re
import socket
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from .listen_stats import (
    BINARY,
    GRADED,
    UNRESOLVED,
    accuracy,
    cohen_kappa,
    collapse,
    confusion_matrix,
    per_class_accuracy,
)

MODES = ("4way", "binary")
# What the annotator sees next to each radio button.
LABELS: dict[str, tuple[tuple[str, str], ...]] = {
    "4way": (
        ("resolved", "Satisfied: happy to go ahead, no doubts left."),
        ("reluctant", "Goes along with it, but half-heartedly or grudgingly."),
        ("concern", "Has a worry or doubt that should be addressed first."),
        ("rejection", "Does not accept it: wants something else."),
    ),
    "binary": (
        ("resolved", "Satisfied: happy to go ahead, no doubts left."),
        ("unresolved", "Some reluctance, doubt or disagreement remains."),
    ),
}
CSV_COLUMNS = ("annotator", "clip_id", "label", "elapsed_ms", "timestamp")
ANNOTATOR_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_BODY = 64 * 1024
MAX_ELAPSED_MS = 7 * 24 * 3600 * 1000


class ManifestError(ValueError):
    """The clip directory or its manifest.json is malformed."""


@dataclass(frozen=True)
class Clip:
    id: str
    audio: Path  # absolute, inside the clip directory
    context: str
    utterance: str
    intended: str


@dataclass(frozen=True)
class Manifest:
    root: Path
    mode: str
    renderer: str
    clips: tuple[Clip, ...]

    def by_id(self) -> dict[str, Clip]:
        return {c.id: c for c in self.clips}


@dataclass(frozen=True)
class Answer:
    annotator: str
    clip_id: str
    label: str
    elapsed_ms: int
    timestamp: str


# ---------------------------------------------------------------- manifest


def validate_manifest(data: Any, root: Path, check_audio: bool = True) -> Manifest:
    """Check a parsed manifest; raise :class:`ManifestError` naming the field (and clip index)."""
    root = Path(root).resolve()
    if not isinstance(data, dict):
        raise ManifestError("manifest.json: the top level must be a JSON object")
    mode = data.get("mode")
    if mode not in MODES:
        raise ManifestError(f"manifest.json: field 'mode' must be one of {list(MODES)}, got {mode!r}")
    renderer = data.get("renderer", "")
    if not isinstance(renderer, str):
        raise ManifestError(f"manifest.json: field 'renderer' must be a string, got {renderer!r}")
    clips = data.get("clips")
    if not isinstance(clips, list) or not clips:
        raise ManifestError("manifest.json: field 'clips' must be a non-empty list")
    intended_ok = GRADED + ((UNRESOLVED,) if mode == "binary" else ())
    seen: dict[str, int] = {}
    out = []
    for i, clip in enumerate(clips):
        where = f"manifest.json: clips[{i}]"
        if not isinstance(clip, dict):
            raise ManifestError(f"{where}: must be a JSON object")
        for field in ("id", "audio", "context", "utterance", "intended"):
            if field not in clip:
                raise ManifestError(f"{where}: missing field '{field}'")
            if not isinstance(clip[field], str):
                raise ManifestError(f"{where}.{field}: must be a string, got {clip[field]!r}")
        cid = clip["id"]
        where = f"manifest.json: clips[{i}] (id {cid!r})"
        if not cid.strip() or cid != cid.strip():
            raise ManifestError(f"manifest.json: clips[{i}].id: must be non-empty, no surrounding spaces")
        if cid in seen:
            raise ManifestError(f"{where}.id: duplicate of clips[{seen[cid]}]")
        seen[cid] = i
        if clip["intended"] not in intended_ok:
            raise ManifestError(
                f"{where}.intended: must be one of {list(intended_ok)}, got {clip['intended']!r}"
            )
        if not clip["utterance"].strip():
            raise ManifestError(f"{where}.utterance: must not be empty")
        rel = clip["audio"]
        audio = (root / rel).resolve()
        if not rel or Path(rel).is_absolute() or not audio.is_relative_to(root):
            raise ManifestError(f"{where}.audio: must be a path inside {root}, got {rel!r}")
        if check_audio:
            if not audio.is_file():
                raise ManifestError(f"{where}.audio: file not found: {audio}")
            with audio.open("rb") as f:
                head = f.read(12)
            if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                raise ManifestError(f"{where}.audio: not a WAV file: {audio}")
        out.append(Clip(cid, audio, clip["context"], clip["utterance"], clip["intended"]))
    return Manifest(root, mode, renderer, tuple(out))


def load_manifest(clip_dir: str | os.PathLike[str], check_audio: bool = True) -> Manifest:
    """Read and validate ``clip_dir/manifest.json``."""
    root = Path(clip_dir)
    path = root / "manifest.json"
    if not root.is_dir():
        raise ManifestError(f"{root}: not a directory")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: not valid JSON ({e})") from None
    return validate_manifest(data, root, check_audio=check_audio)


# ---------------------------------------------------------------- answers


def validate_annotator(name: str) -> str:
    """Annotator names become file names: letters, digits, ``_ . -``; at most 64 characters."""
    if not isinstance(name, str) or not ANNOTATOR_RE.fullmatch(name):
        raise ValueError(
            f"annotator name {name!r} must be 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def answers_path(root: str | os.PathLike[str], annotator: str) -> Path:
    return Path(root) / f"answers-{validate_annotator(annotator)}.csv"


def annotator_order(clip_ids: Sequence[str], annotator: str) -> list[str]:
    """The clips in this annotator's order: a shuffle seeded by the name, stable across runs.

    >>> annotator_order(["a", "b", "c", "d"], "alice") == annotator_order(["a", "b", "c", "d"], "alice")
    True
    >>> sorted(annotator_order(["a", "b", "c", "d"], "bob"))
    ['a', 'b', 'c', 'd']
    """
    seed = int.from_bytes(hashlib.sha256(annotator.encode("utf-8")).digest()[:8], "big")
    order = list(clip_ids)
    random.Random(seed).shuffle(order)
    return order


def format_answer_line(answer: Answer) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(
        [answer.annotator, answer.clip_id, answer.label, answer.elapsed_ms, answer.timestamp]
    )
    return buf.getvalue().encode("utf-8")


def append_answer(path: str | os.PathLike[str], answer: Answer) -> None:
    """Append one answer as a single ``write`` on an O_APPEND descriptor (header first if new).

    Not thread-safe across the header check; :class:`AnswerStore` holds a lock around it.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        data = format_answer_line(answer)
        if size == 0:
            data = (",".join(CSV_COLUMNS) + "\n").encode("utf-8") + data
        else:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":  # a torn last line (crash mid-write): start a fresh one
                    data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_answers(path: str | os.PathLike[str], warn: Any = None) -> list[Answer]:
    """All well-formed answer rows in file order; malformed rows are skipped (and reported to ``warn``)."""
    out: list[Answer] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return out
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or tuple(row) == CSV_COLUMNS:
            continue
        try:
            if len(row) != len(CSV_COLUMNS):
                raise ValueError(f"expected {len(CSV_COLUMNS)} columns, got {len(row)}")
            annotator, clip_id, label, elapsed, stamp = row
            out.append(Answer(annotator, clip_id, label, int(elapsed), stamp))
        except ValueError as e:
            if warn:
                warn(f"{path}:{lineno}: skipped malformed row ({e})")
    return out


def latest_answers(answers: Iterable[Answer]) -> dict[str, Answer]:
    """clip id -> the last answer given for it."""
    latest: dict[str, Answer] = {}
    for a in answers:
        latest.pop(a.clip_id, None)  # keep dict order = order of the last answers
        latest[a.clip_id] = a
    return latest


class AnswerStore:
    """One annotator's answers file, and which clips it already holds."""

    def __init__(self, path: Path, annotator: str) -> None:
        self.path = path
        self.annotator = annotator
        self._lock = threading.Lock()
        self.answered: dict[str, Answer] = latest_answers(
            a for a in read_answers(path, warn=_warn) if a.annotator == annotator
        )

    def add(self, clip_id: str, label: str, elapsed_ms: int) -> Answer:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        answer = Answer(self.annotator, clip_id, label, elapsed_ms, stamp)
        with self._lock:
            append_answer(self.path, answer)
            self.answered.pop(clip_id, None)
            self.answered[clip_id] = answer
        return answer


def _warn(msg: str) -> None:
    print(f"hear2act listen: warning: {msg}", file=sys.stderr)


# ---------------------------------------------------------------- server


class ListenServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], manifest: Manifest, annotator: str, mode: str, verbose: bool = False
    ) -> None:
        self.manifest = manifest
        self.clips = manifest.by_id()
        self.annotator = validate_annotator(annotator)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        self.mode = mode
        self.labels = tuple(name for name, _ in LABELS[mode])
        self.order = annotator_order([c.id for c in manifest.clips], annotator)
        self.store = AnswerStore(answers_path(manifest.root, annotator), annotator)
        self.verbose = verbose
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, ListenHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}/"

    def clips_payload(self) -> dict[str, Any]:
        answered = self.store.answered
        clips = [
            {
                "id": cid,
                "audio": "/clip/" + _quote(cid),
                "context": self.clips[cid].context,
                "utterance": self.clips[cid].utterance,
                "answered": cid in answered,
            }
            for cid in self.order
        ]
        return {
            "annotator": self.annotator,
            "mode": self.mode,
            "labels": [{"value": v, "description": d} for v, d in LABELS[self.mode]],
            "total": len(clips),
            "answered": sum(c["answered"] for c in clips),
            "clips": clips,
        }


def _quote(s: str) -> str:
    return quote(s, safe="")


class BadRequest(Exception):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


class ListenHandler(BaseHTTPRequestHandler):
    server: ListenServer
    server_version = "hear2act-listen"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # -- helpers
    def _send(self, status: int, body: bytes, ctype: str, extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, field: str | None = None) -> None:
        self._json(status, {"error": message, "field": field})

    # -- routes
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, PAGE.encode("utf-8"), "text/html; charset=utf-8",
                       {"Content-Security-Policy": CSP})
        elif path == "/api/clips":
            self._json(HTTPStatus.OK, self.server.clips_payload())
        elif path.startswith("/clip/"):
            self._serve_clip(unquote(path[len("/clip/"):]))
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    do_HEAD = do_GET

    def _serve_clip(self, cid: str) -> None:
        clip = self.server.clips.get(cid)
        if clip is None:
            self._error(HTTPStatus.NOT_FOUND, f"unknown clip id {cid!r}", "id")
            return
        data = clip.audio.read_bytes()
        size = len(data)
        headers = {"Accept-Ranges": "bytes"}
        rng = _parse_range(self.headers.get("Range"), size)
        if rng is None:
            self._send(HTTPStatus.OK, data, "audio/wav", headers)
        elif rng == (-1, -1):
            self._send(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE, b"", "audio/wav",
                       {**headers, "Content-Range": f"bytes */{size}"})
        else:
            start, end = rng
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            self._send(HTTPStatus.PARTIAL_CONTENT, data[start:end + 1], "audio/wav", headers)

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/answer":
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            self._error(HTTPStatus.BAD_REQUEST, f"body needs a Content-Length of at most {MAX_BODY} bytes")
            return
        raw = self.rfile.read(length)
        try:
            clip_id, label, elapsed = self._parse_answer(raw)
        except BadRequest as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e), e.field)
            return
        srv = self.server
        srv.store.add(clip_id, label, elapsed)
        done = sum(cid in srv.store.answered for cid in srv.order)
        print(f"saved {clip_id}: {label} ({elapsed} ms) - {done}/{len(srv.order)} answered", file=sys.stderr)
        self._json(HTTPStatus.OK, {"ok": True, "answered": done, "total": len(srv.order)})

    def _parse_answer(self, raw: bytes) -> tuple[str, str, int]:
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise BadRequest(None, "body must be JSON") from None
        if not isinstance(body, dict):
            raise BadRequest(None, "body must be a JSON object")
        srv = self.server
        clip_id = body.get("clip_id")
        if not isinstance(clip_id, str) or clip_id not in srv.clips:
            raise BadRequest("clip_id", f"unknown clip id {clip_id!r}")
        label = body.get("label")
        if label not in srv.labels:
            raise BadRequest("label", f"label must be one of {list(srv.labels)}, got {label!r}")
        if body.get("annotator") != srv.annotator:
            raise BadRequest("annotator", f"this server collects answers for {srv.annotator!r}, "
                                          f"got {body.get('annotator')!r}")
        elapsed = body.get("elapsed_ms")
        if (isinstance(elapsed, bool) or not isinstance(elapsed, int | float) or not math.isfinite(elapsed)
                or not 0 <= elapsed <= MAX_ELAPSED_MS):
            raise BadRequest("elapsed_ms", f"elapsed_ms must be a number of ms >= 0, got {elapsed!r}")
        return clip_id, label, round(elapsed)


def _parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """``(start, end)`` inclusive for a single ``bytes=`` range; None to send it all; (-1, -1) unsatisfiable.

    >>> _parse_range("bytes=0-99", 1000), _parse_range("bytes=900-", 1000), _parse_range("bytes=-10", 1000)
    ((0, 99), (900, 999), (990, 999))
    >>> _parse_range("bytes=2000-", 1000), _parse_range(None, 1000), _parse_range("bytes=0-1,5-6", 1000)
    ((-1, -1), None, None)
    """
    if not header:
        return None
    m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:
        n = int(last)
        return (max(size - n, 0), size - 1) if n > 0 and size > 0 else (-1, -1)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        return (-1, -1)
    return start, end


def make_server(
    clip_dir: str | os.PathLike[str],
    annotator: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    mode: str | None = None,
    verbose: bool = False,
) -> ListenServer:
    """Validate the clip directory and bind a server (port 0 picks a free port); call ``serve_forever``."""
    manifest = load_manifest(clip_dir)
    return ListenServer((host, port), manifest, annotator, mode or manifest.mode, verbose=verbose)


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
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
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


# ---------------------------------------------------------------- page

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; media-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hear2Act listening test</title>
<style>
  body { font: 16px/1.45 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem;
         color: #1d1d1f; background: #fafafa; }
  header { display: flex; justify-content: space-between; align-items: baseline; }
  h1 { font-size: 1.25rem; margin: 0; }
  #progress { color: #555; font-variant-numeric: tabular-nums; }
  .bar { height: 4px; background: #e3e3e3; border-radius: 2px; margin: .5rem 0 1rem; }
  .bar > div { height: 100%; background: #3366cc; border-radius: 2px; width: 0; }
  .help { color: #555; font-size: .92rem; }
  #context { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6rem .8rem;
             margin: .8rem 0; }
  #context div { margin: .15rem 0; white-space: pre-wrap; }
  #context .speaker { font-weight: 600; }
  #context .user .speaker { color: #2a6a2a; }
  #context .assistant .speaker { color: #3a4fa0; }
  .utt { font-size: 1.1rem; margin: .8rem 0 .3rem; }
  audio { width: 100%; margin: .4rem 0 1rem; }
  fieldset { border: 1px solid #ddd; border-radius: 6px; background: #fff; }
  legend { font-weight: 600; padding: 0 .3rem; }
  label.opt { display: block; padding: .45rem .4rem; border-radius: 4px; cursor: pointer; }
  label.opt:hover { background: #f0f4ff; }
  label.opt .name { font-weight: 600; text-transform: capitalize; margin-right: .4rem; }
  label.opt .key { color: #888; font-size: .8rem; margin-left: .3rem; }
  .actions { display: flex; align-items: center; gap: 1rem; margin-top: 1rem; }
  button { font: inherit; padding: .45rem 1.6rem; border-radius: 6px; border: 1px solid #3366cc;
           background: #3366cc; color: #fff; cursor: pointer; }
  button:disabled { background: #b8c4e0; border-color: #b8c4e0; cursor: default; }
  #status { color: #555; }
  #status.error { color: #b00020; }
  #done { display: none; font-size: 1.15rem; margin-top: 2rem; }
  body[data-state="done"] #test { display: none; }
  body[data-state="done"] #done { display: block; }
  body[data-state="loading"] #test { visibility: hidden; }
</style>
</head>
<body data-state="loading">
<header><h1>Hear2Act listening test</h1><span id="progress"></span></header>
<div class="bar"><div id="bar"></div></div>
<p class="help">Read the conversation, then listen to the user's last turn. Judge how the user really
feels about the assistant's proposal from <em>how</em> it is said, not only from the words.
Keys: 1&ndash;<span id="nkeys">4</span> pick an answer, Enter goes on.</p>
<main id="test">
  <p id="resume" class="help" hidden></p>
  <div id="context" aria-label="Conversation so far"></div>
  <div class="utt"><strong>User:</strong> <span id="utterance"></span></div>
  <audio id="audio" controls preload="auto"></audio>
  <fieldset id="choices"><legend>How does the user feel?</legend></fieldset>
  <div class="actions"><button id="next" type="button" disabled>Next</button><span id="status"></span></div>
</main>
<div id="done"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const st = { data: null, queue: [], done: 0, t0: 0, busy: false };

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function buildChoices(labels) {
  $("nkeys").textContent = String(labels.length);
  labels.forEach((l, i) => {
    const lab = document.createElement("label");
    lab.className = "opt";
    const input = document.createElement("input");
    input.type = "radio"; input.name = "label"; input.value = l.value; input.id = "label-" + l.value;
    input.addEventListener("change", () => { $("next").disabled = st.busy; });
    const name = document.createElement("span");
    name.className = "name"; name.textContent = l.value;
    const desc = document.createElement("span");
    desc.textContent = l.description;
    const key = document.createElement("span");
    key.className = "key"; key.textContent = "(" + (i + 1) + ")";
    lab.append(input, " ", name, desc, key);
    $("choices").append(lab);
  });
}

function renderContext(text) {
  const box = $("context");
  box.replaceChildren();
  for (const line of text.split("\\n")) {
    if (!line.trim()) continue;
    const div = document.createElement("div");
    const m = /^(User|Assistant)\\s*:\\s*(.*)$/i.exec(line);
    if (m) {
      div.className = m[1].toLowerCase();
      const sp = document.createElement("span");
      sp.className = "speaker"; sp.textContent = m[1] + ": ";
      div.append(sp, m[2]);
    } else {
      div.textContent = line;
    }
    box.append(div);
  }
  box.hidden = !box.childElementCount;
}

function selected() {
  const el = document.querySelector('input[name="label"]:checked');
  return el ? el.value : null;
}

function show() {
  const total = st.data.total;
  $("bar").style.width = (100 * st.done / total) + "%";
  const audio = $("audio");
  if (!st.queue.length) {
    audio.pause(); audio.removeAttribute("src"); audio.load();
    $("progress").textContent = total + " of " + total;
    $("done").textContent = "Done: all " + total + " clips answered. Thank you! You can close this tab.";
    document.body.dataset.state = "done";
    delete document.body.dataset.clipId;
    return;
  }
  const clip = st.queue[0];
  $("progress").textContent = "Clip " + (st.done + 1) + " of " + total;
  renderContext(clip.context);
  $("utterance").textContent = clip.utterance;
  audio.pause();
  audio.src = clip.audio;
  audio.load();
  document.querySelectorAll('input[name="label"]').forEach((el) => { el.checked = false; });
  $("next").disabled = true;
  setStatus("", false);
  document.body.dataset.clipId = clip.id;
  document.body.dataset.state = "clip";
  st.t0 = performance.now();
}

async function next() {
  const label = selected();
  if (!label || st.busy || !st.queue.length) return;
  st.busy = true;
  $("next").disabled = true;
  setStatus("Saving\\u2026", false);
  const clip = st.queue[0];
  const body = { clip_id: clip.id, label: label, annotator: st.data.annotator,
                 elapsed_ms: Math.round(performance.now() - st.t0) };
  try {
    const r = await fetch("/answer", { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  } catch (e) {
    setStatus("Could not save this answer (" + e.message + "). Try again.", true);
    st.busy = false;
    $("next").disabled = false;
    return;
  }
  st.busy = false;
  st.queue.shift();
  st.done += 1;
  show();
}

document.addEventListener("keydown", (ev) => {
  if (document.body.dataset.state !== "clip" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const n = Number(ev.key);
  const inputs = document.querySelectorAll('input[name="label"]');
  if (Number.isInteger(n) && n >= 1 && n <= inputs.length) {
    inputs[n - 1].checked = true;
    $("next").disabled = st.busy;
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    next();
  }
});
$("next").addEventListener("click", next);

(async () => {
  try {
    const r = await fetch("/api/clips");
    if (!r.ok) throw new Error("HTTP " + r.status);
    st.data = await r.json();
  } catch (e) {
    document.body.dataset.state = "error";
    document.body.textContent = "Could not load the clips: " + e.message;
    return;
  }
  document.title = "Listening test: " + st.data.annotator;
  buildChoices(st.data.labels);
  st.queue = st.data.clips.filter((c) => !c.answered);
  st.done = st.data.total - st.queue.length;
  if (st.done && st.queue.length) {
    $("resume").textContent = "Welcome back, " + st.data.annotator + ": " + st.done +
      (st.done === 1 ? " clip" : " clips") + " already answered; continuing where you left off.";
    $("resume").hidden = false;
  }
  show();
})();
</script>
</body>
</html>
"""
