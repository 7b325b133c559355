"""Audio LLM backends (omni:, qwen2audio:), processor-free input building and the LLM perceiver of T+S_hat.

Tiny random Qwen2.5-Omni thinker / Qwen2-Audio checkpoints are built locally
(no downloads) and fed real user turns rendered by the env.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("hibari")

import torch

import hear2act_env
from hear2act.agents.llm.audio_inputs import build_audio_inputs, load_audio_processing, num_audio_tokens
from hear2act.agents.llm.backend import GenerationRequest
from hear2act.agents.llm.tiny import build_tiny_omni, build_tiny_qwen2audio


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models: intra-op threads only contend on a loaded 2-core machine (20x slower measured)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def omni_path(tmp_path_factory):
    return build_tiny_omni(tmp_path_factory.mktemp("omni"))


@pytest.fixture(scope="module")
def qwen2audio_path(tmp_path_factory):
    return build_tiny_qwen2audio(tmp_path_factory.mktemp("qwen2audio"))


@pytest.fixture(scope="module")
def omni(omni_path):
    from hear2act.agents.llm.omni import OmniBackend

    return OmniBackend(omni_path, max_new_tokens=6)


@pytest.fixture(scope="module")
def clips():
    """User turns of real episodes (hibari), of different lengths."""
    env = gym.make("Hear2Act-Prosody-v5", access="A+T", disable_env_checker=True)
    out = []
    for seed in (0, 1, 2):
        obs, _ = env.reset(seed=seed)
        out.append(obs["audio"])
    obs, *_ = env.step("[ACTION: ASK] Is there anything else that matters to you?")
    out.append(obs["audio"])
    assert len({c.size for c in out}) == len(out)
    return out


def chat(clip, text="DIALOGUE TRANSCRIPT:\nUser: That could work.\nChoose your next action."):
    return [{"role": "system", "content": "You are a task-oriented service assistant."},
            {"role": "user", "content": [{"type": "text", "text": text},
                                         {"type": "audio", "audio": clip, "sampling_rate": 16000}]}]


def test_placeholders_match_the_omni_encoder_and_the_processor(omni_path, omni, clips):
    from transformers import Qwen2_5OmniProcessor

    p = omni.processing
    long_clip = np.resize(clips[0], 31 * 16000)  # over the 30 s window: truncated like the processor does
    batch_clips = [*clips, np.full(1600, 0.01, np.float32), long_clip]  # the shortest clip allowed: 2 tokens
    batch = build_audio_inputs([chat(c) for c in batch_clips], p.tokenizer, p.feature_extractor,
                               chat_template=p.chat_template)
    audio_id = omni.model.config.audio_token_id
    per_row = (batch["input_ids"] == audio_id).sum(-1).tolist()
    # The reference: Qwen2_5OmniProcessor's own audio step (its constructor needs torchvision; its method does not).
    ref_proc = object.__new__(Qwen2_5OmniProcessor)
    ref_proc.feature_extractor, ref_proc.audio_token = p.feature_extractor, p.audio_token
    ref, replacements = ref_proc._process_audio(batch_clips, sampling_rate=16000, return_attention_mask=True)
    assert per_row == [r.count(p.audio_token) for r in replacements] == ref["num_audio_tokens"].tolist()
    assert torch.equal(batch["feature_attention_mask"], torch.as_tensor(ref["feature_attention_mask"]))
    assert torch.allclose(batch["input_features"], torch.as_tensor(ref["input_features"]))
    assert per_row[-1] == num_audio_tokens(3000) == 750 and per_row[-2] == 2
    # The encoder's real output length per clip.
    with torch.no_grad():
        enc = omni.model.get_audio_features(batch["input_features"], batch["feature_attention_mask"])
    assert enc.last_hidden_state.shape[0] == sum(per_row)
    # Omni's forward only fails on too many placeholders (one too few silently drops a frame): the exact
    # counts above are the real guard.
    with torch.no_grad():
        omni.model(**batch)
        broken = dict(batch, input_ids=batch["input_ids"].clone())
        broken["input_ids"][0, -1] = audio_id
        with pytest.raises((ValueError, RuntimeError)):
            omni.model(**broken)


def test_qwen2audio_inputs_equal_the_real_processor(qwen2audio_path, clips):
    from transformers import Qwen2AudioProcessor

    p = load_audio_processing(qwen2audio_path)
    proc = Qwen2AudioProcessor(feature_extractor=p.feature_extractor, tokenizer=p.tokenizer,
                               chat_template=p.chat_template)
    messages = [chat(c) for c in clips]
    texts = [proc.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in messages]
    p.tokenizer.padding_side = "left"
    ref = proc(text=texts, audio=list(clips), sampling_rate=16000, return_tensors="pt", padding=True)
    mine = build_audio_inputs(messages, p.tokenizer, p.feature_extractor, chat_template=p.chat_template)
    assert set(mine) == {"input_ids", "attention_mask", "input_features", "feature_attention_mask"}
    for key in ("input_ids", "attention_mask", "feature_attention_mask"):
        assert torch.equal(mine[key], ref[key]), key
    assert torch.allclose(mine["input_features"], ref["input_features"])


@pytest.mark.parametrize("kind", ["omni", "qwen2audio"])
def test_batched_generation_equals_one_by_one(kind, omni, qwen2audio_path, clips):
    from hear2act.agents.llm.qwen2audio import Qwen2AudioBackend

    backend = omni if kind == "omni" else Qwen2AudioBackend(qwen2audio_path, max_new_tokens=6)
    requests = [GenerationRequest(chat(c, f"Turn {i}: that could work."), seed=i, key=f"e{i}/1")
                for i, c in enumerate(clips)]
    for temperature in (0.0, 1.0):  # greedy, then sampled with each request's own seed
        backend.temperature, backend.batch_size = temperature, len(requests)
        together = backend.generate(requests)
        backend.batch_size = 1
        alone = backend.generate(requests)
        assert [g.text for g in together] == [g.text for g in alone]
        assert all(g.n_tokens > 0 and not g.error for g in together)
    backend.temperature = 0.0
    # Sampling follows the seed: another seed, another text (for at least one of the clips).
    reseeded = [GenerationRequest(r.messages, seed=r.seed + 100, key=r.key) for r in requests]
    backend.temperature = 1.0
    assert [g.text for g in backend.generate(reseeded)] != [g.text for g in backend.generate(requests)]
    backend.temperature = 0.0


def test_bad_requests_fail_alone_and_other_rates_are_resampled(omni, clips):
    bad = chat(np.zeros((2, 100), np.float32))
    slow = chat(clips[0][::2].copy())
    slow[1]["content"][1]["sampling_rate"] = 8000
    gens = omni.generate([GenerationRequest(chat(clips[0]), 0, "ok/1"), GenerationRequest(bad, 0, "bad/1"),
                          GenerationRequest(slow, 0, "slow/1")])
    assert not gens[0].error and not gens[2].error
    assert "bad/1" in gens[1].error and "mono 1-D" in gens[1].error and gens[1].text == ""
    p = omni.processing
    n = [int((build_audio_inputs([m], p.tokenizer, p.feature_extractor, chat_template=p.chat_template)
              ["input_ids"] == omni.model.config.audio_token_id).sum()) for m in (chat(clips[0]), slow)]
    assert abs(n[0] - n[1]) <= 1  # the 8 kHz copy is resampled to (about) the same duration
    with pytest.raises(ValueError, match="too short"):  # 0 or 1 encoder frames: refused, not silently dropped
        build_audio_inputs([chat(np.zeros(1599, np.float32))], p.tokenizer, p.feature_extractor,
                           chat_template=p.chat_template)
    with pytest.raises(ValueError, match="placeholders"):
        build_audio_inputs([chat(clips[0])], p.tokenizer, p.feature_extractor,
                           chat_template="{% for m in messages %}{{ m['role'] }}{% endfor %}")


def test_full_omni_checkpoint_layout_loads_as_thinker(omni_path, tmp_path, clips):
    """A Qwen2.5-Omni-7B-style directory (model_type qwen2_5_omni, weights under 'thinker.') loads as the thinker."""
    import json
    import shutil

    from safetensors.torch import load_file, save_file

    from hear2act.agents.llm.omni import OmniBackend

    full = tmp_path / "omni-full"
    shutil.copytree(omni_path, full)
    thinker = json.loads((omni_path / "config.json").read_text())
    (full / "config.json").write_text(json.dumps({"model_type": "qwen2_5_omni", "enable_audio_output": False,
                                                  "architectures": ["Qwen2_5OmniForConditionalGeneration"],
                                                  "thinker_config": thinker}))
    weights = {f"thinker.{k}": v for k, v in load_file(omni_path / "model.safetensors").items()}
    save_file(weights, full / "model.safetensors", metadata={"format": "pt"})
    a, b = OmniBackend(omni_path, max_new_tokens=6), OmniBackend(full, max_new_tokens=6)
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    req = [GenerationRequest(chat(clips[1]), 0, "e/1")]
    assert a.generate(req)[0].text == b.generate(req)[0].text
    # Without a generation config of its own, the chat template's turn end still stops a reply.
    from hear2act.agents.llm.audio_backend import stop_ids

    tok = b.processing.tokenizer
    assert tok.convert_tokens_to_ids("<|im_end|>") in stop_ids(None, tok)


def test_omni_plays_real_episodes_through_the_engine(omni_path):
    from hear2act.agents import make_policy
    from hear2act.eval.engine import make_specs, run_episodes

    policy = make_policy(f"omni:{omni_path}", access="A+T", max_new_tokens=6)
    ids = [s.id for s in hear2act_env.load_scenarios()[:3]]
    specs = make_specs("Hear2Act-Prosody-v5", ids, seed=5, access="A+T", env_kwargs={"max_turns": 3})
    batched = run_episodes(specs, policy, batch_size=3)
    single = run_episodes(specs, policy, batch_size=1)
    assert batched == single
    for traj in batched:
        assert traj["failed"] is None and traj["outcome"] is not None
        assert len(traj["turns"]) == 2  # the opening is turn 1; truncated after max_turns
        for turn in traj["turns"]:
            assert turn["raw"] and turn["audio_seed"] >= 0
        # The random model writes no valid action: every turn is a counted parse failure.
        assert traj["parse_failures"] == sum(t["parsed_kind"] == "invalid" for t in traj["turns"])


def test_llm_perceiver_writes_the_inferred_state_through_the_env(omni, clips):
    from hear2act.agents.llm.perceiver_llm import LLMPerceiver, status_of
    from hear2act.agents.llm.scripted import ScriptedBackend

    seen = []

    def reply(request):
        seen.append(request)
        return "<think>pitch falls flat</think><answer>The user sounds hesitant,\nso it remains unresolved.</answer>"

    env = gym.make("Hear2Act-Prosody-v5", access="T+S_hat", disable_env_checker=True,
                   perceiver=LLMPerceiver(ScriptedBackend(reply)))
    obs, _ = env.reset(seed=3)
    assert obs["inferred_state"] == "AUDIO-INFERRED STATE: The user sounds hesitant, so it remains unresolved."
    words, delivery, audio_seed = env.unwrapped.utterance
    heard = next(p["audio"] for p in seen[-1].messages[-1]["content"] if p["type"] == "audio")
    assert np.array_equal(heard, env.unwrapped.speech.audio(words, delivery, audio_seed))
    assert "Listen to the current user audio" in seen[-1].messages[-1]["content"][0]["text"]
    assert words in seen[-1].messages[-1]["content"][0]["text"]  # the dialogue context
    assert "audio" not in obs  # the decision stage never gets the waveform
    assert status_of("it remains unresolved") == "unresolved" and status_of("this seems resolved") == "resolved"

    # The tiny Omni thinker as the perceiver: its own (garbage) sentence is what the env shows.
    perceiver = LLMPerceiver(omni)
    env = gym.make("Hear2Act-Prosody-v5", access="T+S_hat", disable_env_checker=True, perceiver=perceiver)
    obs, _ = env.reset(seed=3)
    assert obs["inferred_state"].startswith("AUDIO-INFERRED STATE: ")
    words, delivery, audio_seed = env.unwrapped.utterance
    audio = env.unwrapped.speech.audio(words, delivery, audio_seed)
    direct = perceiver.perceive(audio, 16000, words, env.unwrapped.transcript)
    assert obs["inferred_state"] == "AUDIO-INFERRED STATE: " + direct.sentence


def test_two_stage_condition_runs_through_the_engine(omni):
    from hear2act.agents.llm.perceiver_llm import LLMPerceiver
    from hear2act.agents.llm.policy import ModelPolicy
    from hear2act.agents.llm.scripted import ScriptedBackend
    from hear2act.eval.engine import make_specs, run_episodes

    perceiver = LLMPerceiver(omni)
    decider = ModelPolicy(ScriptedBackend(default="[ACTION: ASK] Anything else?"), access="T+S_hat")
    ids = [s.id for s in hear2act_env.load_scenarios()[:2]]
    specs = make_specs("Hear2Act-Prosody-v5", ids, access="T+S_hat",
                       env_kwargs={"max_turns": 3, "perceiver": perceiver})
    trajs = run_episodes(specs, decider, batch_size=2, record_prompts=True)
    for traj in trajs:
        assert traj["failed"] is None
        prompt = traj["turns"][0]["prompt"][-1]["content"]
        assert "AUDIO-INFERRED STATE: " in prompt and "DIALOGUE TRANSCRIPT:" in prompt


def test_rollout_command_takes_an_audio_llm_perceiver(omni_path, tmp_path, capsys):
    import json

    from hear2act_env.cli import main

    script = tmp_path / "confirm.json"
    script.write_text(json.dumps(["[ACTION: CONFIRM] Great, I'll book it."]))
    out = tmp_path / "runs.jsonl"
    code = main(["rollout", "--agent", f"scripted:{script}", "--access", "T+S_hat", "--perceiver",
                 f"omni:{omni_path}", "--n", "2", "--out", str(out), "--record-prompts"])
    assert code == 0
    trajs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(trajs) == 2 and all(t["failed"] is None for t in trajs)
    for t in trajs:
        prompt = t["turns"][0]["prompt"][-1]["content"]
        inferred = prompt.split("AUDIO-INFERRED STATE: ", 1)[1].split("\n", 1)[0]
        assert inferred and not inferred.startswith("The user's delivery sounds")  # not the CPU perceiver
    capsys.readouterr()
    assert main(["rollout", "--agent", f"scripted:{script}", "--access", "T", "--perceiver", f"omni:{omni_path}"]) == 2
    assert "first stage of access T+S_hat" in capsys.readouterr().err
