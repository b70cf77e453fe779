"""The examples of docs/agents-and-traces.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents-and-traces.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_every_python_block_runs_in_order() -> None:
    """The blocks share one namespace (later ones reuse ``trace_json``), like a reader's REPL.

    The page imports only public names (``scorecore``, ``scorecore.agent``, ``.traces``,
    ``.live``): nothing is patched in for it.
    """
    blocks = BLOCK.findall(PAGE.read_text())
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    for index, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name}[{index}]", "exec"), namespace)  # noqa: S102 - our docs
