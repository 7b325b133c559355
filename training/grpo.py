"""GRPO on Hear2Act with CESAR process rewards: ``python -m hear2act.training.grpo --model PATH --access A+T ...``.

Every ``trl.GRPOConfig`` / ``transformers.TrainingArguments`` field is a flag
(``--learning_rate``, ``--num_generations``, ``--beta``, ``--use_vllm``,
``--gradient_checkpointing``, ``--deepspeed``, ``--report_to`` ...; dashes or
underscores), parsed by ``HfArgumentParser``; ``--config FILE.yaml`` reads
flags from a file (``training/configs/cesar_omni7b.yaml``); ``accelerate launch
--config_file training/configs/<ddp|zero3>.yaml -m hear2act.training.grpo ...``
distributes it. The defaults are CESAR's (seed paper 001, B.4): K = 8
completions per state, AdamW at lr 1e-5, 32 completions per optimizer step
(``--global_batch``), at most 256 new tokens, reward weights accuracy 5 and
1 for the rest.

What it does:

1. collects dialogue states from behaviour rollouts (:mod:`hear2act.training.grpo_data`);
2. builds each state's prompt for ``--access`` (reasoning format, audio for
   ``A`` / ``A+T``);
3. trains with :class:`hear2act.training.omni_grpo.OmniGRPOTrainer` (audio LLMs: the
   audio reaches every forward) or stock ``GRPOTrainer`` (text LMs; vLLM
   generation available with ``--use_vllm``);
4. writes the model, ``grpo_log.json`` (TRL's log history: every reward term
   under ``rewards/<name>/mean``) and ``grpo_summary.json`` (step times) to
   ``--output_dir``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hear2act_env.access import NAMES, names

from .rewards import DEFAULT_REWARDS, REWARD_WEIGHTS, REWARDS
from .splits import SplitSpec

MODES = ("episode", "state", "tools")
DEFAULT_PROCESS_WEIGHTS = "format=0.1,consistency=0.1,keywords=0.05,overthinking=0.05,evidence=0.05"

_INSTALL = 'pip install "hear2act[train]"'
ACCESS = NAMES  # every condition of hear2act_env.access (T+affect too: its prompt is text)
AUDIO_ACCESS = frozenset(names(lambda a: a.audio_in_prompt))  # these need an audio LLM (Qwen2.5-Omni)
TEXT_ACCESS = names(lambda a: a.text_only)  # --tools: TRL's tool loop carries no speech
EPISODE_ACCESS = names(lambda a: not a.audio_in_prompt)  # --mode episode: text prompts (audio episodes: not built)
# CESAR's hyperparameters (seed paper 001, B.4), applied unless a flag says otherwise.
CESAR_DEFAULTS: dict[str, Any] = {"learning_rate": 1e-5, "num_generations": 8, "max_completion_length": 256,
                                  "per_device_train_batch_size": 8, "beta": 0.0, "logging_steps": 1,
                                  "save_strategy": "no", "report_to": "none", "temperature": 1.0,
                                  "loss_type": "grpo"}  # named, not TRL's default "dapo"
OMNI_TYPES = frozenset({"qwen2_5_omni", "qwen2_5_omni_thinker"})


@dataclass
class Hear2ActArgs:
    """Arguments of the Hear2Act side of the run (the rest are GRPOConfig's)."""

    model: str = field(default="", metadata={"help": "checkpoint directory (Qwen2.5-Omni, its thinker, or a text LM)"})
    access: str = field(default="T+S", metadata={"help": f"access condition, one of {ACCESS}"})
    realization: str = field(default="prosody", metadata={"help": "prosody or explicit"})
    n_scenarios: int = field(default=48, metadata={"help": "training-split scenarios the states come from "
                                                           "(0 = all 320; never a held-out one)"})
    test_domains: int = field(default=8, metadata={"help": "held-out split: whole domains held out"})
    test_per_domain: int = field(default=2, metadata={"help": "held-out split: scenarios held out per other domain"})
    split_seed: int = field(default=0, metadata={"help": "held-out split seed (hear2act.training.splits; "
                                                         "same as PPO's)"})
    episodes_per_scenario: int = field(default=1, metadata={"help": "behaviour episodes (seeds) per scenario"})
    states_per_episode: int = field(default=6, metadata={"help": "at most this many decision points per episode"})
    states_seed: int = field(default=0, metadata={"help": "first episode seed of the state collection"})
    assistant: str = field(default="spoken", metadata={"help": "spoken or text (text adds CLARIFY)"})
    rewards: str = field(default=",".join(DEFAULT_REWARDS), metadata={"help": "comma list of reward terms"})
    weights: str = field(default="", metadata={"help": "term=weight overrides, e.g. 'accuracy=5,evidence=2' "
                                                         "(--reward_weights sets the raw list instead)"})
    outcome_weight: float = field(default=0.0, metadata={"help": "accuracy: share of the continued outcome (0-1)"})
    overthinking_norm: int = field(default=256, metadata={"help": "overthinking: tokens that cost one unit"})
    global_batch: int = field(default=32, metadata={"help": "completions per optimizer step, across devices "
                                                            "(sets gradient_accumulation_steps; 0 = leave it)"})
    dtype: str = field(default="auto", metadata={"help": "auto (bf16 on GPU), bfloat16, float16, float32"})
    lora_r: int = field(default=0, metadata={"help": "LoRA rank via peft (0 = full fine-tuning)"})
    lora_alpha: int = field(default=32)
    lora_target_modules: str = field(default="all-linear", metadata={"help": "'all-linear' or a comma list"})
    mode: str = field(default="episode", metadata={"help": "episode (default: whole on-policy episodes in the env, "
                                                           "episode reward; text LMs, text-prompt access), state "
                                                           "(CESAR's one-step states, each decision scored on its own) "
                                                           "or tools (TRL environment_factory)"})
    success_weight: float = field(default=1.0, metadata={"help": "episode reward: weight of success"})
    turn_cost: float = field(default=0.05, metadata={"help": "episode reward: cost per assistant turn (env turn_cost)"})
    failure_cost: str = field(default="horizon", metadata={
        "help": "episode reward: turns a failed episode is charged: horizon (max_turns, so closing early on a "
                "failure saves nothing) or turns (the env's own return)"})
    fit_credit: float = field(default=0.0, metadata={
        "help": "episode reward: a failed episode closed by CONFIRM earns fit_credit x the confirmed option's need "
                "fit (info outcome final_fit), so all-fail groups still have spread (0: off)"})
    invalid_cost: float = field(default=0.0, metadata={
        "help": "episode reward: charged once to an episode in which some answer is not a valid action (0: off)"})
    process_weights: str = field(default=DEFAULT_PROCESS_WEIGHTS, metadata={
        "help": "episode reward: term=weight of CESAR's per-turn process terms, averaged over the episode's turns"})
    reasoning: bool = field(default=True, metadata={"help": "episode mode: ask for <think>/<answer> (evaluate with "
                                                            "hear2act rollout --reasoning)"})
    eval_every: int = field(default=0, metadata={"help": "held-out evaluation every N steps (0: before and after "
                                                         "only; -1: never); writes heldout_eval.json"})
    eval_n: int = field(default=0, metadata={"help": "held-out scenarios evaluated (first N of the split; 0: all)"})
    eval_stride: int = field(default=1, metadata={"help": "evaluate every N-th held-out scenario (then eval_n)"})
    eval_seed: int = field(default=10_000, metadata={"help": "episode seed of held-out scenario i is eval_seed + i"})
    turn_sampling: str = field(default="uniform", metadata={"help": "episode mode: the turn each sample trains on: "
                                                                   "uniform (unbiased, 1/T per turn), last (the "
                                                                   "episode's last turn), closing (the CONFIRM "
                                                                   "that closed it; nothing for an episode that "
                                                                   "hit the turn limit), decisive (closing, but "
                                                                   "an episode's first invalid answer if it has "
                                                                   "one), pivotal (decisive, and in an "
                                                                   "episode that ran out of turns its first "
                                                                   "decision against the state tag) or branch "
                                                                   "(K continuations "
                                                                   "of one replayed decision state per group; "
                                                                   "hear2act.training.branching)"})
    branch_prefixes: int = field(default=1, metadata={
        "help": "turn_sampling branch: prefix episodes played per group, of which one is branched from (one with "
                "a resolved decision with probability branch_resolved_share; hear2act.training.branching."
                "pick_prefix): more groups meet the rare resolved states"})
    branch_resolved_share: float = field(default=0.5, metadata={
        "help": "turn_sampling branch: chance that a group branches at a decision under a resolved tag when its "
                "prefix has both tags; with branch_prefixes > 1 it is drawn once per group, for the prefix (one with "
                "a resolved decision) and its tag then picks the turn"})
    rollout_diagnostics: bool = field(default=True, metadata={
        "help": "episode mode: print each step's rollout diagnostics (success, P(confirm | tag), advantage of the "
                "trained turns by action and tag)"})
    eval_temperature: float = field(default=0.0, metadata={"help": "held-out decoding: 0 greedy; > 0 samples, seeded "
                                                                   "per episode and turn (= hear2act rollout "
                                                                   "--temperature T)"})
    tools: bool = field(default=False, metadata={"help": "= --mode tools: whole episodes in TRL's multi-turn tool loop "
                                                         "(environment_factory=Hear2ActToolEnv; text access T/T+S; "
                                                         "the reward is the episode outcome)"})


def parse_weights(names: list[str], overrides: str) -> list[float]:
    """CESAR's weight per term, with ``term=w`` overrides.

    >>> parse_weights(["accuracy", "format", "evidence"], "evidence=2")
    [5.0, 1.0, 2.0]
    """
    weights = {n: REWARD_WEIGHTS[n] for n in names}
    for item in filter(None, (s.strip() for s in overrides.split(","))):
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in weights:
            raise ValueError(f"--weights: {item!r} must be term=number with term in {names}")
        weights[name.strip()] = float(value)
    return [weights[n] for n in names]


def load_config(path: str) -> dict[str, Any]:
    """Flags from a YAML file (``key: value``, keys as the flags without dashes)."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"--config {path}: expected a mapping of flag: value, got {type(data).__name__}")
    return data


def _accumulation(argv: list[str], defaults: dict[str, Any]) -> dict[str, Any]:
    """``gradient_accumulation_steps`` = global batch / (per-device batch x processes), unless given explicitly.

    Decided before GRPOConfig is built, since its checks (the generation batch
    must hold whole groups of K) depend on it. Processes: ``$WORLD_SIZE``, as
    set by accelerate / torchrun.
    """
    import argparse
    import os

    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--global_batch", "--global-batch", type=int, default=defaults.get("global_batch", 32))
    pre.add_argument("--per_device_train_batch_size", "--per-device-train-batch-size", type=int,
                     default=defaults["per_device_train_batch_size"])
    pre.add_argument("--gradient_accumulation_steps", "--gradient-accumulation-steps", type=int,
                     default=defaults.get("gradient_accumulation_steps"))
    known, _ = pre.parse_known_args(argv)
    if not known.global_batch or known.gradient_accumulation_steps is not None:
        return {}
    per_step = known.per_device_train_batch_size * int(os.environ.get("WORLD_SIZE", "1"))
    if known.global_batch % per_step:
        raise ValueError(f"--global_batch {known.global_batch} is not a multiple of per_device_train_batch_size x "
                         f"processes = {per_step}")
    return {"gradient_accumulation_steps": known.global_batch // per_step}


def parse(argv: list[str] | None = None, prog: str | None = None) -> tuple[Hear2ActArgs, Any]:
    from hear2act_env.extras import missing_extra

    from .checks import check_access, check_split, quiet_defaults

    try:
        import torch
        from transformers import HfArgumentParser
        from trl import GRPOConfig
    except ImportError as exc:
        raise ImportError(missing_extra("GRPO training", "train", exc)) from None
    parser = HfArgumentParser((Hear2ActArgs, GRPOConfig), prog=prog, description=(
        "GRPO on Hear2Act with CESAR process rewards. --config FILE.yaml reads flags from a YAML file "
        "(command-line flags win); every GRPOConfig / TrainingArguments field below is a flag."))
    defaults: dict[str, Any] = {**CESAR_DEFAULTS, "bf16": torch.cuda.is_available(),
                                "use_cpu": not torch.cuda.is_available()}
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--config" in argv:  # a YAML file of flags (either dataclass); flags on the command line win
        i = argv.index("--config")
        if i + 1 >= len(argv):
            raise ValueError("--config needs a YAML file")
        defaults.update(load_config(argv[i + 1]))
        del argv[i:i + 2]
    defaults.update(_accumulation(argv, defaults))
    parser.set_defaults(**defaults)
    with quiet_defaults(argv):
        args, config = parser.parse_args_into_dataclasses(args=argv)
    if not args.model:
        raise ValueError("--model is required (a checkpoint directory with config.json)")
    check_access(args.access, ACCESS)
    check_access(args.realization, ("prosody", "explicit"), flag="--realization")
    check_split(args.test_domains, args.test_per_domain, args.split_seed)
    if args.tools:
        args.mode = "tools"
    if args.mode not in MODES:
        raise ValueError(f"--mode must be one of {MODES}, got {args.mode!r}")
    args.tools = args.mode == "tools"
    if args.mode == "episode":
        return args, _episode_config(args, config)
    if args.mode == "state":
        print("hear2act.training.grpo --mode state: CESAR's per-state reward scores one decision at a time (off-policy "
              "states of fixed behaviour rollouts); --mode episode trains on whole on-policy episodes.",
              file=sys.stderr)
    if args.tools and args.access not in TEXT_ACCESS:
        raise ValueError(f"--tools plays text access {' or '.join(TEXT_ACCESS)} (TRL's tool loop carries no audio), "
                         f"got {args.access}")
    if config.use_vllm and args.access in AUDIO_ACCESS:
        raise ValueError(f"--use_vllm: TRL's vLLM path carries images only, not audio; access {args.access} "
                         "generates with transformers (drop --use_vllm or train a text access)")
    names = [n.strip() for n in args.rewards.split(",") if n.strip()]
    unknown = [n for n in names if n not in REWARDS]
    if unknown or not names:
        raise ValueError(f"--rewards: unknown or empty {unknown or names}; choose from {sorted(REWARDS)}")
    if args.tools:  # the only reward is the env's outcome (TRL adds it with weight 1)
        if config.reward_weights is not None or args.weights:
            raise ValueError("--tools: the reward is the episode outcome; drop --reward_weights / --weights")
    elif config.reward_weights is None:
        config.reward_weights = parse_weights(names, args.weights)
    elif len(config.reward_weights) != len(names):
        raise ValueError(f"--reward_weights has {len(config.reward_weights)} values for {len(names)} rewards {names}")
    return args, config


def _episode_config(args: Hear2ActArgs, config: Any) -> Any:
    """Checks of an episode-mode run; the reward weights are the episode reward's (1) and its logged parts (0)."""
    from .episode_rollout import reward_funcs
    from .episodes import EpisodeReward

    if args.access not in EPISODE_ACCESS:
        raise ValueError(f"--mode episode plays text-prompt access {', '.join(EPISODE_ACCESS)} (audio episodes are "
                         f"not built yet), got {args.access}; use --mode state for audio access")
    if config.use_vllm:
        raise ValueError("--mode episode generates each turn with transformers inside the rollout; drop --use_vllm")
    EpisodeReward.from_args(args)  # validates the weights (process range below half the success weight)
    if config.reward_weights is not None or args.weights:
        raise ValueError("--mode episode: set --success_weight / --turn_cost / --process_weights, not "
                         "--reward_weights / --weights")
    config.reward_weights = reward_funcs()[1]
    return config


def split_spec(args: Hear2ActArgs) -> SplitSpec:
    """The held-out split of the run (:mod:`hear2act.training.splits`)."""
    return SplitSpec(args.test_domains, args.test_per_domain, args.split_seed)


def training_episodes(args: Hear2ActArgs) -> list[tuple[str, int]]:
    """The ``(scenario_id, seed)`` episodes the run trains on: training split only (:mod:`hear2act.training.splits`)."""
    from .grpo_data import default_episodes

    return default_episodes(args.n_scenarios, args.states_seed, per_scenario=args.episodes_per_scenario,
                            split=split_spec(args))


def heldout_ids(args: Hear2ActArgs) -> list[str]:
    """The held-out scenario ids the run evaluates on (every ``eval_stride``-th, then the first ``eval_n``; 0: all)."""
    from .splits import bundled_split, eval_ids

    if args.eval_stride < 1:
        raise ValueError(f"--eval_stride must be >= 1, got {args.eval_stride}")
    ids = eval_ids(bundled_split(split_spec(args)))[::args.eval_stride]
    return ids[:args.eval_n] if args.eval_n else ids


def episode_rows(episodes: list[tuple[str, int]], access: str, *, reasoning: bool) -> list[dict[str, Any]]:
    """One row per episode start: its first P6 prompt (what TRL logs) and the ``scenario_id`` / ``seed`` to play."""
    from hear2act.agents.prompts import build_messages, domain_from_scenario_id

    from .grpo_data import make_env

    env = make_env("prosody", access)
    rows = []
    for sid, seed in episodes:
        obs, _ = env.reset(seed=int(seed), options={"scenario_id": sid})
        prompt = build_messages(obs, access, domain=domain_from_scenario_id(sid), reasoning=reasoning)
        rows.append({"prompt": prompt, "scenario_id": sid, "seed": int(seed)})
    return rows


def build_dataset(args: Hear2ActArgs):
    """The training states of the run as a ``datasets.Dataset`` (prompts + scoring columns)."""
    from datasets import Dataset

    from .grpo_data import collect_states, training_rows
    from .tools_env import tool_rows

    episodes = training_episodes(args)
    if args.mode == "episode":
        return Dataset.from_list(episode_rows(episodes, args.access, reasoning=args.reasoning))
    states = collect_states(args.realization, episodes, max_per_episode=args.states_per_episode)
    if args.tools:
        return Dataset.from_list(tool_rows(states, args.access))
    return Dataset.from_list(training_rows(states, args.access, assistant=args.assistant))


def _model_type(path: str) -> str:
    config = Path(path) / "config.json"
    if not config.is_file():
        raise FileNotFoundError(f"--model {path}: not a checkpoint directory (no config.json)")
    return json.loads(config.read_text(encoding="utf-8")).get("model_type", "")


def _peft_config(args: Hear2ActArgs):
    if not args.lora_r:
        return None
    from peft import LoraConfig

    targets = args.lora_target_modules
    return LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, task_type="CAUSAL_LM",
                      target_modules=targets if targets == "all-linear" else [t.strip() for t in targets.split(",")])


