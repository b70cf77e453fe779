"""Tests of OTLP/JSON traces → scorecore traces (GenAI and OpenInference conventions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from returns.result import Failure, Success

from scorecore import create_scorer
from scorecore.traces import (
    Trace,
    agent_traces,
    extract_trajectory_from_trace,
    otlp_to_traces,
    read_otlp_json_lines,
    score_traces,
    trace_to_agent_run,
)
from tests.otlp_payloads import ids_as_base64

OTLP = Path(__file__).parent / "fixtures" / "otlp"


def _load(name: str) -> Any:
    return json.loads((OTLP / name).read_text(encoding="utf-8"))


def _one(name: str) -> Trace:
    traces = otlp_to_traces(_load(name)).unwrap()
    assert len(traces) == 1
    return traces[0]


def test_genai_spans_become_agent_model_and_tool_spans() -> None:
    """invoke_agent, chat and execute_tool spans get the span types the transforms read."""
    trace = _one("genai_agent.json")
    assert trace.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    kinds = {s.span_id: s.span_type for s in trace.spans}
    assert kinds == {"00f067aa0ba902b7": "agent_run", "53995c3f42cd8ad8": "model_generation",
                     "a1b2c3d4e5f60718": "tool_call", "b7ad6b7169203331": "model_generation"}
    chat = trace.span("53995c3f42cd8ad8")
    assert chat is not None
    assert chat.attributes is not None
    assert chat.attributes["model"] == "gpt-4o-2024-08-06"
    assert chat.attributes["usage"] == {"inputTokens": 97, "outputTokens": 52}
    assert chat.attributes["finishReason"] == "tool_call"
    # the raw attributes are kept beside the mapped ones
    assert chat.attributes["gen_ai.response.id"] == "chatcmpl-9J3uIL87gldCFtiIbyaOvTeYBRA3l"
    tool = trace.span("a1b2c3d4e5f60718")
    assert tool is not None
    assert (tool.entity_name, tool.input, tool.output) == (
        "get_weather", {"location": "Paris"}, "rainy, 57°F")


def test_genai_trace_is_an_agent_run() -> None:
    """trace_to_agent_run reads the GenAI trace: messages, system prompt, tool invocation, text."""
    agent_input, output = trace_to_agent_run(_one("genai_agent.json")).unwrap()
    assert [m.content.content for m in agent_input.input_messages] == ["Weather in Paris?"]
    assert [s.content for s in agent_input.system_messages] == [
        "You are a helpful weather assistant."]
    (answer,) = output
    assert answer.content.content == (
        "The weather in Paris is currently rainy with a temperature of 57°F.")
    (invocation,) = answer.content.tool_invocations or ()
    assert (invocation.tool_name, invocation.args, invocation.result) == (
        "get_weather", {"location": "Paris"}, "rainy, 57°F")


def test_genai_trajectory() -> None:
    """extract_trajectory_from_trace lists the model calls and the tool call in order."""
    trajectory = extract_trajectory_from_trace(_one("genai_agent.json")).unwrap()
    # the single agent root is unwrapped to its children, as for Mastra's traces
    names = [(c.step_type, c.name) for c in trajectory.steps]
    assert names == [("model_generation", "chat gpt-4o"), ("tool_call", "get_weather"),
                     ("model_generation", "chat gpt-4o")]
    first, tool, _ = trajectory.steps
    assert (first.model_id, first.prompt_tokens, first.completion_tokens) == (
        "gpt-4o-2024-08-06", 97, 52)
    assert (tool.tool_args, tool.tool_result, tool.success) == (
        {"location": "Paris"}, {"value": "rainy, 57°F"}, True)
    assert trajectory.total_duration == 2.4


def test_openinference_trace_is_an_agent_run() -> None:
    """AGENT, LLM and TOOL spans map like the GenAI ones; a RETRIEVER span stays generic."""
    trace = _one("openinference_agent.json")
    kinds = sorted(s.span_type for s in trace.spans)
    assert kinds == ["agent_run", "generic", "model_generation", "model_generation", "tool_call"]
    agent_input, output = trace_to_agent_run(trace).unwrap()
    assert [m.content.content for m in agent_input.input_messages] == [
        "What's the weather like in San Francisco?"]
    assert [s.content for s in agent_input.system_messages] == ["You are a weather bot."]
    (answer,) = output
    assert answer.content.content == "It is 65°F and sunny in San Francisco."
    (invocation,) = answer.content.tool_invocations or ()
    assert (invocation.tool_name, invocation.args, invocation.result) == (
        "get_weather", {"location": "San Francisco, CA"},
        {"temperature": 65, "conditions": "sunny"})
    llm = trace.span("c9c7c989f97918e2")
    assert llm is not None
    assert llm.attributes is not None
    assert llm.attributes["model"] == "gpt-4-0613"
    assert llm.attributes["usage"] == {"inputTokens": 82, "outputTokens": 17}
    assert llm.output is None or "text" in llm.output


def test_unknown_spans_are_kept_generic_with_their_attributes() -> None:
    """A span of neither convention is a generic span keeping its attributes and resource."""
    line = (OTLP / "collector_file_exporter.jsonl").read_text(encoding="utf-8").splitlines()[2]
    traces = {t.trace_id: t for t in otlp_to_traces(json.loads(line)).unwrap()}
    http = traces["1f0e2d3c4b5a69788796a5b4c3d2e1f0"].span("1111111111111111")
    assert http is not None
    assert http.span_type == "generic"
    assert http.attributes == {"http.request.method": "POST"}
    assert http.extra["otel"]["resource"] == {"service.name": "weather-service"}


def _request(span: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


_GOOD = {"traceId": "aa", "spanId": "bb", "name": "chat", "startTimeUnixNano": "1"}


@pytest.mark.parametrize(("change", "message"), [
    ({"startTimeUnixNano": "soon"},
     "span bb ('chat'): startTimeUnixNano: must be nanoseconds since the epoch, got 'soon'"),
    ({"spanId": "not-hex"}, "span not-hex ('chat'): spanId: must be a hex string, got 'not-hex'"),
    ({"attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                     {"key": "gen_ai.input.messages", "value": {"stringValue": "[{"}}]},
     "span bb ('chat'): gen_ai.input.messages: must be JSON, Expecting property name "
     "enclosed in double quotes at character 2"),
    ({"attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                     {"key": "gen_ai.usage.input_tokens", "value": {"stringValue": "many"}}]},
     "span bb ('chat'): gen_ai.usage.input_tokens: must be an integer, got 'many'"),
    ({"attributes": [{"key": "x", "value": {"intValue": "1.5"}}]},
     "span bb ('chat'): attributes[0] (x): intValue must be an integer, got '1.5'"),
    ({"attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                     {"key": "llm.input_messages.0.message.content",
                      "value": {"stringValue": "hi"}}]},
     "span bb ('chat'): llm.input_messages.0.message.role: required, a string, got None"),
])
def test_malformed_span_is_a_trace_error_naming_span_and_field(
    change: dict[str, Any], message: str
) -> None:
    """A malformed span is an invalid_span TraceError naming the span and the field."""
    outcome = otlp_to_traces(_request({**_GOOD, **change}))
    assert isinstance(outcome, Failure)
    error = outcome.failure()
    assert (error.kind, error.message) == ("invalid_span", message)


@pytest.mark.parametrize("payload", [None, [], {"resourceSpans": "x"}, {"other": 1}])
def test_not_a_request_is_invalid_otlp(payload: object) -> None:
    """A payload that is not a trace request is an invalid_otlp TraceError, never an exception."""
    outcome = otlp_to_traces(payload)
    assert isinstance(outcome, Failure)
    assert outcome.failure().kind == "invalid_otlp"


def test_file_exporter_lines_stream_traces_when_their_root_arrives() -> None:
    """Spans of one trace spread over lines are joined; each trace comes once, when complete."""
    lines = (OTLP / "collector_file_exporter.jsonl").read_text(encoding="utf-8").splitlines()
    lines.append(json.dumps(_request(_GOOD)))  # a fourth line, read only after the yields
    read = 0

    def counting() -> Any:
        nonlocal read
        for line in lines:
            read += 1
            yield line

    out: list[tuple[int, str | None, int]] = []
    for outcome in read_otlp_json_lines(counting()):
        trace = outcome.unwrap()
        out.append((read, trace.trace_id, len(trace.spans)))
    # both roots arrive on line 3: nothing is yielded before, both right after it
    assert out == [(3, "4bf92f3577b34da6a3ce929d0e0e4736", 4),
                   (3, "1f0e2d3c4b5a69788796a5b4c3d2e1f0", 3), (4, "aa", 1)]


def test_a_bad_line_fails_alone() -> None:
    """A line that is not JSON is a Failure naming the line; the other lines still read."""
    good = json.dumps(_request(_GOOD))
    outcomes = list(read_otlp_json_lines([good, "{oops", good.replace('"aa"', '"cc"')]))
    assert [type(o) for o in outcomes] == [Success, Failure, Success]
    assert outcomes[1].failure().message.startswith("line 2: not JSON")


def test_a_malformed_span_fails_its_trace_only() -> None:
    """A malformed span fails its own trace (named), not the file."""
    bad = {**_GOOD, "traceId": "cc", "spanId": "dd", "startTimeUnixNano": "x"}
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [_GOOD, bad]}]}]})
    outcomes = list(read_otlp_json_lines([line]))
    assert isinstance(outcomes[0], Success)
    error = outcomes[1].failure()
    assert (error.kind, error.trace_id, error.span_id) == ("invalid_span", "cc", "dd")
    assert error.message.startswith("line 1: span dd ('chat'): startTimeUnixNano")


def test_pretty_printed_single_request_is_read_whole() -> None:
    """A file holding one indented request (not JSON lines) is read as one request."""
    text = (OTLP / "genai_agent.json").read_text(encoding="utf-8")
    (outcome,) = read_otlp_json_lines(text.splitlines(keepends=True))
    assert len(outcome.unwrap().spans) == 4


def test_agent_traces_cut_the_agent_out_of_a_larger_trace() -> None:
    """An agent under an HTTP span becomes its own trace, its input and output taken from its
    model calls when it records none, so trace_to_agent_run scores it."""
    lines = (OTLP / "collector_file_exporter.jsonl").read_text(encoding="utf-8").splitlines()
    traces = [o.unwrap() for o in read_otlp_json_lines(lines)]
    http_rooted = traces[1]
    assert trace_to_agent_run(http_rooted).failure().kind == "no_root_agent_span"
    (agent,) = agent_traces(http_rooted)
    assert [s.span_id for s in agent.spans] == ["2222222222222222", "3333333333333333"]
    root = agent.spans[0]
    assert root.parent_span_id is None
    assert root.extra["otel"]["parentSpanId"] == "1111111111111111"
    agent_input, (answer,) = trace_to_agent_run(agent).unwrap()
    assert next(m.content.content for m in agent_input.input_messages) == "Weather in Paris?"
    assert answer.content.content.startswith("The weather in Paris")


def test_agent_traces_keep_a_rooted_agent_trace_whole() -> None:
    """A trace whose root is the agent is returned as it is; a trace without agents gives none."""
    trace = _one("genai_agent.json")
    assert agent_traces(trace) == (trace,)
    assert agent_traces(Trace(spans=[s for s in trace.spans if s.span_type != "agent_run"])) == ()


@pytest.mark.anyio
async def test_score_traces_scores_otlp_traces() -> None:
    """score_traces scores the converted traces with an agent scorer."""
    said = create_scorer(id="said-weather", description="d", type="agent").generate_score(
        lambda ctx: float("weather" in ctx.run.output[0].content.content))
    traces = [_one("genai_agent.json"), _one("openinference_agent.json")]
    summary = await score_traces(said, traces)
    assert summary.scored_count == 2
    assert [r.outcome.unwrap().score for r in summary.results] == [1.0, 0.0]


def test_a_broken_first_line_does_not_drop_the_file() -> None:
    """JSON lines whose first line is broken: that line fails, the next lines still read."""
    good = json.dumps(_request(_GOOD))
    outcomes = list(read_otlp_json_lines(["{oops\n", good + "\n", "\n", "[1,\n"]))
    assert [type(o) for o in outcomes] == [Failure, Success, Failure]
    assert outcomes[0].failure().message.startswith("line 1: not JSON")
    assert outcomes[2].failure().message.startswith("line 4: not JSON")


def _base64_ids(payload: Any) -> Any:
    """The payload as protobuf's JSON mapping writes it (google.protobuf.json_format): ids in
    base64, enums by name."""
    for resource in ids_as_base64(payload)["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["kind"] = "SPAN_KIND_INTERNAL"
    return payload


@pytest.mark.parametrize("name", ["genai_agent.json", "openinference_agent.json"])
def test_protobuf_json_mapping_ids_read_as_hex(name: str) -> None:
    """A request written with protobuf's JSON mapping (base64 ids, as json_format dumps what the
    Python SDK's OTLP encoder makes) reads into the same spans and agent run as OTLP/JSON."""
    hex_trace = _one(name)
    (line,) = read_otlp_json_lines([json.dumps(_base64_ids(_load(name)))])
    trace = line.unwrap()
    assert trace.trace_id == hex_trace.trace_id
    assert [(s.span_id, s.parent_span_id, s.span_type) for s in trace.spans] == [
        (s.span_id, s.parent_span_id, s.span_type) for s in hex_trace.spans]
    assert trace_to_agent_run(trace).unwrap() == trace_to_agent_run(hex_trace).unwrap()


@pytest.mark.parametrize("bad", ["AAAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAA*AAAAAAAAAA==",
                                 "AAAAAAAAAAA="])
def test_a_base64_trace_id_of_the_wrong_size_is_malformed(bad: str) -> None:
    """Only a base64 id of exactly 16 (trace) or 8 (span) bytes is read; anything else stays
    an invalid_span naming the field and the value."""
    outcome = otlp_to_traces(_request({**_GOOD, "traceId": bad}))
    assert isinstance(outcome, Failure)
    assert outcome.failure().message == (
        f"span bb ('chat'): traceId: must be a hex string, got {bad!r}")
