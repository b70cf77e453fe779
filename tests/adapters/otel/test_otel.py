"""Tests of scorecore_adapters.otel: protobuf traces in, gen_ai.evaluation.result events out."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from returns.result import Failure

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.evals import EvalItem, InvalidItem, run_evals
from scorecore.live import live_scoring, scored
from scorecore.traces import Trace, otlp_to_traces, score_traces, trace_to_agent_run
from scorecore_adapters.otel import (
    EVENT_NAME,
    otel_sink,
    read_otlp_protobuf,
    read_otlp_protobuf_frames,
)
from scorecore_adapters.testing import ScriptedJudge, judge_error
from tests.adapters.otel.otel_agent import SCORERS as SDK_AGENT_SCORERS
from tests.adapters.otel.otel_agent import record_agent, write_trace_files
from tests.otlp_payloads import to_protobuf

OTLP = Path(__file__).parents[2] / "traces" / "fixtures" / "otlp"
AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN = "00f067aa0ba902b7"


def _fixture(name: str) -> Any:
    return json.loads((OTLP / name).read_text(encoding="utf-8"))


@pytest.fixture
def spans() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


said = create_scorer(id="said-weather", description="d", type="agent").generate_score(
    lambda ctx: float("weather" in ctx.run.output[0].content.content)
).generate_reason(lambda ctx: f"score {ctx.score}; key sk-proj-abc123def456ghi789jkl0 leaked")


def _event(span: ReadableSpan) -> dict[str, Any]:
    (event,) = span.events
    assert event.name == EVENT_NAME
    return dict(event.attributes or {})


@pytest.mark.anyio
async def test_trace_scores_are_events_parented_to_the_judged_span(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """score_traces with otel_sink: one event per run, under the judged agent span, with the
    score, a pass/fail label from the threshold and the reason (secrets redacted)."""
    provider, exporter = spans
    traces = otlp_to_traces(_fixture("genai_agent.json")).unwrap()
    sink = otel_sink(tracer_provider=provider, thresholds={"said-weather": 0.5})
    summary = await score_traces(said, traces, sink=sink)
    assert summary.scored_count == 1
    (span,) = exporter.get_finished_spans()
    assert span.context is not None
    assert span.parent is not None
    assert f"{span.context.trace_id:032x}" == AGENT_TRACE
    assert f"{span.parent.span_id:016x}" == AGENT_SPAN
    event = _event(span)
    assert event["gen_ai.evaluation.name"] == "said-weather"
    assert event["gen_ai.evaluation.score.value"] == 1.0
    assert event["gen_ai.evaluation.score.label"] == "pass"
    assert event["gen_ai.evaluation.explanation"] == "score 1.0; key [REDACTED] leaked"
    assert "error.type" not in event
    assert "sk-proj" not in json.dumps(dict(span.attributes or {}))


@pytest.mark.anyio
async def test_log_events_carry_the_judged_span_as_context() -> None:
    """Through a logger provider the event is a log record named gen_ai.evaluation.result whose
    trace and span ids are the judged span's (the conventions' parenting)."""
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    traces = otlp_to_traces(_fixture("genai_agent.json")).unwrap()
    await score_traces(said, traces, sink=otel_sink(logger_provider=provider))
    (log,) = exporter.get_finished_logs()
    record = log.log_record
    assert record.event_name == EVENT_NAME
    assert (f"{record.trace_id:032x}", f"{record.span_id:016x}") == (AGENT_TRACE, AGENT_SPAN)
    assert record.attributes is not None
    assert record.attributes["gen_ai.evaluation.score.value"] == 1.0
    assert "gen_ai.evaluation.score.label" not in record.attributes  # no threshold given


@pytest.mark.anyio
async def test_batch_items_report_scores_and_failures(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """As run_evals' on_item_complete: one event per scorer outcome; a failed run has
    error.type; an item that is no span carries its run and item ids; gates label pass/fail."""
    provider, exporter = spans
    exact = create_scorer(id="exact", description="d").generate_score(
        lambda ctx: float(ctx.run.output == ctx.run.ground_truth))

    def boom(ctx: Any) -> float:
        raise RuntimeError("judge down")

    broken = create_scorer(id="broken", description="d").generate_score(boom)
    report = await run_evals(
        [EvalItem(input="2+2", output="4", ground_truth="4", id="sum")], [exact, broken],
        batch_id="b1", on_item_complete=otel_sink(tracer_provider=provider, gates=["exact"]),
        max_failures=None,
    )
    assert report.total_items == 1
    events = {e["scorecore.scorer.id"]: e for e in map(_event, exporter.get_finished_spans())}
    assert events["exact"]["gen_ai.evaluation.score.label"] == "pass"
    assert events["exact"]["scorecore.item_id"] == "sum"
    assert events["exact"]["scorecore.run_id"] == "b1:sum"
    assert events["broken"]["error.type"] == "raised RuntimeError"
    assert "judge down" in events["broken"]["gen_ai.evaluation.explanation"]
    assert "gen_ai.evaluation.score.value" not in events["broken"]
    assert all(s.parent is None for s in exporter.get_finished_spans())


@pytest.mark.anyio
async def test_a_raising_target_is_the_error_type_target_raised(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """An item whose target raised: each scorer's event has error.type "target raised", read
    from the item's failure kind, not from its text."""
    provider, exporter = spans
    exact = create_scorer(id="exact", description="d").generate_score(lambda ctx: 1.0)

    def target(item: EvalItem) -> str:
        raise ConnectionError("down")

    await run_evals([EvalItem(input="q", id="one")], [exact], target=target, batch_id="b2",
                    on_item_complete=otel_sink(tracer_provider=provider), max_failures=None)
    (event,) = map(_event, exporter.get_finished_spans())
    assert event["error.type"] == "target raised"
    assert event["gen_ai.evaluation.explanation"] == "target raised ConnectionError: down"


