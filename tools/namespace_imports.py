"""Rewrite the tree's references to ``agents`` / ``eval`` / ``training`` as ``hear2act.agents`` / ... (idempotent).

    python tools/namespace_imports.py            # rewrite in place, then sort the imports it changed (ruff)
    python tools/namespace_imports.py --check    # list what would change; exit 1 if anything would

The wheel installs the repository's top-level ``agents/``, ``eval/`` and ``training/`` folders as
``hear2act.agents``, ``hear2act.eval`` and ``hear2act.training`` (``setup.py``). This script brings every
reference in the tree in line with those names:

* import statements in Python and notebooks: ``from agents.rule import X``, ``from eval import cli``,
  ``import training.ppo`` (and a bare ``import agents`` -> ``from hear2act import agents``);
* dotted module paths anywhere in text files: ``"agents.rule:StateRule"`` registry and entry-point strings,
  ``importlib.import_module("eval.cli")``, ``python -m training.ppo`` in docs / Makefile / README / notebooks,
  ``:mod:`training.splits``` in docstrings.

A dotted path is rewritten only when its second part is a real module or package of that folder
(``eval.json``, a file name, is not ``eval/json.py``, so it stays), and never when it already follows a dot
(``hear2act.training.ppo``, ``model.eval``): running the script twice changes nothing the second time.
``hear2act_env`` is never touched. Bare quoted names (``"agents"``) are listed for review, not rewritten.

Merging a branch written before the rename (or this rename into a tree that moved on): run the script on the
target first (``python tools/namespace_imports.py --root TREE``; commit), then merge. Lines the script rewrites
identically on both sides merge cleanly; a conflict is left only where one side also edited the line by hand.
Run the script once more after the merge, wrap the lines it lists, and reinstall (``pip install -e .``) so the
editable finder maps ``hear2act.agents`` / ``.eval`` / ``.training``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents", "eval", "training")
NAMESPACE = "hear2act"
TEXT_SUFFIXES = frozenset({".py", ".md", ".ipynb", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".ini", ".rst"})
TEXT_NAMES = frozenset({"Makefile", "run"})
# Never rewritten: data (scenario bank, test corpora, the router fit's rows: their bytes are hashed), this
# script and its test (its examples are old names), the namespace package and setup.py; nor are .txt files (the
# prompt templates are hashed into run identities).
SKIP_PREFIXES = ("hear2act_env/data/", "tests/data/", "training/data/", "tools/namespace_imports.py",
                 "tests/test_packaging.py", "hear2act/", "setup.py", "LICENSE")
STATEMENT_SUFFIXES = frozenset({".py", ".ipynb", ".md"})
_NAMES = "|".join(PACKAGES)
# `from agents...` / `from agents import`, at a line start (or after a notebook source string's opening quote).
_FROM = re.compile(rf'(?m)(^[ \t]*|^[ \t]*"|\\n)from ({_NAMES})(?=(?:\.[\w.]+)? import )')
# `import agents` with no dotted part (the dotted form is a module path, handled below).
_IMPORT_BARE = re.compile(rf'(?m)(^[ \t]*|^[ \t]*"|\\n)import ({_NAMES})(?=[ \t]*(?:$|\\n|"|#))')
_BARE_STRING = re.compile(rf"""(?<![\w.])["']({_NAMES})["']""")


def submodules(root: Path = ROOT) -> dict[str, frozenset[str]]:
    """What ``agents.X`` may name: each namespaced folder's direct modules and packages, and the names its
    ``__init__.py`` exports in ``__all__`` (``agents.make_policy``; a local ``agents.get(...)`` stays)."""
    out = {}
    for top in PACKAGES:
        folder = root / top
        names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        names |= {p.parent.name for p in folder.glob("*/__init__.py")}
        names |= _exported(folder / "__init__.py")
        out[top] = frozenset(names)
    return out


def _exported(init: Path) -> set[str]:
    """The literal ``__all__`` of a module (empty when it has none or it is not a literal list)."""
    if not init.is_file():
        return set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return {str(n) for n in ast.literal_eval(node.value)}
            except ValueError:
                return set()
    return set()


def _dotted(subs: dict[str, frozenset[str]]) -> re.Pattern[str]:
    alternatives = "|".join(f"{top}\\.(?:{'|'.join(sorted(names, key=len, reverse=True))})"
                            for top, names in subs.items() if names)
    return re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w])")


