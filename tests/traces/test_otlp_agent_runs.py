"""How OTLP spans become an agent run: the fill-in, wrapper spans, failed tools."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from scorecore.traces import otlp_to_traces, trace_to_agent_run
from scorecore_adapters.cli import main
from tests.traces import conformance_scorers


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _span(span_id: str, parent: str, name: str, *attrs: dict[str, Any],
          error: str | None = None) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": "ab" * 16, "spanId": span_id * 8, "name": name,
                            "parentSpanId": parent * 8 if parent else "",
                            "startTimeUnixNano": str(1_760_000_000_000_000_000 + len(name)),
                            "attributes": list(attrs)}
    if error is not None:
        span["status"] = {"code": 2, "message": error}
    return span


def _run(*spans: dict[str, Any]) -> Any:
    (trace,) = otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
                              ).unwrap()
    return trace_to_agent_run(trace).unwrap()


CHAT_INPUT = json.dumps([
    {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
    {"role": "assistant", "parts": [{"type": "text", "content": "Hello"}]},
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
])
ANSWER = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}])


def test_an_agent_without_messages_takes_the_last_user_message_as_input() -> None:
    """The fill-in input is the first model call's last user message; the earlier turns are
    remembered messages, listed once."""
    agent_input, _ = _run(
        _span("a", "", "invoke_agent", _attr("gen_ai.operation.name", "invoke_agent")),
        _span("c", "a", "chat", _attr("gen_ai.operation.name", "chat"),
              _attr("gen_ai.input.messages", CHAT_INPUT),
              _attr("gen_ai.output.messages", ANSWER)))
    assert [m.text() for m in agent_input.input_messages] == ["Weather in Paris?"]
    assert [m.text() for m in agent_input.remembered_messages] == ["Hi", "Hello"]
    assert [s.content for s in agent_input.system_messages] == ["Be brief."]


def test_a_failed_tool_under_a_wrapper_span_is_an_error_result() -> None:
    """A tool span with an error status, under a generic wrapper span, is a tool call of the
    agent run with is_error=True and the status message as its error text."""
    _, (answer,) = _run(
        _span("a", "", "invoke_agent", _attr("gen_ai.operation.name", "invoke_agent"),
              _attr("gen_ai.output.messages", ANSWER)),
        _span("c", "a", "chat", _attr("gen_ai.operation.name", "chat"),
              _attr("gen_ai.input.messages", CHAT_INPUT)),
        _span("b", "a", "running tools"),
        _span("d", "b", "execute_tool", _attr("gen_ai.operation.name", "execute_tool"),
              _attr("gen_ai.tool.name", "get_weather"),
              _attr("gen_ai.tool.call.arguments", '{"city": "Paris"}'),
              error="weather service timed out"))
    (call,) = answer.content.tool_invocations
    assert (call.tool_name, call.args, call.is_error, call.error_text) == (
        "get_weather", {"city": "Paris"}, True, "weather service timed out")


def test_openinference_is_read_first_where_both_conventions_are_present() -> None:
    """A tool span with OpenInference and GenAI attributes takes its arguments from
    input.value, not the GenAI side's parameter schema."""
    _, (answer,) = _run(
        _span("a", "", "agent", _attr("openinference.span.kind", "AGENT"),
              _attr("gen_ai.operation.name", "invoke_agent"), _attr("agent.name", "weather"),
              _attr("output.value", "Sunny.")),
        _span("c", "a", "llm", _attr("openinference.span.kind", "LLM")),
        _span("d", "a", "get_weather", _attr("openinference.span.kind", "TOOL"),
              _attr("gen_ai.operation.name", "execute_tool"),
              _attr("gen_ai.tool.call.arguments", '{"type": "object"}'),
              _attr("input.value", '{"city": "Paris"}')))
    (call,) = answer.content.tool_invocations
    assert call.args == {"city": "Paris"}


def test_pydantic_ai_1_span_names_are_an_agent_run() -> None:
    """pydantic-ai 1.0's agent run / running tools / running tool spans (no operation name)
    give one agent run with the tool's tool_arguments and tool_response."""
    agent_input, (answer,) = _run(
        _span("a", "", "agent run", _attr("agent_name", "weather"),
              _attr("final_result", "Sunny.")),
        _span("c", "a", "chat", _attr("gen_ai.operation.name", "chat"),
              _attr("gen_ai.input.messages", CHAT_INPUT)),
        _span("b", "a", "running tools"),
        _span("d", "b", "running tool", _attr("gen_ai.tool.name", "get_weather"),
              _attr("tool_arguments", '{"city": "Paris"}'),
              _attr("tool_response", "Sunny")))
    (call,) = answer.content.tool_invocations
    assert (call.args, call.result, answer.text()) == ({"city": "Paris"}, "Sunny", "Sunny.")
    assert [m.text() for m in agent_input.input_messages] == ["Weather in Paris?"]


INSTRUMENTATIONS = Path(__file__).parent / "fixtures" / "instrumentations"


def _eval_traces(tmp_path: Path, *argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", *argv, str(Path(conformance_scorers.__file__)),
                 "--store", f"sqlite:{tmp_path / 's.db'}"], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def test_log_records_pointing_at_a_trace_not_in_the_file_are_named(tmp_path: Path) -> None:
    """A logs file from another recording: every record names its trace and span as not in
    the trace file (exit 2), never a traceback."""
    traces = INSTRUMENTATIONS / "openai-v2-legacy-events" / "ok.traces.jsonl"
    logs = INSTRUMENTATIONS / "pydantic-ai-1-v1-logs" / "ok.logs.jsonl"
    code, text = _eval_traces(tmp_path, str(traces), "--logs", str(logs))
    assert code == 2, text
    assert "a trace not in" in text
    assert "Traceback" not in text


