"""OTLP protobuf trace requests, read into the OTLP/JSON shape the core maps."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from returns.result import Failure, Result

from scorecore.traces import Trace, TraceError, otlp_to_traces

__all__ = ["read_otlp_protobuf"]

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(span: dict[str, Any]) -> None:
    # protobuf's JSON mapping writes bytes as base64; OTLP/JSON writes trace and span ids as hex.
    for key in _ID_FIELDS:
        value = span.get(key)
        if isinstance(value, str):
            span[key] = base64.b64decode(value).hex()
    for link in span.get("links", []):
        _hex_ids(link)


def read_otlp_protobuf(data: bytes) -> Result[tuple[Trace, ...], TraceError]:
    """The traces of one binary (protobuf) OTLP ``ExportTraceServiceRequest``.

    What an OTLP/HTTP exporter posts with ``Content-Type: application/x-protobuf``. Mapped like
    :func:`scorecore.traces.otlp_to_traces`; bytes that are not a request are an
    ``invalid_otlp`` :class:`~scorecore.traces.TraceError`.

    >>> from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
    >>> span = Span(trace_id=bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736"),
    ...             span_id=bytes.fromhex("00f067aa0ba902b7"), name="agent",
    ...             start_time_unix_nano=1_700_000_000_000_000_000)
    >>> request = ExportTraceServiceRequest(resource_spans=[
    ...     ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])])
    >>> (trace,) = read_otlp_protobuf(request.SerializeToString()).unwrap()
    >>> trace.trace_id, trace.spans[0].span_id
    ('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7')
    >>> read_otlp_protobuf(b"\\xff\\xff").failure().kind
    'invalid_otlp'
    """
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        return Failure(TraceError(kind="invalid_otlp",
                                  message=f"not an OTLP protobuf trace request: {exc}"))
    payload = MessageToDict(request)
    try:
        for resource in payload.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    _hex_ids(span)
    except binascii.Error as exc:  # cannot happen for bytes fields; kept as a value anyway
        return Failure(TraceError(kind="invalid_otlp", message=f"bad id: {exc}"))
    return otlp_to_traces(payload)
