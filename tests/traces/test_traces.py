"""Tests of trace values, the trace → agent-run transform, trace scoring and trajectories."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from scorecore import AgentInput, ScorerRunError, StepRaised, create_scorer, not_scorable
from scorecore.agent import (
    AgentMessage,
    MessageContent,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)
from scorecore.traces import (
    ScoreRecord,
    Span,
    Trace,
    TraceError,
    TraceTarget,
    _mastra,
    _scoring,
    _sinks,
    _spans,
    _trajectories,
    extract_trajectory,
    score_trace,
    score_traces,
    trace_to_agent_run,
)
from scorecore_adapters.testing import virtual_runtime
from tests.module_checks import assert_all_is_sorted_and_complete

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Any:
    """Load a JSON fixture."""
    return json.loads((FIXTURES / name).read_text())


INVALID = fixture("invalid_traces.json")


def ok_run(trace: Any) -> tuple[AgentInput, tuple[AgentMessage, ...]]:
    """Transform a trace that must be valid."""
    result = trace_to_agent_run(trace)
    assert isinstance(result, Success), result
    return result.unwrap()


# ------------------------------------------------------------------ transform


def test_weather_trace_input_messages_come_from_the_root_agent_span():
    """Array content is normalised to its last text part; unknown roles are skipped."""
    agent_input, _ = ok_run(fixture("agent_weather.json"))
    (message,) = agent_input.input_messages
    assert message.role == "user"
    assert message.id == ""
    assert message.text() == "What's the weather in Paris?"
    assert message.content.parts == (TextPart(text="What's the weather in Paris?"),)
    assert message.content.format == 2
    assert message.created_at == datetime(2025, 6, 1, 10, 0, tzinfo=UTC)


def test_weather_trace_system_and_remembered_messages_come_from_the_first_model_span():
    """The first direct model_generation child by start time is the primary LLM span."""
    agent_input, _ = ok_run(fixture("agent_weather.json"))
    assert [m.content for m in agent_input.system_messages] == [
        "You are a weather assistant.", "Answer briefly.",
    ]
    assert [(m.role, m.text()) for m in agent_input.remembered_messages] == [
        ("user", "Remember: I live in Paris."),
        ("assistant", "Noted, Paris it is."),
    ]
    assert agent_input.tagged_system_messages == {}


def test_weather_trace_output_has_tool_invocations_then_text():
    """Direct tool_call children, by start time, become tool-invocation parts before the text."""
    _, output = ok_run(fixture("agent_weather.json"))
    (answer,) = output
    assert answer.role == "assistant"
    assert answer.created_at == datetime(2025, 6, 1, 10, 0, 5, tzinfo=UTC)
    parts = answer.content.parts
    assert parts is not None
    assert [type(p) for p in parts] == [ToolInvocationPart, ToolInvocationPart, TextPart]
    geocode, forecast = (p.tool_invocation for p in parts if isinstance(p, ToolInvocationPart))
    assert geocode == ToolInvocation(
        tool_call_id="tool-geocode", tool_name="geocode", tool_id="geocode-tool",
        args={"query": "Paris"}, result={"lat": 48.85, "lon": 2.35}, state="result",
    )
    assert forecast.tool_name == "forecast"
    assert forecast.args == {"city": "Paris", "days": 2}
    assert answer.content.content == "Sunny today, rain tomorrow."
    assert answer.content.tool_invocations == (geocode, forecast)


def test_minimal_trace_string_input_blank_text_and_unnamed_tools():
    """A string input is one user message; blank text adds no text part; names fall back."""
    agent_input, output = ok_run(fixture("agent_minimal.json"))
    assert [(m.role, m.text()) for m in agent_input.input_messages] == [
        ("user", "Summarise the report."),
    ]
    # The model span repeats the input message, so nothing is "remembered".
    assert agent_input.remembered_messages == ()
    (answer,) = output
    assert answer.created_at == datetime(2025, 6, 2, 8, 0, tzinfo=UTC)  # no ended_at
    parts = answer.content.parts
    assert parts is not None
    calls = [p.tool_invocation for p in parts if isinstance(p, ToolInvocationPart)]
    assert len(parts) == 2
    assert [(c.tool_name, c.tool_id, c.args, c.result) for c in calls] == [
        ("fetch-report", "fetch-report", {}, {}),
        ("unknown", None, {"page": 1}, []),
    ]
    assert answer.content.content == "   "


def test_messages_object_input_and_list_model_input():
    """``{"messages": [...]}`` input; remembered = model messages unlike the first input."""
    agent_input, output = ok_run(fixture("agent_messages_object.json"))
    assert [m.text() for m in agent_input.input_messages] == [
        "Hello", "Translate 'chat' to English.",
    ]
    assert [m.text() for m in agent_input.remembered_messages] == [
        "Translate 'chat' to English.",
    ]
    assert output[0].text() == "Cat."


def test_a_trace_value_gives_the_same_run_as_its_json():
    """Structuring first changes nothing."""
    data = fixture("agent_weather.json")
    assert trace_to_agent_run(Trace.from_mastra_json(data).unwrap()) == trace_to_agent_run(data)


@pytest.mark.parametrize("case", INVALID, ids=[c["case"] for c in INVALID])
def test_every_invalid_trace_is_a_failure_with_mastras_message(case: dict[str, Any]):
    """Each validation error of Mastra's trace format is a TraceError value."""
    result = trace_to_agent_run(case["trace"])
    assert isinstance(result, Failure)
    error = result.failure()
    assert isinstance(error, TraceError)
    assert (error.kind, error.message) == (case["kind"], case["message"])


