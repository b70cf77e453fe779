"""OpenTelemetry in and out: OTLP/JSON ingest speed and memory, and the otel_sink's overhead.

1. Ingest: Collector-style JSON-lines files of 1,000 and 100,000 spans (agent traces of 10
   spans: an HTTP span, an invoke_agent span, 4 chat and 4 execute_tool spans; 50 spans per
   line, so traces straddle lines) streamed through read_otlp_json_lines and agent_traces +
   trace_to_agent_run. Reports traces/s, spans/s and tracemalloc's peak: streaming means the
   peak stays flat as the file grows (goal: the 100,000-span peak within ~2x the 1,000-span one).
2. Sink overhead: run_evals over N trivial items with one function scorer, with
   on_item_complete=otel_sink(...) (an SDK TracerProvider with a BatchSpanProcessor and an
   exporter that drops spans, so only the sink and the SDK are measured) vs without.
   Goal: <= 10 % slower.

    .venv/bin/python benchmarks/otel_ingest.py [N_ITEMS]
"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from scorecore import create_scorer
from scorecore.evals import run_evals
from scorecore.traces import agent_traces, read_otlp_json_lines, trace_to_agent_run
from scorecore_adapters.otel import otel_sink

N_ITEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
SPANS_PER_LINE = 50


def _s(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _trace_spans(index: int) -> list[dict[str, Any]]:
    trace_id = f"{index:032x}"
    base = 1_760_000_000_000_000_000 + index * 10_000_000
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"q{index}"}]}])
    answer = json.dumps([{"role": "assistant",
                          "parts": [{"type": "text", "content": f"a{index}"}]}])

    def span(n: int, parent: int | None, name: str, attrs: list[dict[str, Any]]) -> dict[str, Any]:
        return {"traceId": trace_id, "spanId": f"{index:08x}{n:08x}",
                "parentSpanId": "" if parent is None else f"{index:08x}{parent:08x}",
                "name": name, "kind": 1, "startTimeUnixNano": str(base + n * 1000),
                "endTimeUnixNano": str(base + 900_000 - n), "attributes": attrs}

    spans = []
    for step in range(4):
        spans.append(span(2 + 2 * step, 1, "chat gpt-4o", [
            _s("gen_ai.operation.name", "chat"), _s("gen_ai.request.model", "gpt-4o"),
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "97"}},
            _s("gen_ai.input.messages", user), _s("gen_ai.output.messages", answer)]))
        spans.append(span(3 + 2 * step, 1, "execute_tool get_weather", [
            _s("gen_ai.operation.name", "execute_tool"), _s("gen_ai.tool.name", "get_weather"),
            _s("gen_ai.tool.call.arguments", '{"location": "Paris"}'),
            _s("gen_ai.tool.call.result", "rainy")]))
    # children end first: exporters send them first, the roots last
    spans.append(span(1, 0, "invoke_agent weather", [
        _s("gen_ai.operation.name", "invoke_agent"), _s("gen_ai.agent.name", "weather"),
        _s("gen_ai.input.messages", user), _s("gen_ai.output.messages", answer)]))
    spans.append(span(0, None, "POST /ask", [_s("http.request.method", "POST")]))
    return spans


def write_file(path: Path, n_spans: int) -> None:
    batch: list[dict[str, Any]] = []
    with path.open("w", encoding="utf-8") as handle:
        for index in range(n_spans // 10):
            batch.extend(_trace_spans(index))
            while len(batch) >= SPANS_PER_LINE:
                line, batch = batch[:SPANS_PER_LINE], batch[SPANS_PER_LINE:]
                handle.write(json.dumps({"resourceSpans": [{"scopeSpans": [
                    {"scope": {"name": "bench"}, "spans": line}]}]}) + "\n")
        if batch:
            handle.write(json.dumps({"resourceSpans": [{"scopeSpans": [
                {"scope": {"name": "bench"}, "spans": batch}]}]}) + "\n")


def ingest(path: Path) -> tuple[int, int]:
    traces = runs = 0
    with path.open(encoding="utf-8") as handle:
        for outcome in read_otlp_json_lines(handle):
            trace = outcome.unwrap()
            traces += 1
            for agent in agent_traces(trace):
                trace_to_agent_run(agent).unwrap()
                runs += 1
    return traces, runs


def bench_ingest(sizes: Sequence[int]) -> None:
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for n_spans in sizes:
            path = Path(folder) / f"spans-{n_spans}.jsonl"
            write_file(path, n_spans)
            mb = path.stat().st_size / 2**20
            gc.collect()
            start = time.perf_counter()
            traces, runs = ingest(path)
            elapsed = time.perf_counter() - start
            assert traces == runs == n_spans // 10
            tracemalloc.start()
            ingest(path)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            peaks[n_spans] = peak / 2**20
            print(f"  {n_spans:>7,} spans ({mb:.1f} MB file): {elapsed:.2f} s, "
                  f"{traces / elapsed:,.0f} traces/s, {n_spans / elapsed:,.0f} spans/s, "
                  f"peak traced {peaks[n_spans]:.2f} MB")
    small, large = peaks[sizes[0]], peaks[sizes[-1]]
    print(f"  memory: the {sizes[-1]:,}-span file peaks at {large / small:.2f}x the "
          f"{sizes[0]:,}-span file's ({'flat' if large <= 2 * small else 'NOT flat'})")


class _Drop(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


scorer = create_scorer(id="exact", description="exact").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth))


async def batch(sink: Any) -> float:
    data = ({"input": i, "output": i, "ground_truth": i, "id": str(i)} for i in range(N_ITEMS))
    start = time.perf_counter()
    report = await run_evals(data, [scorer], on_item_complete=sink)
    elapsed = time.perf_counter() - start
    assert report.summary("exact").scored == N_ITEMS
    return elapsed


def bench_sink() -> None:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_Drop(), max_queue_size=N_ITEMS * 2))
    sink = otel_sink(tracer_provider=provider, thresholds={"exact": 0.5})
    anyio.run(batch, None)  # warm-up
    anyio.run(batch, sink)
    off, on = [], []
    for _ in range(5):  # interleaved, so drift hits both
        gc.collect()
        off.append(anyio.run(batch, None))
        gc.collect()
        on.append(anyio.run(batch, sink))
    provider.shutdown()
    off_median, on_median = sorted(off)[2], sorted(on)[2]
    overhead = on_median / off_median - 1
    print(f"  {N_ITEMS:,} trivial items, 1 function scorer: sink off {off_median:.3f} s, "
          f"on {on_median:.3f} s (median of 5): overhead {overhead:+.1%}   goal <= +10 %")
    print(f"  per scored run: {(on_median - off_median) / N_ITEMS * 1e6:.1f} us for the event")


def main() -> None:
    print("otel_ingest: OTLP/JSON lines -> traces -> agent runs (streamed)")
    bench_ingest([1_000, 100_000])
    print("otel_sink overhead on a batch (run_evals on_item_complete)")
    bench_sink()


if __name__ == "__main__":
    main()
