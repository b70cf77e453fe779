"""A check of a module's ``__all__``, shared by the tests of the modules that keep one."""

from __future__ import annotations

from collections.abc import Set
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