@pytest.mark.anyio
async def test_live_scores_are_events(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """Live scoring's sink: each sampled call's score is an event."""
    provider, exporter = spans
    one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)

    @scored(one, sink=otel_sink(tracer_provider=provider))
    async def shout(text: str) -> str:
        return text.upper()

    async with live_scoring():
        assert await shout("hi") == "HI"
    (span,) = exporter.get_finished_spans()
    event = _event(span)
    assert (event["gen_ai.evaluation.name"], event["scorecore.score_source"]) == ("one", "live")


@pytest.mark.parametrize("name", ["genai_agent.json", "openinference_agent.json"])
def test_protobuf_reads_as_the_json_encoding(name: str) -> None:
    """A protobuf request maps to the same spans as its OTLP/JSON encoding."""
    from_json = otlp_to_traces(_fixture(name)).unwrap()
    from_protobuf = read_otlp_protobuf(to_protobuf(_fixture(name))).unwrap()

    def shape(traces: Any) -> list[Any]:
        return [(s.span_id, s.parent_span_id, s.span_type, s.input, s.output, s.started_at,
                 s.entity_name) for t in traces for s in t.spans]

    assert shape(from_protobuf) == shape(from_json)


@pytest.mark.anyio
async def test_evaluation_spans_show_items_scorers_and_judge_calls(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """With evaluation_spans: an item span, a scorer span carrying the event, and a judge span
    per call with the model, provider and token usage; a failed judge call is an error span."""
    provider, exporter = spans
    judge = ScriptedJudge([{"score": 0.5},
                           judge_error(401, message="bad key sk-proj-abc123def456ghi789jkl0")])
    judged = create_scorer(
        id="judged", description="d", judge=JudgeConfig(model=judge, instructions="judge")
    ).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: "rate"))
    await run_evals([EvalItem(input="a", output="a", id="one"),
                     EvalItem(input="b", output="b", id="two")], [judged], concurrency=1,
                    max_failures=None,
                    on_item_complete=otel_sink(tracer_provider=provider, evaluation_spans=True))
    finished = exporter.get_finished_spans()
    by_name: dict[str, list[ReadableSpan]] = {}
    for span in finished:
        by_name.setdefault(span.name, []).append(span)
    assert sorted(by_name) == [
        "chat scripted-judge", "evaluate one", "evaluate two", "score judged"]
    item = by_name["evaluate one"][0]
    scorer = next(s for s in by_name["score judged"]
                  if s.parent is not None and s.parent.span_id == item.context.span_id)
    assert _event(scorer)["gen_ai.evaluation.score.value"] == 0.5
    ok_call, failed_call = sorted(by_name["chat scripted-judge"], key=lambda s: s.start_time or 0)
    assert ok_call.parent is not None
    assert ok_call.parent.span_id == scorer.context.span_id
    assert ok_call.attributes is not None
    assert ok_call.attributes["gen_ai.request.model"] == "scripted-judge"
    assert ok_call.attributes["gen_ai.usage.input_tokens"] > 0
    assert failed_call.status.status_code.name == "ERROR"
    assert failed_call.attributes is not None
    assert "error.type" in failed_call.attributes
    assert "sk-proj" not in repr([dict(s.attributes or {}) for s in finished])
    assert "sk-proj" not in repr([dict(e.attributes or {}) for s in finished for e in s.events])


