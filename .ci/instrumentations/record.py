"""Record one row of the instrumentation conformance matrix: the same weather-agent run, traced
by a real instrumentation library, written as the OpenTelemetry SDK's own OTLP encoders write it.

    VENV/bin/python .ci/instrumentations/record.py ROW OUT_DIR

runs inside the row's own virtualenv (made by ``.ci/instrumentations.sh``; the libraries never
enter the project's environment) and writes, for each variant (``ok``: the tool answers;
``tool_error``: the tool fails with "weather service timed out"), ``VARIANT.traces.jsonl`` and
``VARIANT.traces.pb`` (one ExportTraceServiceRequest: protobuf's JSON mapping on one line, and
binary), the same for logs when the library wrote log records (``VARIANT.logs.*``), and
``meta.json`` (library, versions, mode, what the harness made by hand).

The model is the scripted replay server of ``replay.py`` on 127.0.0.1, the spans and log
records go to in-memory exporters only, and every HTTP client is pointed at a closed loopback
proxy, so nothing here reaches the network. Rows are listed in :data:`ROWS`.

The committed fixtures are recorded again (after a lock file changed) with::

    HOME_DIR="$(bash .ci/instrumentations.sh)"
    for meta in tests/traces/fixtures/instrumentations/*/meta.json; do
        row="$(basename "$(dirname "$meta")")"
        venv="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["venv"])' "$meta")"
        "$HOME_DIR/$venv/bin/python" .ci/instrumentations/record.py "$row" "$(dirname "$meta")"
    done
    python tests/traces/render_matrix.py
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import replay

AGENT = "weather-agent"
TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}},
               "required": ["city"]}
OPENAI_TOOLS = [{"type": "function", "function": {
    "name": replay.TOOL, "description": "The current weather in a city.",
    "parameters": TOOL_SCHEMA}}]
VARIANTS = ("ok", "tool_error")

# A closed loopback port as every client's proxy: a library that tried to reach the network
# (a price list, telemetry, an update check) fails at once instead of leaving the machine.
OFFLINE_ENV = {
    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    "OPENAI_API_KEY": "sk-replay-not-a-secret",
    "OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none",
    "OTEL_SERVICE_NAME": AGENT, "TRACELOOP_TELEMETRY": "false", "OPENLIT_DISABLE_TELEMETRY": "1",
}


class WeatherServiceError(TimeoutError):
    """What the tool raises in the ``tool_error`` variant."""


def get_weather(city: str, *, failing: bool) -> str:
    """The agent's one tool."""
    if failing:
        raise WeatherServiceError(replay.FAILURE)
    assert city == "Paris", city  # noqa: S101 - the replay server always asks for Paris
    return replay.RESULT


@dataclass
class Telemetry:
    """The SDK providers of one recording, exporting to memory only."""

    tracer_provider: Any
    logger_provider: Any
    spans: Any
    logs: Any

    @classmethod
    def install(cls) -> Telemetry:
        from opentelemetry import _logs, trace  # noqa: PLC0415 - row-specific environment
        from opentelemetry.sdk._logs import LoggerProvider  # noqa: PLC0415
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: PLC0415

        try:
            from opentelemetry.sdk._logs.export import (  # noqa: PLC0415
                InMemoryLogRecordExporter,
            )
        except ImportError:  # its name before SDK 1.39
            from opentelemetry.sdk._logs.export import (  # noqa: PLC0415
                InMemoryLogExporter as InMemoryLogRecordExporter,
            )
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: PLC0415
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: PLC0415
            InMemorySpanExporter,
        )

        resource = Resource.create({"service.name": AGENT})
        spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        # Globals too: some libraries (OpenLIT, Traceloop, pydantic-ai) look them up.
        trace.set_tracer_provider(tracer_provider)
        _logs.set_logger_provider(logger_provider)
        with contextlib.suppress(ImportError):
            from opentelemetry._events import set_event_logger_provider  # noqa: PLC0415
            from opentelemetry.sdk._events import EventLoggerProvider  # noqa: PLC0415

            set_event_logger_provider(EventLoggerProvider(logger_provider))
        return cls(tracer_provider=tracer_provider, logger_provider=logger_provider,
                   spans=spans, logs=logs)

    def write(self, folder: Path, variant: str) -> list[str]:
        """The finished spans and log records as OTLP files; their names. Clears both."""
        from google.protobuf.json_format import MessageToDict  # noqa: PLC0415
        from opentelemetry.exporter.otlp.proto.common._log_encoder import (  # noqa: PLC0415
            encode_logs,
        )
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import (  # noqa: PLC0415
            encode_spans,
        )

        self.tracer_provider.force_flush()
        self.logger_provider.force_flush()
        written = []
        batches = [("traces", self.spans.get_finished_spans(), encode_spans),
                   ("logs", self.logs.get_finished_logs(), encode_logs)]
        for signal, items, encode in batches:
            if not items:
                continue
            request = encode(items)
            stem = folder / f"{variant}.{signal}"
            Path(f"{stem}.jsonl").write_text(
                json.dumps(MessageToDict(request), ensure_ascii=False) + "\n", encoding="utf-8")
            Path(f"{stem}.pb").write_bytes(request.SerializeToString())
            written += [f"{stem.name}.jsonl", f"{stem.name}.pb"]
        self.spans.clear()
        self.logs.clear()
        return written


