"""training/omni_grpo.OmniGRPOTrainer overrides four private methods of TRL's GRPOTrainer. pyproject pins the
TRL range this was tested with; this test checks that the installed TRL still has those methods with the
parameters the overrides pass on, and names the version it checked."""

from __future__ import annotations

import inspect

import pytest

trl = pytest.importorskip("trl")

# method -> the parameters OmniGRPOTrainer passes to (or reads from) TRL's implementation
PRIVATE = {
    "_tokenize_prompts": ("prompts",),
    "_generate_and_score_completions": ("inputs",),
    "_compute_loss": ("model", "inputs"),
    "_get_per_token_logps_and_entropies": ("model", "input_ids", "attention_mask", "logits_to_keep", "batch_size",
                                           "compute_entropy", "compute_aux_loss"),
}


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_trl_still_has_the_private_methods_the_omni_trainer_overrides(name):
    from trl import GRPOTrainer

    method = getattr(GRPOTrainer, name, None)
    assert method is not None, f"trl {trl.__version__}: GRPOTrainer.{name} is gone; OmniGRPOTrainer overrides it"
    params = inspect.signature(method).parameters
    missing = [p for p in PRIVATE[name] if p not in params]
    assert not missing, f"trl {trl.__version__}: GRPOTrainer.{name} lost parameters {missing}"


def test_the_installed_trl_is_in_the_pinned_range():
    import tomllib
    from pathlib import Path

    from packaging.specifiers import SpecifierSet

    deps = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["train"]
    spec = next(d for d in deps if d.startswith("trl"))
    assert "<" in spec, f"pyproject pins {spec!r}: give TRL an upper bound (OmniGRPOTrainer uses private methods)"
    assert trl.__version__ in SpecifierSet(spec[len("trl"):]), f"trl {trl.__version__} is outside {spec!r}"