def test_dangling_parent_names_the_span():
    """The error carries the span id and the trace id as attributes."""
    case = next(c for c in INVALID if c["kind"] == "dangling_parent")
    error = trace_to_agent_run(case["trace"]).failure()
    assert (error.trace_id, error.span_id) == ("t", "llm")


def test_an_empty_trace_value_has_no_spans():
    """A Trace value may be empty; the transform reports it."""
    assert trace_to_agent_run(Trace(spans=())).failure().kind == "no_spans"


def test_naive_and_aware_timestamps_sort_together():
    """Naive timestamps are read as UTC rather than making sorting raise."""
    spans = [
        Span(span_id="a", span_type="agent_run", output={"text": "x"},
             started_at=datetime(2025, 1, 1, tzinfo=UTC)),
        Span(span_id="m2", parent_span_id="a", span_type="model_generation",
             started_at=datetime(2025, 1, 1, 0, 0, 2, tzinfo=UTC),
             input={"messages": [{"role": "system", "content": "late"}]}),
        Span(span_id="m1", parent_span_id="a", span_type="model_generation",
             started_at=datetime(2025, 1, 1, 0, 0, 1),
             input={"messages": [{"role": "system", "content": "early"}]}),
    ]
    agent_input, _ = ok_run(Trace(spans=spans))
    assert agent_input.system_messages[0].content == "early"


# ------------------------------------------------------------------ values


def test_span_validation_names_field_and_value():
    """Bad span fields raise with the field and value named."""
    with pytest.raises(ValueError, match=r"Span.span_id must be a non-empty str, got ''"):
        Span(span_id="", span_type="x", started_at=datetime(2025, 1, 1))
    with pytest.raises(TypeError, match=r"Span.started_at must be a datetime, got '2025'"):
        Span(span_id="s", span_type="x", started_at="2025")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Trace.spans\[0\] must be a Span"):
        Trace(spans=[{"spanId": "s"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"TraceError\.kind must be one of"):
        TraceError(kind="nope", message="m")  # type: ignore[arg-type]


def test_span_json_keeps_unknown_keys_and_round_trips():
    """Mastra keys not modelled (createdAt, isEvent …) are kept in ``extra``."""
    data = fixture("agent_weather.json")
    trace = Trace.from_mastra_json(data).unwrap()
    root = trace.span("agent-1")
    assert root is not None
    assert root.extra == {"createdAt": "2025-06-01T10:00:05.100Z", "updatedAt": None}
    assert root.entity_name == "Weather Agent"
    assert Trace.from_mastra_json(trace.to_mastra_json()).unwrap() == trace


def test_trace_id_defaults_to_the_spans_trace_id():
    """A trace without ``traceId`` takes its spans' one."""
    data = fixture("agent_weather.json")
    del data["traceId"]
    assert Trace.from_mastra_json(data).unwrap().trace_id == "trace-weather-1"


ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
              max_size=8)
times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                     timezones=st.just(UTC))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=6,
)
spans = st.builds(
    Span, span_id=ids, span_type=st.sampled_from(["agent_run", "tool_call", "generic"]),
    started_at=times, parent_span_id=st.none() | ids, ended_at=st.none() | times,
    entity_name=st.none() | ids, input=json_values, output=json_values,
)


@given(st.lists(spans, max_size=5), st.none() | ids)
def test_trace_json_round_trip(span_list: list[Span], trace_id: str | None):
    """``from_mastra_json(to_mastra_json(trace)) == trace`` for every trace."""
    trace = Trace(spans=span_list, trace_id=trace_id)
    back = Trace.from_mastra_json(json.loads(json.dumps(trace.to_mastra_json()))).unwrap()
    expected_id = trace_id or next((s.trace_id for s in span_list if s.trace_id), None)
    assert back == Trace(spans=span_list, trace_id=expected_id)