# --- the agent loop the openai-client rows share -------------------------------------------

@dataclass
class Wrappers:
    """How a row's harness wraps the run in an agent span and the tool call in a tool span,
    where the library makes neither (as its users do); ``None``: the library makes them."""

    agent: Callable[[], contextlib.AbstractContextManager[Callable[[str], None]]]
    tool: Callable[[str, dict[str, Any]], contextlib.AbstractContextManager[
        Callable[[str], None]]]
    hand_made: list[str] = field(default_factory=list)
    short: str = ""
    """The matrix's "spans the harness made" cell."""


def openai_agent(base_url: str, wrappers: Wrappers, *, failing: bool) -> str:
    """The weather agent on the ``openai`` client: ask, run the tool the model calls, send its
    result (or the error) back, return the answer."""
    import openai  # noqa: PLC0415 - installed in the row's virtualenv only

    client = openai.OpenAI(base_url=base_url, api_key=OFFLINE_ENV["OPENAI_API_KEY"],
                           max_retries=0)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": replay.SYSTEM},
        {"role": "user", "content": replay.QUESTION}]
    with wrappers.agent() as finish_agent:
        first = client.chat.completions.create(model=replay.MODEL, messages=messages,
                                               tools=OPENAI_TOOLS)
        call = first.choices[0].message.tool_calls[0]
        arguments = json.loads(call.function.arguments)
        try:
            with wrappers.tool(call.id, arguments) as finish_tool:
                result = get_weather(**arguments, failing=failing)
                finish_tool(result)
        except WeatherServiceError as exc:
            result = f"Error: {exc}"
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": call.id, "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }]},
            {"role": "tool", "tool_call_id": call.id, "content": result}]
        second = client.chat.completions.create(model=replay.MODEL, messages=messages,
                                                tools=OPENAI_TOOLS)
        answer = second.choices[0].message.content
        finish_agent(answer)
    client.close()
    return answer


def genai_by_hand(telemetry: Telemetry) -> Wrappers:
    """An ``invoke_agent`` and an ``execute_tool`` span in the GenAI conventions, written with
    the plain OpenTelemetry API as a user of a model-only instrumentation does: no messages on
    the agent span (the library records them on its model spans), the tool's arguments and
    result on the tool span, an error status when it fails."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    tracer = telemetry.tracer_provider.get_tracer(AGENT)

    @contextlib.contextmanager
    def agent() -> Iterator[Callable[[str], None]]:
        with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT,
                "gen_ai.provider.name": "openai"}):
            yield lambda _answer: None

    @contextlib.contextmanager
    def tool(call_id: str, arguments: dict[str, Any]) -> Iterator[Callable[[str], None]]:
        with tracer.start_as_current_span(f"execute_tool {replay.TOOL}", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": replay.TOOL,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": json.dumps(arguments)}) as span:
            try:
                yield lambda result: span.set_attribute("gen_ai.tool.call.result", result)
            except WeatherServiceError as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                raise

    return Wrappers(agent=agent, tool=tool, short="agent, tool (OpenTelemetry API, GenAI)",
                    hand_made=[
        "invoke_agent span (GenAI attributes, no messages) written with the OpenTelemetry API",
        "execute_tool span (GenAI attributes: name, call id, arguments, result; error status "
        "and error.type when the tool fails) written with the OpenTelemetry API"])


def util_genai(telemetry: Telemetry) -> Wrappers:
    """The agent and tool spans of ``opentelemetry-util-genai``'s TelemetryHandler, the
    official instrumentation's companion for code it cannot see (the agent loop, the tool)."""
    from opentelemetry.util.genai.handler import TelemetryHandler  # noqa: PLC0415
    from opentelemetry.util.genai.types import (  # noqa: PLC0415
        InputMessage,
        OutputMessage,
        Text,
    )

    handler = TelemetryHandler(tracer_provider=telemetry.tracer_provider,
                               logger_provider=telemetry.logger_provider)

    @contextlib.contextmanager
    def agent() -> Iterator[Callable[[str], None]]:
        with handler.invoke_local_agent(agent_name=AGENT, request_model=replay.MODEL) as run:
            run.system_instruction = [Text(content=replay.SYSTEM)]
            run.input_messages = [InputMessage(role="user",
                                               parts=[Text(content=replay.QUESTION)])]

            def finish(answer: str) -> None:
                run.output_messages = [OutputMessage(role="assistant",
                                                     parts=[Text(content=answer)],
                                                     finish_reason="stop")]
            yield finish

    @contextlib.contextmanager
    def tool(call_id: str, arguments: dict[str, Any]) -> Iterator[Callable[[str], None]]:
        with handler.tool(replay.TOOL) as call:
            call.tool_call_id = call_id
            call.arguments = arguments

            def finish(result: str) -> None:
                call.tool_result = result
            yield finish

    return Wrappers(agent=agent, tool=tool, short="agent, tool (opentelemetry-util-genai)",
                    hand_made=[
        "invoke_agent span by opentelemetry-util-genai's TelemetryHandler.invoke_local_agent "
        "(system instruction, question and answer set on it)",
        "execute_tool span by TelemetryHandler.tool (call id, arguments, result; the "
        "exception's fail() on error)"])


