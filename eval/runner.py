"""``hear2act eval GRID --out RUN_DIR``: run a grid, one durable JSON line per rollout, resumable.

The run directory's layout and durability: :mod:`hear2act.eval.rundir`.

Identity. Every row carries ``grid_id`` and ``cell_hash`` (:mod:`hear2act.eval.run_identity`); ``eval`` and
``read_run`` (so ``report``) refuse a row of another grid, a rollout the grid does not plan, a row played
with another definition of its cell, and a second, different line for one rollout id, each with a one-line
error naming ``file:line``. A run directory with no rows is an error for ``read_run``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hear2act_env.access import ACCESS
from hear2act_env.cli import positive_int
from hear2act_env.progress import Bar

from .grid import GRIDS_DIR, KINDS, Cell, Grid, GridError, Rollout, parse_grid, parse_shard, shard
from .grid_edit import edit_grid, parse_agent_option
from .run_identity import IdentityError, cell_hash, check_rows, compare_grids, grid_id
from .rundir import (  # re-exported: hear2act.eval.runner was their home
    DurableWriter,
    RunDirError,
    exclusive,
    read_numbered,
    read_rollouts,
    read_run,
    rollouts_path,
    shard_files,
)

__all__ = ["AFFECTS", "DurableWriter", "RunDirError", "make_row", "read_numbered", "read_rollouts",
           "read_run", "register", "rollouts_path", "run_grid"]

# affect spec prefix -> "module:Class" taking the part after the colon (a checkpoint directory).
AFFECTS: dict[str, str] = {"hf": "hear2act_env.speech.affect_hf:TransformersAffect"}


def _bank_hashes(grid: Grid) -> tuple[dict[str, str], str]:
    from hear2act_env import load_scenarios

    per = {s.id: hashlib.sha256(json.dumps(s.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
           for s in load_scenarios()}
    bank = hashlib.sha256("".join(f"{k}:{v}\n" for k, v in per.items()).encode()).hexdigest()[:16]
    return per, bank


def _prepare_dir(grid: Grid, out: Path) -> None:
    """Save the grid in ``out``; a saved grid may be replaced only by one that keeps every planned rollout's cell."""
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "grid.toml"
    if saved.exists():
        text = saved.read_text(encoding="utf-8")
        if text == grid.source:
            return
        try:
            compare_grids(parse_grid(text, saved), grid)
        except (IdentityError, GridError) as e:
            raise RunDirError(f"{out} holds a run of another grid than {grid.path or grid.name}: {e}") from None
    tmp = saved.with_name(f"grid.toml.{os.getpid()}.tmp")  # shards may start together
    tmp.write_text(grid.source, encoding="utf-8")
    os.replace(tmp, saved)


