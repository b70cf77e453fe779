"""The trajectory of a recorded trace: its spans as nested trajectory steps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, get_args

from returns.result import Failure, Result, Success

from scorecore.agent import StepType, Trajectory, TrajectoryStep
from scorecore.traces._spans import Span, Trace, TraceError, TraceLike, _utc

__all__ = ["extract_trajectory_from_trace"]

_STEP_TYPES: Final[frozenset[str]] = frozenset(get_args(StepType))
"""Span types that become steps; any other span (scorer runs, model chunks, generic spans …)
is skipped and its children move up to its parent."""

_MAX_NESTING: Final = 64
"""Steps nest at most this deep; the spans below are listed flat inside the deepest step (a
trace nested thousands deep must not exhaust the stack here or in whatever reads the steps)."""

_TOOLS: Final = frozenset({"tool_call", "provider_tool_call", "mcp_tool_call"})


def _seconds(span: Span) -> float | None:
    if span.ended_at is None:
        return None
    seconds = (_utc(span.ended_at) - _utc(span.started_at)).total_seconds()
    return seconds if seconds >= 0 else None


def _wrapped(value: object) -> object:
    if value is None or isinstance(value, Mapping):
        return value
    return {"value": value}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _fields(span: Span) -> dict[str, Any]:
    attributes: Mapping[str, object] = span.attributes or {}
    kind = span.span_type
    if kind in _TOOLS:
        success = attributes.get("success")
        fields: dict[str, Any] = {
            "tool_args": _wrapped(span.input), "tool_result": _wrapped(span.output),
            "success": success if isinstance(success, bool) else None,
        }
        if kind == "mcp_tool_call":
            fields["mcp_server"] = _str(attributes.get("mcpServer"))
        return fields
    if kind == "model_generation":
        usage = attributes.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        return {"model_id": _str(attributes.get("model")),
                "prompt_tokens": _int(usage.get("inputTokens")),
                "completion_tokens": _int(usage.get("outputTokens")),
                "finish_reason": _str(attributes.get("finishReason"))}
    if kind == "agent_run":
        return {"agent_id": span.entity_id}
    if kind == "workflow_run":
        return {"workflow_id": span.entity_id}
    if kind == "workflow_step":
        return {"step_id": span.name, "output": _wrapped(span.output)}
    return {}


def _name(span: Span) -> str:
    if span.span_type in _TOOLS:
        return span.entity_id or span.entity_name or span.name or span.span_type
    return span.name or span.span_type


def extract_trajectory_from_trace(
    trace: TraceLike, root_span_id: str | None = None
) -> Result[Trajectory, TraceError]:
    """The spans of a recorded trace as a nested trajectory (Mastra's
    ``extractTrajectoryFromTrace``).

    Spans form a tree through their parent ids (a span whose parent is unknown is a root);
    children are ordered by start time, roots kept in input order. The trajectory starts at
    ``root_span_id`` if that span exists, else at every root; a single ``agent_run`` or
    ``workflow_run`` root is unwrapped to its children. Spans of other kinds than the step
    types (scorer runs, model chunks, generic spans …) are skipped and their children move up.
    Tool spans are named after their entity and carry the span's input and output as
    ``tool_args``/``tool_result`` (non-objects wrapped as ``{"value": x}``) and ``success``
    from a boolean ``attributes.success``; model generations carry ``attributes.model`` and
    ``attributes.usage`` tokens. ``total_duration`` is set for a single starting span.

    Returns:
        ``Success(Trajectory)``, or ``Failure(TraceError)`` when the trace is not a valid
        trace (``null_trace``, ``no_spans_array``, ``invalid_span``).

    >>> trace = {"traceId": "t", "spans": [
    ...     {"spanId": "a", "spanType": "agent_run", "name": "agent",
    ...      "startedAt": "2025-01-01T00:00:00Z", "endedAt": "2025-01-01T00:00:03Z"},
    ...     {"spanId": "s", "parentSpanId": "a", "spanType": "tool_call", "name": "tool: search",
    ...      "entityId": "search", "startedAt": "2025-01-01T00:00:01Z", "input": {"q": "x"}},
    ... ]}
    >>> trajectory = extract_trajectory_from_trace(trace).unwrap()
    >>> trajectory.tool_names, trajectory.steps[0].tool_args, trajectory.total_duration
    (('search',), {'q': 'x'}, 3.0)
    """
    structured = Success(trace) if isinstance(trace, Trace) else Trace.from_mastra_json(trace)
    if isinstance(structured, Failure):
        return Failure(structured.failure())
    valid = structured.unwrap()
    spans = valid.spans
    ids = {s.span_id for s in spans}
    children: dict[str, list[Span]] = {}
    roots: list[Span] = []
    for span in spans:
        parent = span.parent_span_id
        if parent is not None and parent in ids and parent != span.span_id:
            children.setdefault(parent, []).append(span)
        else:
            roots.append(span)
    for siblings in children.values():
        siblings.sort(key=lambda s: _utc(s.started_at))
    seen: set[str] = set()

    def flat(nodes: list[Span]) -> list[Span]:
        # every span below, in order, without recursion (for a tree nested too deep)
        out: list[Span] = []
        stack = list(reversed(nodes))
        while stack:
            node = stack.pop()
            if node.span_id not in seen:
                seen.add(node.span_id)
                out.append(node)
                stack.extend(reversed(children.get(node.span_id, [])))
        return out

    def steps_of(nodes: list[Span], depth: int = 0) -> list[TrajectoryStep]:
        steps: list[TrajectoryStep] = []
        if depth >= _MAX_NESTING:
            return [TrajectoryStep(name=_name(n), step_type=n.span_type,  # type: ignore[arg-type]
                                   duration=_seconds(n), metadata=n.metadata, **_fields(n))
                    for n in flat(nodes) if n.span_type in _STEP_TYPES]
        for node in nodes:
            if node.span_id in seen:  # a parent cycle: each span is visited once
                continue
            seen.add(node.span_id)
            inner = steps_of(children.get(node.span_id, []), depth + 1)
            if node.span_type not in _STEP_TYPES:
                steps.extend(inner)
                continue
            kind: StepType = node.span_type  # type: ignore[assignment]  # checked above
            steps.append(TrajectoryStep(
                name=_name(node), step_type=kind, duration=_seconds(node),
                metadata=node.metadata, children=tuple(inner), **_fields(node),
            ))
        return steps

    start = valid.span(root_span_id) if root_span_id is not None else None
    targets = [start] if start is not None else roots
    total = _seconds(targets[0]) if len(targets) == 1 else None
    if len(targets) == 1 and targets[0].span_type in ("agent_run", "workflow_run"):
        seen.add(targets[0].span_id)
        found = steps_of(children.get(targets[0].span_id, []))
    else:
        found = steps_of(targets)
    return Success(Trajectory(steps=tuple(found), total_duration=total))
