"""The curated public surface: sorted, complete, documented."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import scorecore
import scorecore_adapters

PUBLIC_MODULES = ["scorecore"] + [
    f"scorecore_adapters.{m.name}"
    for m in pkgutil.iter_modules(scorecore_adapters.__path__)
    if not m.name.startswith("_") and m.name != "__main__"
]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_resolves(module_name: str) -> None:
    """Every public module's __all__ (kept sorted by ruff's RUF022) names existing objects once."""
    module = importlib.import_module(module_name)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{module_name}.__all__ has duplicates"
    for name in names:
        assert hasattr(module, name), f"{module_name}.__all__ names missing {name!r}"


def test_core_all_is_complete() -> None:
    """Every public name defined in a private core module is re-exported from scorecore."""
    exported = set(scorecore.__all__)
    for info in pkgutil.iter_modules(scorecore.__path__):
        if info.ispkg:  # a subpackage (scorecore.scorers) is a namespace of its own
            continue
        module = importlib.import_module(f"scorecore.{info.name}")
        for name in getattr(module, "__all__", ()):
            assert name in exported, f"scorecore.{info.name}.{name} is not in scorecore.__all__"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_callables_have_docstrings(module_name: str) -> None:
    """Every public class and function carries a docstring."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{module_name}.{name} has no docstring"


def test_api_reference_lists_every_core_name() -> None:
    """docs/api.md documents every name in scorecore.__all__."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
    missing = [name for name in scorecore.__all__ if f"`{name}" not in text]
    assert not missing, f"docs/api.md does not mention {missing}"


@pytest.mark.parametrize("module_name", [*PUBLIC_MODULES[1:], "scorecore_adapters"])
def test_adapters_reference_lists_every_public_name(module_name: str) -> None:
    """docs/adapters-api.md documents every public name of every adapters module."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "adapters-api.md").read_text()
    assert f"## `{module_name}`" in text
    module = importlib.import_module(module_name)
    missing = [name for name in module.__all__ if f"`{name}" not in text]
    assert not missing, f"docs/adapters-api.md does not mention {module_name}.{missing}"
