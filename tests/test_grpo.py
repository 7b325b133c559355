"""GRPO on Hear2Act: dialogue-state data, Omni training with audio in every forward, text and tool paths, CLI.

Models are tiny random checkpoints built locally (agents/llm/tiny.py); the
Omni run uses real user turns rendered by hibari. A random model's
completions rarely differ in any reward, and GRPO's advantage is zero when a
group's rewards are equal, so the training runs bias the sampler towards EOS
(``generation_kwargs.sequence_bias``): completion lengths then differ, the
overthinking term differs, and the loss has a gradient.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")

import torch

from hear2act.agents.llm.tiny import build_tiny_causal_lm, build_tiny_omni
from hear2act.training.grpo_data import (
    DialogueState,
    action_value,
    attach_audio,
    collect_states,
    continued_success,
    default_episodes,
    fork_env,
    replay,
    score_action,
    split_audio,
    training_rows,
)
from hear2act.training.rewards import REWARD_WEIGHTS, REWARDS, make_reward_funcs
from hear2act_env.dialogue.engine import assess

TERMS = list(REWARDS)


def _eos_bias(eos_id: int, vocab_size: int) -> dict:
    """A logit bias that makes EOS about a third of a random model's samples at each position."""
    return {"sequence_bias": [[[int(eos_id)], float(np.log(vocab_size) - 0.7)]]}


# -- states, replay and fork ------------------------------------------------------------------------------------
def test_replay_reproduces_the_rollout_and_fork_is_independent():
    states = collect_states("prosody", default_episodes(4, 0))
    assert states == collect_states("prosody", default_episodes(4, 0))  # pure function of its arguments
    deep = max(states, key=lambda s: len(s.history))
    assert len(deep.history) >= 2
    env, obs = replay(deep)
    transcript = env.transcript
    fork = fork_env(env)
    assert fork.scenarios is env.scenarios and fork.engine is not env.engine
    fork.step("[ACTION: CONFIRM] Let's book it.")
    assert env.transcript == transcript and fork.transcript != transcript  # stepping the fork leaves env alone
    # replaying from the key alone lands on the same dialogue, byte for byte
    _, obs2 = replay(DialogueState(deep.realization, deep.scenario_id, deep.seed, deep.history))
    assert obs2 == obs
    with pytest.raises(ValueError, match="history"):
        replay(DialogueState(deep.realization, deep.scenario_id, deep.seed,
                             ("[ACTION: RECOMMEND] [OPTION: 1] x",) * 25))


def test_action_value_follows_the_verifiable_rules():
    env, _ = replay(DialogueState("prosody", "budget-airline-tickets-01", 0))
    s = env.scenario
    assert env.engine.current == s.opening and s.opening != s.gold
    assert action_value(env, "[ACTION: CONFIRM] done") == 0.0  # confirming an unresolved recommendation
    assert action_value(env, "[ACTION: ASK] What else matters?") == 0.5  # something to find out, not the decision
    assert action_value(env, f"[ACTION: RECOMMEND] [OPTION: {s.gold}] x") == 1.0
    violator = next(o.number for o in s.options if assess(s, o.number).issue == "requirement")
    assert action_value(env, f"[ACTION: RECOMMEND] [OPTION: {violator}] x") == 0.0
    assert action_value(env, "hello") == 0.0
    asked, _ = replay(DialogueState("prosody", s.id, 0, ("[ACTION: ASK] What else matters?",)))
    assert assess(s, s.opening).level in asked.ground_truth().disclosed  # the user said what is wrong ...
    assert action_value(asked, "[ACTION: ASK] What else matters?") == 0.0  # ... so asking again learns nothing
    env.step(f"[ACTION: RECOMMEND] [OPTION: {s.gold}] x")
    assert action_value(env, "[ACTION: CONFIRM] done") == 1.0
    assert action_value(env, "[ACTION: ASK] anything else?") == 0.0  # resolved: asking wastes the turn
    # outcome credit: the continuation policy finishes the episode from a fork
    assert continued_success(env, "[ACTION: CONFIRM] done") == 1.0
    state = DialogueState("prosody", s.id, 0, (f"[ACTION: RECOMMEND] [OPTION: {s.gold}] x",))
    assert score_action(state, "[ACTION: CONFIRM] ok", outcome_weight=0.5) == 1.0


