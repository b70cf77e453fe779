"""Where code lives: module names that tell siblings apart, modules of one concept, and tests
that mirror the package.

Every public module has its test folder or file.

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

import pkgutil
from itertools import combinations
from pathlib import Path

import pytest

import scorecore
import scorecore_adapters
from tests.module_checks import imported_names

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SOURCES = (ROOT / "scorecore", ROOT / "adapters" / "scorecore_adapters")
MAX_LINES = 600
# What each top-level package's public modules mirror into.
ROOTS = {"scorecore": ("core",), "scorecore_adapters": ("adapters",)}
# Subpackages of scorecore with a folder of their own at the top of tests/.
OWN_FOLDERS = {"datasets", "evals", "judge", "live", "scorers", "traces"}


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
            if wanted.intersection(imported_names(path)):
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


def _packages() -> list[Path]:
    return sorted(init.parent for source in SOURCES for init in source.rglob("__init__.py"))


def _stem(path: Path) -> str:
    """A module's or subpackage's name without its leading underscore (``_store.py``: store)."""
    return (path.stem if path.is_file() else path.name).lstrip("_")


@pytest.mark.parametrize("folder", _packages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sibling_names_differ_only_by_a_suffix(folder: Path) -> None:
    """Siblings such as ``_store``/``_stored`` or ``local``/``_local_client`` leave a newcomer
    guessing which holds what: no sibling's name starts with another's."""
    siblings = [p for p in folder.iterdir()
                if p.name != "__init__.py" and not p.name.startswith(".")
                and (p.suffix == ".py" or (p / "__init__.py").exists())]
    clashes = [(a.name, b.name) for a, b in combinations(sorted(siblings), 2)
               if _stem(a).startswith(_stem(b)) or _stem(b).startswith(_stem(a))]
    assert not clashes


def test_no_module_is_over_600_lines() -> None:
    """A module past 600 lines holds more than one concept: split it where the concepts part."""
    long = {str(p.relative_to(ROOT)): n for source in SOURCES for p in source.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long
