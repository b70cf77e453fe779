"""The JSONL a batch API's request and result files hold. (Its HTTP exchanges go through the
judge's public ``transport``: the same client, credentials and error mapping as ``generate``.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = ["jsonl_lines"]


def jsonl_lines(text: str) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each non-blank line of a JSONL file: the raw line and its object (``None`` when the
    line is not a JSON object)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        yield line, value if isinstance(value, dict) else None
