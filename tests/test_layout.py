"""The tests mirror the package: every public module has its test folder or file.

A public module (no ``_`` in its dotted path) of ``scorecore`` or ``scorecore_adapters`` has
its home under ``tests/`` at the mirrored path: ``scorecore.evals.results`` at
``tests/evals/results/`` or ``tests/evals/test_results.py``, ``scorecore_adapters.cache`` at
``tests/adapters/cache/`` or ``tests/adapters/test_cache.py``. A module whose tests share a
file with its siblings' (the built-in LLM scorers, one table of cases) counts when a test file
in its parent's folder imports it, or the one name it exists for from a package above it.
The kernel's public faces that sit directly in ``scorecore`` (``agent``, ``composite``,
``validators``) live in ``tests/core``, with the rest of the kernel.
"""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import pytest

import scorecore
import scorecore_adapters

TESTS = Path(__file__).resolve().parent
# What each top-level package's public modules mirror into.
ROOTS = {"scorecore": ("core",), "scorecore_adapters": ("adapters",)}
# Subpackages of scorecore with a folder of their own at the top of tests/.
OWN_FOLDERS = {"evals", "judge", "live", "scorers", "traces"}


def _public_modules() -> list[str]:
    return sorted(
        info.name
        for package in (scorecore, scorecore_adapters)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if not any(part.startswith("_") for part in info.name.split("."))
    )


def _folder(module: str) -> Path:
    """Where ``module``'s tests live: a folder (or, with ``.py``, a file) under tests/."""
    top, *rest = module.split(".")
    if top == "scorecore" and rest and rest[0] in OWN_FOLDERS:
        return TESTS.joinpath(*rest)
    return TESTS.joinpath(*ROOTS[top], *rest)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _has_tests(folder: Path) -> bool:
    return folder.is_dir() and any(folder.rglob("test_*.py"))


def _home(module: str) -> Path | None:
    folder = _folder(module)
    if _has_tests(folder):
        return folder
    test_file = folder.with_name(f"test_{folder.name}.py")
    if test_file.is_file():
        return test_file
    # Imported by name from the module itself or, for a module whose public face is one name
    # (an LLM scorer's factory), that name from a package above it.
    package, name = module.rsplit(".", 1)
    wanted = {module} | {
        f"{package.rsplit('.', depth)[0]}.{name}" for depth in range(1, package.count(".") + 1)
    }
    parent = folder.parent
    if parent.is_dir():
        for path in sorted(parent.rglob("test_*.py")):
            if wanted & _imports(path):
                return path
    return None


@pytest.mark.parametrize("module", _public_modules())
def test_every_public_module_has_its_test_home(module: str) -> None:
    folder = _folder(module)
    assert _home(module) is not None, (
        f"{module} has no tests at {folder.relative_to(TESTS.parent)}/ or "
        f"{folder.with_name(f'test_{folder.name}.py').relative_to(TESTS.parent)}, and no test "
        f"file in {folder.parent.relative_to(TESTS.parent)}/ imports it"
    )


def test_the_check_finds_a_module_without_tests() -> None:
    """The rule can fail: a module nobody tests has no home, one the tests import has one."""
    assert _home("scorecore_adapters.no_such_module") is None
    assert _home("scorecore.scorers.llm.no_such_scorer") is None
    assert _home("scorecore.scorers.llm.bias") is not None