def _reference_dir(model: Any, processing: Any, path: str, out: Path) -> None:
    """With beta > 0 TRL rebuilds the reference from ``name_or_path`` by its config's architecture: a full
    Qwen2.5-Omni directory would load talker and all. Save the thinker and point the model at that copy."""
    arch = (json.loads((Path(path) / "config.json").read_text(encoding="utf-8")).get("architectures") or [""])[0]
    if arch == type(model).__name__:
        return
    from accelerate import PartialState

    ref = out / "reference-thinker"
    with PartialState().main_process_first():  # one process writes, the others find it written
        if not (ref / "config.json").is_file():
            model.save_pretrained(ref)
            processing.tokenizer.save_pretrained(ref)
            processing.feature_extractor.save_pretrained(ref)
    model.config._name_or_path = str(ref)
    model.name_or_path = str(ref)


def build_trainer(args: Hear2ActArgs, config: Any, dataset: Any):
    """The trainer for the run: Omni (audio-aware) for Qwen2.5-Omni checkpoints, stock GRPOTrainer otherwise."""
    from .rewards import make_reward_funcs

    if args.mode == "episode":
        return _episode_trainer(args, config, dataset)
    names = [n.strip() for n in args.rewards.split(",") if n.strip()]
    funcs = make_reward_funcs(names, accuracy={"outcome_weight": args.outcome_weight},
                              overthinking={"norm": args.overthinking_norm})
    peft_config = _peft_config(args)
    if args.tools and _model_type(args.model) in OMNI_TYPES:
        raise ValueError("--tools trains a text LM with a tool-calling chat template, not an Omni checkpoint")
    if _model_type(args.model) in OMNI_TYPES:
        from .omni_grpo import OmniGRPOTrainer, load_omni_for_training

        model, processing = load_omni_for_training(args.model, dtype=args.dtype)
        if processing.tokenizer.chat_template is None:  # text access goes through the stock tokenizer path
            processing.tokenizer.chat_template = processing.chat_template
        if config.beta > 0 and peft_config is None:
            _reference_dir(model, processing, args.model, Path(config.output_dir))
        return OmniGRPOTrainer(model=model, reward_funcs=funcs, args=config, train_dataset=dataset,
                               audio_processing=processing, peft_config=peft_config)
    if args.access in AUDIO_ACCESS:
        raise ValueError(f"--access {args.access} needs an audio LLM (Qwen2.5-Omni); {args.model} is "
                         f"{_model_type(args.model)!r}")
    from trl import GRPOTrainer

    extra: dict[str, Any] = {}
    if args.tools:  # TRL's own multi-turn loop; the env's get_reward() is the reward
        from .tools_env import Hear2ActToolEnv

        funcs, extra = [], {"environment_factory": Hear2ActToolEnv}
    model, tokenizer = _load_text_lm(args)  # GRPOTrainer pads with EOS too when the tokenizer has no pad token
    return GRPOTrainer(model=model, reward_funcs=funcs, args=config, train_dataset=dataset,
                       processing_class=tokenizer, peft_config=peft_config, **extra)