def rewrite_text(text: str, suffix: str, subs: dict[str, frozenset[str]]) -> str:
    """The text with every reference rewritten (idempotent: rewriting the result changes nothing)."""
    text = _dotted(subs).sub(lambda m: f"{NAMESPACE}.{m.group(0)}", text)
    if suffix in STATEMENT_SUFFIXES:
        text = _FROM.sub(lambda m: f"{m.group(1)}from {NAMESPACE}.{m.group(2)}", text)
        text = _IMPORT_BARE.sub(lambda m: f"{m.group(1)}from {NAMESPACE} import {m.group(2)}", text)
    return text


def tree_files(root: Path = ROOT) -> list[Path]:
    """The text files git tracks (plus untracked, not ignored ones), minus :data:`SKIP_PREFIXES`."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    files = []
    for rel in listed:
        path = root / rel
        if rel.startswith(SKIP_PREFIXES) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            files.append(path)
    return files


def bare_strings(text: str) -> list[str]:
    """Quoted bare package names (``"training"``): maybe a module name, maybe a CLI word; for review."""
    return [m.group(0) for m in _BARE_STRING.finditer(text)]


def run(files: Iterable[Path], *, check: bool = False, root: Path = ROOT) -> list[Path]:
    """Rewrite ``files`` (or, with ``check``, only report); the files that changed (or would)."""
    subs = submodules(root)
    changed = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, path.suffix, subs)
        if new != text:
            changed.append(path)
            if not check:
                path.write_text(new, encoding="utf-8")
    return changed


def _sort_imports(paths: list[Path], root: Path) -> None:
    """``hear2act.eval`` now sorts before ``hear2act_env``: let ruff re-sort the changed Python files."""
    py = [str(p) for p in paths if p.suffix == ".py"]
    if not py:
        return
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff)] if ruff.is_file() else [sys.executable, "-m", "ruff"]
    # The namespace is first-party whether or not this tree's pyproject says so yet (the same sort on any branch).
    first_party = "lint.isort.known-first-party = ['hear2act', 'hear2act_env']"
    result = subprocess.run([*command, "check", "--config", first_party, "--select", "I", "--fix", "--quiet", *py],
                            cwd=root, capture_output=True, text=True)
    if result.returncode not in (0, 1):
        print(f"namespace_imports: ruff could not sort imports ({result.stderr.strip()[:200]}); "
              "run `ruff check --select I --fix .`", file=sys.stderr)
        return
    # Names grew by 9 characters: list the lines now past the line length (wrap them by hand).
    long = subprocess.run([*command, "check", "--select", "E501", "--output-format", "concise", "--quiet", *py],
                          cwd=root, capture_output=True, text=True).stdout.strip()
    if long:
        print(f"namespace_imports: lines to wrap by hand:\n{long}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list the files that would change (exit 1 if any)")
    parser.add_argument("--no-sort", action="store_true", help="do not run `ruff check --select I --fix` afterwards")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this script's)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    files = tree_files(root)
    changed = run(files, check=args.check, root=root)
    if not args.check and not args.no_sort:
        _sort_imports(changed, root)
    for path in changed:
        print(f"{'would rewrite' if args.check else 'rewrote'} {path.relative_to(root)}")
    for path in files:
        found = bare_strings(path.read_text(encoding="utf-8", errors="replace"))
        names = sorted(set(found) - {'"eval"', "'eval'"})  # "eval" is also the CLI subcommand's name
        if names:
            print(f"review {path.relative_to(root)}: bare {', '.join(names)}", file=sys.stderr)
    print(f"{len(changed)} file(s) {'to rewrite' if args.check else 'rewritten'}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
