"""What the tests check of a module: its ``__all__``, and the names its source imports."""

from __future__ import annotations

import ast
from collections.abc import Set
from pathlib import Path
from types import ModuleType


def assert_all_is_sorted_and_complete(
    module: ModuleType, *, unlisted: Set[str] = frozenset()
) -> None:
    """``module.__all__`` is sorted, names only what the module has, and names every public
    name the module itself defines (but those in ``unlisted``)."""
    assert module.__all__ == sorted(module.__all__)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    }
    assert public - unlisted <= set(module.__all__)
    assert all(hasattr(module, name) for name in module.__all__)


def imported_names(path: Path) -> list[str]:
    """Every module and ``module.name`` the file ``path`` imports absolutely, in source order,
    wherever the import stands (top level, ``TYPE_CHECKING`` blocks, function bodies)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found
