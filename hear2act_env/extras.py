"""The install hint of a missing optional extra, in one place (every lazy import of a heavy stack uses it).

``pip install "hear2act[llm]"`` or ``"hear2act[train]"`` alone lets pip pick torch from PyPI, which on Linux is
a CUDA build of several GB. On a CPU machine, torch comes first from PyTorch's CPU wheel index
(:data:`TORCH_CPU_INSTALL`); when torch is what is missing, the hint says so.

>>> missing_extra("GRPO training", "train", ModuleNotFoundError("No module named 'torch'", name="torch"))
... # doctest: +NORMALIZE_WHITESPACE
'GRPO training needs torch, which is not installed: on a CPU machine pip install torch==2.13.0
 --index-url https://download.pytorch.org/whl/cpu, then pip install "hear2act[train]"
 (the extra alone pulls a multi-GB CUDA build of torch)'
>>> missing_extra("GRPO training", "train", ModuleNotFoundError("No module named 'trl'", name="trl"))
'GRPO training needs trl, which is not installed: pip install "hear2act[train]"'
"""

from __future__ import annotations

TORCH_VERSION = "2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_CPU_INSTALL = f"pip install torch=={TORCH_VERSION} --index-url {TORCH_CPU_INDEX}"


def extra_install(extra: str) -> str:
    """``pip install "hear2act[EXTRA]"``."""
    return f'pip install "hear2act[{extra}]"'


def missing_extra(what: str, extra: str, exc: ImportError | None = None, module: str | None = None) -> str:
    """One line: ``what`` needs the missing module (``exc.name`` or ``module``) and the exact install."""
    name = module or (exc.name if exc is not None and exc.name else None) or f"the {extra} extra"
    if name.split(".")[0] == "torch":
        return (f"{what} needs torch, which is not installed: on a CPU machine {TORCH_CPU_INSTALL}, then "
                f"{extra_install(extra)} (the extra alone pulls a multi-GB CUDA build of torch)")
    return f"{what} needs {name}, which is not installed: {extra_install(extra)}"


__all__ = ["TORCH_CPU_INDEX", "TORCH_CPU_INSTALL", "TORCH_VERSION", "extra_install", "missing_extra"]
