"""OpenTelemetry traces (OTLP/JSON) as :class:`~scorecore.traces.Trace` values.

Pure: no file or network I/O. The input is an OTLP ``ExportTraceServiceRequest`` in the OTLP/JSON
encoding (``{"resourceSpans": [...]}``), or the lines of a file holding one request per line, as
the OpenTelemetry Collector's file exporter writes them. ``scorecore_adapters.otel`` reads
protobuf into the same JSON shape.

Spans following the OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``) or
Arize's OpenInference conventions (``openinference.span.kind``) become the span types the rest of
:mod:`scorecore.traces` reads (``agent_run``, ``model_generation``, ``tool_call``), with the
input, output, model and usage moved where Mastra's spans keep them; every other span is kept as
a ``generic`` span. The tables below are the mapping; ``docs/otel.md`` prints them and a test
keeps the two in sync.
"""

from scorecore.traces._otlp._assembly import agent_traces
from scorecore.traces._otlp._read import otlp_to_traces, read_otlp_json_lines, read_otlp_requests

__all__ = [
    "agent_traces",
    "otlp_to_traces",
    "read_otlp_json_lines",
    "read_otlp_requests",
]
