"""No import cycle in ``scorecore/``, counting type-only and function-local imports.

A cycle that only ``if TYPE_CHECKING:`` or an import inside a function closes still ties the
modules together for mypy and for a reader, so the graph is built from the
source with :mod:`ast` rather than from what Python happens to execute at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scorecore"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _owner(target: str, known: set[str]) -> str | None:
    """The innermost known module ``target`` names (``a.b.Name`` -> ``a.b``)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package that ``path`` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):  # every statement: top level, TYPE_CHECKING, function bodies
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import mod`` imports the submodule ``pkg.mod``; ``from mod import Name``
            # resolves to ``mod`` itself.
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            owner = _owner(target, known)
            if owner is not None and owner != name:
                found.add(owner)
    return found


def import_graph() -> dict[str, set[str]]:
    """``module -> modules it imports`` for every module of ``scorecore``."""
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph: dict[str, set[str]], component: list[str]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"cycle of {len(component)}: " + "; ".join(edges)


def test_the_graph_sees_every_kind_of_import() -> None:
    """Type-only, function-local, relative and ``from pkg import mod`` imports all make edges."""
    graph = import_graph()
    assert len(graph) > 50
    # scorecore/__init__.py imports the kernel with ``from scorecore._core._x import ...``.
    assert any(m.startswith("scorecore._core.") for m in graph["scorecore"])
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_type_checking_and_local_imports(tmp_path: Path) -> None:
    """An import under ``if TYPE_CHECKING:`` or inside a function body is an edge."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from scorecore.x import A\n"
        "def f() -> None:\n    from . import y\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source)
    known = {"scorecore.x", "scorecore.y", "scorecore.m"}
    assert _imports("scorecore.m", path, known) == {"scorecore.x", "scorecore.y"}


def test_scorecore_has_no_import_cycle() -> None:
    """No module of ``scorecore`` reaches itself through its imports."""
    graph = import_graph()
    found = [_describe(graph, component) for component in cycles(graph)]
    assert not found, "import cycles:\n" + "\n".join(found)
