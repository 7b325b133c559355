"""No import circles inside ``eval/``: read every import statement (lazy ones in functions included).

Circles broken (issue 22): ``hear2act.eval.cli`` <-> ``hear2act.eval.model_rollout`` (the table columns now live in
``hear2act.eval.metrics``) and ``hear2act.eval.runner`` <-> ``hear2act.eval.wandb_log`` /
``hear2act.eval.results`` (the run directory's readers,
durable writer and lock now live in ``hear2act.eval.rundir``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for p in sorted((ROOT / package).rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def import_graph(package: str) -> dict[str, set[str]]:
    """module -> the modules of ``package`` it imports (``from pkg import sub`` counts as importing ``pkg.sub``)."""
    mods = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else (node.module or "")
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                found = subs if len(subs) == len(node.names) else [base, *subs]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            deps |= {m for m in found if m in mods and m != name}
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_reader_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles_in_eval():
    graph = import_graph("eval")
    assert "hear2act.eval.rundir" in graph["hear2act.eval.wandb_log"]
    assert "hear2act.eval.metrics" in graph["hear2act.eval.model_rollout"]
    assert cycles(graph) == []
