"""Command-line edits of a grid: ``--agent``, ``--limit N``, ``--repeats N``, a seed, leaving out blocks of a kind.

An edit is applied to the grid's TOML *data* and written back as TOML, so the run directory's grid.toml
is exactly the grid that ran (it parses to the same cells, and ``hear2act eval RUN/grid.toml`` replays it).
The edited text starts with comment lines naming the original grid and each edit.

``--agent`` semantics: every ``LABEL=SPEC`` (or a bare ``SPEC``, which is its own label) becomes an agent
of the grid. A label the grid already has keeps its blocks (and its rollout ids) with the new spec; a new
label joins every block. Without ``keep_agents`` the grid's other agents are removed (a block left with no
agent is left out); with it they stay. A block that then repeats an earlier block's rollouts (the paper's two
spoken blocks, once one model plays both) is left out, the first one's design kept. Each of these is noted.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .grid import Grid, GridError, parse_grid, resolve_grid_path


def parse_agent_option(text: str) -> tuple[str, str]:
    """``"LABEL=SPEC"`` -> (label, spec); a bare spec is its own label. The spec is checked (one-line error)."""
    label, sep, spec = text.partition("=")
    if not sep or ":" in label or "/" in label:  # "openai:m@http://h/?a=b" is a bare spec
        label, spec = text, text
    label, spec = label.strip(), spec.strip()
    if not label or not spec:
        raise ValueError(f"--agent {text!r}: expected LABEL=SPEC or SPEC (e.g. mine=hf:/models/x, state-rule)")
    check_agent_spec(spec, f"--agent {text!r}")
    return label, spec


def check_agent_spec(spec: str, where: str) -> None:
    """A registered agent name or ``PREFIX:TARGET`` with a known backend prefix and a non-empty target."""
    from hear2act.agents import AGENTS
    from hear2act.agents.llm import BACKENDS, split_spec

    if spec in AGENTS:
        return
    prefix, target = split_spec(spec)
    if not prefix or not target:
        raise ValueError(f"{where}: unknown agent {spec!r}; use a registered agent ({', '.join(sorted(AGENTS))}) "
                         f"or a model spec PREFIX:TARGET with PREFIX in {sorted(BACKENDS)}")


def cut_subset(subset: Any, n: int) -> Any:
    """A scenario subset (``"all"`` | ``"first:N"`` | [ids]) cut to its first ``n`` scenarios."""
    if isinstance(subset, list):
        return subset[:n]
    if subset == "all" or int(str(subset).split(":", 1)[1]) > n:
        return f"first:{n}"
    return subset


def edit_grid(grid: str | Path, *, agents: Sequence[tuple[str, str]] = (), keep_agents: bool = False,
              limit: int | None = None, seed: int | None = None, drop_kinds: Sequence[str] = (),
              repeats: int | None = None) -> Grid:
    """The grid ``grid`` (a path or a shipped name) with the edits applied; unedited, the file as it is.

    ``repeats``: every block's repeats cut to at most this many. The rollouts kept are the same rollouts
    (same ids, same episode seeds) as in the whole grid, so running the whole grid into the same run
    directory afterwards plays only the rest (e.g. one timed run of the text blocks, then the grid)."""
    path = resolve_grid_path(grid)
    text = path.read_text(encoding="utf-8")
    notes = []
    if not (agents or limit is not None or seed is not None or drop_kinds or repeats is not None):
        return parse_grid(text, path)
    parse_grid(text, path)  # the original must be valid first (its errors name its file)
    data = tomllib.loads(text)
    if agents:
        labels = [label for label, _ in agents]
        if len(set(labels)) != len(labels):
            raise ValueError(f"--agent: a label is given twice: {labels}")
        table = dict(data.get("agents", {}))
        known = {a for b in data["block"] for a in b.get("agents", [])}
        for label, spec in agents:
            old = table.get(label)
            table[label] = {**old, "spec": spec} if isinstance(old, Mapping) else spec
        data["agents"] = table
        new = [x for x in labels if x not in known]
        blocks = []
        for block in data["block"]:
            own = list(block.get("agents", []))
            kept = own if keep_agents else [a for a in own if a in labels]
            block["agents"] = kept + [x for x in new if x not in kept]
            if block["agents"]:
                blocks.append(block)
            else:
                notes.append(f"block {block.get('name')!r} left out (none of its agents given)")
        data["block"] = blocks
        notes.insert(0, ("added" if keep_agents else "agents set to") + " "
                     + ", ".join(f"{label} = {spec}" for label, spec in agents))
    if drop_kinds:
        data["block"] = [b for b in data["block"] if b.get("kind", "other") not in drop_kinds]
        if not data["block"]:
            raise ValueError(f"leaving out the {'/'.join(drop_kinds)} blocks leaves no block in {path}")
        notes.append(f"{'/'.join(drop_kinds)} blocks left out")
    if repeats is not None:
        if repeats < 1:
            raise ValueError(f"--repeats must be a positive integer, got {repeats}")
        for block in data["block"]:
            block["repeats"] = min(int(block.get("repeats", 1)), repeats)
        notes.append(f"every block's repeats cut to at most {repeats}")
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit must be a positive integer, got {limit}")
        subsets = data.get("scenarios", {"all": "all"})
        data["scenarios"] = {k: cut_subset(v, limit) for k, v in subsets.items()}
        notes.append(f"every scenario subset cut to its first {limit}")
    if seed is not None and seed != data.get("seed", 0):
        data["seed"] = seed
        notes.append(f"seed = {seed}")
    if "name" not in data:
        data["name"] = path.stem
    if agents:
        data["block"] = _without_repeats(data, notes)
    head = [f"# {path.name} ({data['name']}) edited on the command line:"] + [f"#   {n}" for n in notes]
    edited = "\n".join(head) + "\n" + dump_toml(data)
    return parse_grid(edited, path)


def _without_repeats(data: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    """The blocks, less any that (now that they share agents) would repeat an earlier block's rollouts; e.g.
    the paper's two spoken blocks, once one model plays both (the first one's design is kept)."""
    kept: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for block in data["block"]:
        grid = parse_grid(dump_toml({**data, "block": [block]}))
        ids = {r.rollout_id for r in grid.expand()}
        clash = next((seen[i] for i in ids if i in seen), None)
        if clash is not None:
            notes.append(f"block {block.get('name')!r} left out: with these agents it repeats rollouts of "
                         f"block {clash!r}")
            continue
        seen.update(dict.fromkeys(ids, str(block.get("name"))))
        kept.append(block)
    return kept


# ---------------------------------------------------------------- a small TOML writer for grid data


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, list):
        if len(v) > 4:
            return "[\n" + "".join(f"  {_value(x)},\n" for x in v) + "]"
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise GridError(f"cannot write {v!r} ({type(v).__name__}) to TOML")


def _key(k: str) -> str:
    bare = k and all(c.isalnum() or c in "-_" for c in k) and k.isascii()
    return k if bare else json.dumps(k, ensure_ascii=False)


def dump_toml(data: Mapping[str, Any]) -> str:
    """Grid data (scalars, tables of scalars/lists/inline tables, an array of block tables) as TOML."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in data.items() if not isinstance(v, Mapping | list) or (
        isinstance(v, list) and k != "block")]
    for k, v in data.items():
        if isinstance(v, Mapping):
            lines += ["", f"[{_key(k)}]"] + [f"{_key(a)} = {_value(b)}" for a, b in v.items()]
    for block in data.get("block", []):
        lines += ["", "[[block]]"] + [f"{_key(a)} = {_value(b)}" for a, b in block.items()]
    out = "\n".join(lines) + "\n"
    if tomllib.loads(out) != json.loads(json.dumps(data)):  # never write a grid that reads back otherwise
        raise GridError("internal error: the edited grid does not read back as written")
    return out