@pytest.mark.anyio
async def test_no_evaluation_spans_by_default(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Off by default: a batch item gives its evaluation events' spans only."""
    provider, exporter = spans
    one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    await run_evals([EvalItem(input="a", output="a", id="x")], [one],
                    on_item_complete=otel_sink(tracer_provider=provider))
    assert [s.name for s in exporter.get_finished_spans()] == ["evaluation one"]


class _Capture(BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:  # the OTLP/HTTP exporter posts protobuf to /v1/traces
        length = int(self.headers["Content-Length"])
        type(self).bodies.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


def test_what_the_sdk_exporter_sends_is_read_and_scored() -> None:
    """An agent instrumented with the OpenTelemetry SDK (GenAI attributes) exports over
    OTLP/HTTP; the protobuf bodies it sent read back into an agent run scorecore can score."""
    _Capture.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{server.server_address[1]}/v1/traces")))
        tracer = provider.get_tracer("weather-agent")
        user = json.dumps([{"role": "user", "parts": [{"type": "text",
                                                       "content": "Weather in Paris?"}]}])
        answer = json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "Rainy in Paris."}]}])
        with tracer.start_as_current_span("invoke_agent weather", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
                "gen_ai.input.messages": user, "gen_ai.output.messages": answer}):
            with tracer.start_as_current_span("chat gpt-4o", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 12, "gen_ai.input.messages": user,
                    "gen_ai.output.messages": answer}):
                pass
            with tracer.start_as_current_span("execute_tool get_weather", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                    "gen_ai.tool.call.result": "rainy"}):
                pass
        provider.shutdown()
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    spans = [s for body in _Capture.bodies for t in read_otlp_protobuf(body).unwrap()
             for s in t.spans]
    assert sorted(s.span_type for s in spans) == ["agent_run", "model_generation", "tool_call"]
    trace = Trace(spans=spans, trace_id=spans[0].trace_id)
    agent_input, (message,) = trace_to_agent_run(trace).unwrap()
    assert agent_input.input_messages[0].content.content == "Weather in Paris?"
    assert message.content.content == "Rainy in Paris."
    (call,) = message.content.tool_invocations or ()
    assert (call.tool_name, call.args, call.result) == ("get_weather", {"city": "Paris"}, "rainy")