def test_a_logs_file_given_as_the_traces_says_so(tmp_path: Path) -> None:
    """A logs-only file in the trace file's place is named as a logs request (exit 2)."""
    logs = INSTRUMENTATIONS / "openai-v2-legacy-events" / "ok.logs.jsonl"
    code, text = _eval_traces(tmp_path, str(logs))
    assert code == 2, text
    assert "this is an OTLP logs request" in text


def test_explain_names_the_convention_of_each_span_and_the_generic_ones(tmp_path: Path) -> None:
    """--explain prints, per trace, which convention read each span and which stayed
    generic."""
    traces = INSTRUMENTATIONS / "pydantic-ai-1.0-default" / "ok.traces.jsonl"
    code, text = _eval_traces(tmp_path, str(traces), "--explain")
    assert code == 0, text
    assert "'agent run' -> agent_run, read by pydantic-ai" in text
    assert "'chat gpt-4o-mini' -> model_generation, read by genai" in text
    assert "'running tools' -> generic, no convention recognised it" in text


def _int(key: str, value: int) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)}}


def test_openlit_prompt_and_completion_strings_give_the_system_prompt_and_answer() -> None:
    """OpenLIT's gen_ai.prompt / gen_ai.completion strings (role-prefixed lines) are the model
    call's messages: the system prompt is kept and the agent input is the user's question."""
    agent_input, (answer,) = _run(
        _span("a", "", "invoke_agent", _attr("gen_ai.operation.name", "invoke_agent")),
        _span("c", "a", "chat", _attr("gen_ai.operation.name", "chat"),
              _attr("gen_ai.prompt", "system: Be brief.\nuser: Weather in Paris?"),
              _attr("gen_ai.completion", "Sunny.")))
    assert [s.content for s in agent_input.system_messages] == ["Be brief."]
    assert [m.text() for m in agent_input.input_messages] == ["Weather in Paris?"]
    assert answer.text() == "Sunny."


def _assert_the_weather_run_with_its_tool(run: Any) -> None:
    """The run asks "Weather in Paris?" under the system prompt "Brief.", calls get_weather for
    Paris (which answers "Sunny") and answers "Sunny."."""
    agent_input, (answer,) = run
    (call,) = answer.content.tool_invocations
    assert (call.tool_name, call.args, call.result) == ("get_weather", {"city": "Paris"}, "Sunny")
    assert [s.content for s in agent_input.system_messages] == ["Brief."]
    assert [m.text() for m in agent_input.input_messages] == ["Weather in Paris?"]
    assert answer.text() == "Sunny."


def test_traceloop_decorated_agent_and_tool_with_indexed_prompts() -> None:
    """OpenLLMetry: an @agent span, an llm.request.type=chat span with gen_ai.prompt.N.* and
    gen_ai.completion.N.*, and a @tool span whose entity input holds the call's kwargs."""
    _assert_the_weather_run_with_its_tool(_run(
        _span("a", "", "weather.agent", _attr("traceloop.span.kind", "agent"),
              _attr("traceloop.entity.name", "weather"),
              _attr("traceloop.entity.input", '{"args": ["Weather in Paris?"], "kwargs": {}}'),
              _attr("traceloop.entity.output", '"Sunny."')),
        _span("c", "a", "openai.chat", _attr("llm.request.type", "chat"),
              _attr("gen_ai.prompt.0.role", "system"), _attr("gen_ai.prompt.0.content", "Brief."),
              _attr("gen_ai.prompt.1.role", "user"),
              _attr("gen_ai.prompt.1.content", "Weather in Paris?"),
              _attr("gen_ai.completion.0.role", "assistant"),
              _attr("gen_ai.completion.0.content", "Sunny.")),
        _span("d", "a", "get_weather.tool", _attr("traceloop.span.kind", "tool"),
              _attr("traceloop.entity.name", "get_weather"),
              _attr("traceloop.entity.input", '{"args": [], "kwargs": {"city": "Paris"}}'),
              _attr("traceloop.entity.output", '"Sunny"'))))


def test_vercel_ai_sdk_spans_are_an_agent_run() -> None:
    """The Vercel AI SDK's ai.generateText / .doGenerate / ai.toolCall spans give the agent
    run: question from ai.prompt, system prompt from ai.prompt.messages, the tool call."""
    messages = json.dumps([{"role": "system", "content": "Brief."},
                           {"role": "user", "content": [{"type": "text",
                                                         "text": "Weather in Paris?"}]}])
    _assert_the_weather_run_with_its_tool(_run(
        _span("a", "", "ai.generateText", _attr("ai.operationId", "ai.generateText"),
              _attr("ai.prompt", '{"system": "Brief.", "prompt": "Weather in Paris?"}'),
              _attr("ai.response.text", "Sunny.")),
        _span("c", "a", "ai.generateText.doGenerate",
              _attr("ai.operationId", "ai.generateText.doGenerate"),
              _attr("ai.prompt.messages", messages), _attr("ai.model.id", "gpt-4o"),
              _int("ai.usage.promptTokens", 10), _attr("ai.response.text", "Sunny.")),
        _span("d", "a", "ai.toolCall", _attr("ai.operationId", "ai.toolCall"),
              _attr("ai.toolCall.name", "get_weather"),
              _attr("ai.toolCall.args", '{"city": "Paris"}'),
              _attr("ai.toolCall.result", '"Sunny"'))))
