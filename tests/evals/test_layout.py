"""``scorecore.evals`` is concept subpackages, each with its test folder (the rules for every
package, sibling names and module length, are in tests/test_layout.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "scorecore" / "evals"


def test_every_subpackage_has_its_test_folder() -> None:
    """``scorecore/evals/_x/`` is tested in ``tests/evals/x/``: the tests mirror the package."""
    tests = ROOT / "tests" / "evals"
    missing = [p.name for p in EVALS.iterdir()
               if (p / "__init__.py").exists() and not (tests / p.name.lstrip("_")).is_dir()]
    assert not missing
