"""pydantic-ai 1.x's own span names, for spans that carry no ``gen_ai.operation.name``.

pydantic-ai 1.0 names its spans ``agent run``, ``running tools`` (a wrapper) and ``running
tool``; the attributes are GenAI's plus its own (``agent_name``, ``final_result``,
``tool_arguments`` / ``tool_response``), which the GenAI reader reads as fallbacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

PYDANTIC_AI_SPANS: Final[Mapping[str, str]] = {
    "agent run": "agent_run",
    "running tool": "tool_call",
}
"""Span name → span type; ``running tools`` stays a generic wrapper span."""
