"""OTLP log records joined to the spans they belong to (message content in the logs signal).

The official OpenAI instrumentation (and pydantic-ai's event mode) writes message content as
log records rather than span attributes: one record per message in the older conventions
(``gen_ai.system.message`` / ``gen_ai.user.message`` / ``gen_ai.assistant.message`` /
``gen_ai.tool.message``, and ``gen_ai.choice`` for the answer), or one
``gen_ai.client.inference.operation.details`` record per model call holding
``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions``.
Each record names its span by trace and span id; the join gives that span the attributes the
GenAI reader reads, and reads it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from scorecore._core._reprs import short_repr
from scorecore.traces._otlp._assembly import complete
from scorecore.traces._otlp._values import Malformed, any_value, field, hex_id, key_values
from scorecore.traces._otlp.conventions.genai import read_genai
from scorecore.traces._otlp.conventions.genai_events import (
    CHOICE,
    DETAILS,
    INPUT_EVENTS,
    event_attributes,
)
from scorecore.traces._spans import Span, Trace, TraceError

LogIndex = dict[tuple[str, str], list[dict[str, Any]]]
"""(trace id, span id) → that span's records (``event``, ``body``, ``attributes``), in order."""


def log_records(payload: object, where: str) -> Iterator[tuple[str, str, dict[str, Any]]
                                                          | TraceError]:
    """Every GenAI log record of one OTLP/JSON ``ExportLogsServiceRequest`` as (trace id,
    span id, record); a record that cannot be read, or a payload that is not a logs request,
    as a TraceError naming it. Records of other events are skipped."""
    resources = field(payload, "resourceLogs") if isinstance(payload, Mapping) else None
    if not isinstance(resources, list):
        yield TraceError(kind="invalid_otlp", message=(
            f"{where}: resourceLogs: required, a list (is this a logs file?), "
            f"got {short_repr(resources)}"))
        return
    for resource in resources:
        scopes = field(resource, "scopeLogs") if isinstance(resource, Mapping) else None
        for scope in scopes if isinstance(scopes, list) else []:
            records = field(scope, "logRecords") if isinstance(scope, Mapping) else None
            for index, raw in enumerate(records if isinstance(records, list) else []):
                try:
                    found = _record(raw)
                except Malformed as exc:
                    yield TraceError(kind="invalid_otlp",
                                     message=f"{where}: log record {index}: {exc}")
                    continue
                if found is not None:
                    yield found


def _record(raw: object) -> tuple[str, str, dict[str, Any]] | None:
    if not isinstance(raw, Mapping):
        raise Malformed("record", f"must be an object, got {short_repr(raw)}")
    attributes = key_values(raw.get("attributes"), "attributes")
    event = field(raw, "eventName") or attributes.get("event.name")
    if not isinstance(event, str) or (event not in (DETAILS, CHOICE)
                                      and event not in INPUT_EVENTS):
        return None
    trace_id = hex_id(raw, "traceId", required=True)
    span_id = hex_id(raw, "spanId", required=True)
    body = raw.get("body")
    return (str(trace_id), str(span_id),
            {"event": event, "attributes": attributes,
             "body": any_value(body, "body") if isinstance(body, Mapping) else None})


def join_logs(trace: Trace, index: LogIndex) -> Trace | TraceError:
    """``trace`` with the records of ``index`` that belong to its spans read into them (the
    records are removed from ``index``); a record whose span is not in the trace fails it."""
    trace_id = trace.trace_id or ""
    mine = {key: index.pop(key) for key in [k for k in index if k[0] == trace_id]}
    if not mine:
        return trace
    spans = {s.span_id: s for s in trace.spans}
    missing = sorted(span_id for _, span_id in mine if span_id not in spans)
    if missing:
        return TraceError(kind="span_not_found", trace_id=trace_id, span_id=missing[0], message=(
            f"trace {trace_id}: log records point at span(s) {', '.join(missing)} that are "
            f"not in the trace file"))
    changed: dict[str, Span] = {}
    for (_, span_id), records in mine.items():
        span = spans[span_id]
        if span.span_type not in ("model_generation", "agent_run"):
            continue
        attributes = {**(span.attributes or {}), **event_attributes(records)}
        try:
            mapped = read_genai(span.span_type, attributes)
        except Malformed as exc:
            return TraceError(kind="invalid_span", trace_id=trace_id, span_id=span_id,
                              message=f"span {span_id}: its log records: {exc}")
        extra_attributes = mapped.pop("mastra_attributes", {})
        keep = {k: v for k, v in mapped.items()
                if v is not None and k in ("input", "output")}
        changed[span_id] = attrs.evolve(span, attributes={**attributes, **extra_attributes},
                                        **keep)
    joined = attrs.evolve(trace, spans=[changed.get(s.span_id, s) for s in trace.spans])
    return complete(joined)
