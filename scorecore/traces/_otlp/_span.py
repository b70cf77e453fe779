"""One OTLP/JSON span as a :class:`~scorecore.traces.Span`, and every span of a request."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, Final, cast

from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore.traces._otlp._values import (
    Malformed,
    field,
    hex_id,
    key_values,
    text_or_none,
    timestamp,
)
from scorecore.traces._otlp.conventions import GENERIC, classify
from scorecore.traces._spans import Span, TraceError

_ERROR_CODES: Final = frozenset({2, "2", "STATUS_CODE_ERROR"})


def _span(raw: object, resource: Mapping[str, object], scope: Mapping[str, object]) -> Span:
    if not isinstance(raw, Mapping):
        raise Malformed("span", f"must be an object, got {short_repr(raw)}")
    span_id = hex_id(raw, "spanId", required=True)
    trace_id = hex_id(raw, "traceId", required=True)
    parent = hex_id(raw, "parentSpanId", required=False)
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise Malformed("name", f"must be a string, got {short_repr(name)}")
    attributes = key_values(raw.get("attributes"), "attributes")
    span_type, convention = classify(attributes, name or "")
    mapped: dict[str, Any] = {}
    if convention is not None and span_type != GENERIC:
        mapped = convention.read(span_type, attributes, name or "")
    events = raw.get("events") or []
    if not isinstance(events, list):
        raise Malformed("events", f"must be a list, got {short_repr(events)}")
    status = raw.get("status") or {}
    if not isinstance(status, Mapping):
        raise Malformed("status", f"must be an object, got {short_repr(status)}")
    code = status.get("code")
    failed = isinstance(code, int | str) and code in _ERROR_CODES
    error = None
    if failed:
        error = {"message": _error_text(status, events, mapped.get("output")),
                 "type": text_or_none(attributes.get("error.type")) or "error"}
    span_attributes: dict[str, object] = dict(attributes)
    span_attributes.update(mapped.pop("mastra_attributes", {}))
    if span_type == "tool_call":
        span_attributes["success"] = not failed
    extra: dict[str, object] = {
        "otel": {"kind": raw.get("kind"),
                 "convention": None if convention is None else convention.name,
                 "resource": resource, "scope": scope,
                 "events": [{"name": e.get("name"),
                             "attributes": key_values(e.get("attributes"),
                                                       f"events[{i}].attributes")}
                            for i, e in enumerate(events) if isinstance(e, Mapping)]},
    }
    return Span(
        span_id=cast(str, span_id), span_type=span_type, trace_id=trace_id,
        parent_span_id=parent, name=name,
        started_at=cast(datetime, timestamp(raw, "startTimeUnixNano", required=True)),
        ended_at=timestamp(raw, "endTimeUnixNano", required=False),
        error=error, attributes=span_attributes, extra=extra, **mapped,
    )


def _error_text(status: Mapping[str, object], events: list[object], output: object) -> str:
    """What a failed span says went wrong: the text it returned (a tool's error reply, as
    pydantic-ai records it), else its exception event's message, else its status message."""
    if isinstance(output, str) and output.strip():
        return output
    for event in events:
        if isinstance(event, Mapping) and event.get("name") == "exception":
            found = key_values(event.get("attributes"), "events.attributes")
            message = found.get("exception.message")
            if isinstance(message, str) and message.strip():
                return message
    message = status.get("message")
    return message if isinstance(message, str) else ""


def _scope_name(scope_spans: Mapping[str, object]) -> dict[str, object]:
    scope = scope_spans.get("scope") or {}
    if not isinstance(scope, Mapping):
        return {}
    return {k: scope[k] for k in ("name", "version") if isinstance(scope.get(k), str)}


def spans_of(payload: object) -> Iterator[Result[Span, TraceError]]:
    """Every span of one OTLP/JSON request, in file order; a malformed one as a TraceError."""
    if not isinstance(payload, Mapping):
        yield Failure(TraceError(kind="invalid_otlp", message=(
            f"an OTLP trace request must be an object, got {short_repr(payload)}")))
        return
    resource_spans = field(payload, "resourceSpans")
    if resource_spans is None and field(payload, "resourceLogs") is not None:
        yield Failure(TraceError(kind="invalid_otlp", message=(
            "this is an OTLP logs request, not a trace request: give the trace file, and "
            "this file with --logs")))
        return
    if not isinstance(resource_spans, list):
        yield Failure(TraceError(kind="invalid_otlp", message=(
            f"resourceSpans: required, a list, got {short_repr(resource_spans)}")))
        return
    for r_index, entry in enumerate(resource_spans):
        where = f"resourceSpans[{r_index}]"
        if not isinstance(entry, Mapping):
            yield Failure(TraceError(kind="invalid_otlp",
                                     message=f"{where}: must be an object"))
            continue
        try:
            resource_json = entry.get("resource") or {}
            resource = key_values(
                resource_json.get("attributes") if isinstance(resource_json, Mapping) else None,
                f"{where}.resource.attributes")
        except Malformed as exc:
            yield Failure(TraceError(kind="invalid_otlp", message=str(exc)))
            continue
        scope_spans = field(entry, "scopeSpans") or []
        if not isinstance(scope_spans, list):
            yield Failure(TraceError(kind="invalid_otlp",
                                     message=f"{where}.scopeSpans: must be a list"))
            continue
        for s_index, group in enumerate(scope_spans):
            spans = field(group, "spans") if isinstance(group, Mapping) else None
            if not isinstance(spans, list):
                yield Failure(TraceError(kind="invalid_otlp", message=(
                    f"{where}.scopeSpans[{s_index}].spans: must be a list")))
                continue
            scope = _scope_name(cast(Mapping[str, object], group))
            for index, raw in enumerate(spans):
                try:
                    yield Success(_span(raw, resource, scope))
                except Malformed as exc:
                    yield Failure(_span_error(raw, f"{where}.scopeSpans[{s_index}]"
                                                   f".spans[{index}]", exc))


def _span_error(raw: object, where: str, exc: Malformed) -> TraceError:
    span_id = raw.get("spanId", raw.get("span_id")) if isinstance(raw, Mapping) else None
    trace_id = raw.get("traceId", raw.get("trace_id")) if isinstance(raw, Mapping) else None
    name = raw.get("name") if isinstance(raw, Mapping) else None
    label = f"span {span_id}" if isinstance(span_id, str) and span_id else where
    if isinstance(name, str) and name:
        label += f" ({name!r})"
    return TraceError(
        kind="invalid_span", message=f"{label}: {exc}",
        trace_id=trace_id if isinstance(trace_id, str) and trace_id else None,
        span_id=span_id if isinstance(span_id, str) and span_id else None,
    )

