"""The traces and live packages import in one direction: no cycle among their modules.

Every import counts, including one inside a function or under ``TYPE_CHECKING``: a cycle
closed that way is still a cycle (``traces._traces`` once imported ``_trajectories`` inside
``score_trace`` because ``_trajectories`` imported it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module_names(package: str) -> dict[str, Path]:
    folder = ROOT.joinpath(*package.split("."))
    return {
        package if path.stem == "__init__" else f"{package}.{path.stem}": path
        for path in folder.glob("*.py")
    }


def _imports(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found & known


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path that starts and ends at the same module, else ``None``."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


@pytest.mark.parametrize("package", ["scorecore.traces", "scorecore.live"])
def test_the_package_has_no_import_cycle(package: str) -> None:
    """No module of the package imports, directly or not, a module that imports it back
    (the package's ``__init__`` re-exports, so it is left out)."""
    modules = {name: path for name, path in _module_names(package).items() if name != package}
    assert len(modules) > 1, f"{package}: no modules found under {ROOT}"
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a two-module loop is reported as a path."""
    assert _cycle({"a": {"b"}, "b": {"a"}, "c": set()}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
