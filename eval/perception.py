"""``hear2act perception``: the speech-layer validation (paper Appendix E, Table 11).

Clips are real user turns from benchmark rollouts (the state-aware rule agent
with correct tags under Prosody-mediated responses): each user *reaction* to
a recommendation, with its dialogue context, its words, its intended graded
state and delivery label, and the audio seed the env uses for it. From those,
``n`` clips balanced 50/50 over resolved vs unresolved are drawn (seeded),
rendered by each renderer, and read by the CPU perceiver (trained on hibari
renders of other sentences, enrolled on each voice's neutral speech).
Reported per renderer: accuracy per collapsed class and overall, the 4 x 4
confusion over graded states, and the same figures restricted to turns whose
words are the shared assent pool (the decision-relevant contrast: same words,
different delivery). ``--out DIR`` also writes the clips (``DIR/<renderer>/``,
each with its own manifest) and ``DIR/manifest.json`` over all renderers, so
``hear2act listen DIR --annotator NAME`` works as typed.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from hear2act_env import ENV_IDS
from hear2act_env.cli import positive_int, seed_int
from hear2act_env.dialogue.engine import STATES, collapsed
from hear2act_env.progress import progress
from hear2act_env.protocol import GRAMMAR
from hear2act_env.speech.renderers.base import RENDERERS


@dataclass(frozen=True)
class Turn:
    scenario_id: str
    turn: int
    words: str
    context: str
    delivery: str
    state: str
    seed: int

    @property
    def status(self) -> str:
        return collapsed(self.state)

    @property
    def same_words(self) -> bool:
        return self.words in GRAMMAR.pool("ASSENT")


def collect_turns(env_id: str = "Hear2Act-Prosody-v5", seed: int = 0, limit: int | None = None) -> list[Turn]:
    """Every user reaction to a recommendation in the reference rollouts (no audio rendered)."""
    from hear2act.agents import make_agent

    from .rollout import play

    env = gym.make(env_id, access="T+S", disable_env_checker=True).unwrapped
    agent = make_agent("state-rule")
    turns: list[Turn] = []
    for i, s in enumerate(progress(env.scenarios[:limit], "collect turns")):
        for _ in play(env, agent, s.id, seed + i):
            if env._last.act == "react":
                words, delivery, audio_seed = env.utterance  # exactly what the audio conditions render
                context = "\n".join(env.transcript.splitlines()[:-1])
                turns.append(Turn(s.id, env.engine.turn, words, context, delivery, env._last.state, audio_seed))
    return turns


def balanced_sample(turns: list[Turn], n: int, seed: int = 0, same_words: bool = False) -> list[Turn]:
    """``n`` turns, half resolved and half unresolved (seeded)."""
    rng = np.random.default_rng(seed)
    pool = [t for t in turns if t.same_words] if same_words else turns
    half = n // 2
    out = []
    for status in ("resolved", "unresolved"):
        group = [t for t in pool if t.status == status]
        if len(group) < half:
            raise ValueError(f"only {len(group)} {status} turns available, need {half}")
        out += [group[int(k)] for k in rng.choice(len(group), size=half, replace=False)]
    return out


def evaluate(turns: list[Turn], renderer_name: str) -> dict[str, Any]:
    """Render each turn with ``renderer_name`` and score the CPU perceiver on it."""
    from hear2act_env.speech.cache import AudioCache
    from hear2act_env.speech.perceiver import FeaturePerceiver
    from hear2act_env.speech.renderers import make_renderer
    from hear2act_env.speech.verify import verify

    renderer = make_renderer(renderer_name)
    cache = AudioCache(renderer)
    perceiver = FeaturePerceiver()
    perceiver.adapt(renderer)  # as the env does: the shipped baseline for the trained voice, else enrolled
    rows, passed, claims = [], 0, 0
    for t in progress(turns, f"perceive {renderer_name}"):
        audio = cache.get(t.words, t.delivery, t.seed)
        p = perceiver.perceive(audio, 16_000, t.words, t.context)
        rows.append({"turn": t, "state": p.state, "status": p.status})
        report = verify(p.evidence, audio)
        passed += sum(c.passed for c in report.checks)
        claims += len(report.checks)
    verified = {"claims": claims, "verified": passed / claims if claims else float("nan")}
    return {"renderer": renderer_name, "version": renderer.version, **score(rows), **verified}


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def acc(sel: list[dict[str, Any]]) -> float:
        return float(np.mean([r["status"] == r["turn"].status for r in sel])) if sel else float("nan")

    confusion = {a: dict.fromkeys(STATES, 0) for a in STATES}
    for r in rows:
        confusion[r["turn"].state][r["state"]] += 1
    same = [r for r in rows if r["turn"].same_words]
    return {
        "n": len(rows),
        "resolved": acc([r for r in rows if r["turn"].status == "resolved"]),
        "unresolved": acc([r for r in rows if r["turn"].status == "unresolved"]),
        "overall": acc(rows),
        "four_way": float(np.mean([r["state"] == r["turn"].state for r in rows])) if rows else float("nan"),
        "same_words_n": len(same),
        "same_words": acc(same),
        "confusion": confusion,
    }


def write_clips(turns: list[Turn], renderer_name: str, out: Path, mode: str = "4way") -> Path:
    """Clips + manifest.json for ``hear2act listen``."""
    import soundfile as sf

    from hear2act_env.speech.cache import AudioCache
    from hear2act_env.speech.renderers import make_renderer

    cache = AudioCache(make_renderer(renderer_name))
    (out / "clips").mkdir(parents=True, exist_ok=True)
    clips = []
    for k, t in enumerate(progress(turns, f"write clips {renderer_name}")):
        cid = f"c{k:03d}"
        sf.write(out / "clips" / f"{cid}.wav", cache.get(t.words, t.delivery, t.seed), 16_000)
        clips.append({"id": cid, "audio": f"clips/{cid}.wav", "context": t.context, "utterance": t.words,
                      "intended": t.state if mode == "4way" else t.status})
    manifest = out / "manifest.json"
    manifest.write_text(json.dumps({"mode": mode, "renderer": renderer_name, "clips": clips}, indent=1))
    (out / "turns.json").write_text(json.dumps([asdict(t) for t in turns], indent=1))
    return manifest


def write_combined_manifest(out: Path, renderers: list[str], mode: str = "4way") -> Path:
    """``out/manifest.json`` over the per-renderer clip folders (ids ``<renderer>-<clip>``), for ``listen out``."""
    clips = []
    for name in renderers:
        sub = json.loads((out / name / "manifest.json").read_text(encoding="utf-8"))
        clips += [{**c, "id": f"{name}-{c['id']}", "audio": f"{name}/{c['audio']}"} for c in sub["clips"]]
    manifest = out / "manifest.json"
    manifest.write_text(json.dumps({"mode": mode, "renderer": "+".join(renderers), "clips": clips}, indent=1))
    return manifest


def format_report(result: dict[str, Any]) -> str:
    lines = [f"renderer {result['renderer']} ({result['version']}), {result['n']} clips",
             f"  resolved {result['resolved']:.2f}  unresolved {result['unresolved']:.2f}  "
             f"overall {result['overall']:.2f}  4-way {result['four_way']:.2f}",
             f"  same words ({result['same_words_n']} clips): {result['same_words']:.2f}",
             f"  cited evidence re-derived within tolerance: {result['verified']:.3f} of {result['claims']} claims",
             "  confusion (rows intended, columns perceived): " + " ".join(f"{s:>10}" for s in STATES)]
    for s in STATES:
        lines.append(f"  {s:>45} " + " ".join(f"{result['confusion'][s][t]:>10}" for t in STATES))
    return "\n".join(lines)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("perception", help="speech-layer validation of the CPU perceiver (Table 11)")
    p.add_argument("--renderers", nargs="+", default=["hibari", "piper"], choices=sorted(RENDERERS))
    p.add_argument("--n", type=positive_int, default=100, help="clips per renderer, balanced 50/50")
    p.add_argument("--same-words", action="store_true",
                   help="draw only turns whose words are the assent pool")
    p.add_argument("--env", default="Hear2Act-Prosody-v5", choices=sorted(ENV_IDS))
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--out", type=Path, default=None, help="also write clips + manifest for `hear2act listen`")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    turns = balanced_sample(collect_turns(args.env, args.seed), args.n, args.seed, args.same_words)
    results = []
    for name in args.renderers:
        result = evaluate(turns, name)
        results.append(result)
        if args.out is not None:
            write_clips(turns, name, args.out / name)
        if not args.json:
            print(format_report(result))
    if args.out is not None:
        manifest = write_combined_manifest(args.out, list(dict.fromkeys(args.renderers)))
        print(f"clips for the listening test in {manifest.parent}: "
              f"hear2act listen {manifest.parent} --annotator NAME", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=1))
    return 0
