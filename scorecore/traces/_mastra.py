"""The Mastra transform: a recorded agent trace → the agent run an agent scorer receives.

:func:`trace_to_agent_run` follows Mastra's ``transformTraceToScorerInputAndOutput``. Other
trace formats get their own transform module next to this one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, cast

from returns.result import Failure, Result, Success

from scorecore._core._agent import (
    MESSAGE_ROLES,
    AgentInput,
    AgentMessage,
    AgentOutput,
    MessageContent,
    MessagePart,
    SystemMessage,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore.traces._spans import Span, TraceError, TraceLike, _as_trace, _utc
from scorecore.validators import is_number

__all__ = ["trace_to_agent_run"]



def _sorted(spans: Iterable[Span]) -> list[Span]:
    return sorted(spans, key=lambda s: _utc(s.started_at))



def _js_falsy(value: object) -> bool:
    # Mastra tests `!value` and `value || {}`: JavaScript falsiness, where {} and [] are truthy.
    if value is None or value is False or value == "":
        return True
    if is_number(value):
        return value == 0 or (isinstance(value, float) and math.isnan(value))
    return False


def _normalize_content(content: object) -> str:
    """A message's text: a string as is; for a list of parts, the last text part's text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        texts = [p.get("text") for p in content
                 if isinstance(p, Mapping) and p.get("type") == "text"
                 and isinstance(p.get("text"), str)]
        return cast(str, texts[-1]) if texts else ""
    return ""


def _raw_messages(value: object) -> list[Mapping[str, Any]]:
    if isinstance(value, Mapping):
        value = value.get("messages")
    if not isinstance(value, list | tuple):
        return []
    return [m for m in value
            if isinstance(m, Mapping) and isinstance(m.get("role"), str) and "content" in m]


def _message(role: str, text: str, created_at: datetime) -> AgentMessage:
    return AgentMessage(
        id="", role=cast(Any, role), created_at=created_at,
        content=MessageContent(format=2, parts=(TextPart(text=text),), content=text),
    )


