"""docs/scale.md's ```python examples run as written on the test's Ray runtime."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.adapters.ray.conftest import RAY_WARNINGS, ROOT

BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
BLOCKS = BLOCK.findall((ROOT / "docs" / "scale.md").read_text())

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]


def test_the_guide_has_runnable_examples() -> None:
    """The regex still finds the guide's runnable block."""
    assert BLOCKS


@pytest.mark.parametrize("code", BLOCKS, ids=lambda code: code.splitlines()[0][:40])
def test_scale_doc_example_runs(code: str) -> None:
    """Each block executes on its own (its asserts check what the guide says)."""
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    exec(compile(code, "docs/scale.md", "exec"), namespace)  # noqa: S102