@given(st.lists(spans, max_size=6))
def test_transform_never_raises(span_list: list[Span]):
    """Any trace gives a Success or a TraceError, never an exception."""
    result = trace_to_agent_run(Trace(spans=span_list))
    assert isinstance(result, Success) or isinstance(result.failure(), TraceError)


# ------------------------------------------------------------------ trajectory


def test_extract_trajectory_from_a_trace_output():
    """The tool calls of the transformed output, in order, all successful."""
    _, output = ok_run(fixture("agent_weather.json"))
    trajectory = extract_trajectory(output)
    assert trajectory.tool_names == ("geocode", "forecast")
    assert trajectory.steps[1].tool_args == {"city": "Paris", "days": 2}
    assert trajectory.steps[1].tool_result == {"forecast": ["sun", "rain"]}
    assert all(s.success and s.step_type == "tool_call" for s in trajectory.steps)


def test_extract_trajectory_states_and_fallback():
    """Errors are unsuccessful steps, partial calls are skipped, tool_invocations fill in."""
    calls = (
        ToolInvocation(tool_call_id="1", tool_name="a", state="result"),
        ToolInvocation(tool_call_id="2", tool_name="b", state="result", is_error=True),
        ToolInvocation(tool_call_id="3", tool_name="c", state="output-error",
                       error_text="boom"),
        ToolInvocation(tool_call_id="4", tool_name="d", state="call"),
        ToolInvocation(tool_call_id="5", tool_name="e", state="partial-call"),
    )
    with_parts = AgentMessage(role="assistant", content=MessageContent(
        parts=tuple(ToolInvocationPart(tool_invocation=c) for c in calls)))
    without_parts = AgentMessage(role="assistant", content=MessageContent(
        parts=None, content="x", tool_invocations=(calls[0],)))
    trajectory = extract_trajectory([with_parts, without_parts])
    assert [(s.name, s.success) for s in trajectory.steps] == [
        ("a", True), ("b", False), ("c", False), ("d", False), ("a", True),
    ]
    assert extract_trajectory([]).steps == ()


# ------------------------------------------------------------------ scoring


def tools_used():
    """An agent scorer: the fraction of expected tools called."""
    return create_scorer(id="tools", description="Used geocode and forecast", type="agent") \
        .preprocess(lambda ctx: extract_trajectory(ctx.run.output).tool_names) \
        .generate_score(
            lambda ctx: len({"geocode", "forecast"} & set(ctx.results.preprocess_step_result)) / 2
        )


def echo_scorer():
    """A plain scorer whose score is the length of the output's JSON."""
    return create_scorer(id="echo", description="d").generate_score(
        lambda ctx: float(len(json.dumps(ctx.run.output)))
    )


@pytest.mark.anyio
async def test_agent_scorer_gets_the_transformed_run(anyio_backend: str):
    """``type="agent"`` scorers see AgentInput and the assistant messages."""
    result = await score_trace(tools_used(), fixture("agent_weather.json"),
                               runtime=virtual_runtime()[0])
    value = result.unwrap()
    assert value.score == 1.0
    assert isinstance(value.run.input, AgentInput)
    assert value.run.output[0].text() == "Sunny today, rain tomorrow."
    assert value.run.run_id == "run-1"
    assert value.run.extra == {
        "score_source": "trace", "target_scope": "span", "target_entity_type": "generic",
        "target_trace_id": "trace-weather-1", "target_span_id": "other-root",
    }


@pytest.mark.anyio
async def test_agent_scorer_on_an_invalid_trace_gets_the_trace_error(anyio_backend: str):
    """The transform's failure is returned as is."""
    case = next(c for c in INVALID if c["kind"] == "no_model_span")
    error = (await score_trace(tools_used(), case["trace"])).failure()
    assert isinstance(error, TraceError)
    assert error.message == "No model generation span found in trace"


@pytest.mark.anyio
async def test_plain_scorer_gets_the_target_span(anyio_backend: str):
    """Other scorers get the span's input and output; the root is the default target."""
    trace = fixture("workflow_steps.json")
    root = (await score_trace(echo_scorer(), trace)).unwrap()
    assert (root.run.input, root.run.output) == (
        {"question": "Who wrote Dune?"}, {"answer": "Frank Herbert"},
    )
    step = (await score_trace(echo_scorer(), trace, "retrieve")).unwrap()
    assert step.run.input == {"query": "Dune author"}
    assert step.run.extra["target_entity_type"] == "workflow_step"


@pytest.mark.anyio
async def test_missing_span_is_span_not_found(anyio_backend: str):
    """Mastra's message names the trace and span ids."""
    error = (await score_trace(echo_scorer(), fixture("workflow_steps.json"), "nope")).failure()
    assert isinstance(error, TraceError)
    assert error.kind == "span_not_found"
    assert error.message == "Span not found for scoring, traceId: trace-workflow, spanId: nope"