@pytest.mark.anyio
async def test_trace_batch_failures_are_events_with_error_type(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """report_failures: a failed scorer run under the span it judged, an unusable trace with
    its TraceError kind; successful runs (already sunk) are not repeated."""
    provider, exporter = spans

    def picky(ctx: Any) -> float:
        if "Paris" in ctx.run.input.input_messages[0].content.content:
            raise RuntimeError("no Paris")
        return 1.0

    scorer = create_scorer(id="picky", description="d", type="agent").generate_score(picky)
    traces = [*otlp_to_traces(_fixture("genai_agent.json")).unwrap(),
              *otlp_to_traces(_fixture("openinference_agent.json")).unwrap(),
              {"traceId": "t-bad"}]
    sink = otel_sink(tracer_provider=provider)
    batch = await score_traces(scorer, traces, sink=sink)
    assert (batch.scored_count, batch.failed_count) == (1, 2)
    sink.report_failures(batch, scorer_id="picky")
    finished = exporter.get_finished_spans()
    events = [_event(s) for s in finished]
    assert sorted(e.get("error.type", "-") for e in events) == [
        "-", "no_spans_array", "raised RuntimeError"]
    failed = next(s for s in finished if _event(s).get("error.type") == "raised RuntimeError")
    assert failed.parent is not None
    assert f"{failed.parent.span_id:016x}" == AGENT_SPAN
    assert "no Paris" in _event(failed)["gen_ai.evaluation.explanation"]
    bad = next(e for e in events if e.get("error.type") == "no_spans_array")
    assert bad["scorecore.trace_id"] == "t-bad"


class _Watching(SimpleSpanProcessor):
    """A processor of the user's own (not the SDK's): it sees every span start."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        super().__init__(exporter)
        self.started: list[str] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span.name)


async def _runs() -> list[Any]:
    """Score records and batch items of every kind: parented, plain, not scorable, failed."""
    runs: list[Any] = []
    traces = otlp_to_traces(_fixture("genai_agent.json")).unwrap()
    await score_traces(said, traces, sink=runs.append)

    def maybe(ctx: Any) -> float:
        if ctx.run.output == "boom":
            raise RuntimeError("boom")
        return 0.25

    scorer = create_scorer(id="maybe", description="d").generate_score(maybe)
    await run_evals([EvalItem(input="q", output="a", id="one"),
                     EvalItem(input="q", output="boom", id="two", extra={
                         "target_trace_id": AGENT_TRACE, "target_span_id": AGENT_SPAN})],
                    [scorer], batch_id="b", max_failures=None, on_item_complete=runs.append)
    return runs


def _shape(span: ReadableSpan) -> tuple[Any, ...]:
    assert span.context is not None
    parent = span.parent
    scope = span.instrumentation_scope
    return (
        span.name, span.kind, span.status.status_code,
        None if parent is None else (f"{parent.trace_id:032x}", f"{parent.span_id:016x}"),
        parent is None or span.context.trace_id == parent.trace_id,
        span.context.trace_flags.sampled,
        dict(span.attributes or {}),
        [(e.name, dict(e.attributes or {})) for e in span.events],
        None if scope is None else (scope.name, scope.version),
        dict(span.resource.attributes),
    )


@pytest.mark.anyio
async def test_the_sdks_own_processors_export_what_the_tracer_would() -> None:
    """With the SDK's own processors the sink hands finished spans straight to them (no span
    life cycle); the export is the same as through Tracer.start_span, which a processor of the
    user's own still gets (it sees every evaluation span start)."""
    runs = await _runs()
    direct, public = InMemorySpanExporter(), InMemorySpanExporter()
    watching = _Watching(public)
    shown: dict[str, list[tuple[Any, ...]]] = {}
    for name, processor, exporter in (("direct", SimpleSpanProcessor(direct), direct),
                                      ("public", watching, public)):
        provider = TracerProvider()
        provider.add_span_processor(processor)
        sink = otel_sink(tracer_provider=provider, thresholds={"said-weather": 0.5})
        for run in runs:
            sink(run)
        shown[name] = [_shape(s) for s in exporter.get_finished_spans()]
    assert len(shown["direct"]) == 3
    assert shown["direct"] == shown["public"]
    assert watching.started == [s[0] for s in shown["public"]]


@pytest.mark.anyio
async def test_a_processor_added_later_or_a_sampler_is_honoured() -> None:
    """A processor of the user's own added after the sink was made still sees the spans start,
    and a sampler that drops everything leaves nothing to export."""
    runs = await _runs()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = otel_sink(tracer_provider=provider)
    later = _Watching(InMemorySpanExporter())
    provider.add_span_processor(later)
    for run in runs:
        sink(run)
    assert len(later.started) == len(exporter.get_finished_spans()) == 3

    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF  # noqa: PLC0415

    dropped = InMemorySpanExporter()
    quiet = TracerProvider(sampler=ALWAYS_OFF)
    quiet.add_span_processor(SimpleSpanProcessor(dropped))
    sink = otel_sink(tracer_provider=quiet)
    for run in runs:
        sink(run)
    assert dropped.get_finished_spans() == ()