def openinference_tracer(telemetry: Telemetry) -> Wrappers:
    """An AGENT and a TOOL span through OpenInference's own tracer (``OITracer``), as its
    users wrap an agent loop around the openai instrumentation."""
    from openinference.instrumentation import OITracer, TraceConfig  # noqa: PLC0415

    tracer = OITracer(telemetry.tracer_provider.get_tracer(AGENT), config=TraceConfig())

    @contextlib.contextmanager
    def agent() -> Iterator[Callable[[str], None]]:
        with tracer.start_as_current_span(AGENT, openinference_span_kind="agent") as span:
            span.set_attribute("agent.name", AGENT)
            span.set_input(replay.QUESTION)
            yield span.set_output

    @contextlib.contextmanager
    def tool(_call_id: str, arguments: dict[str, Any]) -> Iterator[Callable[[str], None]]:
        with tracer.start_as_current_span(replay.TOOL, openinference_span_kind="tool") as span:
            span.set_tool(name=replay.TOOL, description="The current weather in a city.",
                          parameters=TOOL_SCHEMA)
            span.set_input(json.dumps(arguments), mime_type="application/json")
            yield span.set_output

    return Wrappers(agent=agent, tool=tool, short="agent, tool (OpenInference OITracer)",
                    hand_made=[
        "AGENT span by OpenInference's OITracer (agent.name, input.value = question, "
        "output.value = answer)",
        "TOOL span by OITracer (set_tool, input.value = arguments as JSON, output.value = "
        "result; exception and error status from the tracer on error)"])


def openai_v2(telemetry: Telemetry, wrap: Callable[[Telemetry], Wrappers]) -> tuple[
        Callable[[str, bool], str], Wrappers | None]:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: PLC0415

    OpenAIInstrumentor().instrument(tracer_provider=telemetry.tracer_provider,
                                    logger_provider=telemetry.logger_provider)
    wrappers = wrap(telemetry)
    return (lambda url, failing: openai_agent(url, wrappers, failing=failing)), wrappers


def openinference(telemetry: Telemetry) -> tuple[Callable[[str, bool], str], Wrappers | None]:
    from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: PLC0415

    OpenAIInstrumentor().instrument(tracer_provider=telemetry.tracer_provider)
    wrappers = openinference_tracer(telemetry)
    return (lambda url, failing: openai_agent(url, wrappers, failing=failing)), wrappers


def openllmetry(*, use_attributes: bool) -> Callable[
        [Telemetry], tuple[Callable[[str, bool], str], Wrappers | None]]:
    """Traceloop's OpenLLMetry OpenAI instrumentation; ``use_attributes=False`` sends the
    messages as log events instead of span attributes."""
    def setup(telemetry: Telemetry) -> tuple[Callable[[str, bool], str], Wrappers | None]:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: PLC0415

        OpenAIInstrumentor(use_attributes=use_attributes).instrument(
            tracer_provider=telemetry.tracer_provider,
            logger_provider=telemetry.logger_provider)
        wrappers = genai_by_hand(telemetry)
        return (lambda url, failing: openai_agent(url, wrappers, failing=failing)), wrappers

    return setup


