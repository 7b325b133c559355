"""Data parallel rollouts: each process plays its share of episodes; rank 0 gets them all, in order.

Run any script or ``hear2act rollout`` under ``accelerate launch`` (or
``torchrun``): the launcher sets ``RANK``/``WORLD_SIZE``/``LOCAL_RANK``;
process ``r`` of ``w`` plays specs ``r, r + w, r + 2w, ...`` with its own model
copy (``hf:``/``omni:`` put it on ``cuda:$LOCAL_RANK``), and the trajectories
are gathered over a gloo process group (plain Python objects, no GPU
collectives). Without a launcher everything runs in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hear2act.agents.base import Policy

from .engine import EpisodeSpec, run_episodes

# Shards finish at different times (episode lengths differ); the gather waits for the slowest one.
GATHER_TIMEOUT = timedelta(hours=48)


@dataclass(frozen=True)
class ProcessInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def process_info() -> ProcessInfo:
    """This process's place in a launch (from the launcher's environment variables)."""
    env = os.environ
    world = int(env.get("WORLD_SIZE", "1"))
    rank = int(env.get("RANK", "0"))
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"bad launch environment: RANK={rank} WORLD_SIZE={world}")
    return ProcessInfo(rank, world, int(env.get("LOCAL_RANK", str(rank))))


def shard(n: int, rank: int, world_size: int) -> list[int]:
    """Indices of the episodes process ``rank`` plays: every ``world_size``-th, starting at ``rank``."""
    return list(range(rank, n, world_size))


def merge(parts: Sequence[Sequence[tuple[int, Any]]], n: int) -> list[Any]:
    """Put (index, item) pairs from every process back in index order; every index exactly once."""
    out: list[Any] = [None] * n
    seen = 0
    for part in parts:
        for index, item in part:
            if out[index] is not None:
                raise RuntimeError(f"episode {index} came back from two processes")
            out[index] = item
            seen += 1
    if seen != n:
        missing = [i for i, x in enumerate(out) if x is None][:5]
        raise RuntimeError(f"{n - seen} episodes missing after the merge (e.g. {missing})")
    return out


def run_sharded(specs: Sequence[EpisodeSpec], make: Callable[[], Policy], *, batch_size: int = 16,
                on_done: Callable[[dict[str, Any]], None] | None = None, record_prompts: bool = False,
                info: ProcessInfo | None = None) -> list[dict[str, Any]] | None:
    """Play this process's share of ``specs``; rank 0 returns every trajectory in spec order, others None.

    ``make`` builds the policy in each process (after the launch, so each loads its own model).
    """
    info = info or process_info()
    mine = shard(len(specs), info.rank, info.world_size)
    from hear2act.agents.base import close_policy

    policy = make()
    try:
        trajectories = run_episodes([specs[i] for i in mine], policy, batch_size=batch_size, on_done=on_done,
                                    record_prompts=record_prompts)
    finally:
        close_policy(policy)
    pairs = list(zip(mine, trajectories, strict=True))
    if info.world_size == 1:
        return merge([pairs], len(specs))
    parts = _gather(pairs, info)
    return merge(parts, len(specs)) if info.is_main else None


def _gather(pairs: list[tuple[int, Any]], info: ProcessInfo) -> list[Any]:
    try:
        import torch.distributed as dist
    except ImportError as e:  # pragma: no cover - launches need torch
        raise ImportError(f'data-parallel rollouts need torch: pip install "hear2act[llm]" ({e})') from e
    created = not dist.is_initialized()
    if created:
        dist.init_process_group(backend="gloo", rank=info.rank, world_size=info.world_size, timeout=GATHER_TIMEOUT)
    try:
        # A launcher's own group may be NCCL or have a short timeout: gather on a gloo group of our own.
        group = None if created else dist.new_group(backend="gloo", timeout=GATHER_TIMEOUT)
        parts: list[Any] = [None] * info.world_size
        dist.all_gather_object(parts, pairs, group=group)
        return parts
    finally:
        if created:
            dist.destroy_process_group()
