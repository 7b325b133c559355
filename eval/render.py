"""``hear2act render``: pre-render every distinct user utterance a grid needs.

The grid's rollouts are played text-only (fast); every user turn's
(words, delivery label, seed) is collected, and the ones missing from the
audio cache are rendered. Later audio-condition runs of the same grid then
read every observation from the cache.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

from hear2act_env import ENV_IDS
from hear2act_env.cli import positive_int, seed_int
from hear2act_env.progress import progress
from hear2act_env.speech.renderers.base import RENDERERS


def utterances(env_ids: list[str], agents: list[str], n: int | None, seed: int) -> set[tuple[str, str, int]]:
    from agents import make_agent

    from .rollout import play

    needed: set[tuple[str, str, int]] = set()
    for env_id in env_ids:
        env = gym.make(env_id, access="T+S", disable_env_checker=True).unwrapped
        for name in agents:
            agent = make_agent(name)
            for i, s in enumerate(progress(env.scenarios[:n], f"collect {name} {env_id}")):
                needed.update(env.utterance for _ in play(env, agent, s.id, seed + i))
    return needed


def register(subparsers: argparse._SubParsersAction) -> None:
    from agents import AGENTS

    p = subparsers.add_parser("render", help="pre-render (cache) every user utterance a grid needs")
    p.add_argument("--env", nargs="+", default=sorted(ENV_IDS), choices=sorted(ENV_IDS))
    p.add_argument("--agents", nargs="+", default=["state-rule"], choices=sorted(AGENTS))
    p.add_argument("--renderer", default="hibari", choices=sorted(RENDERERS))
    p.add_argument("--n", type=positive_int, default=None, help="first N scenarios (default: all 480)")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--cache", default=None,
                   help="audio cache folder (default: $HEAR2ACT_CACHE/audio, i.e. ~/.cache/hear2act/audio)")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from hear2act_env.speech.cache import AudioCache, default_cache_dir
    from hear2act_env.speech.renderers import make_renderer

    t0 = time.perf_counter()
    needed = utterances(args.env, args.agents, args.n, args.seed)
    t1 = time.perf_counter()
    cache = AudioCache(make_renderer(args.renderer), args.cache or default_cache_dir())
    audio_s = 0.0
    for words, label, seed in progress(sorted(needed), "render"):
        audio_s += len(cache.get(words, label, seed)) / 16_000
    t2 = time.perf_counter()
    st = cache.stats
    print(f"{len(needed)} distinct utterances ({t1 - t0:.1f}s to collect); rendered {st.misses}, "
          f"already cached {st.hits}, repaired {st.repaired}; {audio_s:.0f}s of audio in {t2 - t1:.1f}s "
          f"-> {cache.root}")
    return 0
