"""``hear2act render``: pre-render (cache) the user utterances an evaluation will play.

``hear2act render GRID [--agent LABEL=SPEC] [--limit N]`` (GRID as for ``hear2act eval``, the same edits)
renders what that grid plays: its speech cells (access ``A``, ``A+T``, ``T+S_hat``, ``T+affect``), with its
episode seeds (:func:`hear2act.eval.grid.episode_seed`), its scenario subsets and its renderers.

- A registered (rule) agent's rollouts are played exactly as ``hear2act eval`` plays them (same env
  arguments, perceiver and policy, through the same engine), so every utterance they meet is rendered:
  an agent's later turns can depend on what it heard (T+S_hat, T+affect), so nothing short of playing
  the cell knows them. Nothing is written to a run directory.
- A model's rollouts: its openings (the request's reaction, the same for every agent) are rendered; its
  later turns depend on its replies and are rendered when ``eval`` plays them.

Without GRID, the older mode: the utterances ``hear2act rollout --agent A --access T+S`` meets
(seeds ``seed + i``) for the given ``--agents`` on the first ``--n`` scenarios, played text-only.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from hear2act_env import ENV_IDS
from hear2act_env.cli import positive_int, seed_int
from hear2act_env.progress import progress
from hear2act_env.speech.renderers.base import RENDERERS

Utterance = tuple[str, str, int]


def utterances(env_ids: list[str], agents: list[str], n: int | None, seed: int) -> set[Utterance]:
    """(words, delivery label, render seed) of every user turn of ``hear2act rollout`` (seeds seed + i)."""
    from hear2act.agents import make_agent

    from .rollout import play

    needed: set[Utterance] = set()
    for env_id in env_ids:
        env = gym.make(env_id, access="T+S", disable_env_checker=True).unwrapped
        for name in agents:
            agent = make_agent(name)
            for i, s in enumerate(progress(env.scenarios[:n], f"collect {name} {env_id}")):
                needed.update(env.utterance for _ in play(env, agent, s.id, seed + i))
    return needed


def trajectory_utterances(traj: dict[str, Any]) -> set[Utterance]:
    """The utterances of one engine trajectory (its opening and every user turn)."""
    turns = [traj["opening"], *traj["turns"]] if traj.get("opening") else []
    return {(t["user_words"], t["delivery"], int(t["audio_seed"])) for t in turns}


def speech_rollouts(grid: Any) -> list[Any]:
    """The rollouts of a grid whose access condition hears the user's audio."""
    from hear2act_env.env import ACCESS, SPEECH_KEYS

    return [r for r in grid.expand() if SPEECH_KEYS & set(ACCESS[r.cell.access])]


def grid_utterances(grid: Any, cache: str | Path | None = None, batch_size: int = 16) -> dict[str, set[Utterance]]:
    """Renderer spec -> utterances the grid's speech cells play (rule agents played, model agents' openings).

    Playing renders through the env's audio cache (``cache``, default the env's), which is the point.
    """
    from hear2act.agents import AGENTS
    from hear2act.agents.base import close_policy

    from .engine import EpisodeSpec, run_episodes
    from .runner import _by_policy, _env_kwargs, _policy

    needed: dict[str, set[Utterance]] = {}
    rollouts = speech_rollouts(grid)
    perceivers: dict[str, Any] = {}
    try:
        for cell0, group in _by_policy(rollouts):
            where = {"audio_cache": str(cache)} if cache else {}
            if cell0.agent_spec not in AGENTS:  # a model: only its openings are known before it plays
                for r in progress(group, f"openings {cell0.agent}"):  # (no model or perceiver is loaded)
                    kw = where | ({"renderer": r.cell.renderer_spec} if r.cell.renderer_spec else {})
                    env = _opening_env(r.cell.env_id, kw)
                    env.reset(seed=r.seed, options={"scenario_id": r.scenario_id})
                    needed.setdefault(r.cell.renderer_spec or "hibari", set()).add(env.unwrapped.utterance)
                continue
            env_kwargs = {c: _env_kwargs(c, perceivers) | where for c in {r.cell for r in group}}
            specs = [EpisodeSpec(r.cell.env_id, r.scenario_id, r.seed, r.cell.access, r.cell.intervention,
                                 env_kwargs[r.cell], key=r.rollout_id) for r in group]
            renderer_of = {r.rollout_id: r.cell.renderer_spec or "hibari" for r in group}
            policy = _policy(cell0)
            try:
                for traj in run_episodes(specs, policy, batch_size=batch_size):
                    needed.setdefault(renderer_of[traj["key"]], set()).update(trajectory_utterances(traj))
            finally:
                close_policy(policy)
    finally:
        for p in perceivers.values():
            close_policy(p)
    return needed


