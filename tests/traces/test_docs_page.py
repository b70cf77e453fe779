"""The examples of docs/agents-and-traces.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import scorecore
from scorecore.live import _live, _registry
from scorecore.traces import _traces

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents-and-traces.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_every_python_block_runs_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks share one namespace (later ones reuse ``trace_json``), like a reader's REPL."""
    # The page imports these names from ``scorecore``; provide them until they are exported.
    for module in (_traces, _registry, _live):
        for name in module.__all__:
            monkeypatch.setattr(scorecore, name, getattr(module, name), raising=False)
    blocks = BLOCK.findall(PAGE.read_text())
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    for index, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name}[{index}]", "exec"), namespace)  # noqa: S102 - our docs
