"""OTLP protobuf trace requests (one, or the Collector file exporter's length-prefixed
stream), read into the OTLP/JSON shape the core maps."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any, BinaryIO, Final

import attrs
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from returns.result import Failure, Result

from scorecore.traces import Trace, TraceError, otlp_to_traces, read_otlp_requests

__all__ = ["logs_payloads", "read_otlp_protobuf", "read_otlp_protobuf_frames"]

_LENGTH_BYTES: Final = 4
_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(span: dict[str, Any]) -> None:
    # protobuf's JSON mapping writes bytes as base64; OTLP/JSON writes trace and span ids as hex.
    for key in _ID_FIELDS:
        value = span.get(key)
        if isinstance(value, str):
            span[key] = base64.b64decode(value).hex()
    for link in span.get("links", []):
        _hex_ids(link)


def _payload(data: bytes) -> dict[str, Any] | TraceError:
    """One protobuf request in the OTLP/JSON shape the core maps, or why it is not one."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        hint = (" (it starts with a zero byte, as the Collector file exporter's length-prefixed "
                "format: proto does)" if data[:1] == b"\x00" else "")
        return TraceError(kind="invalid_otlp",
                          message=f"not an OTLP protobuf trace request: {exc}{hint}")
    payload = MessageToDict(request)
    try:
        for resource in payload.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    _hex_ids(span)
    except binascii.Error as exc:  # cannot happen for bytes fields; kept as a value anyway
        return TraceError(kind="invalid_otlp", message=f"bad id: {exc}")
    return payload


def _logs_payload(data: bytes, where: str) -> dict[str, Any] | TraceError:
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        return TraceError(kind="invalid_otlp",
                          message=f"{where}: not an OTLP protobuf logs request: {exc}")
    # ids stay base64 (protobuf's JSON mapping of bytes): the core reads both
    return MessageToDict(request)


def logs_payloads(data: bytes, *, framed: bool) -> Iterator[tuple[str, object]]:
    """The OTLP logs requests of a protobuf file (one request, or the Collector file
    exporter's length-prefixed frames) in the OTLP/JSON shape, each with where it was read;
    one that cannot be read as a TraceError."""
    if not framed:
        yield "request", _logs_payload(data, "request")
        return
    offset = index = 0
    while offset < len(data):
        index += 1
        where = f"frame {index} at byte {offset}"
        size = int.from_bytes(data[offset:offset + _LENGTH_BYTES], "big")
        body = data[offset + _LENGTH_BYTES:offset + _LENGTH_BYTES + size]
        if offset + _LENGTH_BYTES > len(data) or len(body) < size:
            yield where, TraceError(kind="invalid_otlp", message=f"{where}: truncated")
            return
        offset += _LENGTH_BYTES + size
        yield where, _logs_payload(body, where)


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
    payload = _payload(data)
    if isinstance(payload, TraceError):
        return Failure(payload)
    return otlp_to_traces(payload)


def _frames(stream: BinaryIO) -> Iterator[tuple[str, object]]:
    """Each length-prefixed request of ``stream``, with where it starts; a frame that cannot
    be read as a TraceError naming it (after a truncated frame, nothing more can be read)."""
    index = offset = 0
    while header := stream.read(_LENGTH_BYTES):
        index += 1
        where = f"frame {index} at byte {offset}"
        if len(header) < _LENGTH_BYTES:
            yield where, TraceError(kind="invalid_otlp", message=(
                f"{where}: truncated: {len(header)} of the {_LENGTH_BYTES} length bytes"))
            return
        size = int.from_bytes(header, "big")
        body = stream.read(size)
        if len(body) < size:
            yield where, TraceError(kind="invalid_otlp", message=(
                f"{where}: truncated: {len(body)} of its {size} bytes"))
            return
        offset += _LENGTH_BYTES + size
        payload = _payload(body)
        if isinstance(payload, TraceError):
            if body.startswith(_ZSTD_MAGIC):
                payload = attrs.evolve(payload, message=(
                    "zstd-compressed (the file exporter's compression: zstd): decompress "
                    "each frame first"))
            payload = attrs.evolve(payload, message=f"{where}: {payload.message}")
        yield where, payload


def read_otlp_protobuf_frames(stream: BinaryIO) -> Iterator[Result[Trace, TraceError]]:
    """Stream the traces of a file in the OpenTelemetry Collector file exporter's protobuf
    format (``format: proto``): each ``ExportTraceServiceRequest`` after its length, a 4-byte
    big-endian unsigned integer.

    Read one frame at a time; traces are assembled across frames as
    :func:`scorecore.traces.read_otlp_json_lines` assembles them across lines (a trace is
    yielded once its root span has been read). A frame cut short, or one that is not a
    request, is an ``invalid_otlp`` :class:`~scorecore.traces.TraceError` naming the frame's
    number and byte offset; after a corrupt body the next frames are still read, after a
    truncated one there is nothing more to read.

    >>> import io
    >>> from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
    >>> span = Span(trace_id=bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736"),
    ...             span_id=bytes.fromhex("00f067aa0ba902b7"), name="agent",
    ...             start_time_unix_nano=1_700_000_000_000_000_000)
    >>> body = ExportTraceServiceRequest(resource_spans=[
    ...     ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]).SerializeToString()
    >>> frames = len(body).to_bytes(4, "big") + body + b"\\x00\\x00\\x01"
    >>> first, second = read_otlp_protobuf_frames(io.BytesIO(frames))
    >>> first.unwrap().spans[0].name
    'agent'
    >>> second.failure().message
    'frame 2 at byte 54: truncated: 3 of the 4 length bytes'
    """
    return read_otlp_requests(_frames(stream))