@pytest.mark.anyio
async def test_a_trace_without_a_root_span_is_span_not_found(anyio_backend: str):
    """With no span_id, the target is the first root span; none is an error."""
    trace = Trace(spans=[Span(span_id="c", parent_span_id="p", span_type="x",
                              started_at=datetime(2025, 1, 1))], trace_id="t")
    error = (await score_trace(echo_scorer(), trace)).failure()
    assert isinstance(error, TraceError)
    assert error.message == "Span not found for scoring, traceId: t, spanId: None"


@pytest.mark.anyio
async def test_a_failing_scorer_is_a_scorer_run_error(anyio_backend: str):
    """A raising step becomes Failure(ScorerRunError), never an exception."""
    boom = create_scorer(id="boom", description="d").generate_score(lambda ctx: 1 / 0)
    error = (await score_trace(boom, fixture("workflow_steps.json"))).failure()
    assert isinstance(error, ScorerRunError)
    assert isinstance(error.cause, StepRaised)


@pytest.mark.anyio
async def test_sink_receives_a_record_and_its_failure_is_a_value(anyio_backend: str):
    """Successful runs go to the sink; a raising sink is a sink_failed TraceError."""
    records: list[ScoreRecord] = []

    async def sink(record: ScoreRecord) -> None:
        records.append(record)

    trace = fixture("workflow_steps.json")
    await score_trace(echo_scorer(), trace, "retrieve", sink=sink)
    (record,) = records
    assert (record.scorer_id, record.source, record.trace_id, record.span_id) == (
        "echo", "trace", "trace-workflow", "retrieve",
    )
    assert (record.entity_type, record.entity_id) == ("workflow_step", "retrieve")
    assert record.score == record.result.score
    assert record.run_id == record.result.run_id

    def broken(record: ScoreRecord) -> None:
        raise OSError("disk full")

    error = (await score_trace(echo_scorer(), trace, sink=broken)).failure()
    assert isinstance(error, TraceError)
    assert error.kind == "sink_failed"
    assert error.message == "the sink raised OSError: disk full"
    assert error.result is not None
    assert error.result.score is not None


@pytest.mark.anyio
async def test_score_traces_summarises_a_batch_in_input_order(anyio_backend: str):
    """Counts of scored, not scorable and failed; results keep the input order."""
    picky = create_scorer(id="picky", description="d").generate_score(
        lambda ctx: not_scorable("no input") if ctx.run.input is None else 1.0
    )
    workflow = fixture("workflow_steps.json")
    no_input = Trace(spans=[Span(span_id="r", span_type="generic",
                                 started_at=datetime(2025, 1, 1))], trace_id="t-none")
    summary = await score_traces(
        picky,
        [
            workflow,
            TraceTarget(trace=workflow, span_id="retrieve", dataset_item_id="item-2"),
            no_input,
            {"traceId": "broken"},
            TraceTarget(trace=workflow, span_id="missing"),
        ],
        concurrency=2, batch_id="b1", dataset_id="d1",
    )
    assert (summary.scored_count, summary.not_scorable_count, summary.failed_count) == (2, 1, 2)
    assert [r.index for r in summary.results] == [0, 1, 2, 3, 4]
    assert [r.ok for r in summary.results] == [True, True, True, False, False]
    second = summary.results[1]
    assert (second.trace_id, second.span_id, second.dataset_item_id) == (
        "trace-workflow", "retrieve", "item-2",
    )
    assert summary.results[3].trace_id == "broken"
    assert (summary.batch_id, summary.dataset_id) == ("b1", "d1")


@pytest.mark.anyio
async def test_score_traces_respects_the_concurrency_limit(anyio_backend: str):
    """Never more than ``concurrency`` runs at once, and lazily consumed targets."""
    running = 0
    peak = 0

    async def slow(ctx: Any) -> float:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        running -= 1
        return 1.0

    scorer = create_scorer(id="slow", description="d").generate_score(slow)
    trace = fixture("workflow_steps.json")
    summary = await score_traces(scorer, (trace for _ in range(12)), concurrency=3)
    assert summary.scored_count == 12
    assert 1 < peak <= 3


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_score_traces_rejects_a_bad_concurrency(bad: Any):
    """Misuse raises before anything runs."""
    with pytest.raises(ValueError, match=r"concurrency must be an int >= 1, got"):
        anyio.run(lambda: score_traces(echo_scorer(), [], concurrency=bad))


@pytest.mark.parametrize("mod", [_spans, _mastra, _sinks, _scoring, _trajectories],
                         ids=lambda m: m.__name__)
def test_all_is_sorted_and_complete(mod: ModuleType):
    """Every public name of each private traces module is in its sorted ``__all__``."""
    assert_all_is_sorted_and_complete(mod, unlisted={"deliver"})