def _load_text_lm(args: Hear2ActArgs):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtypes = {"auto": torch.bfloat16 if torch.cuda.is_available() else torch.float32, "bfloat16": torch.bfloat16,
              "float16": torch.float16, "float32": torch.float32}
    if args.dtype not in dtypes:
        raise ValueError(f"--dtype must be one of {sorted(dtypes)}, got {args.dtype!r}")
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtypes[args.dtype])
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _episode_trainer(args: Hear2ActArgs, config: Any, dataset: Any):
    """TRL GRPOTrainer with the whole-episode ``rollout_func`` (:mod:`hear2act.training.episode_rollout`)."""
    from .episode_rollout import EpisodeGRPOTrainer, heldout_callback, make_rollout_func, reward_funcs
    from .episodes import EpisodeReward

    if _model_type(args.model) in OMNI_TYPES:
        raise ValueError(f"--mode episode trains text LMs (access {'/'.join(EPISODE_ACCESS)}); audio episodes for "
                         "Omni are not built yet: use --mode state")
    model, tokenizer = _load_text_lm(args)
    reward = EpisodeReward.from_args(args)
    rollout = make_rollout_func(access=args.access, reward=reward, realization=args.realization,
                                reasoning=args.reasoning, max_new_tokens=config.max_completion_length,
                                temperature=config.temperature, top_p=config.top_p, top_k=config.top_k or 0,
                                assistant=args.assistant, seed=config.seed, turn_sampling=args.turn_sampling,
                                diagnostics=args.rollout_diagnostics, branch_prefixes=args.branch_prefixes,
                                branch_resolved_share=args.branch_resolved_share)
    callbacks = []
    if args.eval_every >= 0:
        callbacks.append(heldout_callback(tokenizer=tokenizer, scenario_ids=heldout_ids(args), access=args.access,
                                          reasoning=args.reasoning, max_new_tokens=config.max_completion_length,
                                          every=args.eval_every, out=config.output_dir,
                                          realization=args.realization, seed=args.eval_seed, reward=reward,
                                          temperature=args.eval_temperature))
    return EpisodeGRPOTrainer(model=model, reward_funcs=reward_funcs()[0], args=config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=_peft_config(args), rollout_func=rollout,
                              callbacks=callbacks)