@pytest.mark.anyio
async def test_an_attribute_length_limit_truncates_the_explanation() -> None:
    """The provider's span limits apply to the evaluation spans as to any span."""
    from opentelemetry.sdk.trace import SpanLimits  # noqa: PLC0415

    runs = await _runs()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_attribute_length=5))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = otel_sink(tracer_provider=provider)
    sink(runs[0])
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.evaluation.explanation"] == "score"
    assert _event(span)["gen_ai.evaluation.explanation"] == "score"


JUDGED_SCORERS = '''
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore_adapters.testing import ScriptedJudge

said = create_scorer(id="said-weather", description="d").generate_score(
    lambda ctx: float("weather" in str(ctx.run.output)))
judged = create_scorer(
    id="judged", description="d",
    judge=JudgeConfig(model=ScriptedJudge([{"score": 0.5}] * 8), instructions="judge"),
).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: "rate"))
'''


@pytest.fixture
def receiver() -> Any:
    """A local OTLP/HTTP receiver: its traces URL, and the protobuf bodies posted to it."""
    _Capture.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", _Capture.bodies
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def _received(bodies: list[bytes]) -> dict[str, list[dict[str, Any]]]:
    """The spans posted, by name: ids in hex, attributes as a flat dict."""
    from google.protobuf.json_format import MessageToDict  # noqa: PLC0415

    by_name: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        request = MessageToDict(ExportTraceServiceRequest.FromString(body))
        for resource in request["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        span[key] = base64.b64decode(span.get(key, "")).hex()
                    span["attributes"] = {a["key"]: next(iter(a["value"].values()))
                                          for a in span.get("attributes", [])}
                    by_name.setdefault(span["name"], []).append(span)
    return by_name


def test_cli_evaluation_spans_arrive_under_the_judged_span(
    tmp_path: Path, receiver: Any,
) -> None:
    """eval-traces --otel-endpoint URL --otel-evaluation-spans: an item span under the judged
    agent span, a span per scorer below it carrying the event, a chat span per judge call."""
    url, bodies = receiver
    scorers = tmp_path / "scorers.py"
    scorers.write_text(JUDGED_SCORERS)
    from scorecore_adapters.cli import main  # noqa: PLC0415

    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(OTLP / "genai_agent.json"), str(scorers), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--no-cache", "--otel-endpoint", url,
                 "--otel-evaluation-spans"], out=out, err=err)
    assert code == 0, out.getvalue() + err.getvalue()
    spans = _received(bodies)
    assert sorted(spans) == ["chat scripted-judge", f"evaluate {AGENT_TRACE}-{AGENT_SPAN}",
                             "score judged", "score said-weather"]
    (item,) = spans[f"evaluate {AGENT_TRACE}-{AGENT_SPAN}"]
    assert (item["traceId"], item["parentSpanId"]) == (AGENT_TRACE, AGENT_SPAN)
    for name in ("score judged", "score said-weather"):
        (scorer,) = spans[name]
        assert scorer["parentSpanId"] == item["spanId"]
        (event,) = scorer["events"]
        assert event["name"] == EVENT_NAME
    (judged,) = spans["score judged"]
    assert judged["attributes"]["gen_ai.evaluation.score.value"] == 0.5
    (call,) = spans["chat scripted-judge"]
    assert call["parentSpanId"] == judged["spanId"]
    assert call["traceId"] == AGENT_TRACE
    assert call["attributes"]["gen_ai.operation.name"] == "chat"
    assert call["attributes"]["gen_ai.provider.name"] == "scripted"
    assert call["attributes"]["gen_ai.request.model"] == "scripted-judge"
    assert int(call["attributes"]["gen_ai.usage.input_tokens"]) > 0


