"""docs/builtin-scorers.md has a section for every built-in scorer and check."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecore import scorers
from scorecore.scorers import checks

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "builtin-scorers.md").read_text("utf-8")
NAMES = [n for n in scorers.__all__ if n != "checks"] + list(checks.__all__)


@pytest.mark.parametrize("name", NAMES)
def test_every_scorer_has_a_section(name: str) -> None:
    """Each factory has a heading of its own, and the section names its difference to Mastra."""
    heading = f"## `{name}`" if name in scorers.__all__ else f"### `{name}`"
    assert f"\n{heading}\n" in PAGE
    section = PAGE.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    assert "Difference" in section
