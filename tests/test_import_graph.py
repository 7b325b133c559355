"""The import structure: no module circles, and the ground floor (``hear2act_env``) imports nothing above it.

The graph is read from the source with :mod:`ast` (nothing is imported): every ``import``/``from ... import``
anywhere in a file counts, function-level lazy imports included, relative imports resolved against the file's
package. ``from pkg import name`` points at ``pkg.name`` when that is a module of the project, else at ``pkg``.
Imports under ``if TYPE_CHECKING:`` count too: a type named from the floor above is still an arrow up.
For the arrows-up check a string that names a module of another package (``"hear2act.eval.cli"``,
``"hear2act.agents.rule:X"``,
as handed to ``importlib.import_module``) counts as an import as well: dispatching by name is still a dependency.

Run ``python tests/test_import_graph.py`` to print the current cycles and arrows up.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hear2act_env", "agents", "eval", "training")
GROUND = "hear2act_env"

# Arrows from hear2act_env/ up to agents/eval/training that are allowed for now, each with its reason.
# (importer, imported) pairs; the target is an empty list (a listed arrow that no longer exists fails the test).
ALLOWED_UP: list[tuple[str, str]] = [
    # gymnasium.register's entry point for the SB3 ids (Hear2Act-*-Macro-v2 / -Full-v2) names the discrete
    # wrappers' factory as a string: gym.make imports it on use; importing hear2act_env imports nothing above.
    ("hear2act_env", "hear2act.training.wrappers"),
]

# Circles allowed for now, by their sorted members, each with its reason; the target is an empty list.
ALLOWED_CYCLES: list[tuple[str, ...]] = []

# hear2act_env/integrations/ are adapters to other frameworks (verifiers, OpenEnv): they wire the whole kit
# (prompts, episode scoring) into those frameworks, so they sit above everything, although they live under
# hear2act_env/ where users look for them (hear2act_env.integrations.verifiers.load_environment). They may
# import upward; nothing else under hear2act_env/ may import them (test_nothing_in_the_core_imports_the_adapters).
ADAPTERS = "hear2act_env.integrations"


def module_name(path: Path) -> str:
    """The dotted module name of a file under ROOT (``pkg/__init__.py`` -> ``pkg``)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] != GROUND:  # agents/, eval/, training/ install as hear2act.agents, ... (pyproject package-dir)
        parts.insert(0, "hear2act")
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module of the four packages, by dotted name."""
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            mods[module_name(path)] = path
    return mods


def _resolve_relative(importer: str, is_package: bool, level: int, module: str | None) -> str:
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imported_names(tree: ast.AST, importer: str, is_package: bool, modules: Iterable[str]) -> set[str]:
    """The project modules ``tree`` imports (anywhere in the file)."""
    known = set(modules)
    out: set[str] = set()

    def nearest(name: str) -> str | None:
        while name:
            if name in known:
                return name
            name = name.rpartition(".")[0]
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                hit = nearest(alias.name)
                if hit:
                    out.add(hit)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(importer, is_package, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                hit = nearest(f"{base}.{alias.name}") if alias.name != "*" else nearest(base)
                if hit:
                    out.add(hit)
    out.discard(importer)
    return out


def named_modules(tree: ast.AST, importer: str, modules: Iterable[str]) -> set[str]:
    """Project modules of another top-level package named by a string constant (``"hear2act.eval.cli"``,
    ``"a.b:obj"``)."""
    known = set(modules)
    top = importer.split(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.split(":")[0]
            if name in known and "." in name and name.split(".")[0] != top:
                out.add(name)
    return out


def import_graph(*, named: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports (``named``: plus those it names by string, see the docstring)."""
    mods = project_modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = imported_names(tree, name, path.name == "__init__.py", mods)
        if named:
            graph[name] |= named_modules(tree, name, mods)
    return graph


def _is_ancestor(pkg: str, mod: str) -> bool:
    return mod.startswith(pkg + ".")


