"""TransformersAffect on tiny, randomly initialised checkpoints built in a temp dir (no downloads)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from hear2act_env.speech.affect import AFFECT_LABELS, AffectClassifier
from hear2act_env.speech.affect_hf import DEFAULT_LABEL_MAP, TransformersAffect, map_labels
from hear2act_env.speech.deps import SpeechDependencyError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ID2LABEL = {0: "neu", 1: "hap", 2: "ang", 3: "sad"}
TINY = dict(
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    conv_dim=(16, 16),
    conv_kernel=(10, 3),
    conv_stride=(5, 2),
    num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=2,
    classifier_proj_size=8,
    num_labels=4,
    id2label=ID2LABEL,
    label2id={v: k for k, v in ID2LABEL.items()},
)


def _build(root: Path, kind: str) -> Path:
    if kind == "hubert":
        config, model_cls = transformers.HubertConfig(**TINY), transformers.HubertForSequenceClassification
    else:
        config, model_cls = (
            transformers.Wav2Vec2Config(**TINY),
            transformers.Wav2Vec2ForSequenceClassification,
        )
    torch.manual_seed(0)
    out = root / kind
    model_cls(config).save_pretrained(out)
    transformers.Wav2Vec2FeatureExtractor(sampling_rate=16_000).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_ser")
    return {kind: _build(root, kind) for kind in ("hubert", "wav2vec2")}


@pytest.fixture(scope="module")
def audio() -> np.ndarray:
    return np.random.default_rng(0).normal(0, 0.1, 8_000).astype(np.float32)


def _relabel(src: Path, dst: Path, id2label: dict[int, str]) -> Path:
    shutil.copytree(src, dst)
    cfg = json.loads((dst / "config.json").read_text())
    cfg["id2label"] = {str(k): v for k, v in id2label.items()}
    cfg["label2id"] = {v: k for k, v in id2label.items()}
    (dst / "config.json").write_text(json.dumps(cfg))
    return dst


@pytest.mark.parametrize("kind", ["hubert", "wav2vec2"])
def test_loads_and_classifies_deterministically(model_dirs, audio, kind):
    clf = TransformersAffect(model_dirs[kind])
    assert isinstance(clf, AffectClassifier)
    assert clf.name == f"hf-affect:{kind}"
    assert clf.label_of == {0: "neutral", 1: "happy", 2: "angry", 3: "sad"}
    label = clf.classify(audio, 16_000)
    assert label in AFFECT_LABELS
    assert clf.classify(audio, 16_000) == label
    np.testing.assert_array_equal(clf.logits(audio), clf.logits(audio))
    other = TransformersAffect(str(model_dirs[kind]), device="cpu")
    assert other.classify(audio) == label
    np.testing.assert_array_equal(other.logits(audio), clf.logits(audio))


def test_resamples_to_extractor_rate(model_dirs, audio):
    from scipy.signal import resample_poly

    clf = TransformersAffect(model_dirs["hubert"])
    audio_24k = np.random.default_rng(1).normal(0, 0.1, 12_000).astype(np.float32)
    assert clf.classify(audio_24k, sr=24_000) in AFFECT_LABELS
    expected = clf.logits(resample_poly(audio_24k, 2, 3).astype(np.float32), 16_000)
    np.testing.assert_allclose(clf.logits(audio_24k, 24_000), expected, rtol=1e-5, atol=1e-6)


def test_bad_audio_rejected(model_dirs):
    clf = TransformersAffect(model_dirs["hubert"])
    with pytest.raises(ValueError, match="empty"):
        clf.classify(np.zeros(0, dtype=np.float32))
    with pytest.raises(ValueError, match="mono"):
        clf.classify(np.zeros((2, 800), dtype=np.float32))


def test_unknown_label_raises_unless_mapped(model_dirs, audio, tmp_path):
    d = _relabel(model_dirs["hubert"], tmp_path / "iemocap5", {0: "neu", 1: "hap", 2: "ang", 3: "fru"})
    with pytest.raises(ValueError, match="'fru'"):
        TransformersAffect(d)
    clf = TransformersAffect(d, label_map={"FRU": "angry"})
    assert clf.label_of[3] == "angry"
    assert clf.classify(audio) in AFFECT_LABELS
    with pytest.raises(ValueError, match="not one of the affect labels"):
        TransformersAffect(d, label_map={"fru": "frustrated"})


def test_label_map_overrides_and_case(model_dirs, tmp_path):
    labels = {0: "Neutral", 1: "EXC", 2: "Anger", 3: "sadness"}
    d = _relabel(model_dirs["wav2vec2"], tmp_path / "caps", labels)
    clf = TransformersAffect(d)
    assert clf.label_of == {0: "neutral", 1: "happy", 2: "angry", 3: "sad"}
    assert TransformersAffect(d, label_map={"exc": "angry"}).label_of[1] == "angry"


def test_default_map_targets_are_affect_labels():
    assert set(DEFAULT_LABEL_MAP.values()) == set(AFFECT_LABELS)
    assert map_labels({"0": "HAP", "1": "exc"}) == {0: "happy", 1: "happy"}
    with pytest.raises(ValueError, match="LABEL_0"):
        map_labels({0: "LABEL_0"})


def test_missing_or_non_model_path_raises_clearly(tmp_path, model_dirs):
    missing = tmp_path / "no-such-model"
    with pytest.raises(FileNotFoundError, match="no-such-model"):
        TransformersAffect(missing)
    with pytest.raises(FileNotFoundError, match="never downloads"):
        TransformersAffect("superb/hubert-large-superb-er-not-on-disk")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"empty.*config\.json"):
        TransformersAffect(empty)
    a_file = tmp_path / "weights.bin"
    a_file.write_bytes(b"\0")
    with pytest.raises(ValueError, match=r"weights\.bin"):
        TransformersAffect(a_file)
    sb = tmp_path / "speechbrain"
    sb.mkdir()
    (sb / "hyperparams.yaml").write_text("x: 1\n")
    with pytest.raises(ValueError, match="SpeechBrain"):
        TransformersAffect(sb)
    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    for name in ("config.json", "preprocessor_config.json"):
        shutil.copy(model_dirs["hubert"] / name, no_weights / name)
    with pytest.raises(ValueError, match=r"no_weights.*model\.safetensors"):
        TransformersAffect(no_weights)


def test_missing_transformers_names_pip_install(model_dirs, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(SpeechDependencyError, match="pip install") as err:
        TransformersAffect(model_dirs["hubert"])
    assert "transformers" in str(err.value)
