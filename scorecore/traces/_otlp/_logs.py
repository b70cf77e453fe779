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

from collections.abc import Iterable, Iterator, Mapping
from typing import final

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore.traces._otlp._assembly import complete
from scorecore.traces._otlp._read import json_lines
from scorecore.traces._otlp._values import Malformed, any_value, field, hex_id, key_values
from scorecore.traces._otlp.conventions.genai_current import read_genai
from scorecore.traces._otlp.conventions.genai_events import (
    CHOICE,
    DETAILS,
    INPUT_EVENTS,
    event_attributes,
)
from scorecore.traces._spans import Span, Trace, TraceError

__all__ = ["OtlpLogs", "join_otlp_logs", "read_otlp_log_lines", "read_otlp_logs"]

@final
@attrs.frozen(kw_only=True)
class OtlpLogs:
    """The GenAI log records of an OTLP logs file, by trace and span id, and the records or
    requests that could not be read (see :func:`read_otlp_logs`).

    Attributes:
        records: trace id → span id → that span's records, in file order; a record is
            ``{"event", "body", "attributes"}`` (a record delivered twice is kept once).
        errors: one ``invalid_otlp`` :class:`TraceError` per record or request that could
            not be read, naming where it was.
    """

    records: Mapping[str, Mapping[str, tuple[Mapping[str, object], ...]]]
    errors: tuple[TraceError, ...] = ()


def read_otlp_logs(requests: Iterable[tuple[str, object]]) -> OtlpLogs:
    """The GenAI log records of a sequence of OTLP/JSON ``ExportLogsServiceRequest`` payloads,
    each with where it was read (``"line 3"``; an item that is already a ``TraceError`` is
    kept as an error). Records of other events are skipped; never raises.

    >>> record = {"traceId": "0a", "spanId": "0b", "eventName": "gen_ai.user.message",
    ...           "body": {"kvlistValue": {"values": [
    ...               {"key": "content", "value": {"stringValue": "Hi"}}]}}}
    >>> request = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    >>> logs = read_otlp_logs([("line 1", request), ("line 2", {"x": 1})])
    >>> logs.records["0a"]["0b"][0]["body"], logs.errors[0].message[:30]
    ({'content': 'Hi'}, 'line 2: resourceLogs: required')
    """
    found: dict[str, dict[str, list[Mapping[str, object]]]] = {}
    errors: list[TraceError] = []
    for where, payload in requests:
        if isinstance(payload, TraceError):
            errors.append(payload)
            continue
        for item in _log_records(payload, where):
            if isinstance(item, TraceError):
                errors.append(item)
                continue
            trace_id, span_id, record = item
            kept = found.setdefault(trace_id, {}).setdefault(span_id, [])
            if record not in kept:
                kept.append(record)
    return OtlpLogs(records={t: {s: tuple(r) for s, r in spans.items()}
                             for t, spans in found.items()}, errors=tuple(errors))


def read_otlp_log_lines(lines: Iterable[str | bytes]) -> OtlpLogs:
    """:func:`read_otlp_logs` on a file of OTLP/JSON logs requests, one per line (what the
    Collector's file exporter writes); a line that is not JSON is an error naming it."""
    return read_otlp_logs((f"line {n}", p) for n, p in json_lines(lines))


def _log_records(payload: object, where: str) -> Iterator[tuple[str, str, dict[str, object]]
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


def _record(raw: object) -> tuple[str, str, dict[str, object]] | None:
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


def join_otlp_logs(trace: Trace, logs: OtlpLogs) -> Result[Trace, TraceError]:
    """``trace`` with its spans' log records read into them: the per-message events and the
    inference-details record become the span's GenAI messages, the span is read again and its
    agent filled in. ``Failure`` (``span_not_found``) when records point at spans the trace
    does not have; never raises.

    >>> from datetime import datetime
    >>> span = Span(span_id="0b", span_type="generic", started_at=datetime(2025, 1, 1))
    >>> trace = Trace(spans=[span], trace_id="0a")
    >>> join_otlp_logs(trace, OtlpLogs(records={})).unwrap() == trace
    True
    >>> join_otlp_logs(trace, OtlpLogs(records={"0a": {"0c": ({"event": "x"},)}})
    ...               ).failure().kind
    'span_not_found'
    """
    trace_id = trace.trace_id or ""
    mine = logs.records.get(trace_id)
    if not mine:
        return Success(trace)
    spans = {s.span_id: s for s in trace.spans}
    missing = sorted(span_id for span_id in mine if span_id not in spans)
    if missing:
        return Failure(TraceError(
            kind="span_not_found", trace_id=trace_id, span_id=missing[0], message=(
                f"trace {trace_id}: log records point at span(s) {', '.join(missing)} that "
                f"are not in the trace file")))
    changed: dict[str, Span] = {}
    for span_id, records in mine.items():
        span = spans[span_id]
        if span.span_type not in ("model_generation", "agent_run"):
            continue
        attributes = {**(span.attributes or {}), **event_attributes(records)}
        try:
            mapped = read_genai(span.span_type, attributes)
        except Malformed as exc:
            return Failure(TraceError(kind="invalid_span", trace_id=trace_id, span_id=span_id,
                                      message=f"span {span_id}: its log records: {exc}"))
        extra_attributes = mapped.pop("mastra_attributes", {})
        keep = {k: v for k, v in mapped.items()
                if v is not None and k in ("input", "output")}
        changed[span_id] = attrs.evolve(span, attributes={**attributes, **extra_attributes},
                                        **keep)
    joined = attrs.evolve(trace, spans=[changed.get(s.span_id, s) for s in trace.spans])
    return Success(complete(joined))