def test_cli_eval_without_the_flag_sends_evaluation_events_only(
    tmp_path: Path, receiver: Any,
) -> None:
    """eval --otel-endpoint alone: one evaluation span per scorer run and no item, scorer or
    judge spans; with --otel-evaluation-spans the dataset items become root item spans."""
    url, bodies = receiver
    scorers = tmp_path / "scorers.py"
    scorers.write_text(JUDGED_SCORERS)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "sunny", "input": "q", "output": "weather"}) + "\n")
    from scorecore_adapters.cli import main  # noqa: PLC0415

    args = ["eval", f"{scorers}:said", "--data", str(data), "--store",
            f"sqlite:{tmp_path / 's.db'}", "--no-cache", "--otel-endpoint", url]
    assert main(args, out=io.StringIO(), err=io.StringIO()) == 0
    assert sorted(_received(bodies)) == ["evaluation said-weather"]
    bodies.clear()
    assert main([*args, "--otel-evaluation-spans"], out=io.StringIO(), err=io.StringIO()) == 0
    spans = _received(bodies)
    assert sorted(spans) == ["evaluate sunny", "score said-weather"]
    assert spans["evaluate sunny"][0]["parentSpanId"] == ""


@pytest.mark.parametrize("kind", ["json-lines", "protobuf", "collector-proto"])
def test_files_the_sdks_encoder_writes_are_scored_under_its_agent_span(
    tmp_path: Path, receiver: Any, kind: str,
) -> None:
    """An agent traced by the OpenTelemetry SDK, its spans written by the SDK's OTLP encoder (as
    JSON lines through json_format, one protobuf request, or the Collector's length-prefixed
    frames): eval-traces scores the agent run (its answer and its tool call) and reports each
    score under the SDK's agent span."""
    url, bodies = receiver
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_id, agent_span = record_agent(provider)
    files = dict(zip(["json-lines", "protobuf", "collector-proto"],
                     write_trace_files(exporter.get_finished_spans(), tmp_path), strict=True))
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SDK_AGENT_SCORERS)
    from scorecore_adapters.cli import main  # noqa: PLC0415

    db = tmp_path / "s.db"
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(files[kind]), str(scorers),
                 "--store", f"sqlite:{db}", "--gate", "said-weather", "--gate", "used-tool",
                 "--otel-endpoint", url], out=out, err=err)
    assert code == 0, out.getvalue() + err.getvalue()
    assert "1/1 agent runs" in out.getvalue()
    spans = _received(bodies)
    assert sorted(spans) == ["evaluation said-weather", "evaluation used-tool"]
    for (span,) in spans.values():
        assert (span["traceId"], span["parentSpanId"]) == (trace_id, agent_span)
        assert span["attributes"]["gen_ai.evaluation.score.label"] == "pass"


def _framed(*messages: bytes) -> bytes:
    """The Collector file exporter's `format: proto`: each message after its length, a 4-byte
    big-endian unsigned integer."""
    return b"".join(len(m).to_bytes(4, "big") + m for m in messages)