def summarize(trainer: Any, wall_s: float) -> dict[str, Any]:
    history = trainer.state.log_history
    step_times = [h["step_time"] for h in history if "step_time" in h]
    rewards = sorted({k for h in history for k in h if k.startswith("rewards/") and k.endswith("/mean")})
    return {"steps": trainer.state.global_step, "wall_s": round(wall_s, 3),
            "step_time_s": step_times, "mean_step_time_s": sum(step_times) / len(step_times) if step_times else None,
            "reward_terms": rewards}


def _resume(args: Hear2ActArgs, config: Any) -> Any:
    """``--resume_from_checkpoint PATH`` (TrainingArguments' flag) resumes; ``true`` picks the latest in output_dir."""
    value = config.resume_from_checkpoint
    if value in (None, "", "false", "False"):
        return None
    return True if value in ("true", "True") else value


def main(argv: list[str] | None = None, prog: str | None = None) -> dict[str, Any]:
    """``hear2act train grpo`` (and ``python -m hear2act.training.grpo``)."""
    from .checks import SPEECH_ACCESS, check_model, require_speech

    args, config = parse(argv, prog=prog)
    check_model(args.model)  # before anything is built or loaded
    if args.access in SPEECH_ACCESS:  # the states' audio is rendered
        require_speech(f"--access {args.access}")
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    dataset = build_dataset(args)
    trainer = build_trainer(args, config, dataset)
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=_resume(args, config))
    summary = summarize(trainer, time.perf_counter() - start)
    trainer.save_model(str(out))
    if trainer.accelerator.is_main_process:
        processing = getattr(trainer, "audio_processing", None)
        if processing is not None:  # loadable by omni:OUT for evaluation (a LoRA run saves the adapter only)
            processing.feature_extractor.save_pretrained(out)
            (out / "chat_template.json").write_text(json.dumps({"chat_template": processing.chat_template}),
                                                    encoding="utf-8")
        (out / "grpo_log.json").write_text(json.dumps(trainer.state.log_history, indent=1) + "\n", encoding="utf-8")
        (out / "grpo_summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        print(f"GRPO {args.mode} {args.access}: {summary['steps']} steps, {len(dataset)} rows, mean step "
              f"{summary['mean_step_time_s']:.2f} s; wrote {out}", file=sys.stderr)
    return summary


if __name__ == "__main__":  # the same as `hear2act train grpo ...`
    from .checks import module_main

    raise SystemExit(module_main("grpo"))
