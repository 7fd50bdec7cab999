"""The house rules of docs/ARCHITECTURE.md that no other test holds (issue 60), read from the source text alone:

1. no import circle among the modules of ``topologies/``, ``solvers/`` and ``studio/``;
2. no Python module of ``topologies/``, ``solvers/``, ``studio/``, ``bench/`` or ``app.py`` longer than
   ``MAX_LINES`` lines;
3. the layers: ``topologies`` imports nothing of ``solvers`` or ``studio``, ``solvers`` nothing of ``studio``, and
   none of the three imports ``app``.

Every import statement counts, wherever it stands (module level, inside a function, under ``if``): an import
deferred into a function still ties the two modules together. ``from pkg import x`` is an edge to the package
``pkg`` (its ``__init__.py``, which may define ``x``) and, when ``pkg.x`` is a module of ours, to that module too;
``import a.b.c`` is an edge to the module ``a.b.c``. Relative imports are resolved against the importing module's
package. Nothing is imported: the files are parsed with ``ast``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("topologies", "solvers", "studio")
MAX_LINES = 600
# each layer and the top-level names it must never import (docs/ARCHITECTURE.md, "Layers")
FORBIDDEN = {"topologies": ("solvers", "studio", "app"), "solvers": ("studio", "app"), "studio": ("app",)}


def _modules() -> dict[str, Path]:
    """Every module of the three packages by dotted name (a package by its own name, for its __init__.py)."""
    out = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(dotted target, line) of every import statement of the module ``name``, relative ones resolved; for
    ``from pkg import x`` both ``pkg`` and ``pkg.x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            out.append((base, node.lineno))
            out += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return out


def _graph() -> dict[str, dict[str, int]]:
    """module -> {module of ours it imports: first line}."""
    mods = _modules()
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}
    for m, path in mods.items():
        for target, line in _imports(m, path):
            if target in mods and target != m:
                graph[m].setdefault(target, line)
    return graph


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_circle_finder_finds_a_circle_and_its_edges():
    """The finder itself on a toy graph: a -> b -> c -> a is one circle, d -> a hangs off it, e -> e is none."""
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}, "e": {"e": 1}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_circle_among_our_modules():
    graph = _graph()
    assert len(graph) > 100                           # the three packages were found
    circles = _circles(graph)
    lines = []
    for circle in circles:
        members = set(circle)
        edges = [f"{a} -> {b} (line {line})" for a in circle for b, line in sorted(graph[a].items()) if b in members]
        lines.append(f"{', '.join(circle)}: {'; '.join(edges)}")
    assert not circles, "import circles (move the shared piece into a lower module):\n" + "\n".join(lines)


def test_no_module_is_longer_than_the_limit():
    paths = [p for top in (*PACKAGES, "bench") for p in (ROOT / top).rglob("*.py")] + [ROOT / "app.py"]
    assert len(paths) > 100
    long = sorted((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT))) for p in paths)
    over = [f"{name} ({n} lines)" for n, name in long if n > MAX_LINES]
    assert not over, f"modules over {MAX_LINES} lines: {', '.join(over)}"


def test_imports_flow_one_way_through_the_layers():
    wrong = []
    for m, path in _modules().items():
        layer = m.split(".")[0]
        for target, line in _imports(m, path):
            if target.split(".")[0] in FORBIDDEN[layer]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "imports against the layers (topologies <- solvers <- studio <- app.py):\n" + "\n".join(
        sorted(set(wrong)))
