"""Scenarios: the data model, the bundled bank, its generator and validator."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path

from .errors import ScenarioError
from .generator import BANK_FILE, BANK_VERSION
from .model import Attribute, FrozenMap, Need, Option, Persona, Requirement, Scenario
from .validate import problems, read_jsonl, validate, validate_file

__all__ = [
    "BANK_FILE",
    "BANK_VERSION",
    "Attribute",
    "FrozenMap",
    "Need",
    "Option",
    "Persona",
    "Requirement",
    "Scenario",
    "ScenarioError",
    "load_scenarios",
    "problems",
    "validate",
    "validate_file",
]


def _parse(path: Path) -> tuple[Scenario, ...]:
    scenarios, errors = read_jsonl(path)
    if errors:
        shown = "; ".join(str(e) for e in errors[:10])
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise ScenarioError(
            path.name, "<file>", f"{len(errors)} problem(s): {shown}{more}", line=errors[0].line
        )
    return tuple(scenarios)


_LOADED: OrderedDict[tuple[Path, str], tuple[Scenario, ...]] = OrderedDict()  # (path, content digest) -> bank
_LOADED_MAX = 4


# (device, inode, size, mtime_ns, ctime_ns) -> content digest. Any write, copy over, rename or
# `touch -m` changes ctime (which no user call can set back), so an unchanged fingerprint means
# unchanged content; any change is re-hashed. The scenarios are cached by content digest.
_FINGERPRINTS: dict[Path, tuple[tuple[int, ...], str]] = {}


def _digest(path: Path) -> str:
    st = path.stat()
    fingerprint = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _FINGERPRINTS.get(path)
    if known is not None and known[0] == fingerprint:
        return known[1]
    digest = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    _FINGERPRINTS[path] = (fingerprint, digest)
    return digest


def _default_path() -> Path:
    from .userbank import BANK_ENV, default_bank_path

    path = default_bank_path()
    if path != BANK_FILE and not path.is_file():
        raise FileNotFoundError(2, f"No such scenario file (named by ${BANK_ENV})", str(path))
    return path


def load_scenarios(path: str | Path | None = None) -> list[Scenario]:
    """Load and validate a JSONL scenario file (``None``: the bundled bank, or ``$HEAR2ACT_SCENARIOS``).

    A user bank (``hear2act scenarios build --domains DIR --out FILE``) is loaded
    like the bundled one; setting ``HEAR2ACT_SCENARIOS=FILE`` makes it every
    tool's default (``hear2act rollout``, ``hear2act eval``, ``gym.make`` without
    ``scenarios=``).

    Raises :class:`ScenarioError` naming the file, the first bad line and every
    problem found; an unreadable path raises ``FileNotFoundError``. Loads are
    cached by the file's content (a different file at the same path, even with
    the same size and mtime, is read afresh).
    """
    resolved = Path(_default_path() if path is None else path).resolve()
    for _ in range(3):
        key = (resolved, _digest(resolved))
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return list(_LOADED[key])
        scenarios = _parse(resolved)
        if _digest(resolved) == key[1]:  # not rewritten while it was parsed
            _LOADED[key] = scenarios
            if len(_LOADED) > _LOADED_MAX:
                _LOADED.popitem(last=False)
            return list(scenarios)
    return list(scenarios)  # rewritten during every attempt: the last parse, uncached