def _below(root: Span, spans: Iterable[Span]) -> list[Span]:
    """The root's children, and the spans under its ``generic`` children (wrapper spans an
    OpenTelemetry instrumentation puts around tool calls, e.g. ``running tools``; Mastra's own
    spans are never generic, so its traces read as before). Each span at most once."""
    children: dict[str | None, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    found: list[Span] = []
    seen = {root.span_id}
    stack = list(children.get(root.span_id, []))
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        found.append(span)
        if span.span_type == "generic":
            stack.extend(children.get(span.span_id, []))
    return found


def _invocation(span: Span) -> ToolInvocation:
    """One tool span as a tool call; a span that recorded an error is a failed call, its
    error's message the error text."""
    message = span.error.get("message") if isinstance(span.error, Mapping) else None
    failed = span.error is not None and span.error is not False
    return ToolInvocation(
        tool_call_id=span.span_id,
        tool_name=span.entity_name or span.entity_id or "unknown",
        tool_id=span.entity_id,
        args={} if _js_falsy(span.input) else span.input,
        result={} if _js_falsy(span.output) else span.output,
        state="result",
        is_error=True if failed else None,
        error_text=(message if isinstance(message, str) and message
                    else str(span.error) if failed and not isinstance(span.error, Mapping)
                    else None),
    )


def trace_to_agent_run(trace: TraceLike) -> Result[tuple[AgentInput, AgentOutput], TraceError]:
    """Turn a recorded agent trace into the input and output an agent scorer receives.

    Follows Mastra's ``transformTraceToScorerInputAndOutput``: the root ``agent_run`` span's
    input gives the input messages, its first direct ``model_generation`` child gives the
    system and remembered messages, and the output is one assistant message holding a
    tool-invocation part per direct ``tool_call`` child, then the text of ``output.text``.
    Children of ``generic`` wrapper spans count as the root's children (OpenTelemetry
    instrumentations wrap tool calls in such spans), and a tool span that recorded an
    ``error`` is a failed call (``is_error=True``, its message as ``error_text``).
    Messages with a role other than user/assistant/system/signal are skipped.

    Returns:
        ``Success((AgentInput, AgentOutput))``, or ``Failure(TraceError)`` for a ``None``
        trace, no ``spans`` array, no spans, a span whose parent is missing, no root
        ``agent_run`` span, a root span without output, or no ``model_generation`` child.

    >>> trace = {"traceId": "t1", "spans": [
    ...     {"spanId": "a", "spanType": "agent_run", "startedAt": "2025-01-01T00:00:00Z",
    ...      "input": "Weather in Paris?", "output": {"text": "Sunny."}},
    ...     {"spanId": "m", "parentSpanId": "a", "spanType": "model_generation",
    ...      "startedAt": "2025-01-01T00:00:01Z",
    ...      "input": {"messages": [{"role": "system", "content": "Be brief."}]}},
    ... ]}
    >>> agent_input, output = trace_to_agent_run(trace).unwrap()
    >>> agent_input.input_messages[0].text(), agent_input.system_messages[0].content
    ('Weather in Paris?', 'Be brief.')
    >>> output[0].text()
    'Sunny.'
    >>> trace_to_agent_run({"spans": []}).failure().message
    'Trace has no spans'
    """
    structured = _as_trace(trace)
    if isinstance(structured, Failure):
        return Failure(structured.failure())
    valid = structured.unwrap()
    trace_id = valid.trace_id
    if not valid.spans:
        return Failure(TraceError(kind="no_spans", message="Trace has no spans",
                                  trace_id=trace_id))
    ids = {s.span_id for s in valid.spans}
    for span in valid.spans:
        if span.parent_span_id is not None and span.parent_span_id not in ids:
            return Failure(TraceError(
                kind="dangling_parent", trace_id=trace_id, span_id=span.span_id,
                message=f"Span {span.span_id} references non-existent parent "
                        f"{span.parent_span_id}",
            ))
    roots = _sorted(s for s in valid.spans if s.parent_span_id is None)
    root = next((s for s in roots if s.span_type == "agent_run"), None)
    if root is None:
        return Failure(TraceError(kind="no_root_agent_span", trace_id=trace_id,
                                  message="No root agent_run span found in trace"))
    if _js_falsy(root.output):
        return Failure(TraceError(kind="no_agent_output", trace_id=trace_id,
                                  span_id=root.span_id, message="Root agent span has no output"))
    children = _sorted(_below(root, valid.spans))
    llm = next((s for s in children if s.span_type == "model_generation"), None)
    if llm is None:
        return Failure(TraceError(kind="no_model_span", trace_id=trace_id, span_id=root.span_id,
                                  message="No model generation span found in trace"))

    root_input = root.input
    if isinstance(root_input, str):
        input_messages = [_message("user", root_input, root.started_at)]
    else:
        input_messages = [
            _message(m["role"], _normalize_content(m["content"]), root.started_at)
            for m in _raw_messages(root_input) if m["role"] in MESSAGE_ROLES
        ]
    first_text = input_messages[0].content.content if input_messages else None
    llm_messages = [m for m in _raw_messages(llm.input) if m["role"] in MESSAGE_ROLES]
    system_messages = tuple(
        SystemMessage(content=_normalize_content(m["content"]))
        for m in llm_messages if m["role"] == "system"
    )
    remembered = tuple(
        _message(m["role"], text, llm.started_at)
        for m in llm_messages
        if m["role"] != "system" and (text := _normalize_content(m["content"])) != first_text
    )
    invocations = tuple(_invocation(s) for s in children if s.span_type == "tool_call")
    text_value = root.output.get("text") if isinstance(root.output, Mapping) else None
    text = text_value if isinstance(text_value, str) else ""
    parts: list[MessagePart] = [ToolInvocationPart(tool_invocation=i) for i in invocations]
    if text.strip():
        parts.append(TextPart(text=text))
    answer = AgentMessage(
        id="", role="assistant", created_at=root.ended_at or root.started_at,
        content=MessageContent(format=2, parts=tuple(parts), content=text,
                               tool_invocations=invocations),
    )
    agent_input = AgentInput(
        input_messages=tuple(input_messages), remembered_messages=remembered,
        system_messages=system_messages, tagged_system_messages={},
    )
    return Success((agent_input, (answer,)))
