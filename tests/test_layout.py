"""Checks a reader of the package can rely on: no import cycles, and small modules (or a stated reason).

The import graph is read from the source with `ast`, function-level imports included (a lazy import that
only hides a cycle is still a cycle); imports under `if TYPE_CHECKING:` are left out (they never run).
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "kernel_profiler"
MAX_LINES = 400
# Modules allowed over MAX_LINES, each with its reason. A module that shrinks below the limit must leave the list.
LONG_MODULES = {
    "kernel_profiler.critic.facts": "the index of every value the captures hold, one section per artifact kind, all "
                                    "filling one Facts record with its declared derivations",
    "kernel_profiler.render.html": "one self-contained page: each inline-SVG chart is drawn here over scales and a "
                                   "template context the charts share",
}


def modules() -> dict[str, Path]:
    out = {}
    for p in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement, at any depth, except those guarded by `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # `from pkg import sub` imports the submodule; `from pkg import name` imports pkg
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names]
            for t in targets:
                while t and t not in mods and "." in t:  # `import a.b.c` of a name inside a module
                    t = t.rpartition(".")[0]
                if t in mods and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_function_level_and_relative_imports():
    g = import_graph()
    assert "kernel_profiler.analysis.timeline" in g["kernel_profiler.analysis.engine"]  # module level, relative
    assert "kernel_profiler.render.markdown" in g["kernel_profiler.cli"]  # inside a function


def test_a_planted_cycle_is_found():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]


# Known cycles, each with its reason, to be broken; any other cycle fails.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def test_no_import_cycles():
    found = [c for c in cycles(import_graph()) if tuple(c) not in KNOWN_CYCLES]
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_modules_over_the_line_limit_have_a_reason():
    sizes = {m: len(p.read_text().splitlines()) for m, p in modules().items()}
    long = {m: n for m, n in sizes.items() if n > MAX_LINES}
    unexplained = sorted(f"{m} ({n} lines)" for m, n in long.items() if m not in LONG_MODULES)
    assert not unexplained, f"modules over {MAX_LINES} lines without a reason in LONG_MODULES: {unexplained}"
    stale = sorted(m for m in LONG_MODULES if sizes.get(m, 0) <= MAX_LINES)
    assert not stale, f"LONG_MODULES lists modules now within {MAX_LINES} lines (or gone): {stale}"
