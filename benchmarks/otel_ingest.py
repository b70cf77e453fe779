"""OpenTelemetry in and out: OTLP/JSON ingest speed and memory, and the otel_sink's overhead.

1. Ingest: Collector-style JSON-lines files of 1,000 and 100,000 spans (agent traces of 10
   spans: an HTTP span, an invoke_agent span, 4 chat and 4 execute_tool spans; 50 spans per
   line, so traces straddle lines) streamed through read_otlp_json_lines and agent_traces +
   trace_to_agent_run. Reports traces/s, spans/s and tracemalloc's peak: streaming means the
   peak stays flat as the file grows (goal: the 100,000-span peak within ~2x the 1,000-span one).
2. Sink overhead: run_evals with on_item_complete=otel_sink(...) (an SDK TracerProvider with
   a BatchSpanProcessor and an exporter that drops spans, so only the sink and the SDK are
   measured; the timed region ends with a force_flush, so work the processor's thread does
   is counted) vs without, on two batches:
   a. N trivial items with one function scorer (an equality check);
   b. a realistic function scorer batch: N // 10 items of support questions and answers of a
      few hundred characters, scored by five of scorecore's built-in code scorers
      (content_similarity, completeness, keyword_coverage, textual_difference, tone), so
      five events per item.
   Goal: <= 10 % slower.

    .venv/bin/python benchmarks/otel_ingest.py [N_ITEMS] [--sink-only]

3. --many-agents: one trace of 2,000 / 16,000 / 32,000 spans, half of them agent spans that
   record no messages (each filled in from its model call): goal linear (flat time per span).

    .venv/bin/python benchmarks/otel_ingest.py --many-agents
"""

from __future__ import annotations

import gc
import json
import random
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
from scorecore.scorers import (
    TEXT,
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
)
from scorecore.traces import (
    agent_traces,
    otlp_to_traces,
    read_otlp_json_lines,
    trace_to_agent_run,
)
from scorecore_adapters.otel import otel_sink

_ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
N_ITEMS = int(_ARGS[0]) if _ARGS else 10_000
SINK_ONLY = "--sink-only" in sys.argv
SPANS_PER_LINE = 50
REPEATS = 7


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

_TOPICS = ["invoice", "refund", "password reset", "delivery delay", "subscription plan",
           "two-factor login", "data export", "billing address", "API rate limit", "team seat"]
_QUESTION = [
    "Hello, I have a question about my {t}.", "I was charged twice last month and the "
    "support page did not help.", "Could you explain what happens to my {t} if I cancel "
    "before the end of the billing period?", "My colleague says the {t} changed in the new "
    "version, but the documentation still describes the old behaviour.", "Please tell me "
    "which steps I should follow and how long it usually takes.", "I am using the mobile app "
    "on Android and the desktop client on Windows.", "This is urgent because our quarterly "
    "report is due on Friday.",
]
_ANSWER = [
    "Thanks for reaching out about your {t}.", "I checked your account and I can confirm "
    "that the {t} was updated on the 3rd.", "If you cancel before the end of the billing "
    "period, the {t} stays active until that date and you are not charged again.", "The "
    "documentation was out of date; we have corrected the page describing the {t}.", "Please "
    "open Settings, choose Account, then follow the steps under {t}; it usually takes a few "
    "minutes.", "Both the Android app and the Windows client use the same settings.", "I am "
    "sorry for the trouble this caused, and I hope your report goes smoothly.", "Unfortunately "
    "the duplicate charge is a terrible mistake on our side, and we will refund it today.",
]


def _text(rng: random.Random, sentences: list[str], topic: str) -> str:
    picked = rng.sample(sentences, k=rng.randint(4, 6))
    return " ".join(sentence.format(t=topic) for sentence in picked)


def realistic_items(n: int) -> list[dict[str, Any]]:
    """Support questions and answers of a few hundred characters (seeded, so reproducible)."""
    rng = random.Random(27)  # noqa: S311 - reproducible texts, not secrets
    items = []
    for index in range(n):
        topic = _TOPICS[index % len(_TOPICS)]
        items.append({"input": _text(rng, _QUESTION, topic), "output": _text(rng, _ANSWER, topic),
                      "id": f"q{index}"})
    return items


async def batch(sink: Any) -> tuple[float, float]:
    data = ({"input": i, "output": i, "ground_truth": i, "id": str(i)} for i in range(N_ITEMS))
    start, cpu = time.perf_counter(), time.process_time()
    report = await run_evals(data, [scorer], on_item_complete=sink)
    if sink is not None:
        sink.flush()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert report.summary("exact").scored == N_ITEMS
    return elapsed, cpu


def _realistic_scorers() -> list[Any]:
    return [content_similarity(shape=TEXT), completeness(shape=TEXT),
            keyword_coverage(shape=TEXT), textual_difference(shape=TEXT), tone(shape=TEXT)]


def realistic_batch(items: list[dict[str, Any]], scorers: list[Any]) -> Any:
    async def run(sink: Any) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        report = await run_evals(items, scorers, on_item_complete=sink)
        if sink is not None:
            sink.flush()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        assert all(report.summary(s.id).scored == len(items) for s in scorers)
        return elapsed, cpu
    return run