def openlit(telemetry: Telemetry) -> tuple[Callable[[str, bool], str], Wrappers | None]:
    """OpenLIT's auto-instrumentation (``openlit.init``), which finds the SDK providers
    already set; its price list comes from a local file instead of being downloaded."""
    import tempfile  # noqa: PLC0415

    import openlit as library  # noqa: PLC0415

    prices = Path(tempfile.mkdtemp()) / "pricing.json"
    prices.write_text(json.dumps({"chat": {replay.MODEL: {
        "promptPrice": 0.00015, "completionPrice": 0.0006}}}), encoding="utf-8")
    library.init(application_name=AGENT, environment="conformance", disable_metrics=True,
                 disable_batch=True, pricing_json=str(prices))
    wrappers = genai_by_hand(telemetry)
    return (lambda url, failing: openai_agent(url, wrappers, failing=failing)), wrappers


def pydantic_ai(version: int | None, event_mode: str | None = None) -> Callable[
        [Telemetry], tuple[Callable[[str, bool], str], Wrappers | None]]:
    """pydantic-ai's own agent and instrumentation (data format ``version``; ``None``: the
    release's default) on its OpenAI chat model; a failing tool raises ``ModelRetry``, how a
    pydantic-ai tool tells the model that it failed."""
    def setup(telemetry: Telemetry) -> tuple[Callable[[str, bool], str], Wrappers | None]:
        from pydantic_ai import Agent, ModelRetry  # noqa: PLC0415
        from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: PLC0415
        from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
        from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

        options: dict[str, Any] = {"tracer_provider": telemetry.tracer_provider}
        if version is not None:
            options["version"] = version
        if event_mode is not None:
            options |= {"event_mode": event_mode, "logger_provider": telemetry.logger_provider}
        Agent.instrument_all(InstrumentationSettings(**options))

        def run(url: str, failing: bool) -> str:
            model = OpenAIChatModel(replay.MODEL, provider=OpenAIProvider(
                base_url=url, api_key=OFFLINE_ENV["OPENAI_API_KEY"]))
            agent = Agent(model, system_prompt=replay.SYSTEM, name=AGENT)

            @agent.tool_plain(name=replay.TOOL)
            def get_weather_tool(city: str) -> str:
                """The current weather in a city."""
                try:
                    return get_weather(city, failing=failing)
                except WeatherServiceError as exc:
                    raise ModelRetry(str(exc)) from exc

            return str(agent.run_sync(replay.QUESTION).output)

        return run, None

    return setup