def _sdk_frames() -> tuple[str, str, list[bytes]]:
    """An SDK-traced agent run, one export request per span, in the order the spans ended."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import (  # noqa: PLC0415
        encode_spans,
    )

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_id, agent_span = record_agent(provider)
    frames = [encode_spans([s]).SerializeToString() for s in exporter.get_finished_spans()]
    return trace_id, agent_span, frames


def test_collector_proto_frames_stream_traces_as_their_roots_arrive() -> None:
    """Length-prefixed requests are read one frame at a time; a trace whose spans came in
    several frames is yielded once the frame holding its root has been read."""
    trace_id, agent_span, frames = _sdk_frames()
    data = _framed(*frames)
    stream = io.BytesIO(data)
    traces = read_otlp_protobuf_frames(stream)
    trace = next(traces).unwrap()
    assert stream.tell() == len(data)  # the root is in the last frame
    assert trace.trace_id == trace_id
    assert len(trace.spans) == 4
    agent_input, (message,) = trace_to_agent_run(trace).unwrap()
    assert agent_input.input_messages[0].content.content == "What is the weather in Paris?"
    assert message.content.content == "Rainy weather in Paris today."
    assert next(traces, None) is None
    assert any(s.span_id == agent_span and s.parent_span_id is None for s in trace.spans)


def test_a_truncated_or_corrupt_frame_is_an_invalid_otlp_error_naming_it() -> None:
    """A frame cut short (in its length or its body) or that is not a request is an
    invalid_otlp TraceError naming the frame's number and byte offset, never an exception; a
    corrupt body does not stop the frames after it."""
    _, _, frames = _sdk_frames()
    good = _framed(*frames)
    offsets = [0]
    for frame in frames:
        offsets.append(offsets[-1] + 4 + len(frame))

    cut = list(read_otlp_protobuf_frames(io.BytesIO(good[:-3])))
    errors = [o.failure() for o in cut if isinstance(o, Failure)]
    assert [(e.kind, e.message) for e in errors] == [(
        "invalid_otlp", f"frame 4 at byte {offsets[3]}: truncated: "
                        f"{len(frames[3]) - 3} of its {len(frames[3])} bytes")]
    assert [len(o.unwrap().spans) for o in cut if not isinstance(o, Failure)] == [3]

    header = list(read_otlp_protobuf_frames(io.BytesIO(good + b"\x00\x01")))
    assert header[-1].failure().message == (
        f"frame 5 at byte {offsets[4]}: truncated: 2 of the 4 length bytes")

    garbage = _framed(frames[0], b"\xff\xff\xff", *frames[1:])
    read = list(read_otlp_protobuf_frames(io.BytesIO(garbage)))
    (error,) = [o.failure() for o in read if isinstance(o, Failure)]
    assert error.kind == "invalid_otlp"
    assert error.message.startswith(
        f"frame 2 at byte {4 + len(frames[0])}: not an OTLP protobuf trace request")
    assert [len(o.unwrap().spans) for o in read if not isinstance(o, Failure)] == [4]


@pytest.mark.parametrize(("name", "flag"), [("traces.bin", []), ("traces.pb", []),
                                            ("traces.pb", ["--format", "collector-proto"])])
def test_eval_traces_reads_the_collectors_proto_file(
    tmp_path: Path, name: str, flag: list[str],
) -> None:
    """eval-traces reads the Collector file exporter's proto format: found by its leading zero
    byte (JSON and a single request never start with one), or named by --format."""
    from scorecore_adapters.cli import main  # noqa: PLC0415

    _, _, frames = _sdk_frames()
    path = tmp_path / name
    path.write_bytes(_framed(*frames))
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SDK_AGENT_SCORERS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(path), str(scorers), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--gate", "said-weather", "--gate", "used-tool",
                 *flag], out=out, err=err)
    assert code == 0, out.getvalue() + err.getvalue()
    assert "1/1 agent runs" in out.getvalue()


def test_eval_traces_names_the_corrupt_frame(tmp_path: Path) -> None:
    """A truncated frame in the file is a failed item naming the frame (exit 2); the traces
    before it are still scored."""
    from scorecore_adapters.cli import main  # noqa: PLC0415

    _, _, frames = _sdk_frames()
    path = tmp_path / "traces.bin"
    whole = _framed(*frames)
    path.write_bytes(whole + whole[:10])
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SDK_AGENT_SCORERS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(path), f"{scorers}:said", "--store",
                 f"sqlite:{tmp_path / 's.db'}"], out=out, err=err)
    assert code == 2, out.getvalue() + err.getvalue()
    assert f"frame 5 at byte {len(whole)}: truncated: 6 of its" in err.getvalue()


@pytest.mark.anyio
async def test_a_failed_item_that_names_its_span_is_reported_under_it(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """An unreadable item whose source named the judged trace and span (eval-traces' agent
    run that cannot be read) is reported under that span, not orphaned in a new trace."""
    provider, exporter = spans
    exact = create_scorer(id="exact", description="d").generate_score(lambda ctx: 1.0)
    failed = InvalidItem(reason="no_agent_output", id=f"{AGENT_TRACE}-{AGENT_SPAN}",
                         extra={"target_trace_id": AGENT_TRACE, "target_span_id": AGENT_SPAN})
    await run_evals([failed], [exact], batch_id="b3", max_failures=None,
                    on_item_complete=otel_sink(tracer_provider=provider))
    (span,) = exporter.get_finished_spans()
    assert span.parent is not None
    assert (f"{span.parent.trace_id:032x}", f"{span.parent.span_id:016x}") == (
        AGENT_TRACE, AGENT_SPAN)
    assert _event(span)["error.type"] == "item"
