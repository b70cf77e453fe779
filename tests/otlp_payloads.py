"""OTLP/JSON payloads rewritten as protobuf's own JSON mapping writes them (shared by tests)."""

from __future__ import annotations

import base64
from typing import Any

_IDS = ("traceId", "spanId", "parentSpanId")


def ids_as_base64(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with its spans' hex ids in base64 (what ``json_format`` writes for bytes)
    and empty ids dropped; changed in place and returned."""
    for resource in payload["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in _IDS:
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                    else:
                        span.pop(key, None)
    return payload


def to_protobuf(payload: dict[str, Any]) -> bytes:
    """An OTLP/JSON payload (hex ids) as a serialised ``ExportTraceServiceRequest``; changes
    ``payload``'s ids in place."""
    from google.protobuf.json_format import ParseDict  # noqa: PLC0415 - the otel extra
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
        ExportTraceServiceRequest,
    )

    return ParseDict(ids_as_base64(payload), ExportTraceServiceRequest()).SerializeToString()
