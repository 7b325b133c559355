"""Speech: delivery model, default renderer, cache, features, verifier, perceiver, affect.

Collected only when the speech extra is installed (see conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hear2act_env import load_scenarios
from hear2act_env.dialogue.engine import DELIVERY, LABELS, collapsed
from hear2act_env.protocol import GRAMMAR
from hear2act_env.speech.affect import AFFECT_LABELS, RuleAffect
from hear2act_env.speech.cache import AudioCache, decode, encode
from hear2act_env.speech.claims import ABS_FLOOR, check_evidence, within
from hear2act_env.speech.delivery import CUES, TABLE, draw_targets, mean_targets
from hear2act_env.speech.enrollment import ENROLL_TEXTS
from hear2act_env.speech.features import Evidence, extract
from hear2act_env.speech.perceiver import DELIVERY_ONLY, FEATURES, MASK, WEIGHTS, FeaturePerceiver, fit_logistic
from hear2act_env.speech.renderers import make_renderer, to_16k
from hear2act_env.speech.train_perceiver import TRAIN_ASSENT, TRAIN_REJECT
from hear2act_env.speech.verify import verify

ASSENT = GRAMMAR.pool("ASSENT")

SR = 16_000


@pytest.fixture(scope="module")
def hibari():
    return make_renderer("hibari")


def render16(r, text, label, seed):
    return to_16k(r.render(text, label, None, seed), r.sample_rate)


# -- delivery model -------------------------------------------------------------------


def test_delivery_table_covers_table12_and_neutral():
    assert set(TABLE) == {*LABELS, "neutral"}
    assert len(LABELS) == 13


def test_targets_are_seeded_and_vary():
    assert draw_targets("hesitant", 3) == draw_targets("hesitant", 3)
    assert draw_targets("hesitant", 3) != draw_targets("hesitant", 4)
    with pytest.raises(ValueError, match="unknown delivery label 'sleepy'"):
        mean_targets("sleepy")


def test_no_single_target_separates_resolved_from_unresolved():
    """Per-utterance spread makes every cue overlap between the two statuses."""
    same_words = {"resolved": DELIVERY["resolved"], "unresolved": DELIVERY["reluctant"] + DELIVERY["concern"]}
    draws = {s: [draw_targets(lab, seed) for lab in labels for seed in range(200)]
             for s, labels in same_words.items()}
    assert CUES == ("f0_shift", "f0_range", "final", "tempo", "fade", "tilt")  # prosody only
    for cue in CUES:
        res = np.array([getattr(t, cue) for t in draws["resolved"]])
        unr = np.array([getattr(t, cue) for t in draws["unresolved"]])
        lo, hi = max(res.min(), unr.min()), min(res.max(), unr.max())
        assert lo < hi, f"{cue} separates the statuses"


# -- renderer ---------------------------------------------------------------------------


def test_hibari_is_bit_identical_for_identical_inputs(hibari):
    a = hibari.render("That could work...", "hesitant", None, 11)
    b = hibari.render("That could work...", "hesitant", None, 11)
    assert a.dtype == np.float32 and a.ndim == 1 and np.abs(a).max() <= 1.0
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != hibari.render("That could work...", "hesitant", None, 12).tobytes()


def test_hibari_is_identical_across_processes(hibari):
    code = ("from hear2act_env.speech.renderers import make_renderer;import hashlib,sys;"
            "w=make_renderer('hibari').render('Sure, that one.','warm',None,5);"
            "sys.stdout.write(hashlib.sha256(w.tobytes()).hexdigest())")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    import hashlib

    assert other == hashlib.sha256(hibari.render("Sure, that one.", "warm", None, 5).tobytes()).hexdigest()


def test_hibari_rejects_unknown_voice_and_label(hibari):
    with pytest.raises(ValueError, match="voice"):
        hibari.render("Hi.", "warm", "fenrir", 0)
    with pytest.raises(ValueError, match="delivery label"):
        hibari.render("Hi.", "sleepy", None, 0)


def test_delivery_is_measurable_in_the_audio(hibari):
    def mean_of(label, feature):
        return np.mean([getattr(extract(render16(hibari, "Okay, that one then.", label, s)), feature)
                        for s in range(4)])

    assert mean_of("enthusiastic", "f0_mean") > mean_of("disappointed", "f0_mean") * 1.1
    assert mean_of("enthusiastic", "f0_range") > mean_of("flat", "f0_range") + 2
    assert mean_of("enthusiastic", "energy_fade") > mean_of("disappointed", "energy_fade") + 2
    # Pauses are not the delivery: the same seed waits the same time whatever the label.
    assert abs(mean_of("hesitant", "lead_pause") - mean_of("impatient", "lead_pause")) < 0.05


def test_resampling_to_16k(hibari):
    w = hibari.render("Right, okay.", "neutral", None, 0)
    out = to_16k(w, hibari.sample_rate)
    assert out.dtype == np.float32
    assert abs(len(out) - len(w) * 16_000 / hibari.sample_rate) <= 1


# -- cache ------------------------------------------------------------------------------


def test_cache_round_trip_and_hit(tmp_path, hibari):
    cache = AudioCache(hibari, tmp_path)
    a = cache.get("Mm, okay.", "flat", 1)
    fresh = AudioCache(hibari, tmp_path)
    b = fresh.get("Mm, okay.", "flat", 1)
    assert a.tobytes() == b.tobytes()
    assert (cache.stats.misses, fresh.stats.misses, fresh.stats.hits) == (1, 0, 1)
    assert not list(tmp_path.rglob(".tmp-*"))


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty"])
def test_corrupted_cache_file_is_detected_and_rerendered(tmp_path, hibari, damage):
    cache = AudioCache(hibari, tmp_path)
    good = cache.get("Sure, that one.", "warm", 2).copy()
    path = cache.path(cache.key("Sure, that one.", "warm", 2))
    blob = bytearray(path.read_bytes())
    if damage == "flip":
        blob[-10] ^= 0xFF
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "magic":
        blob[:4] = b"XXXX"
    else:
        blob = bytearray()
    path.write_bytes(bytes(blob))
    assert decode(bytes(blob)) is None
    fresh = AudioCache(hibari, tmp_path)
    again = fresh.get("Sure, that one.", "warm", 2)
    assert fresh.stats.repaired == 1 and fresh.stats.misses == 1
    assert again.tobytes() == good.tobytes()
    assert decode(path.read_bytes()) is not None


def test_encode_decode():
    w = np.linspace(-1, 1, 101, dtype=np.float32)
    assert decode(encode(w)).tobytes() == w.tobytes()


# -- features ---------------------------------------------------------------------------


def _tone(f0_start, f0_end, seconds, lead=0.0):
    t = np.arange(int(seconds * SR)) / SR
    f = np.linspace(f0_start, f0_end, len(t))
    phase = 2 * np.pi * np.cumsum(f) / SR
    wave = sum(0.3 / k * np.sin(k * phase) for k in range(1, 6))
    return np.concatenate([np.zeros(int(lead * SR)), wave]).astype(np.float32)


def test_features_on_synthetic_signals():
    f = extract(_tone(200, 200, 1.0, lead=0.4))
    assert abs(f.f0_mean - 200) < 4
    assert abs(f.lead_pause - 0.4) < 0.05
    assert f.f0_range < 0.5
    rise = extract(_tone(150, 250, 1.0))
    assert rise.f0_final > 1.0 and rise.f0_slope > 3
    fall = extract(_tone(250, 150, 1.0))
    assert fall.f0_final < -1.0 and fall.f0_slope < -3


def test_evidence_cites_spans_inside_the_clip():
    f = extract(_tone(180, 220, 0.8, lead=0.3))
    for e in f.evidence():
        assert 0 <= e.span[0] <= e.span[1] <= f.duration + 0.02, e


# -- verifier ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clip():
    wave = _tone(160, 240, 1.2, lead=0.35)
    return wave, extract(wave)


def test_extractor_claims_all_verify(clip):
    wave, f = clip
    report = verify(f.evidence(), wave)
    assert report.pass_rate == 1.0, [c.reason for c in report.failed]


def test_tolerance_edges(clip):
    _, f = clip
    derived = f.f0_mean  # ~200 Hz: 15 % is far above the 1 Hz floor
    span = f.speech_span
    ok = check_evidence(Evidence("f0_mean", derived * 1.149, "Hz", span), f)
    edge = check_evidence(Evidence("f0_mean", derived * 0.851, "Hz", span), f)
    over = check_evidence(Evidence("f0_mean", derived * 1.16, "Hz", span), f)
    assert ok.passed and edge.passed
    assert not over.passed and "re-derived" in over.reason and over.component == "perceiver"
    assert within(0.1, 0.0, "st") and not within(0.3, 0.0, "st")  # near zero: the absolute floor
    assert ABS_FLOOR["st"] == 0.25


def test_bad_spans_and_provenance_fail(clip):
    _, f = clip
    cases = {
        Evidence("f0_mean", f.f0_mean, "Hz", (0.0, f.duration + 1)): "outside the clip",
        Evidence("f0_mean", f.f0_mean, "Hz", (0.9, 0.2)): "ends before it starts",
        Evidence("f0_mean", f.f0_mean, "Hz", (0.0, 0.5)): "differs from the measured",
        Evidence("f0_mean", f.f0_mean, "Hz", f.speech_span, source="gpt"): "unknown source",
        Evidence("jitter", 1.0, "%", f.speech_span): "does not produce",
        Evidence("f0_mean", f.f0_mean, "st", f.speech_span): "unit",
        Evidence("pause", 0.3, "s", (0.6, 0.9)): "no silence",
    }
    for claim, reason in cases.items():
        check = check_evidence(claim, f)
        assert not check.passed and reason in check.reason, (claim, check.reason)
    unknown = Evidence("f0_mean", 1.0, "Hz", f.speech_span, source="gpt")
    assert check_evidence(unknown, f).component == "provenance"


# -- perceiver --------------------------------------------------------------------------


def test_training_sentences_never_occur_in_the_benchmark():
    bank_texts = set()
    for s in load_scenarios():
        bank_texts.update([s.request, *(n.statement for n in s.needs)])
        bank_texts.update(r.statement for r in s.requirements)
    train = set(TRAIN_ASSENT) | set(TRAIN_REJECT) | set(ENROLL_TEXTS)
    assert not train & (bank_texts | set(ASSENT))


def test_shipped_weights_load_and_are_plain_json():
    d = json.loads(WEIGHTS.read_text())
    assert d["state"]["classes"] == ["resolved", "reluctant", "concern", "rejection"]
    assert d["status"]["classes"] == ["resolved", "unresolved"]
    assert d["meta"]["renderer"] == "hibari" and "baseline" in d["meta"]
    FeaturePerceiver()


def test_perceiver_weighs_the_delivery_only():
    """Card P6c: vocal delivery only. No lexical column; pauses and level carry weight 0."""
    p = FeaturePerceiver()
    assert set(DELIVERY_ONLY) <= set(FEATURES) and not {"negation", "contrast", "n_words"} & set(FEATURES)
    for model in (p.weights.status, p.weights.state):
        assert np.all(model.W[:, ~MASK] == 0) and np.all(np.abs(model.W[:, MASK]).sum(axis=0) > 0)
    unweighted = ("lead_pause", "pause_total", "rms_rel", "tilt", "speech_rate", "f0_range", "f0_slope")
    assert not MASK[[FEATURES.index(n) for n in unweighted]].any()


def test_perceiver_ignores_the_words(hibari):
    p = FeaturePerceiver()
    wave = render16(hibari, "Okay, sounds good.", "hesitant", 21)
    assert p.perceive(wave, SR, "Okay, sounds good.") == p.perceive(wave, SR, "No, I can't accept that, but")


def test_shipped_baseline_is_used_and_reproduces(hibari):
    """The env reads with the baseline shipped in the weights; here enrollment reproduces it."""
    from hear2act_env.speech.channel import SpeechChannel
    from hear2act_env.speech.enrollment import neutral_baseline

    meta = json.loads(WEIGHTS.read_text())["meta"]
    shipped = (meta["baseline"]["f0"], meta["baseline"]["rms"])
    channel = SpeechChannel("hibari")
    assert (channel.perceiver.baseline.f0, channel.perceiver.baseline.rms) == shipped
    if meta["renderer_version"] == hibari.version:
        enrolled = neutral_baseline(hibari)
        assert abs(enrolled.f0 - shipped[0]) < 1e-3 and abs(enrolled.rms - shipped[1]) < 1e-3


def test_other_renderer_version_warns_and_keeps_the_shipped_baseline(hibari):
    class Renamed:
        name, version, sample_rate, voices = "hibari", "hibari-0.0.0+other", hibari.sample_rate, ("heart",)

    p = FeaturePerceiver()
    before = p.baseline
    with pytest.warns(RuntimeWarning, match="trained on"):
        assert p.adapt(Renamed()) == before


def test_corrupted_weights_raise_naming_the_file(tmp_path):
    bad = tmp_path / "w.json"
    d = json.loads(WEIGHTS.read_text())
    d["state"]["W"] = d["state"]["W"][:2]
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"w\.json"):
        FeaturePerceiver(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"w\.json"):
        FeaturePerceiver(bad)


def test_fit_logistic_learns_a_separable_toy_problem():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(-2, 1, (50, 3)), rng.normal(2, 1, (50, 3))])
    y = np.array([0] * 50 + [1] * 50)
    m = fit_logistic(x, y, ("a", "b"))
    assert (m.proba(x).argmax(axis=1) == y).mean() > 0.95


def test_perceiver_reads_same_words_delivery_and_cites_verifiable_evidence(hibari):
    """Held-out same-words pairs (the probe's): words and seeds the training never saw."""
    from hear2act_env.speech.probe import pairs

    p = FeaturePerceiver()
    right = total = 0
    for pair in pairs(20):
        for label, status in ((pair.resolved, "resolved"), (pair.unresolved, "unresolved")):
            wave = render16(hibari, pair.text, label, pair.seed)
            out = p.perceive(wave, SR, pair.text)
            right += out.status == status
            total += 1
            assert out.sentence.endswith(f"seems {out.status}.")
            assert verify(out.evidence, wave).pass_rate == 1.0
    # benchmarks/audio_probe.py measures it on 400 clips (docs/speech.md); chance is 0.5.
    assert right / total >= 0.75, right / total


def test_perception_is_deterministic(hibari):
    p = FeaturePerceiver()
    wave = render16(hibari, "Okay, sounds good.", "lukewarm", 9)
    assert p.perceive(wave, SR, "Okay, sounds good.") == p.perceive(wave, SR, "Okay, sounds good.")


# -- generic affect ---------------------------------------------------------------------


def test_rule_affect_is_generic_not_the_benchmark_status(hibari):
    p = FeaturePerceiver()
    affect = RuleAffect(p.baseline)
    labels, statuses = [], []
    for i, label in enumerate(LABELS):
        for seed in range(3):
            wave = render16(hibari, ASSENT[(i + seed) % len(ASSENT)], label, 900 + 10 * i + seed)
            labels.append(affect.classify(wave, SR))
            statuses.append(collapsed(next(s for s, ls in DELIVERY.items() if label in ls)))
    assert set(labels) <= set(AFFECT_LABELS) and len(set(labels)) >= 3
    # The best any mapping affect -> status can do stays well below a state reader.
    best = sum(max(sum(1 for a, s in zip(labels, statuses, strict=True) if a == lab and s == st)
                   for st in ("resolved", "unresolved")) for lab in set(labels))
    assert best / len(labels) < 0.9



# -- audio in the environment ------------------------------------------------------------


def _audio_rollout(env_id, access, seed, actions):
    import gymnasium as gym

    env = gym.make(env_id, access=access, disable_env_checker=True).unwrapped
    obs, _ = env.reset(seed=seed, options={"scenario_id": "budget-airline-tickets-03"})
    out = [obs]
    for a in actions:
        obs, _, term, trunc, _ = env.step(a)
        out.append(obs)
        if term or trunc:
            break
    return out


ACTIONS = ["[ACTION: ASK] Anything else?", "[ACTION: RECOMMEND] [OPTION: 2] this?",
           "[ACTION: RECOMMEND] [OPTION: 5] or this?", "[ACTION: CONFIRM] ok"]


def test_same_seed_gives_identical_audio_bytes():
    a = _audio_rollout("Hear2Act-Prosody-v5", "A+T", 4, ACTIONS)
    b = _audio_rollout("Hear2Act-Prosody-v5", "A+T", 4, ACTIONS)
    assert [o["audio"].tobytes() for o in a] == [o["audio"].tobytes() for o in b]
    c = _audio_rollout("Hear2Act-Prosody-v5", "A+T", 5, ACTIONS)
    assert [o["audio"].tobytes() for o in a] != [o["audio"].tobytes() for o in c]


def test_matched_realizations_hear_the_same_delivery_for_the_same_words():
    pro = _audio_rollout("Hear2Act-Prosody-v5", "A+T", 7, ACTIONS)
    exp = _audio_rollout("Hear2Act-Explicit-v5", "A+T", 7, ACTIONS)
    for p, e in zip(pro, exp, strict=True):
        same_words = p["transcript"].splitlines()[-1] == e["transcript"].splitlines()[-1]
        assert (p["audio"].tobytes() == e["audio"].tobytes()) == same_words


def test_access_a_hides_user_words_and_t_s_hat_hides_audio():
    a = _audio_rollout("Hear2Act-Prosody-v5", "A", 1, ACTIONS[:2])
    lines = a[-1]["transcript"].splitlines()
    assert lines[0].startswith("User: ") and "(spoken)" not in lines[0]  # the request stays in words
    assert all(ln == "User: (spoken)" for ln in lines[2::2])
    assert a[-1]["audio"].dtype == np.float32
    s_hat = _audio_rollout("Hear2Act-Prosody-v5", "T+S_hat", 1, ACTIONS[:2])
    assert "audio" not in s_hat[-1]
    assert s_hat[-1]["inferred_state"].startswith("AUDIO-INFERRED STATE: ")
    assert "resolved" in s_hat[-1]["inferred_state"]
    aff = _audio_rollout("Hear2Act-Prosody-v5", "T+affect", 1, ACTIONS[:2])
    assert aff[-1]["affect"] in AFFECT_LABELS


def test_audio_env_pickles_mid_episode():
    import pickle

    import gymnasium as gym

    env = gym.make("Hear2Act-Explicit-v5", access="A+T", disable_env_checker=True).unwrapped
    env.reset(seed=2)
    env.step(ACTIONS[0])
    clone = pickle.loads(pickle.dumps(env))
    for action in ACTIONS[1:]:
        (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) = env.step(action), clone.step(action)
        assert o1["audio"].tobytes() == o2["audio"].tobytes() and o1["transcript"] == o2["transcript"]
        assert (r1, t1, u1, i1) == (r2, t2, u2, i2)
        if t1 or u1:
            break
