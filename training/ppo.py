"""PPO (Stable-Baselines3, CPU) on the discrete wrappers, CleanRL-style: one dataclass of arguments.

    python -m hear2act.training.ppo --access T+S --total-timesteps 20000 --seed 0 --out runs/ppo-ts-0

Scenarios are split once by :func:`hear2act.training.splits.split_scenarios` (``--split-seed``, the same
for every run, so every access condition and seed is scored on the same held-out scenarios): whole
domains are held out (unseen domains) and, of the remaining domains, a few
scenarios each (unseen scenarios of seen domains). The policy trains on the
rest; held-out evaluation plays every held-out scenario with fixed episode
seeds and a deterministic policy, and writes ``OUT/eval.json`` (success,
turns, premature closure, disclosure, return; overall and per split, plus
the learning curve). Same arguments and seed give the same ``eval.json``
(DummyVecEnv, one torch thread, deterministic algorithms). Logs go to
TensorBoard under ``OUT/tb`` and, with ``--wandb``, to W&B (offline unless
``--wandb-mode online``). The policy is saved as ``OUT/policy.zip``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hear2act_env.access import NAMES, TRUE_STATE, get, names

from .splits import split_scenarios

# The access conditions whose env renders speech (a renderer argument, pooled episodes). Not the audio-in-prompt
# set of hear2act.agents.prompts.AUDIO_ACCESS: PPO reads the speech through the env's channels, never as a prompt.
SPEECH_ACCESS = names(lambda a: a.needs_speech)
TRAIN_INSTALL = 'pip install "hear2act[train]"'


def _arg(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class Args:
    env_id: str = _arg("Hear2Act-Prosody-v5", "Hear2Act-Prosody-v5 or Hear2Act-Explicit-v5")
    access: str = _arg(TRUE_STATE, f"access condition: {', '.join(NAMES)}")
    action_set: str = _arg("macro", "discrete action set: macro (4 actions) or full (22)")
    total_timesteps: int = _arg(20_000, "environment steps of training (all envs together)")
    seed: int = _arg(0, "run seed: PPO initialisation, sampling and the training envs' episode draws")
    out: str = _arg("runs/ppo", "output folder (eval.json, policy.zip, args.json, tb/)")
    turn_cost: float = _arg(0.05, "reward subtracted per assistant turn (the env's turn_cost)")
    n_envs: int = _arg(4, "parallel training envs")
    vec_env: str = _arg("dummy", "dummy (reproducible, in-process) or subproc (one process per env)")
    learning_rate: float = _arg(1e-3, "Adam learning rate")
    n_steps: int = _arg(128, "rollout steps per env between updates")
    batch_size: int = _arg(128, "minibatch size")
    n_epochs: int = _arg(10, "optimisation epochs per update")
    gamma: float = _arg(0.99, "discount")
    gae_lambda: float = _arg(0.95, "GAE lambda")
    ent_coef: float = _arg(0.01, "entropy bonus")
    net_arch: str = _arg("64,64", "hidden layer sizes of the policy and value MLPs, comma-separated")
    test_domains: int = _arg(8, "whole domains held out (unseen domains)")
    test_per_domain: int = _arg(2, "scenarios held out in each remaining domain (unseen scenarios)")
    split_seed: int = _arg(0, "seed of the train/test split (keep fixed to compare runs)")
    eval_seed: int = _arg(10_000, "episode seed of held-out scenario i is eval_seed + i")
    eval_every: int = _arg(0, "timesteps between held-out evaluations for the learning curve (0: only at the end)")
    episode_pool: int = _arg(-1, "episodes per training scenario (fixed seeds; bounds audio rendering); "
                                 "0 = a fresh seed every episode, -1 = 0 for text access and 2 for audio access")
    max_scenarios: int = _arg(0, "use only the first N scenarios of the bank before splitting (0: all; smoke tests)")
    renderer: str = _arg("hibari", "speech renderer for the audio conditions")
    wandb: bool = _arg(False, "also log to Weights & Biases")
    wandb_mode: str = _arg("offline", "W&B mode: offline (default, nothing leaves the machine) or online")
    wandb_project: str = _arg("hear2act-ppo", "W&B project")


def parse_args(cls: type = Args, argv: list[str] | None = None, prog: str | None = None) -> Any:
    """A dataclass -> argparse parser (``--field-name``, and ``--field_name`` as TRL's parsers accept; help from
    each field's metadata)."""
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n\n")[0])
    for f in dataclasses.fields(cls):
        flags = list(dict.fromkeys(["--" + f.name.replace("_", "-"), "--" + f.name]))
        help_text = f"{f.metadata['help']} (default: {f.default})"
        if isinstance(f.default, bool):
            parser.add_argument(*flags, action=argparse.BooleanOptionalAction, default=f.default, help=help_text)
        else:
            parser.add_argument(*flags, type=type(f.default), default=f.default, help=help_text)
    return cls(**vars(parser.parse_args(argv)))


def check(args: Args) -> None:
    """The flag values a run needs, checked before anything is imported or trained (one-line ValueErrors)."""
    import hear2act_env

    from .checks import check_access, check_split

    check_access(args.access, NAMES)
    check_access(args.env_id, sorted(hear2act_env.ENV_IDS), flag="--env-id")
    check_access(args.action_set, ("macro", "full"), flag="--action-set")
    check_access(args.vec_env, ("dummy", "subproc"), flag="--vec-env")
    check_split(args.test_domains, args.test_per_domain, args.split_seed)
    for name in ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    layers = [x.strip() for x in args.net_arch.split(",") if x.strip()]
    if not layers or not all(x.isdigit() for x in layers):
        raise ValueError(f"--net-arch must be comma-separated layer sizes like 64,64; got {args.net_arch!r}")


def _env_kwargs(args: Args) -> dict[str, Any]:
    kw: dict[str, Any] = {"turn_cost": args.turn_cost}
    if args.access in SPEECH_ACCESS:
        kw["renderer"] = args.renderer
    if get(args.access).state_tag == "inferred":
        from .acoustic import MemoPerceiver

        kw["perceiver"] = MemoPerceiver(args.renderer)
    return kw


class PredictPolicy:
    """An SB3 model as an engine policy: ``model.predict`` (deterministic) on the wrapped env's vector observation.

    It plays envs built by :func:`hear2act.training.wrappers.make_env` (the spec's ``make_env``), whose actions are the
    discrete indices the model outputs; one prediction per pending episode, as in a plain step loop.
    """

    name = "ppo"

    def __init__(self, model: Any) -> None:
        self.model = model

    def act_batch(self, items: Sequence[Any]) -> list[Any]:
        from hear2act.agents.base import PolicyOutput

        out = []
        for item in items:
            action, _ = self.model.predict(item.observation, deterministic=True)
            out.append(PolicyOutput(action=int(action), raw=str(int(action))))  # type: ignore[arg-type]
        return out


def evaluate(model: Any, args: Args, held_out: dict[str, list]) -> dict[str, Any]:
    """Play every held-out scenario once (seeds ``eval_seed + i``, deterministic policy); metrics per split.

    The episodes are played by the rollout engine (:func:`hear2act.eval.engine.run_episodes`, the loop ``hear2act
    rollout`` and ``eval`` play through) on the discrete-action env; outcomes are scored with the metrics table
    of :mod:`hear2act.eval.metrics`.
    """
    from hear2act.eval.engine import EpisodeSpec, run_episodes

    from .wrappers import make_env

    scenarios = held_out["unseen_domain"] + held_out["unseen_scenario"]
    kwargs = _env_kwargs(args)

    def factory() -> Any:
        return make_env(args.env_id, args.access, action_set=args.action_set, scenarios=scenarios, **kwargs)

    specs = [EpisodeSpec(args.env_id, s.id, args.eval_seed + i, args.access, key=f"ppo/{s.id}/{args.eval_seed + i}",
                         make_env=factory) for i, s in enumerate(scenarios)]
    # One episode at a time on one env, as a plain step loop would (the policy is deterministic either way).
    trajectories = run_episodes(specs, PredictPolicy(model), batch_size=1)
    rows, outcomes = [], []
    for i, (s, t) in enumerate(zip(scenarios, trajectories, strict=True)):
        o = t.outcome  # scoring only: the policy never saw info
        if o is None:
            raise RuntimeError(f"PPO evaluation: episode {s.id} failed ({t.failed})")
        total = 0.0
        for turn in t.turns:
            total += float(turn["reward"])
        split = "unseen_domain" if i < len(held_out["unseen_domain"]) else "unseen_scenario"
        outcomes.append({**o, "split": split, "return": round(total, 6)})
        rows.append({"split": split, "scenario_id": s.id, "success": bool(o["success"]), "turns": int(o["turns"]),
                     "premature_closure": bool(o["premature_closure"]), "n_disclosed": int(o["n_disclosed"]),
                     "return": round(total, 6)})
    return {"overall": _summary(outcomes), **{k: _summary([o for o in outcomes if o["split"] == k])
                                              for k in ("unseen_domain", "unseen_scenario")}, "episodes": rows}


# eval.json's names for the metrics of hear2act.eval.metrics.TABLE it reports (as fractions and means, not percent).
SUMMARY = {"success": "success", "turns": "turns", "premature_closure": "premature_closure",
           "n_disclosed": "disclosed", "full_disclosure": "full_disclosure"}


def _summary(outcomes: list[dict]) -> dict[str, float]:
    """The held-out figures of some episodes' outcomes (each with its ``return``), rounded to 6 places."""
    from hear2act.eval.metrics import value

    if not outcomes:
        return {"n": 0}
    out: dict[str, float] = {"n": len(outcomes)}
    for key in ("success", "turns", "premature_closure", "n_disclosed", "full_disclosure"):
        out[key] = round(value(outcomes, SUMMARY[key], scale=1.0), 6)
    out["return"] = round(float(np.mean([float(o["return"]) for o in outcomes])), 6)
    return out


def _require_sb3() -> Any:
    from hear2act_env.extras import missing_extra

    try:  # torch first: without it, the hint is its CPU build (the extra alone would pull a CUDA one)
        import torch
    except ImportError as exc:
        raise ImportError(missing_extra("PPO training", "train", exc)) from None
    try:
        import stable_baselines3
    except ImportError as exc:
        raise ImportError(missing_extra("PPO training", "train", exc)) from None
    return stable_baselines3, torch


def train(args: Args) -> dict[str, Any]:
    """Train, evaluate on the held-out scenarios, write OUT/{eval.json,policy.zip,args.json}; return eval."""
    check(args)
    if args.access in SPEECH_ACCESS:
        from .checks import require_speech

        require_speech(f"--access {args.access}")
    sb3, torch = _require_sb3()
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from hear2act_env import load_scenarios

    from .wrappers import make_env

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    bank = load_scenarios()
    if args.max_scenarios:
        bank = bank[: args.max_scenarios]
    split = split_scenarios(bank, args.test_domains, args.test_per_domain, args.split_seed)
    pool = args.episode_pool if args.episode_pool >= 0 else (2 if args.access in SPEECH_ACCESS else 0)
    kwargs = _env_kwargs(args)

    def factory() -> Any:
        return make_env(args.env_id, args.access, action_set=args.action_set, episode_pool=pool,
                        scenarios=split["train"], **kwargs)

    vec_cls = DummyVecEnv if args.vec_env == "dummy" else SubprocVecEnv
    venv = VecMonitor(vec_cls([factory] * args.n_envs))
    layers = [int(x) for x in args.net_arch.split(",") if x.strip()]
    model = sb3.PPO("MlpPolicy", venv, learning_rate=args.learning_rate, n_steps=args.n_steps,
                    batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
                    ent_coef=args.ent_coef, policy_kwargs={"net_arch": layers}, seed=args.seed, device="cpu",
                    tensorboard_log=str(out / "tb"), verbose=0)
    run = None
    if args.wandb:
        try:
            import wandb
        except ImportError:
            raise ImportError(f"--wandb needs wandb: {TRAIN_INSTALL}") from None
        run = wandb.init(project=args.wandb_project, mode=args.wandb_mode, dir=str(out),
                         config=dataclasses.asdict(args), sync_tensorboard=True)
    curve: list[dict[str, Any]] = []

    class HeldOut(BaseCallback):
        """Held-out evaluation every ``eval_every`` steps: the learning curve (TensorBoard + eval.json)."""

        def __init__(self) -> None:
            super().__init__()
            self.next = args.eval_every

        def _on_step(self) -> bool:
            if args.eval_every and self.num_timesteps >= self.next:
                self.next += args.eval_every
                summary = evaluate(self.model, args, split)["overall"]
                curve.append({"timesteps": int(self.num_timesteps), **summary})
                for key in ("success", "turns", "premature_closure", "n_disclosed", "return"):
                    self.logger.record(f"heldout/{key}", summary[key])
            return True

    start = time.perf_counter()
    model.learn(total_timesteps=args.total_timesteps, callback=HeldOut(), tb_log_name="ppo")
    train_s = time.perf_counter() - start
    result = evaluate(model, args, split)
    if curve and curve[-1]["timesteps"] >= model.num_timesteps:
        curve.pop()  # measured before the last update; the final evaluation replaces it
    curve.append({"timesteps": int(model.num_timesteps), **result["overall"]})
    result = {"env_id": args.env_id, "access": args.access, "action_set": args.action_set, "seed": args.seed,
              "turn_cost": args.turn_cost, "timesteps": int(model.num_timesteps),
              "n_train": len(split["train"]), **result, "curve": curve}
    (out / "eval.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1) + "\n")
    (out / "timing.json").write_text(json.dumps({"train_s": round(train_s, 2)}) + "\n")  # kept out of eval.json
    model.save(out / "policy.zip")
    venv.close()
    if run is not None:
        run.summary.update({f"heldout/{k}": v for k, v in result["overall"].items()})
        run.finish()
    return result


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``hear2act train ppo`` (and ``python -m hear2act.training.ppo``)."""
    args = parse_args(Args, argv, prog=prog)
    result = train(args)
    o = result["overall"]
    print(f"{args.env_id} {args.access} seed {args.seed}: held-out success {o['success']:.3f}, turns {o['turns']:.2f}, "
          f"premature closure {o['premature_closure']:.3f}, disclosed {o['n_disclosed']:.2f} (n={o['n']}) -> "
          f"{Path(args.out) / 'eval.json'}")


if __name__ == "__main__":  # the same as `hear2act train ppo ...`
    from .checks import module_main

    raise SystemExit(module_main("ppo"))