def _env_kwargs(cell: Cell, perceivers: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if cell.renderer_spec:
        kwargs["renderer"] = cell.renderer_spec
    if cell.perceiver:
        # The paper's two-stage T+S_hat (cards P6c/P6d): an audio LLM writes the state sentence, loaded once.
        spec = cell.agent_spec if cell.perceiver == "self" else cell.perceiver
        if spec not in perceivers:
            from hear2act.agents.llm.perceiver_llm import make_perceiver

            perceivers[spec] = make_perceiver(spec)
        kwargs["perceiver"] = perceivers[spec]
    elif ACCESS[cell.access].state_tag in ("inferred", "affect"):
        # One enrolled perceiver per renderer, shared by every env (the engine keeps one env per episode in
        # flight, and each would otherwise enroll its own: same baseline, many renders). The default affect
        # rule reads the same baseline.
        spec = cell.renderer_spec or "hibari"
        if spec not in perceivers:
            from hear2act_env.speech.perceiver import FeaturePerceiver
            from hear2act_env.speech.renderers import make_renderer

            perceivers[spec] = FeaturePerceiver()
            perceivers[spec].enroll(make_renderer(spec), None)
        kwargs["perceiver"] = perceivers[spec]
    if cell.affect and cell.affect != "rule":
        from hear2act_env.registry import resolve

        prefix, _, target = cell.affect.partition(":")
        if not target:
            raise GridError(f"condition {cell.condition!r}: affect spec {cell.affect!r} must be PREFIX:PATH "
                            f"with PREFIX in {sorted(AFFECTS)}, or 'rule'")
        kwargs["affect"] = resolve(AFFECTS, prefix, "affect model")(target)
    return kwargs


def _policy(cell: Cell) -> Any:
    from hear2act.agents import AGENTS, make_policy

    kwargs = dict(cell.agent_kwargs)
    if cell.agent_spec in AGENTS:
        return make_policy(cell.agent_spec, access=cell.access, **kwargs)
    # Model policies get the paper's assistant variant: spoken blocks use ASK/RECOMMEND/CONFIRM only.
    kwargs.setdefault("assistant", "spoken" if cell.kind == "spoken" else "text")
    kwargs.setdefault("name", cell.agent)
    return make_policy(cell.agent_spec, access=cell.access, **kwargs)


def run_grid(grid: Grid, out: str | Path, shard_spec: tuple[int, int] = (0, 1), *, batch_size: int = 16,
             progress: bool = True, make_policy: Callable[[Cell], Any] = _policy,
             retry_failed: bool = False) -> dict[str, Any]:
    """Run (or resume) one shard of a grid into ``out``; returns counts (total, skipped, run, failed).

    A failed rollout (a model call that failed for good) is a recorded result and is not re-run on resume,
    unless ``retry_failed``: then it is played again and its new line supersedes the failed one.
    """
    from hear2act.agents.base import close_policy

    from .engine import run_episodes
    from .rollout import episode_spec
    from .trajectory import Trajectory

    out = Path(out)
    _prepare_dir(grid, out)
    path = rollouts_path(out, shard_spec)
    planned = shard(grid.expand(), *shard_spec)
    per_scenario, bank = _bank_hashes(grid)
    with exclusive(path):
        numbered = read_numbered(path, repair=True)
        try:
            existing = check_rows([(path, n, row) for n, row in numbered], grid,
                                  {r.rollout_id: r for r in grid.expand()})
        except IdentityError as e:
            raise RunDirError(str(e)) from None
        existing = [row for _, row in numbered]  # file order: a retry supersedes a failure
        other = sorted({str(row.get("bank_hash")) for row in existing} - {bank})
        if other:
            raise RunDirError(f"{path}: rollouts there were played on another scenario bank ({', '.join(other)}; "
                              f"now {bank}); resuming would mix banks. Use a new --out directory")
        latest = {row["rollout_id"]: row for row in existing}  # file order: a retry supersedes a failure
        # A rollout another shard file of this directory already holds is done too (read_run merges every
        # rollouts*.jsonl): a run sharded one way resumes sharded another way (e.g. a timed two-shard pass,
        # then the whole grid as one shard) without playing anything twice.
        for other_file in shard_files(out):
            if other_file != path:
                for row in read_rollouts(other_file):  # read-only: a torn last line of a live shard is skipped
                    latest.setdefault(row["rollout_id"], row)
        done = {rid for rid, row in latest.items() if not (retry_failed and row.get("failed"))}
        todo = [r for r in planned if r.rollout_id not in done]
        bar = Bar(len(planned), "hear2act eval", done=len(planned) - len(todo), show=progress, log="hear2act eval")
        writer = DurableWriter(path)
        failed = 0
        perceivers: dict[str, Any] = {}
        try:
            # One policy and one engine call per (agent, access): the engine batches across cells and
            # scenarios and reuses an env per configuration for the episodes that follow.
            for cell0, rollouts in _by_policy(todo):
                env_kwargs = {c: _env_kwargs(c, perceivers) for c in {r.cell for r in rollouts}}
                by_key = {r.rollout_id: r for r in rollouts}
                specs = [episode_spec(r, env_kwargs[r.cell]) for r in rollouts]

                def on_done(traj: Trajectory, by_key: dict[str, Rollout] = by_key) -> None:
                    nonlocal failed
                    r = by_key[traj.key]
                    failed += traj.failed is not None
                    writer.write(make_row(grid, r, traj, per_scenario[r.scenario_id], bank))
                    bar.update(r.cell.label)

                policy = make_policy(cell0)
                try:
                    run_episodes(specs, policy, batch_size=batch_size, on_done=on_done)
                finally:
                    close_policy(policy)
        finally:
            for perceiver in perceivers.values():
                close_policy(perceiver)
            writer.close()
            bar.close()
    return {"planned": len(planned), "skipped": len(planned) - len(todo), "run": len(todo), "failed": failed,
            "path": str(path)}


def _by_policy(rollouts: Sequence[Rollout]) -> list[tuple[Cell, list[Rollout]]]:
    """Rollouts grouped by the policy that plays them (agent label and spec, access, assistant kind)."""
    groups: dict[tuple[Any, ...], tuple[Cell, list[Rollout]]] = {}
    for r in rollouts:
        c = r.cell
        groups.setdefault((c.agent, c.agent_spec, c.agent_kwargs, c.access, c.kind), (c, []))[1].append(r)
    return list(groups.values())


def make_row(grid: Grid, r: Rollout, traj: Mapping[str, Any], scenario_hash: str, bank_hash: str) -> dict[str, Any]:
    """The JSON line of one rollout: identity, seeds, hashes, outcome and the full trajectory."""
    return {
        "rollout_id": r.rollout_id,
        "grid": grid.name,
        "grid_seed": grid.seed,
        "grid_id": grid_id(grid.name, grid.seed),
        "cell": r.cell.to_dict(),
        "cell_hash": cell_hash(r.cell),
        "scenario_id": r.scenario_id,
        "repeat": r.repeat,
        "seed": r.seed,
        "scenario_hash": scenario_hash,
        "bank_hash": bank_hash,
        "failed": traj.get("failed"),
        "outcome": traj.get("outcome"),
        "trajectory": dict(traj),  # a Trajectory's JSON object (hear2act.eval.trajectory)
    }


# ---------------------------------------------------------------- command line


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval", help="run an evaluation grid (resumable, shardable); one JSON line per rollout",
        description="Run GRID (a TOML file, or a shipped grid: paper, quick) into RUN_DIR. Re-running the same "
                    "command resumes. Shards merge by concatenating RUN_DIR/rollouts*.jsonl.",
    )
    p.add_argument("grid", help=f"grid TOML file, or a shipped grid: {', '.join(shipped_grids())}")
    p.add_argument("--agent", action="append", default=[], metavar="LABEL=SPEC",
                   help="evaluate this agent on the grid's design (repeatable): a model spec (hf:PATH, "
                        "openai:MODEL@URL, omni:PATH, qwen2audio:PATH) or a registered agent, under LABEL "
                        "(default: the spec). Replaces the grid's agents in every block; a label the grid has "
                        "keeps its rollout ids with the new spec")
    p.add_argument("--keep-agents", action="store_true", help="with --agent: add to the grid's agents, not replace")
    p.add_argument("--limit", "--n", dest="limit", type=positive_int, default=None, metavar="N",
                   help="cut every scenario subset to its first N scenarios")
    p.add_argument("--repeats", type=positive_int, default=None, metavar="N",
                   help="cut every block's repeats to at most N (the same rollouts as in the whole grid: running "
                        "the whole grid into the same RUN_DIR later plays only the rest)")
    p.add_argument("--skip-kind", action="append", default=[], choices=KINDS, metavar="KIND",
                   help=f"leave out the blocks of this kind (repeatable; one of {', '.join(KINDS)})")
    p.add_argument("--out", type=Path, help="run directory (required unless --dry-run)")
    p.add_argument("--shard", default="0/1", help="run shard i of n (i/n, 0-based; default 0/1), or 'auto': the "
                                                  "launcher's rank/world size (accelerate, torchrun, Slurm)")
    p.add_argument("--dry-run", action="store_true", help="print the rollouts per cell and the total; run nothing")
    p.add_argument("--batch-size", type=positive_int, default=16,
                   help="episodes in flight per policy call (default 16)")
    p.add_argument("--wandb", action="store_true", help="log config and per-cell summaries to Weights & Biases "
                                                         "(offline unless WANDB_MODE is set)")
    p.add_argument("--retry-failed", action="store_true", help="play failed rollouts again (after fixing a server); "
                                                                "the new line supersedes the failed one")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_eval)


