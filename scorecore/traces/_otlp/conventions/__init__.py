"""The conventions an OTLP span is read by, one module each, and the table that orders them.

A span is read by the first convention of :data:`CONVENTIONS` that recognises it: OpenInference
first (a span carrying both OpenInference and GenAI attributes, as OpenInference writes with
``OPENINFERENCE_ENABLE_GENAI_SEMCONV``, keeps its agent name and tool arguments there), then
the GenAI operation name, then pydantic-ai 1.x's span names, OpenLLMetry/Traceloop's span kind
and request type, and the Vercel AI SDK's operation id. A span none recognises is
``generic``. The older GenAI attributes (``gen_ai.prompt`` …, OpenLIT and OpenLLMetry) are
read by the GenAI reader as fallbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, final

import attrs

from scorecore.traces._otlp.conventions.genai_current import GENAI_OPERATIONS, read_genai
from scorecore.traces._otlp.conventions.openinference import (
    OPENINFERENCE_KINDS,
    read_openinference,
)
from scorecore.traces._otlp.conventions.pydantic_ai import PYDANTIC_AI_SPANS
from scorecore.traces._otlp.conventions.traceloop import (
    LLM_REQUEST_TYPES,
    TRACELOOP_KINDS,
    read_traceloop,
)
from scorecore.traces._otlp.conventions.vercel_ai import VERCEL_AI_OPERATIONS, read_vercel_ai

GENERIC: Final = "generic"


@final
@attrs.frozen(kw_only=True)
class Convention:
    """One way of writing agent spans: how it is recognised and how a span is read."""

    name: str
    """As ``--explain`` and ``extra["otel"]["convention"]`` show it."""
    key: str | None
    """The attribute naming the span's kind, or ``None``: the span's name does."""
    kinds: Mapping[str, str]
    """That attribute's (upper-cased for OpenInference) or the name's value → span type."""
    read: Callable[[str, Mapping[str, object], str], dict[str, object]]
    """(span type, attributes, span name) → the Span fields it fills."""
    upper: bool = False


CONVENTIONS: Final[tuple[Convention, ...]] = (
    Convention(name="openinference", key="openinference.span.kind", kinds=OPENINFERENCE_KINDS,
               read=read_openinference, upper=True),
    Convention(name="genai", key="gen_ai.operation.name", kinds=GENAI_OPERATIONS,
               read=read_genai),
    Convention(name="pydantic-ai", key=None, kinds=PYDANTIC_AI_SPANS, read=read_genai),
    Convention(name="traceloop", key="traceloop.span.kind", kinds=TRACELOOP_KINDS,
               read=read_traceloop),
    Convention(name="openllmetry", key="llm.request.type", kinds=LLM_REQUEST_TYPES,
               read=read_traceloop),
    Convention(name="vercel-ai", key="ai.operationId", kinds=VERCEL_AI_OPERATIONS,
               read=read_vercel_ai),
)


def classify(attributes: Mapping[str, object], name: str) -> tuple[str, Convention | None]:
    """The span type and the convention that recognised the span (``None``: none did)."""
    for convention in CONVENTIONS:
        value = attributes.get(convention.key) if convention.key is not None else name
        if not isinstance(value, str) or (convention.key is None and value not in
                                          convention.kinds):
            continue
        return convention.kinds.get(value.upper() if convention.upper else value,
                                    GENERIC), convention
    return GENERIC, None
