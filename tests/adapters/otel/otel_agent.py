"""An agent traced by the real OpenTelemetry SDK, and the trace files its OTLP encoder writes.

The spans follow the GenAI semantic conventions (an ``invoke_agent`` root with ``chat`` and
``execute_tool`` children, messages in ``gen_ai.input.messages`` / ``gen_ai.output.messages``);
the files are what the SDK's own OTLP encoder (``encode_spans``) makes: the protobuf request, and
the same request as a JSON line through ``google.protobuf.json_format``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind

SCORERS = '''
from scorecore import create_scorer

said = create_scorer(id="said-weather", description="d", type="agent").generate_score(
    lambda ctx: float("weather" in ctx.run.output[0].content.content)
).generate_reason(lambda ctx: "mentions the weather")
used_tool = create_scorer(id="used-tool", description="d", type="trajectory").generate_score(
    lambda ctx: float(ctx.run.output.tool_names == ("get_weather",)))
'''
"""Two scorers an SDK-made agent run passes: its answer and its one tool call."""


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def record_agent(provider: TracerProvider) -> tuple[str, str]:
    """Trace one agent run through ``provider``; its trace id and agent span id, in hex."""
    tracer = provider.get_tracer("weather-agent", "1.0.0")
    question = _messages("user", "What is the weather in Paris?")
    answer = _messages("assistant", "Rainy weather in Paris today.")
    with tracer.start_as_current_span("invoke_agent weather", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.provider.name": "openai", "gen_ai.input.messages": question,
            "gen_ai.output.messages": answer}) as agent:
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 31,
                "gen_ai.usage.output_tokens": 12, "gen_ai.input.messages": question,
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{
                    "type": "tool_call", "id": "call_1", "name": "get_weather",
                    "arguments": {"city": "Paris"}}]}])}):
            pass
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "gen_ai.tool.call.result": "rainy, 12 °C"}):
            pass
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.input.messages": question, "gen_ai.output.messages": answer}):
            pass
        context = agent.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def write_trace_files(spans: Sequence[ReadableSpan], folder: Path) -> tuple[Path, Path, Path]:
    """The spans as the SDK's OTLP encoder makes them, in three files: JSON lines (one request
    per line, protobuf's JSON mapping), one binary request, and the Collector file exporter's
    ``format: proto`` (a request per span, in the order they ended, each after its 4-byte
    big-endian length)."""
    request = encode_spans(spans)
    lines = folder / "agent.jsonl"
    lines.write_text(json.dumps(MessageToDict(request)) + "\n", encoding="utf-8")
    binary = folder / "agent.pb"
    binary.write_bytes(request.SerializeToString())
    framed = folder / "agent-collector.bin"
    with framed.open("wb") as handle:
        for span in spans:
            body = encode_spans([span]).SerializeToString()
            handle.write(len(body).to_bytes(4, "big") + body)
    return lines, binary, framed