def test_audio_rows_roundtrip_through_split_and_attach():
    pytest.importorskip("hibari")
    states = collect_states("prosody", default_episodes(1, 0))[:1]
    row = training_rows(states, "A+T")[0]
    assert all(isinstance(m["content"], str) for m in row["prompt"]) and row["audio"].size > 8000
    messages = attach_audio(row["prompt"], row["audio"])
    back, audio = split_audio(messages)
    assert back == row["prompt"] and np.array_equal(audio, row["audio"])
    assert messages[-1]["content"][1]["type"] == "audio"
    # T+S_hat: no audio in the prompt (the model reads the perceiver), the turn's audio kept for the evidence check
    hat = training_rows(states, "T+S_hat")[0]
    assert "audio" not in hat and np.array_equal(hat["reference_audio"], row["audio"])
    assert "AUDIO-INFERRED STATE" in hat["prompt"][-1]["content"] or "inferred" in hat["prompt"][-1]["content"].lower()


# -- Omni: two steps with real audio, audio in every forward ----------------------------------------------------
def _audio_guard(model, audio_token_id: int, calls: list):
    """Record, for every forward of ``model``, whether it saw audio placeholders and whether features came along."""

    def hook(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        has_tokens = ids is not None and bool((ids == audio_token_id).any())
        calls.append({"audio_tokens": has_tokens, "features": kwargs.get("input_features") is not None,
                      "scoring": kwargs.get("fused_lm_head", False), "grad": torch.is_grad_enabled()})

    return model.register_forward_pre_hook(hook, with_kwargs=True)


@pytest.fixture(scope="module")
def omni_run(tmp_path_factory):
    from datasets import Dataset
    from trl import GRPOConfig

    from hear2act.training.omni_grpo import OmniGRPOTrainer, load_omni_for_training

    pytest.importorskip("hibari")  # the user turns are rendered speech
    root = tmp_path_factory.mktemp("grpo-omni")
    path = build_tiny_omni(root / "model")
    model, processing = load_omni_for_training(str(path), dtype="float32")
    states = [s for s in collect_states("prosody", default_episodes(2, 0)) if s.history][:1]
    states += collect_states("prosody", default_episodes(1, 0))[:1]
    dataset = Dataset.from_list(training_rows(states, "A+T"))
    config = GRPOConfig(
        output_dir=str(root / "out"), max_steps=2, per_device_train_batch_size=2, num_generations=2,
        steps_per_generation=2, max_completion_length=10, learning_rate=1e-3, beta=0.04, logging_steps=1,
        report_to=[], use_cpu=True, bf16=False, save_strategy="no", seed=0,
        reward_weights=[REWARD_WEIGHTS[n] for n in TERMS],
        generation_kwargs=_eos_bias(processing.tokenizer.eos_token_id, len(processing.tokenizer)),
    )
    trainer = OmniGRPOTrainer(model=model, reward_funcs=make_reward_funcs(TERMS), args=config, train_dataset=dataset,
                              audio_processing=processing)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    calls: list[dict] = []
    hooks = [_audio_guard(m, trainer.audio_token_id, calls) for m in (model, trainer.ref_model)]
    try:
        trainer.train()
    finally:
        for h in hooks:
            h.remove()
    return {"trainer": trainer, "model": model, "before": before, "calls": calls}


@pytest.mark.slow
def test_two_omni_steps_train_the_llm_and_the_audio_encoder(omni_run):
    model, before = omni_run["model"], omni_run["before"]
    changed = {n for n, p in model.named_parameters() if not torch.equal(before[n], p.detach())}
    assert any("audio_tower" not in n and "visual" not in n for n in changed)  # the language model moved
    audio = {n for n in before if "audio_tower" in n}
    assert audio and audio & changed, "the audio encoder got no update: audio is missing from the loss"
    visual = {n for n in before if ".visual." in f".{n}"}
    assert visual and not visual & changed  # the vision tower is frozen (no images here)
    assert not any(p.requires_grad for n, p in model.named_parameters() if n in visual)
    assert omni_run["trainer"].args.ddp_find_unused_parameters is True
    assert omni_run["trainer"].state.global_step == 2


@pytest.mark.slow
def test_every_reward_term_is_logged_under_its_own_name(omni_run):
    logged = {k for h in omni_run["trainer"].state.log_history for k in h}
    for term in TERMS:
        assert f"rewards/{term}/mean" in logged and f"rewards/{term}/std" in logged
    assert "step_time" in logged


@pytest.mark.slow
def test_every_reward_term_is_active_through_trls_reward_plumbing(omni_run):
    """A well-formed, grounded completion scores on every term when TRL hands the rewards the dataset columns."""
    trainer = omni_run["trainer"]
    rows = trainer.train_dataset.to_list()
    inputs = [dict(r, prompt=attach_audio(r["prompt"], np.asarray(r["audio"], dtype=np.float32))) for r in rows]
    completions = []
    for r in rows:
        last = r["transcript"].splitlines()[-1].removeprefix("User: ")
        completions.append(f"<think>The user said '{last}' but the pitch falls at the end and sounds hesitant, "
                           "so a need may be unmet; I should ask.</think>"
                           "<answer>[ACTION: ASK] What else matters to you?</answer>")
    ids = [trainer._tokenizer(c)["input_ids"] for c in completions]
    scores = trainer._calculate_rewards(inputs, [x["prompt"] for x in inputs], completions, ids)
    assert scores.shape == (len(rows), len(TERMS))
    by_term = dict(zip(TERMS, scores.T.tolist(), strict=True))
    # ASK is worth 0.5 while the current option's failing need is undisclosed, else 0 (action_value)
    assert all(v in (0.0, 0.5) for v in by_term["accuracy"]) and any(v > 0 for v in by_term["accuracy"])
    assert by_term["format"] == [1.0] * len(rows)
    assert by_term["consistency"] == [1.0] * len(rows) and by_term["keywords"] == [1.0] * len(rows)
    assert all(v < 0 for v in by_term["overthinking"])
    # One claim, checked against the row's own audio: 1 - p when it holds, -max(p, 0.5) when not (p its base rate).
    assert all(0 < v < 1 or -1 <= v <= -0.5 for v in by_term["evidence"]), by_term["evidence"]


@pytest.mark.slow
def test_no_thinker_forward_runs_without_audio_features(omni_run):
    calls = omni_run["calls"]
    with_audio = [c for c in calls if c["audio_tokens"]]
    # prefill of generation, old-policy logps (steps_per_generation=2), reference logps (beta>0), the loss
    assert sum(c["scoring"] and not c["grad"] for c in with_audio) >= 2
    assert sum(c["scoring"] and c["grad"] for c in with_audio) >= 2
    assert any(not c["scoring"] for c in with_audio)
    missing = [c for c in with_audio if not c["features"]]
    assert not missing, f"{len(missing)} forwards saw audio placeholders without input_features"
    # incremental decoding steps see no placeholders at all (the audio is in the KV cache)
    assert all(c["features"] or not c["audio_tokens"] for c in calls)


@pytest.mark.slow
def test_the_guard_catches_stock_trl_dropping_audio(omni_run):
    """The same scoring forward through stock TRL's method: placeholders arrive without features."""
    from trl import GRPOTrainer

    trainer, model = omni_run["trainer"], omni_run["model"]
    rows = trainer.train_dataset.select([0]).to_list()
    prompt = attach_audio(rows[0]["prompt"], np.asarray(rows[0]["audio"], dtype=np.float32))
    ids, *_ = trainer._tokenize_prompts([prompt])
    input_ids = torch.tensor([ids[0] + [trainer._tokenizer.eos_token_id]])
    calls: list[dict] = []
    hook = _audio_guard(model, trainer.audio_token_id, calls)
    try:
        with torch.no_grad():
            GRPOTrainer._get_per_token_logps_and_entropies(trainer, model, input_ids, torch.ones_like(input_ids), 1)
    finally:
        hook.remove()
        trainer._audio = None
    assert calls and calls[0]["audio_tokens"] and not calls[0]["features"]


# -- text-only path through the CLI -------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_text_path_trains_a_tiny_causal_lm(tmp_path):
    from safetensors.torch import load_file

    from hear2act.training.grpo import main

    path = build_tiny_causal_lm(tmp_path / "lm")
    config = json.loads((path / "config.json").read_text())
    out = tmp_path / "out"
    summary = main(["--model", str(path), "--mode", "state", "--access", "T+S", "--max-steps", "2",
                    "--output-dir", str(out),
                    "--n_scenarios", "1", "--states_per_episode", "1", "--num_generations", "4",
                    "--per_device_train_batch_size", "4", "--global_batch", "4", "--max_completion_length", "10",
                    "--learning_rate", "1e-3", "--seed", "0",
                    "--generation_kwargs", json.dumps(_eos_bias(config["eos_token_id"], config["vocab_size"]))])
    assert summary["steps"] == 2 and len(summary["step_time_s"]) == 2
    assert summary["reward_terms"] == sorted(f"rewards/{t}/mean" for t in TERMS)
    before, after = load_file(path / "model.safetensors"), load_file(out / "model.safetensors")
    assert any(not torch.equal(before[k], after[k]) for k in before)
    log = json.loads((out / "grpo_log.json").read_text())
    assert any("rewards/accuracy/mean" in h for h in log)


def test_cli_defaults_are_cesars_and_every_grpo_field_passes_through(tmp_path):
    from hear2act.training.grpo import parse

    args, config = parse(["--model", "m", "--output_dir", str(tmp_path), "--mode", "state", "--access", "A+T"])
    assert config.loss_type == "grpo"
    assert (config.learning_rate, config.num_generations, config.max_completion_length) == (1e-5, 8, 256)
    assert config.per_device_train_batch_size * config.gradient_accumulation_steps == 32
    assert config.reward_weights == [5.0, 1.0, 1.0, 1.0, 1.0, 1.0] and args.access == "A+T"
    args, config = parse(["--model", "m", "--output-dir", str(tmp_path), "--mode", "state", "--access", "T",
                          "--loss_type", "grpo",
                          "--use_vllm", "true", "--vllm_mode", "colocate", "--rewards", "accuracy,evidence",
                          "--weights", "evidence=2", "--global_batch", "0", "--gradient_accumulation_steps", "3"])
    assert (config.loss_type, config.use_vllm, config.vllm_mode) == ("grpo", True, "colocate")
    assert config.reward_weights == [5.0, 2.0] and config.gradient_accumulation_steps == 3
    from hear2act.training.grpo import _peft_config

    args, _ = parse(["--model", "m", "--output_dir", str(tmp_path), "--lora_r", "16",
                     "--lora_target_modules", "q_proj,v_proj"])
    lora = _peft_config(args)
    assert lora.r == 16 and set(lora.target_modules) == {"q_proj", "v_proj"}
    with pytest.raises(ValueError, match="access"):
        parse(["--model", "m", "--output_dir", str(tmp_path), "--access", "X"])
    with pytest.raises(ValueError, match="unknown"):
        parse(["--model", "m", "--output_dir", str(tmp_path), "--mode", "state", "--rewards", "accuracy,vibes"])
    with pytest.raises(ValueError, match="global_batch"):
        parse(["--model", "m", "--output_dir", str(tmp_path), "--global_batch", "20"])
    # the shipped CESAR config for Qwen2.5-Omni-7B, flags on the command line win
    args, config = parse(["--config", "training/configs/cesar_omni7b.yaml", "--model", "m", "--output_dir",
                          str(tmp_path), "--bf16", "false", "--use_cpu", "true", "--per_device_train_batch_size", "8"])
    assert (args.access, args.n_scenarios, config.save_steps, config.generation_batch_size) == ("A+T", 0, 200, 32)
    with pytest.raises(ValueError, match="vLLM"):
        parse(["--config", "training/configs/text_vllm.yaml", "--mode", "state", "--model", "m",
               "--output_dir", str(tmp_path),
               "--bf16", "false", "--use_cpu", "true", "--access", "A+T", "--per_device_train_batch_size", "8"])


# -- TRL's own multi-turn loop: environment_factory ---------------------------------------------------------------
def _gold_state() -> DialogueState:
    for state in collect_states("prosody", default_episodes(8, 0)):
        env, _ = replay(state)
        if env.engine.current == env.scenario.gold:
            return state
    raise AssertionError("no collected state has the gold recommended")


def test_tool_env_plays_an_episode_and_rewards_the_outcome():
    from hear2act.training.tools_env import Hear2ActToolEnv

    env = Hear2ActToolEnv()
    first = env.reset(scenario_id="budget-airline-tickets-01", seed=0, access="T+S")
    assert "OPTIONS:" in first and "CONCERN STATE" in first
    s = env.env.scenario
    env.recommend(s.gold, "This one fits.")
    reply = env.confirm("Great, booking it.")
    assert env.done and "over" in reply and env.get_reward() == 1.0
    assert env.ask("More?") == "The conversation is over."
    env.reset(scenario_id=s.id, seed=0)
    assert env.get_reward() == 0.0
    env.confirm("Booked.")  # the opening is never the gold: premature closure or a refusal
    assert env.get_reward() == 0.0


def test_cli_tools_mode_builds_a_stock_trainer_on_the_tool_env(tmp_path):
    from pathlib import Path

    import trl
    from transformers import AutoTokenizer

    from hear2act.training.grpo import build_dataset, build_trainer, parse

    path = build_tiny_causal_lm(tmp_path / "lm")
    tok = AutoTokenizer.from_pretrained(path)
    tok.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    tok.save_pretrained(path)
    args, config = parse(["--model", str(path), "--access", "T+S", "--tools", "true", "--output_dir",
                          str(tmp_path / "out"), "--n_scenarios", "1", "--num_generations", "2",
                          "--per_device_train_batch_size", "2", "--global_batch", "2"])
    dataset = build_dataset(args)
    assert {"scenario_id", "seed", "history", "access"} <= set(dataset.column_names)
    trainer = build_trainer(args, config, dataset)
    assert type(trainer).__name__ == "GRPOTrainer" and trainer.reward_func_names == ["Hear2ActToolEnv"]
    assert {t.__name__ for t in trainer.tools} == {"ask", "clarify", "recommend", "confirm"}
    with pytest.raises(ValueError, match="tools"):
        parse(["--model", str(path), "--access", "A+T", "--tools", "true", "--output_dir", str(tmp_path)])


@pytest.mark.slow
def test_stock_grpo_trainer_trains_on_the_tool_env(tmp_path):
    from pathlib import Path

    import trl
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from hear2act.training.tools_env import Hear2ActToolEnv, tool_rows

    path = build_tiny_causal_lm(tmp_path / "lm")
    tok = AutoTokenizer.from_pretrained(path, padding_side="left")
    tok.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    model = AutoModelForCausalLM.from_pretrained(path)
    # The random model never writes a tool call, so its sampler is scripted (the test double is generate only;
    # TRL's tool parsing, tool execution, masking and the loss forward are the real ones): the first turn calls
    # confirm in one rollout of the group and ask in the other, later turns answer in plain text.
    scripts = ['<tool_call>\n{"name": "confirm", "arguments": {"message": "Booking it."}}\n</tool_call>',
               '<tool_call>\n{"name": "ask", "arguments": {"question": "Anything else?"}}\n</tool_call>']
    turn = {"n": 0}

    def scripted_generate(input_ids, attention_mask=None, **kwargs):
        texts = [scripts[i % 2] if turn["n"] == 0 else "All set." for i in range(input_ids.shape[0])]
        turn["n"] += 1
        rows = [tok(t, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for t in texts]
        width = max(map(len, rows))
        new = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in rows])
        return torch.cat([input_ids, new.to(input_ids.device)], dim=1)

    model.generate = scripted_generate
    rows = tool_rows([_gold_state()], "T+S")
    config = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2,
                        num_generations=2, max_completion_length=64, learning_rate=1e-3, logging_steps=1,
                        report_to=[], use_cpu=True, bf16=False, save_strategy="no", seed=0,
                        max_tool_calling_iterations=2)
    trainer = GRPOTrainer(model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tok,
                          environment_factory=Hear2ActToolEnv)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    turn["n"] = 0
    trainer.train()
    history = trainer.state.log_history
    rewards = [h["rewards/Hear2ActToolEnv/mean"] for h in history if "rewards/Hear2ActToolEnv/mean" in h]
    assert rewards and rewards[0] == 0.5  # confirm on the gold: 1; ask and stop: 0
    assert any(h.get("tools/call_frequency", 0) > 0 for h in history)
    assert any(not torch.equal(before[n], p.detach()) for n, p in model.named_parameters())
