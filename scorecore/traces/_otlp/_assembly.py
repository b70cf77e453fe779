"""Spans into traces: duplicate span ids, the agent fill-in, and one trace per agent root."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from scorecore.traces._otlp._values import maybe_json
from scorecore.traces._spans import Span, Trace, _utc


def merge_span(spans: dict[str, Span], span: Span) -> str | None:
    """Add ``span`` to a trace's spans by id; why it cannot be, or ``None``.

    A span delivered twice (an exporter's retry, a file concatenated with itself) is the same
    span: the copy is dropped. Two different spans under one id make the trace unreadable
    (its tree cannot be known), which is said rather than guessed.
    """
    known = spans.get(span.span_id)
    if known is None:
        spans[span.span_id] = span
        return None
    if known == span:
        return None
    return (f"span id {span.span_id} is used by two different spans "
            f"({known.name!r} and {span.name!r})")


def _last_user_message(value: object) -> list[object] | None:
    messages = value.get("messages") if isinstance(value, Mapping) else None
    if not isinstance(messages, list):
        return None
    users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    return [users[-1]] if users else None


def complete(trace: Trace) -> Trace:
    """Fill an agent span's missing input or output from its model calls.

    An agent span that does not record its messages (content capture off, or an
    instrumentation that keeps them on the model spans) gets as input the last user message
    of its first model call (the earlier messages of that call are the conversation so far,
    which the agent run lists as remembered messages) and as output its last model call's
    text. Model calls are the agent's direct children or are reached through generic wrapper
    spans. Linear in the number of spans.
    """
    trace = _tool_calls_from_messages(trace)
    if not any(s.span_type == "agent_run" and (s.input is None or s.output is None)
               for s in trace.spans):
        return trace
    children: dict[str | None, list[Span]] = {}
    for span in trace.spans:
        children.setdefault(span.parent_span_id, []).append(span)
    replaced: dict[str, Span] = {}
    for agent in trace.spans:
        if agent.span_type != "agent_run" or (agent.input is not None
                                              and agent.output is not None):
            continue
        models = sorted(under(agent, children, "model_generation"),
                        key=lambda s: _utc(s.started_at))
        if not models:
            continue
        changes: dict[str, Any] = {}
        if agent.input is None:
            changes["input"] = _last_user_message(models[0].input)
        last = next((s.output for s in reversed(models) if s.output is not None), None)
        if agent.output is None and last is not None:
            changes["output"] = last
        if changes:
            replaced[agent.span_id] = attrs.evolve(agent, **changes)
    if not replaced:
        return trace
    return attrs.evolve(trace, spans=[replaced.get(s.span_id, s) for s in trace.spans])


def _tool_calls_from_messages(trace: Trace) -> Trace:
    """Tool spans without arguments or result get them from the model calls' messages, by
    tool call id: an instrumentation that keeps content off its tool spans (the official
    OpenAI one in ``event_only`` mode) still records the call in the model's answer and the
    result in the next call's input."""
    wanting = [s for s in trace.spans if s.span_type == "tool_call"
               and (s.input is None or s.output is None)
               and isinstance((s.attributes or {}).get("gen_ai.tool.call.id"), str)]
    if not wanting:
        return trace
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    for span in trace.spans:
        if span.span_type != "model_generation":
            continue
        asked = (span.attributes or {}).get("toolCalls")
        messages = span.input.get("messages") if isinstance(span.input, Mapping) else None
        for message in [*(messages if isinstance(messages, list) else []),
                        {"toolCalls": asked if isinstance(asked, list) else []}]:
            if not isinstance(message, Mapping):
                continue
            for call in message.get("toolCalls", []):
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    arguments.setdefault(call["id"], call.get("arguments"))
            for found in message.get("toolResults", []):
                if isinstance(found, Mapping) and isinstance(found.get("id"), str):
                    results.setdefault(found["id"], found.get("result"))
    changed: dict[str, Span] = {}
    for span in wanting:
        call_id = (span.attributes or {})["gen_ai.tool.call.id"]
        if not isinstance(call_id, str):  # kept by the filter above; narrowed for the checker
            continue
        changes: dict[str, Any] = {}
        if span.input is None and arguments.get(call_id) is not None:
            changes["input"] = maybe_json(arguments[call_id])
        if span.output is None and results.get(call_id) is not None and span.error is None:
            changes["output"] = maybe_json(results[call_id])
        if changes:
            changed[span.span_id] = attrs.evolve(span, **changes)
    if not changed:
        return trace
    return attrs.evolve(trace, spans=[changed.get(s.span_id, s) for s in trace.spans])


def under(
    parent: Span, children: Mapping[str | None, list[Span]], span_type: str
) -> list[Span]:
    """The spans of ``span_type`` below ``parent``: its children, and those under generic
    wrapper spans (``running tools`` → ``running tool``); each span at most once."""
    found: list[Span] = []
    seen = {parent.span_id}
    stack = list(reversed(children.get(parent.span_id, [])))
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        if span.span_type == span_type:
            found.append(span)
        elif span.span_type == "generic":
            stack.extend(reversed(children.get(span.span_id, [])))
    return found


def agent_traces(trace: Trace) -> tuple[Trace, ...]:
    """One trace per agent root span: the subtree of each ``agent_run`` span that has no
    ``agent_run`` ancestor, with that span made the root.

    An agent is often not the root of its OpenTelemetry trace (an HTTP server span, a
    workflow or a ``CHAIN`` span sits above it); :func:`~scorecore.traces.trace_to_agent_run`
    scores the root agent span, so each agent gets its own trace. The span it hung from is
    kept in its ``extra["otel"]["parentSpanId"]``. Nested agents stay inside their caller's
    subtree.

    >>> from datetime import datetime
    >>> t0 = datetime(2025, 1, 1)
    >>> spans = [Span(span_id="http", span_type="generic", started_at=t0),
    ...          Span(span_id="a", span_type="agent_run", parent_span_id="http", started_at=t0),
    ...          Span(span_id="m", span_type="model_generation", parent_span_id="a",
    ...               started_at=t0)]
    >>> [(s.span_id, s.parent_span_id) for s in agent_traces(Trace(spans=spans))[0].spans]
    [('a', None), ('m', 'a')]
    """
    children: dict[str | None, list[Span]] = {}
    for span in trace.spans:
        children.setdefault(span.parent_span_id, []).append(span)
    ids = {s.span_id for s in trace.spans}
    roots = [s for s in trace.spans if s.parent_span_id is None or s.parent_span_id not in ids]
    # Each span id is visited once: a span id used twice, or parents forming a cycle, cannot
    # make the walk loop, and the whole function stays linear in the number of spans.
    seen: set[str] = set()
    found: list[Span] = []
    stack = list(reversed(roots))
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        if span.span_type == "agent_run":
            found.append(span)
            continue
        stack.extend(reversed(children.get(span.span_id, [])))
    out: list[Trace] = []
    for agent in found:
        if agent.parent_span_id is None:
            subtree = [agent]
        else:
            kept = agent.extra.get("otel")
            otel: dict[str, object] = dict(kept) if isinstance(kept, Mapping) else {}
            otel["parentSpanId"] = agent.parent_span_id
            subtree = [attrs.evolve(agent, parent_span_id=None,
                                    extra={**agent.extra, "otel": otel})]
        queue = [agent.span_id]
        while queue:
            for child in children.get(queue.pop(), []):
                if child.span_id in seen:
                    continue
                seen.add(child.span_id)
                subtree.append(child)
                queue.append(child.span_id)
        if len(subtree) == len(trace.spans) and agent.parent_span_id is None:
            out.append(trace)
        else:
            out.append(Trace(spans=subtree, trace_id=trace.trace_id))
    return tuple(out)
