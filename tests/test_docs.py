"""The README and guide examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# docs/agents-and-traces.md builds one program across blocks: tests/traces/test_docs_page.py
RUNNABLE_DOCS = ["README.md", "docs/scorers.md", "docs/evals.md", "docs/storage.md",
                 "docs/builtin-scorers.md"]


def _blocks() -> list[tuple[str, int, str]]:
    found = []
    for name in RUNNABLE_DOCS:
        for index, block in enumerate(BLOCK.findall((ROOT / name).read_text())):
            if "await " in block and "anyio.run" not in block:
                continue  # a signature sketch, not a program
            found.append((name, index, block))
    return found


@pytest.mark.parametrize(("doc", "index", "code"), _blocks(), ids=lambda v: str(v)[:30])
def test_doc_example_runs(
    doc: str, index: int, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each runnable python block of the docs executes without error."""
    exec(compile(code, f"{doc}[{index}]", "exec"), {"__name__": "__doc_example__"})  # noqa: S102