_OPENING_ENVS: dict[tuple[str, tuple[tuple[str, Any], ...]], gym.Env] = {}


def _opening_env(env_id: str, kwargs: dict[str, Any]) -> gym.Env:
    key = (env_id, tuple(sorted(kwargs.items())))
    if key not in _OPENING_ENVS:  # a text access: reset draws the same opening without rendering it
        _OPENING_ENVS[key] = gym.make(env_id, access="T", disable_env_checker=True, **kwargs)
    return _OPENING_ENVS[key]


def register(subparsers: argparse._SubParsersAction) -> None:
    from hear2act.agents import AGENTS

    p = subparsers.add_parser(
        "render", help="pre-render (cache) every user utterance a grid needs",
        description="With GRID: what `hear2act eval GRID` plays (its seeds, subsets, renderers; --agent and "
                    "--limit as for eval). Without: what `hear2act rollout --access T+S` meets.")
    p.add_argument("grid", nargs="?", default=None, help="grid TOML file or shipped grid name (as for eval)")
    p.add_argument("--agent", action="append", default=[], metavar="LABEL=SPEC",
                   help="with GRID: as `hear2act eval --agent`")
    p.add_argument("--keep-agents", action="store_true", help="with GRID: as `hear2act eval --keep-agents`")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="with GRID: as `hear2act eval`")
    p.add_argument("--env", nargs="+", default=sorted(ENV_IDS), choices=sorted(ENV_IDS))
    p.add_argument("--agents", nargs="+", default=["state-rule"], choices=sorted(AGENTS))
    p.add_argument("--renderer", default="hibari", choices=sorted(RENDERERS), help="without GRID")
    p.add_argument("--n", type=positive_int, default=None,
                   help="first N scenarios (default: all 480); with GRID the same as --limit")
    p.add_argument("--seed", type=seed_int, default=0, help="without GRID")
    p.add_argument("--cache", default=None,
                   help="audio cache folder (default: $HEAR2ACT_CACHE/audio, i.e. ~/.cache/hear2act/audio)")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from hear2act_env.speech.cache import AudioCache, default_cache_dir
    from hear2act_env.speech.renderers import make_renderer

    t0 = time.perf_counter()
    root = Path(args.cache or default_cache_dir())
    before = _clips(root)
    if args.grid is not None:
        from .grid_edit import edit_grid, parse_agent_option

        grid = edit_grid(args.grid, agents=[parse_agent_option(a) for a in args.agent],
                         keep_agents=args.keep_agents, limit=args.limit or args.n)
        by_renderer = grid_utterances(grid, root)
    else:
        by_renderer = {args.renderer: utterances(args.env, args.agents, args.n, args.seed)}
    t1 = time.perf_counter()
    audio_s, total = 0.0, 0
    hits = misses = repaired = 0
    for spec, needed in by_renderer.items():
        cache = AudioCache(make_renderer(spec), root)
        for words, label, seed in progress(sorted(needed), f"render {spec}"):
            audio_s += len(cache.get(words, label, seed)) / 16_000
        total += len(needed)
        hits, misses, repaired = hits + cache.stats.hits, misses + cache.stats.misses, repaired + cache.stats.repaired
    t2 = time.perf_counter()
    played = _clips(root) - before - misses  # rendered while the grid's rule agents played their cells
    print(f"{total} distinct utterances ({t1 - t0:.1f}s to collect"
          + (f", {played} of them rendered while playing" if played > 0 else "")
          + f"); rendered {misses}, already cached {hits}, repaired {repaired}; {audio_s:.0f}s of audio "
          f"in {t2 - t1:.1f}s -> {root}")
    return 0


def _clips(root: Path) -> int:
    return sum(1 for _ in root.glob("*/*.h2a")) if root.exists() else 0
