"""Data for the report's trajectory viewer: matched rollouts of a few scenarios, like the paper's Appendix H cards.

For each selected scenario, every cell's repeat-0 rollout is replayed in a text env from its seed and recorded
actions, which checks the record (the user's words must come out the same) and recovers what the record leaves
implicit: the request and opening lines and which hidden needs each user turn disclosed. Spoken user turns of
cells that ran with a renderer get an audio clip rendered from the recorded words, delivery label and audio
seed (through the audio cache, so usually a cache read), encoded as Ogg Vorbis and embedded once per distinct
(renderer, words, delivery, seed).
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

N_SCENARIOS = 4
MAX_CLIPS = 240


def select_scenarios(rows: Sequence[Mapping[str, Any]], n: int = N_SCENARIOS) -> list[str]:
    """The scenarios met by the most cells (ties: first seen in the run), so the viewer can compare the most."""
    cells: dict[str, set[tuple]] = {}
    first: dict[str, int] = {}
    for i, r in enumerate(rows):
        sid = r["scenario_id"]
        first.setdefault(sid, i)
        c = r["cell"]
        cells.setdefault(sid, set()).add((c["block"], c["agent"], c["realization"], c["condition"],
                                          c["intervention"], c["renderer"]))
    spoken = {r["scenario_id"] for r in rows if r["cell"]["renderer"]}
    ranked = sorted(cells, key=lambda s: (s not in spoken, -len(cells[s]), first[s]))
    return ranked[:n]


def build(rows: Sequence[Mapping[str, Any]], n_scenarios: int = N_SCENARIOS, max_clips: int = MAX_CLIPS,
          audio: bool = True) -> dict[str, Any]:
    """The viewer's JSON payload: scenarios, their matched rollouts turn by turn, and audio clips."""
    from hear2act_env import load_scenarios

    bank = {s.id: s for s in load_scenarios()}
    chosen = select_scenarios(rows, n_scenarios)
    clips: dict[str, str] = {}
    notes: list[str] = []
    renderer_state: dict[str, Any] = {"channels": {}, "disabled": not audio}
    out = []
    for sid in chosen:
        s = bank.get(sid)
        if s is None:
            notes.append(f"scenario {sid} is not in the installed bank; skipped")
            continue
        picked = [r for r in rows if r["scenario_id"] == sid and r["repeat"] == 0]
        rollouts = []
        for r in picked:
            card, problem = _card(r, s, clips, max_clips, renderer_state)
            rollouts.append(card)
            if problem:
                notes.append(problem)
        out.append({
            "id": s.id, "domain": s.domain, "request": s.request, "gold": s.gold,
            "needs": [{"level": n.level, "statement": n.statement} for n in s.needs],
            "options": [{"number": o.number, "name": o.name, "role": s.role(o.number)} for o in s.options],
            "rollouts": rollouts,
        })
    if renderer_state.get("error"):
        notes.append(f"no audio in the viewer: {renderer_state['error']}")
    if len(clips) >= max_clips:
        notes.append(f"audio limited to the first {max_clips} distinct user turns")
    return {"scenarios": out, "clips": clips, "notes": notes}