class _Flushing:
    """The sink, with a flush of what the provider's batch processor still holds; it adds up
    the time spent inside the sink and the flush (the part of a run the sink costs directly,
    which load from other jobs inflates no more than the run around it)."""

    def __init__(self, sink: Any, provider: TracerProvider) -> None:
        self.sink, self.provider = sink, provider
        self.inside = 0.0

    def __call__(self, value: Any) -> None:
        start = time.perf_counter()
        self.sink(value)
        self.inside += time.perf_counter() - start

    def flush(self) -> None:
        start = time.perf_counter()
        self.provider.force_flush()
        self.inside += time.perf_counter() - start


def _compare(label: str, run: Any, n_events: int) -> None:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_Drop(), max_queue_size=n_events * 2))
    sink = _Flushing(otel_sink(tracer_provider=provider, thresholds={"exact": 0.5}), provider)
    anyio.run(run, None)  # warm-up
    anyio.run(run, sink)
    off: list[tuple[float, float]] = []
    on: list[tuple[float, float]] = []
    shares: list[float] = []
    for _ in range(REPEATS):  # interleaved, so drift hits both
        gc.collect()
        off.append(anyio.run(run, None))
        gc.collect()
        sink.inside = 0.0
        on.append(anyio.run(run, sink))
        shares.append(sink.inside / on[-1][0])
    provider.shutdown()
    print(f"  {label} ({n_events:,} events), {REPEATS} runs each, interleaved:")
    for what, index in (("wall", 0), ("CPU", 1)):
        # CPU: the process's CPU time (every thread, the span processor's too), which other
        # jobs on a shared machine disturb less than the wall clock; the best run is the one
        # they disturbed least
        for stat, pick in (("median", REPEATS // 2), ("best", 0)):
            off_time = sorted(t[index] for t in off)[pick]
            on_time = sorted(t[index] for t in on)[pick]
            overhead = on_time / off_time - 1
            print(f"    {what} time, {stat}: sink off {off_time:.3f} s, on {on_time:.3f} s: "
                  f"overhead {overhead:+.1%} (goal <= +10 %), "
                  f"{(on_time - off_time) / n_events * 1e6:.1f} us per event")
    share = sorted(shares)[REPEATS // 2]
    print(f"    inside the sink and its flush: {share:.1%} of the run with it (median), so "
          f"{share / (1 - share):+.1%} over the run without it")


def bench_sink() -> None:
    _compare(f"{N_ITEMS:,} trivial items, 1 function scorer", batch, N_ITEMS)
    n_real = max(N_ITEMS // 10, 1)
    items, scorers = realistic_items(n_real), _realistic_scorers()
    chars = sum(len(i["input"]) + len(i["output"]) for i in items) / (2 * n_real)
    _compare(f"{n_real:,} realistic items ({chars:.0f} chars a text), 5 built-in code scorers",
             realistic_batch(items, scorers), n_real * len(scorers))


def _many_agents(n_spans: int) -> dict[str, Any]:
    """One trace: a root span, then n_spans // 2 invoke_agent spans that record no messages
    (the instrumentations' default), each with one chat span holding the messages."""
    trace_id = "ab" * 16
    spans: list[dict[str, Any]] = [{"traceId": trace_id, "spanId": f"{0:016x}", "name": "root",
                                    "startTimeUnixNano": "1760000000000000000"}]
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "q"}]}])
    for index in range(1, n_spans // 2 + 1):
        agent, chat = f"{2 * index:016x}", f"{2 * index + 1:016x}"
        spans.append({"traceId": trace_id, "spanId": agent, "parentSpanId": f"{0:016x}",
                      "name": "invoke_agent a", "startTimeUnixNano": str(1760000000000000000
                                                                         + index),
                      "attributes": [_s("gen_ai.operation.name", "invoke_agent")]})
        spans.append({"traceId": trace_id, "spanId": chat, "parentSpanId": agent,
                      "name": "chat m", "startTimeUnixNano": str(1760000000000000000 + index),
                      "attributes": [_s("gen_ai.operation.name", "chat"),
                                     _s("gen_ai.input.messages", user)]})
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def bench_agents_without_messages(sizes: Sequence[int]) -> None:
    """The agent fill-in (input and output from each agent's model calls) on one trace of
    many agents: linear means the time per span stays flat as the trace grows."""
    for n_spans in sizes:
        payload = _many_agents(n_spans)
        started = time.perf_counter()
        (trace,) = otlp_to_traces(payload).unwrap()
        runs = sum(1 for a in agent_traces(trace) if trace_to_agent_run(a) is not None)
        elapsed = time.perf_counter() - started
        print(f"  {n_spans:>7,} spans, {runs:,} agent runs: {elapsed:.2f} s "
              f"({elapsed / n_spans * 1e6:.1f} us per span)")


def main() -> None:
    if "--many-agents" in sys.argv:
        print("one trace of many agents without messages -> agent runs")
        bench_agents_without_messages((2_000, 16_000, 32_000))
        return
    if not SINK_ONLY:
        print("otel_ingest: OTLP/JSON lines -> traces -> agent runs (streamed)")
        bench_ingest([1_000, 100_000])
    print("otel_sink overhead on a batch (run_evals on_item_complete)")
    bench_sink()


if __name__ == "__main__":
    main()
