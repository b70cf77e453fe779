"""OpenTelemetry in and out (extra ``otel``): OTLP protobuf traces in, scores out as
``gen_ai.evaluation.result`` events.

OTLP/JSON traces are read by the core (:func:`scorecore.traces.otlp_to_traces`,
:func:`scorecore.traces.read_otlp_json_lines`); this module adds the protobuf encoding
(``opentelemetry-proto``) and :func:`otel_sink`, which reports scores through the OpenTelemetry
SDK (``opentelemetry-sdk``, and an OTLP exporter to send them). See ``docs/otel.md``.
"""

try:
    from scorecore_adapters.otel._protobuf import read_otlp_protobuf, read_otlp_protobuf_frames
    from scorecore_adapters.otel._sink import EVENT_NAME, OtelSink, otel_sink
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        f"scorecore_adapters.otel needs the otel extra: pip install 'scorecore[otel]' ({exc})"
    ) from exc

__all__ = [
    "EVENT_NAME",
    "OtelSink",
    "otel_sink",
    "read_otlp_protobuf",
    "read_otlp_protobuf_frames",
]