ROWS: dict[str, dict[str, Any]] = {
    "openai-v2-legacy-events": {
        "venv": "openai-v2-legacy", "library": "opentelemetry-instrumentation-openai-v2",
        "mode": "default, content as log records (OTEL_INSTRUMENTATION_GENAI_CAPTURE_"
                "MESSAGE_CONTENT=true)",
        "env": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
        "setup": lambda t: openai_v2(t, genai_by_hand),
    },
    "openai-v2-span-only": {
        "venv": "openai-v2", "library": "opentelemetry-instrumentation-openai-v2",
        "mode": "span_only, latest experimental conventions",
        "env": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
        "setup": lambda t: openai_v2(t, util_genai),
    },
    "openai-v2-event-only": {
        "venv": "openai-v2", "library": "opentelemetry-instrumentation-openai-v2",
        "mode": "event_only, latest experimental conventions",
        "env": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only"},
        "setup": lambda t: openai_v2(t, util_genai),
    },
    "openinference": {
        "venv": "openinference", "library": "openinference-instrumentation-openai",
        "mode": "default", "env": {}, "setup": openinference,
    },
    "openinference-genai": {
        "venv": "openinference", "library": "openinference-instrumentation-openai",
        "mode": "OPENINFERENCE_ENABLE_GENAI_SEMCONV=true",
        "env": {"OPENINFERENCE_ENABLE_GENAI_SEMCONV": "true"}, "setup": openinference,
    },
    "openlit": {
        "venv": "openlit", "library": "openlit", "mode": "default (openlit.init)",
        "env": {}, "setup": openlit,
    },
    "openlit-1.34": {
        "venv": "openlit-1.34", "library": "openlit", "mode": "default (openlit.init)",
        "env": {}, "setup": openlit,
    },
    "openllmetry": {
        "venv": "traceloop", "library": "opentelemetry-instrumentation-openai",
        "mode": "default (messages as span attributes)", "env": {},
        "setup": openllmetry(use_attributes=True),
    },
    "openllmetry-events": {
        "venv": "traceloop", "library": "opentelemetry-instrumentation-openai",
        "mode": "use_attributes=False (messages as log events)", "env": {},
        "setup": openllmetry(use_attributes=False),
    },
    "pydantic-ai-1.0-default": {
        "venv": "pydantic-ai-1.0", "library": "pydantic-ai-slim", "mode": "default (format 2)",
        "env": {}, "setup": pydantic_ai(None),
    },
    "pydantic-ai-1-v1-attributes": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim",
        "mode": "format 1, event_mode=attributes",
        "env": {}, "setup": pydantic_ai(1, "attributes"),
    },
    "pydantic-ai-1-v1-logs": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim", "mode": "format 1, event_mode=logs",
        "env": {}, "setup": pydantic_ai(1, "logs"),
    },
    "pydantic-ai-1-v2": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim", "mode": "format 2 (default)",
        "env": {}, "setup": pydantic_ai(2),
    },
    "pydantic-ai-1-v3": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim", "mode": "format 3",
        "env": {}, "setup": pydantic_ai(3),
    },
    "pydantic-ai-1-v4": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim", "mode": "format 4",
        "env": {}, "setup": pydantic_ai(4),
    },
    "pydantic-ai-1-v5": {
        "venv": "pydantic-ai-1", "library": "pydantic-ai-slim", "mode": "format 5",
        "env": {}, "setup": pydantic_ai(5),
    },
    "pydantic-ai-2-v2": {
        "venv": "pydantic-ai-2", "library": "pydantic-ai-slim", "mode": "format 2",
        "env": {}, "setup": pydantic_ai(2),
    },
    "pydantic-ai-2-v3": {
        "venv": "pydantic-ai-2", "library": "pydantic-ai-slim", "mode": "format 3",
        "env": {}, "setup": pydantic_ai(3),
    },
    "pydantic-ai-2-v4": {
        "venv": "pydantic-ai-2", "library": "pydantic-ai-slim", "mode": "format 4",
        "env": {}, "setup": pydantic_ai(4),
    },
    "pydantic-ai-2-v5": {
        "venv": "pydantic-ai-2", "library": "pydantic-ai-slim", "mode": "format 5 (default)",
        "env": {}, "setup": pydantic_ai(5),
    },
    "pydantic-ai-2-v6": {
        "venv": "pydantic-ai-2", "library": "pydantic-ai-slim", "mode": "format 6",
        "env": {}, "setup": pydantic_ai(6),
    },
}


def expected() -> dict[str, Any]:
    """The agent run of each variant, as the harness made it: what a reader must give."""
    def run(*, failing: bool) -> dict[str, Any]:
        return {"input": [replay.QUESTION], "system": [replay.SYSTEM],
                "output": replay.APOLOGY if failing else replay.ANSWER,
                "tools": [{"name": replay.TOOL, "arguments": replay.ARGUMENTS,
                           "result": replay.FAILURE if failing else replay.RESULT,
                           "is_error": failing}]}
    return {"ok": run(failing=False), "tool_error": run(failing=True)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("row", choices=sorted(ROWS))
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    row = ROWS[args.row]
    os.environ.update(OFFLINE_ENV)
    os.environ.update(row["env"])
    telemetry = Telemetry.install()
    run, wrappers = row["setup"](telemetry)
    args.out.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[str]] = {}
    for variant in VARIANTS:
        with replay.serving() as url:
            run(url, variant == "tool_error")
        files[variant] = telemetry.write(args.out, variant)
    versions = {name: importlib.metadata.version(name) for name in sorted({
        row["library"], "openai", "opentelemetry-sdk", *row.get("also", ())})}
    meta = {"row": args.row, "venv": row["venv"], "library": row["library"],
            "version": versions[row["library"]], "mode": row["mode"], "env": row["env"],
            "versions": versions,
            "harness_spans": wrappers.short if wrappers else "",
            "hand_made": wrappers.hand_made if wrappers else [], "files": files,
            "recorded_with": f"python .ci/instrumentations/record.py {args.row} OUT_DIR "
                             f"in the virtualenv of .ci/instrumentations/{row['venv']}.txt"}
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    (args.out / "expected.json").write_text(json.dumps(expected(), indent=2) + "\n",
                                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