def _card(r: Mapping[str, Any], s: Any, clips: dict[str, str], max_clips: int,
          renderer_state: dict[str, Any]) -> tuple[dict[str, Any], str]:
    c = r["cell"]
    traj = r["trajectory"]
    card: dict[str, Any] = {
        "rollout_id": r["rollout_id"], "block": c["block"], "agent": c["agent"], "realization": c["realization"],
        "condition": c["condition"], "intervention": c["intervention"], "renderer": c["renderer"],
        "failed": r.get("failed"), "outcome": r.get("outcome"), "turns": [],
    }
    lines, disclosed, problem = _replay(r, s)
    user_turns = [traj["opening"], *[t for t in traj["turns"] if "user_words" in t]]
    card["turns"].append({"who": "user", "text": s.request, "request": True})
    card["turns"].append({"who": "assistant", "raw": lines[1][len("Assistant: "):] if len(lines) > 1 else "",
                          "kind": "recommend", "option": s.opening, "opening": True})
    for i, u in enumerate(user_turns):
        if i > 0:
            t = traj["turns"][i - 1]
            card["turns"].append({"who": "assistant", "raw": t.get("raw", ""), "action": t.get("action", ""),
                                  "reasoning": t.get("reasoning", ""), "kind": t.get("parsed_kind"),
                                  "option": t.get("option"), "parse_error": t.get("parse_error", ""),
                                  "error": t.get("error", "")})
        clip = _clip(c["renderer_spec"], u, clips, max_clips, renderer_state) if c["renderer_spec"] else None
        card["turns"].append({"who": "user", "text": u["user_words"], "state": u["state"],
                              "delivery": u["delivery"], "audio": clip,
                              "disclosed": disclosed[i] if i < len(disclosed) else []})
    if traj.get("failed") and traj["turns"] and "user_words" not in traj["turns"][-1]:
        t = traj["turns"][-1]
        card["turns"].append({"who": "assistant", "raw": t.get("raw", ""), "kind": None, "error": t.get("error")})
    return card, problem


def _replay(r: Mapping[str, Any], s: Any) -> tuple[list[str], list[list[int]], str]:
    """Replay the recorded actions in a text env: transcript lines and the needs newly disclosed per user turn."""
    import gymnasium as gym

    import hear2act_env  # registers the env ids

    traj = r["trajectory"]
    if traj["env_id"] not in hear2act_env.ENV_IDS:
        raise ValueError(f"rollout {r['rollout_id']}: unknown env id {traj['env_id']!r}")
    env = gym.make(traj["env_id"], access="T", disable_env_checker=True)
    try:
        _, info = env.reset(seed=r["seed"], options={"scenario_id": s.id})
        seen = set(info["disclosed"])
        disclosed = [sorted(seen)]
        problem = ""
        for t in traj["turns"]:
            if "user_words" not in t:
                break
            _, _, term, trunc, info = env.step(t["action"])
            words = env.unwrapped.utterance[0]
            if words != t["user_words"] and not problem:
                problem = (f"rollout {r['rollout_id']}: replay differs from the record at turn {t['turn']} "
                           f"({words!r} vs {t['user_words']!r}); env or bank changed since the run?")
            new = sorted(set(info["disclosed"]) - seen)
            seen |= set(info["disclosed"])
            disclosed.append(new)
            if term or trunc:
                break
        return env.unwrapped.transcript.split("\n"), disclosed, problem
    finally:
        env.close()


def _clip(renderer_spec: str, u: Mapping[str, Any], clips: dict[str, str], max_clips: int,
          state: dict[str, Any]) -> str | None:
    key = f"{renderer_spec}|{u['delivery']}|{u['audio_seed']}|{u['user_words']}"
    clip_id = "c" + hashlib.sha256(key.encode()).hexdigest()[:12]
    if clip_id in clips:
        return clip_id
    if state["disabled"] or state.get("error") or len(clips) >= max_clips:
        return None
    try:
        channel = state["channels"].get(renderer_spec)
        if channel is None:
            from hear2act_env.speech.channel import SpeechChannel

            channel = state["channels"][renderer_spec] = SpeechChannel(renderer_spec)
        audio = channel.audio(u["user_words"], u["delivery"], int(u["audio_seed"]))
        clips[clip_id] = "data:audio/ogg;base64," + base64.b64encode(_ogg(audio)).decode("ascii")
        return clip_id
    except Exception as e:  # a missing speech extra or renderer: the viewer still works, without audio
        state["error"] = f"{type(e).__name__}: {e}"
        print(f"hear2act report: warning: no audio ({state['error']})", file=sys.stderr)
        return None


def _ogg(audio: Any) -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, audio, 16_000, format="OGG", subtype="VORBIS")
    return buf.getvalue()


def summary(payload: Mapping[str, Any]) -> Counter:
    """Counts for the report text: scenarios, rollouts, clips."""
    return Counter(viewer_scenarios=len(payload["scenarios"]), clips=len(payload["clips"]),
                   viewer_rollouts=sum(len(s["rollouts"]) for s in payload["scenarios"]))
