"""docs/builtin-scorers/ has a page for every built-in scorer and check, listed by the overview."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecore import scorers
from scorecore.scorers import checks

DOCS = Path(__file__).resolve().parents[2] / "docs"
OVERVIEW = (DOCS / "builtin-scorers.md").read_text("utf-8")
NAMES = [n for n in scorers.__all__ if n != "checks"] + list(checks.__all__)


@pytest.mark.parametrize("name", NAMES)
def test_every_scorer_has_a_page(name: str) -> None:
    """Each factory has a page of its own, listed on the overview, naming its difference to
    Mastra."""
    page = (DOCS / "builtin-scorers" / f"{name}.md").read_text("utf-8")
    assert page.startswith(f"# `{name}`\n")
    assert f"\nbuiltin-scorers/{name}\n" in OVERVIEW
    assert "Difference" in page
