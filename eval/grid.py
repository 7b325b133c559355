"""Evaluation grids: a TOML file that expands into a deterministic list of rollouts.

A grid names its agents, access conditions, renderers and scenario subsets once,
then lists ``[[block]]`` tables, each a full product::

    agents x realizations x renderers x conditions x interventions x scenarios x repeats

Format (``eval/grids/paper.toml`` is the paper's design, ``quick.toml`` the CPU demo)::

    name = "quick"
    seed = 0                                   # the run seed; episode seeds derive from it

    [agents]                                   # label = agent spec (hear2act.agents.make_policy);
    "Qwen2.5-Omni" = "omni:/models/Qwen2.5-Omni-7B"   # a label not listed is its own spec
    "Qwen3-32B" = { spec = "openai:Qwen/Qwen3-32B@http://node1:8000/v1", concurrency = 64 }  # + make_policy kwargs

    [conditions]                               # label = env access (+ options); the six
    HuBERT = { access = "T+affect", affect = "hf:/models/hubert-large-superb-er" }  # access names are built in
    "T+S_hat" = { access = "T+S_hat", perceiver = "self" }   # two-stage: the agent's own model hears the audio

    [renderers]                                # label = registered renderer name
    "Qwen3-TTS" = "hibari"

    [scenarios]                                # subset = "all" | "first:N" | [ids]
    all = "all"

    [[block]]
    name = "text-main"
    kind = "text"                              # report layout: text | spoken | label-fidelity | other
    agents = ["state-rule"]
    realizations = ["prosody", "explicit"]
    conditions = ["T", "T+S"]
    interventions = ["correct"]                # state-tag fidelity; non-"correct" needs a T+S-like access
    renderers = []                             # none: text conditions
    repeats = 1
    scenarios = "all"

Identity. A rollout is (agent label, realization, condition label and its access,
intervention, renderer label, scenario, repeat) under the grid seed; its
``rollout_id`` is a hash of exactly that, so it does not move when the grid gains
blocks or a server URL changes. The episode seed depends only on (grid seed,
scenario, repeat): matched rollouts that differ only in the access condition
meet the same user.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hear2act_env import REALIZATION_ENV_IDS

REALIZATIONS = REALIZATION_ENV_IDS
KINDS = ("text", "spoken", "label-fidelity", "other")
BLOCK_FIELDS = frozenset(
    {"name", "kind", "agents", "realizations", "conditions", "interventions", "renderers", "repeats", "scenarios"}
)
TOP_FIELDS = frozenset({"name", "seed", "description", "agents", "conditions", "renderers", "scenarios", "block"})
CONDITION_FIELDS = frozenset({"access", "affect", "perceiver"})
GRIDS_DIR = Path(__file__).resolve().parent / "grids"


class GridError(ValueError):
    """A grid file is malformed; the message names the file, the block and the field."""


@dataclass(frozen=True)
class Cell:
    """One condition of the grid: everything but the scenario and the repeat."""

    block: str
    kind: str
    agent: str
    agent_spec: str
    realization: str
    condition: str
    access: str
    affect: str
    intervention: str
    renderer: str
    renderer_spec: str
    scenarios: str
    repeats: int
    agent_kwargs: tuple[tuple[str, Any], ...] = ()  # extra make_policy arguments (sorted items)
    perceiver: str = ""  # T+S_hat first stage: "" (the env's CPU perceiver), "self" (the agent's model) or a spec

    @property
    def env_id(self) -> str:
        return REALIZATIONS[self.realization]

    @property
    def identity(self) -> tuple[str, ...]:
        """What a rollout's id hashes (with scenario, repeat and the grid seed)."""
        return (self.agent, self.realization, self.condition, self.access, self.intervention, self.renderer)

    @property
    def label(self) -> str:
        parts = [self.agent, self.realization, self.condition]
        if self.intervention != "correct":
            parts.append(self.intervention)
        if self.renderer:
            parts.append(self.renderer)
        return " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["agent_kwargs"] = dict(self.agent_kwargs)
        return d


@dataclass(frozen=True)
class Rollout:
    cell: Cell
    scenario_id: str
    repeat: int
    seed: int
    rollout_id: str


