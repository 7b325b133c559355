"""Data for ``hear2act listen``: the clip manifest, annotators and their answer files.

``DIR/manifest.json``::

    {"mode": "4way" | "binary", "renderer": "hibari",
     "clips": [{"id": "c001", "audio": "clips/c001.wav", "context": "User: ...\\nAssistant: ...",
                "utterance": "Okay, sounds good.", "intended": "concern"}, ...]}

Answers are appended, one whole line per write, to ``DIR/answers-NAME.csv``
(annotator, clip_id, label, elapsed_ms, timestamp); a cell that a spreadsheet would
run as a formula (starting with = + - @) is written with a leading apostrophe
and read back without it. A restarted session skips the
clips already answered; if a clip is answered twice, the last answer wins.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .stats import GRADED, UNRESOLVED

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


# A cell starting with one of these is a formula to a spreadsheet (CSV injection): it is written with a
# leading apostrophe, which spreadsheets show as text, and read back without it (a cell that itself starts
# with an apostrophe gets one more, so the escape round-trips exactly).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def escape_cell(value: str) -> str:
    return "'" + value if value.startswith(FORMULA_START) else value


def unescape_cell(value: str) -> str:
    return value[1:] if value.startswith("'") else value


def format_answer_line(answer: Answer) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(
        [escape_cell(answer.annotator), escape_cell(answer.clip_id), escape_cell(answer.label), answer.elapsed_ms,
         escape_cell(answer.timestamp)]
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
            annotator, clip_id, label, elapsed, stamp = map(unescape_cell, row)
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