def cycle_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without arrows between a package's ``__init__`` and its own submodules.

    ``import a.b.c`` runs ``a/__init__`` first by construction, and a package ``__init__`` re-exporting its
    submodules is the ordinary way to publish them; neither is a circle between two files of one job.
    """
    return {
        mod: {t for t in targets if not (_is_ancestor(t, mod) or _is_ancestor(mod, t))}
        for mod, targets in graph.items()
    }


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the components with more than one module (each one holds at least one circle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(comps)


def one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A shortest circle through the component's first module, as a path that returns to its start."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"component {comp} has no circle through {start}")


def cycles(graph: dict[str, set[str]], skip: Iterable[tuple[str, ...]] = ()) -> list[str]:
    """One line per circle component (a shortest circle, then every member); ``skip``: components left out."""
    g = cycle_graph(graph)
    left_out = {tuple(c) for c in skip}
    return [" -> ".join(one_cycle(g, comp)) + f"  (component: {', '.join(comp)})"
            for comp in strongly_connected(g) if tuple(comp) not in left_out]


def arrows_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) for every module under hear2act_env/ importing another package."""
    return sorted(
        (mod, t)
        for mod, targets in graph.items()
        if mod.split(".")[0] == GROUND and not (mod == ADAPTERS or mod.startswith(ADAPTERS + "."))
        for t in targets
        if t.split(".")[0] != GROUND
    )


# -- the parser itself, on small made-up files ---------------------------------------------------------------


def test_reader_sees_lazy_relative_and_from_imports() -> None:
    src = (
        "import hear2act_env.env\n"
        "from . import b\n"
        "from .c import thing\n"
        "from ..x import y\n"
        "def f():\n"
        "    from hear2act.agents.rule import RuleAgent\n"
        "    import numpy\n"
    )
    mods = ["hear2act_env", "hear2act_env.env", "p", "p.q", "p.q.a", "p.q.b", "p.q.c", "p.x", "hear2act.agents.rule"]
    got = imported_names(ast.parse(src), "p.q.a", False, mods)
    assert got == {"hear2act_env.env", "p.q.b", "p.q.c", "p.x", "hear2act.agents.rule"}
    # From a package's __init__, "." is the package itself.
    assert imported_names(ast.parse("from . import a\n"), "p.q", True, mods) == {"p.q.a"}
    # A module named by string, as importlib.import_module is handed it, is seen for the arrows-up check.
    src = 'T = {"x": "hear2act.agents.rule", "y": "p.x", "z": "agents.rule_x"}\n'
    named = named_modules(ast.parse(src), "p.q.a", mods)
    assert named == {"hear2act.agents.rule"}


def test_cycle_finder_finds_a_made_up_circle() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(g) == [["a", "b", "c"]]
    assert one_cycle(g, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_real_edges() -> None:
    graph = import_graph()
    assert len(graph) > 100
    # A top-level import, a function-level one, and a relative one, as they are in the files today.
    assert "hear2act_env.registry" in graph["hear2act.agents.registry"]
    # imported inside make_policy
    assert {"hear2act.agents.adapter", "hear2act.agents.llm.policy"} <= graph["hear2act.agents.factory"]
    assert "hear2act_env.dialogue.words" in graph["hear2act_env.dialogue.router"]


# -- the project ----------------------------------------------------------------------------------------------


def test_no_import_cycles() -> None:
    graph = import_graph()
    found = cycles(graph, ALLOWED_CYCLES)
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(found)
    present = {tuple(c) for c in strongly_connected(cycle_graph(graph))}
    stale = [c for c in ALLOWED_CYCLES if c not in present]
    assert not stale, f"ALLOWED_CYCLES lists circles that no longer exist as listed (remove or update them): {stale}"


def test_ground_floor_imports_nothing_above_it() -> None:
    up = arrows_up(import_graph(named=True))
    unexpected = [a for a in up if a not in ALLOWED_UP]
    assert not unexpected, "hear2act_env/ imports from above it:\n" + "\n".join(f"{a} -> {b}" for a, b in unexpected)
    stale = [a for a in ALLOWED_UP if a not in up]
    assert not stale, f"ALLOWED_UP lists arrows that no longer exist (remove them): {stale}"


def test_nothing_in_the_core_imports_the_adapters() -> None:
    graph = import_graph(named=True)
    inside = [(mod, t) for mod, targets in graph.items() if mod.split(".")[0] == GROUND
              and not mod.startswith(ADAPTERS) for t in targets if t == ADAPTERS or t.startswith(ADAPTERS + ".")]
    assert not inside, f"the core imports the framework adapters: {inside}"


if __name__ == "__main__":
    g = import_graph()
    print("cycles:")
    for c in cycles(g):
        print("  ", c)
    print("arrows up:")
    for a, b in arrows_up(import_graph(named=True)):
        print("  ", a, "->", b)