def shipped_grids() -> list[str]:
    return sorted(q.stem for q in GRIDS_DIR.glob("*.toml"))


def _eval(args: argparse.Namespace) -> int:
    try:
        agents = [parse_agent_option(a) for a in args.agent]
        if args.keep_agents and not agents:
            raise ValueError("--keep-agents needs at least one --agent LABEL=SPEC")
        grid = edit_grid(args.grid, agents=agents, keep_agents=args.keep_agents, limit=args.limit,
                         repeats=args.repeats, drop_kinds=tuple(args.skip_kind))
        shard_spec = parse_shard(args.shard)
        if args.dry_run:
            return _dry_run(grid, shard_spec, args.out)
        if args.out is None:
            print("hear2act eval: error: --out RUN_DIR is required (or use --dry-run)", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        result = run_grid(grid, args.out, shard_spec, batch_size=args.batch_size, progress=not args.quiet,
                          retry_failed=args.retry_failed)
    except (GridError, RunDirError, ValueError, ImportError) as e:
        print(f"hear2act eval: error: {e}", file=sys.stderr)
        return 2
    print(f"{result['path']}: {result['planned']} rollouts in this shard; {result['skipped']} already done, "
          f"{result['run']} run now ({result['failed']} failed) in {time.perf_counter() - t0:.1f}s")
    from .results import format_results, read_results, write_results

    try:  # every shard file there so far (another shard may still be running)
        path = write_results(args.out, command=_command(args))
    except (RunDirError, ValueError) as e:
        print(f"hear2act eval: error: {e}", file=sys.stderr)
        return 2
    print(format_results(read_results(path)))
    print(f"results: {path}")
    if args.wandb:
        from .wandb_log import log_run

        try:
            print(f"wandb: {log_run(args.out, grid)}")
        except ImportError as e:
            print(f"hear2act eval: error: {e}", file=sys.stderr)
            return 2
    return 0


def _command(args: argparse.Namespace) -> str:
    """The command line of this run, as recorded in results.json."""
    import shlex

    parts = ["hear2act", "eval", args.grid, *[x for a in args.agent for x in ("--agent", a)]]
    parts += ["--keep-agents"] * args.keep_agents + (["--limit", str(args.limit)] if args.limit else [])
    parts += (["--repeats", str(args.repeats)] if args.repeats else []) + [
        x for k in args.skip_kind for x in ("--skip-kind", k)]
    parts += ["--out", str(args.out)] + (["--shard", args.shard] if args.shard != "0/1" else [])
    return shlex.join(parts)


def _dry_run(grid: Grid, shard_spec: tuple[int, int], out: Path | None) -> int:
    rollouts = shard(grid.expand(), *shard_spec)
    done: set[str] = set()
    if out is not None:
        done = {row["rollout_id"] for f in shard_files(out) for row in read_rollouts(f)}
    counts: dict[str, list[int]] = {}
    for r in rollouts:
        c = counts.setdefault(f"{r.cell.block}: {r.cell.label}", [0, 0])
        c[0] += 1
        c[1] += r.rollout_id in done
    width = max((len(k) for k in counts), default=10)
    for label, (n, d) in counts.items():
        print(f"{label:<{width}}  {n:>7,}" + (f"  ({d:,} done)" if out is not None else ""))
    total = sum(n for n, _ in counts.values())
    i, n = shard_spec
    where = f" (shard {i}/{n})" if n > 1 else ""
    print(f"{'total' + where:<{width}}  {total:>7,}" + (f"  ({len(done & {r.rollout_id for r in rollouts}):,} done)"
                                                       if out is not None else ""))
    return 0