def episode_seed(grid_seed: int, scenario_id: str, repeat: int) -> int:
    """The env seed of one (scenario, repeat): shared by every cell, so comparisons are paired."""
    digest = hashlib.sha256(f"hear2act-episode|{grid_seed}|{scenario_id}|{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 2**31


def rollout_id(grid_seed: int, cell: Cell, scenario_id: str, repeat: int) -> str:
    payload = json.dumps([grid_seed, *cell.identity, scenario_id, repeat], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


@dataclass
class Grid:
    name: str
    seed: int
    cells: list[Cell]
    subsets: dict[str, list[str] | str]
    description: str = ""
    source: str = ""  # the TOML text, copied into the run directory
    path: Path | None = None
    _expanded: list[Rollout] | None = field(default=None, repr=False)

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def scenario_ids(self, subset: str, bank: Sequence[str] | None = None) -> list[str]:
        """The ids of a subset; ``bank`` (all ids, in bank order) defaults to the bundled bank."""
        if bank is None:
            from hear2act_env import load_scenarios

            bank = [s.id for s in load_scenarios()]
        spec = self.subsets[subset]
        if spec == "all":
            return list(bank)
        if isinstance(spec, str):  # "first:N", checked at parse time
            return list(bank[: int(spec.split(":", 1)[1])])
        known = set(bank)
        missing = [s for s in spec if s not in known]
        if missing:
            raise GridError(f"{self._where()}: scenarios.{subset}: unknown scenario id(s) {missing[:5]}")
        return list(spec)

    def expand(self, bank: Sequence[str] | None = None) -> list[Rollout]:
        """Every rollout of the grid, in a fixed order (blocks, then the product, scenarios innermost)."""
        if self._expanded is not None and bank is None:
            return self._expanded
        ids_cache: dict[str, list[str]] = {}
        out: list[Rollout] = []
        seen: dict[str, Cell] = {}
        for cell in self.cells:
            if cell.scenarios not in ids_cache:
                ids_cache[cell.scenarios] = self.scenario_ids(cell.scenarios, bank)
            for sid in ids_cache[cell.scenarios]:
                for rep in range(cell.repeats):
                    rid = rollout_id(self.seed, cell, sid, rep)
                    if rid in seen:
                        raise GridError(f"{self._where()}: block {cell.block!r} repeats rollouts of block "
                                        f"{seen[rid].block!r} ({cell.label}, scenario {sid}, repeat {rep})")
                    seen[rid] = cell
                    out.append(Rollout(cell, sid, rep, episode_seed(self.seed, sid, rep), rid))
        if bank is None:
            self._expanded = out
        return out

    def counts(self, bank: Sequence[str] | None = None) -> dict[str, int]:
        """Rollouts per cell label (in grid order), for ``--dry-run``."""
        counts: dict[str, int] = {}
        for r in self.expand(bank):
            key = f"{r.cell.block}: {r.cell.label}"
            counts[key] = counts.get(key, 0) + 1
        return counts

    def _where(self) -> str:
        return str(self.path) if self.path else f"grid {self.name!r}"


def shard(rollouts: Sequence[Rollout], index: int, count: int) -> list[Rollout]:
    """Shard ``index`` of ``count``: rollouts whose id falls in it (stable when the grid grows)."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard must be i/n with 0 <= i < n, got {index}/{count}")
    return [r for r in rollouts if int(r.rollout_id, 16) % count == index]


# (index, count) environment variables set by launchers, in the order they are looked up by --shard auto.
LAUNCHER_SHARDS = (("RANK", "WORLD_SIZE"),  # accelerate launch, torchrun
                   ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"),  # sbatch --array=0-(N-1)
                   ("SLURM_PROCID", "SLURM_NTASKS"))  # srun -n N


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``"i/n"`` -> (i, n); ``"auto"`` reads the launcher's rank and world size (see LAUNCHER_SHARDS), else 0/1."""
    if text == "auto":
        env = os.environ if environ is None else environ
        for rank, size in LAUNCHER_SHARDS:
            if rank in env and size in env:
                return parse_shard(f"{env[rank]}/{env[size]}")
        return 0, 1
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/n (e.g. 0/4), got {text!r}") from None
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard {text}: need 0 <= i < n")
    return i, n


# ---------------------------------------------------------------- parsing


def resolve_grid_path(name: str | Path) -> Path:
    """A grid file, or the name of a shipped grid (``quick``, ``paper``, ``paper-text``, ...: eval/grids/NAME.toml)."""
    p = Path(name)
    if p.is_file():
        return p
    shipped = GRIDS_DIR / f"{name}.toml"
    if "/" not in str(name) and shipped.is_file():
        return shipped
    names = sorted(q.stem for q in GRIDS_DIR.glob("*.toml"))
    raise GridError(f"grid {str(name)!r}: no such file, and not a shipped grid (shipped: {names})")


def load_grid(path: str | Path) -> Grid:
    p = resolve_grid_path(path)
    text = p.read_text(encoding="utf-8")
    return parse_grid(text, p)


def parse_grid(text: str, path: Path | None = None) -> Grid:
    where = str(path) if path else "<grid>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GridError(f"{where}: not valid TOML: {e}") from None
    unknown = set(data) - TOP_FIELDS
    if unknown:
        raise GridError(f"{where}: unknown top-level field(s) {sorted(unknown)}; allowed: {sorted(TOP_FIELDS)}")
    name = _str(data.get("name", path.stem if path else "grid"), where, "name")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise GridError(f"{where}: field 'seed' must be a non-negative integer, got {seed!r}")
    agents = _agents(data.get("agents", {}), where)
    renderers = _str_table(data.get("renderers", {}), where, "renderers")
    conditions = _conditions(data.get("conditions", {}), where)
    subsets = _subsets(data.get("scenarios", {"all": "all"}), where)
    blocks = data.get("block")
    if not isinstance(blocks, list) or not blocks:
        raise GridError(f"{where}: needs at least one [[block]] table")
    cells: list[Cell] = []
    names: set[str] = set()
    for i, block in enumerate(blocks):
        cells.extend(_block_cells(block, i, where, agents, renderers, conditions, subsets, names))
    return Grid(name, seed, cells, subsets, _str(data.get("description", ""), where, "description"), text, path)


def _str(value: Any, where: str, fieldname: str) -> str:
    if not isinstance(value, str):
        raise GridError(f"{where}: field {fieldname!r} must be a string, got {value!r}")
    return value


def _str_table(table: Any, where: str, fieldname: str) -> dict[str, str]:
    if not isinstance(table, Mapping):
        raise GridError(f"{where}: [{fieldname}] must be a table of label = spec")
    for k, v in table.items():
        if not isinstance(v, str) or not v:
            raise GridError(f"{where}: {fieldname}.{k} must be a non-empty string, got {v!r}")
    return dict(table)


def _agents(table: Any, where: str) -> dict[str, tuple[str, tuple[tuple[str, Any], ...]]]:
    """label = "spec", or label = {spec = "...", <make_policy keyword> = value, ...} (e.g. concurrency = 64)."""
    if not isinstance(table, Mapping):
        raise GridError(f"{where}: [agents] must be a table of label = spec")
    out = {}
    for label, value in table.items():
        if isinstance(value, Mapping):
            spec = value.get("spec")
            kwargs = {k: v for k, v in value.items() if k != "spec"}
            for k, v in kwargs.items():
                if not isinstance(v, str | int | float | bool):
                    raise GridError(f"{where}: agents.{label}.{k} must be a string, number or boolean, got {v!r}")
        else:
            spec, kwargs = value, {}
        if not isinstance(spec, str) or not spec:
            raise GridError(f"{where}: agents.{label} must be a spec string or a table with a 'spec' string, "
                            f"got {value!r}")
        out[label] = (spec, tuple(sorted(kwargs.items())))
    return out


def _conditions(table: Any, where: str) -> dict[str, dict[str, str]]:
    from hear2act_env.access import ACCESS, name_with

    out = {access: {"access": access, "affect": "", "perceiver": ""} for access in ACCESS}  # built in
    if not isinstance(table, Mapping):
        raise GridError(f"{where}: [conditions] must be a table of label = {{access = ...}}")
    for label, spec in table.items():
        if not isinstance(spec, Mapping) or "access" not in spec:
            raise GridError(f"{where}: conditions.{label} must be a table with an 'access' field")
        bad = set(spec) - CONDITION_FIELDS
        if bad:
            raise GridError(f"{where}: conditions.{label}: unknown field(s) {sorted(bad)}; "
                            f"allowed: {sorted(CONDITION_FIELDS)}")
        if spec["access"] not in ACCESS:
            raise GridError(f"{where}: conditions.{label}.access: unknown access {spec['access']!r}; "
                            f"choose from {list(ACCESS)}")
        affect = spec.get("affect", "")
        if affect and ACCESS[spec["access"]].state_tag != "affect":
            raise GridError(f"{where}: conditions.{label}.affect only applies to access "
                            f"{name_with(state_tag='affect')!r}")
        perceiver = spec.get("perceiver", "")
        if perceiver and ACCESS[spec["access"]].state_tag != "inferred":
            raise GridError(f"{where}: conditions.{label}.perceiver only applies to access "
                            f"{name_with(state_tag='inferred')!r}")
        out[label] = {"access": spec["access"], "affect": _str(affect, where, f"conditions.{label}.affect"),
                      "perceiver": _str(perceiver, where, f"conditions.{label}.perceiver")}
    return out


def _subsets(table: Any, where: str) -> dict[str, list[str] | str]:
    if not isinstance(table, Mapping):
        raise GridError(f"{where}: [scenarios] must be a table of subset = \"all\" | \"first:N\" | [ids]")
    out: dict[str, list[str] | str] = {}
    for name, spec in table.items():
        first_n = isinstance(spec, str) and spec.startswith("first:") and spec[6:].isdigit() and int(spec[6:]) > 0
        if spec == "all" or first_n:
            out[name] = spec
        elif isinstance(spec, list) and spec and all(isinstance(s, str) for s in spec):
            if len(set(spec)) != len(spec):
                raise GridError(f"{where}: scenarios.{name} lists a scenario twice")
            out[name] = list(spec)
        else:
            raise GridError(f"{where}: scenarios.{name} must be \"all\", \"first:N\" (N > 0) or a non-empty "
                            f"list of scenario ids, got {spec!r}")
    return out


def _list(block: Mapping[str, Any], key: str, where: str, default: list[str] | None = None) -> list[str]:
    value = block.get(key, default)
    if value is None:
        raise GridError(f"{where}: missing field {key!r}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GridError(f"{where}: field {key!r} must be a list of strings, got {value!r}")
    if len(set(value)) != len(value):
        raise GridError(f"{where}: field {key!r} lists a value twice: {value}")
    return value


def _block_cells(block: Any, index: int, where: str, agents: dict[str, tuple[str, tuple]], renderers: dict[str, str],
                 conditions: dict[str, dict[str, str]], subsets: dict[str, Any], names: set[str]) -> Iterator[Cell]:
    from hear2act_env.access import ACCESS
    from hear2act_env.env import INTERVENTIONS

    if not isinstance(block, Mapping):
        raise GridError(f"{where}: block #{index + 1} must be a table")
    name = block.get("name", f"block{index + 1}")
    w = f"{where}: block {name!r}"
    if not isinstance(name, str) or name in names:
        raise GridError(f"{w}: field 'name' must be a unique string")
    names.add(name)
    bad = set(block) - BLOCK_FIELDS
    if bad:
        raise GridError(f"{w}: unknown field(s) {sorted(bad)}; allowed: {sorted(BLOCK_FIELDS)}")
    kind = block.get("kind", "other")
    if kind not in KINDS:
        raise GridError(f"{w}: field 'kind': unknown value {kind!r}; choose from {KINDS}")
    block_agents = _list(block, "agents", w)
    realizations = _list(block, "realizations", w, ["prosody", "explicit"])
    for r in realizations:
        if r not in REALIZATIONS:
            raise GridError(f"{w}: field 'realizations': unknown value {r!r}; choose from {sorted(REALIZATIONS)}")
    conds = _list(block, "conditions", w)
    for c in conds:
        if c not in conditions:
            raise GridError(f"{w}: field 'conditions': unknown condition {c!r}; define it under [conditions] "
                            f"or use one of {sorted(conditions)}")
    interventions = _list(block, "interventions", w, ["correct"])
    for iv in interventions:
        if iv not in INTERVENTIONS:
            raise GridError(f"{w}: field 'interventions': unknown value {iv!r}; choose from {INTERVENTIONS}")
        if iv != "correct":
            for c in conds:
                if not ACCESS[conditions[c]["access"]].takes_intervention:
                    raise GridError(f"{w}: intervention {iv!r} needs a state-tag access, but condition {c!r} "
                                    f"is {conditions[c]['access']!r}")
    rend = _list(block, "renderers", w, []) or [""]
    repeats = block.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise GridError(f"{w}: field 'repeats' must be a positive integer, got {repeats!r}")
    subset = block.get("scenarios", "all")
    if subset not in subsets:
        raise GridError(f"{w}: field 'scenarios': unknown subset {subset!r}; define it under [scenarios] "
                        f"(have {sorted(subsets)})")
    if not block_agents or not realizations or not conds or not interventions:
        raise GridError(f"{w}: agents, realizations, conditions and interventions must not be empty")
    for agent in block_agents:
        for realization in realizations:
            for renderer in rend:
                for cond in conds:
                    for iv in interventions:
                        c = conditions[cond]
                        spec, kwargs = agents.get(agent, (agent, ()))
                        yield Cell(name, kind, agent, spec, realization, cond, c["access"], c["affect"], iv,
                                   renderer, renderers.get(renderer, renderer), subset, repeats, kwargs,
                                   c["perceiver"])
