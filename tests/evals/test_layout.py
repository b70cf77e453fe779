"""``scorecore.evals`` stays navigable: concept subpackages, each with its test folder, no module
over 600 lines, and no two sibling modules whose names differ only by a suffix."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "scorecore" / "evals"
REPORT = ROOT / "adapters" / "scorecore_adapters" / "report"
MAX_LINES = 600


def _folders() -> list[Path]:
    return [EVALS, *sorted(p for p in EVALS.iterdir() if (p / "__init__.py").exists()), REPORT]


def _stem(path: Path) -> str:
    """A module's or subpackage's name without its leading underscore (``_store.py``: store)."""
    return path.stem.lstrip("_") if path.is_file() else path.name.lstrip("_")


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sibling_names_differ_only_by_a_suffix(folder: Path) -> None:
    """Siblings such as ``_store``/``_stored`` or ``_trust``/``_trust_fold`` leave a newcomer
    guessing which holds what: no sibling's name starts with another's."""
    siblings = [p for p in folder.iterdir()
                if p.name != "__init__.py" and not p.name.startswith(".")
                and (p.suffix == ".py" or (p / "__init__.py").exists())]
    clashes = [(a.name, b.name) for a, b in combinations(sorted(siblings), 2)
               if _stem(a).startswith(_stem(b)) or _stem(b).startswith(_stem(a))]
    assert not clashes


def test_no_module_is_over_600_lines() -> None:
    """A module past 600 lines holds more than one concept: split it where the concepts part."""
    long = {str(p.relative_to(ROOT)): n for folder in (EVALS, REPORT)
            for p in folder.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long


def test_every_subpackage_has_its_test_folder() -> None:
    """``scorecore/evals/_x/`` is tested in ``tests/evals/x/``: the tests mirror the package."""
    tests = ROOT / "tests" / "evals"
    missing = [p.name for p in EVALS.iterdir()
               if (p / "__init__.py").exists() and not (tests / p.name.lstrip("_")).is_dir()]
    assert not missing
