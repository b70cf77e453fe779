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

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore.traces._spans import Span, Trace, TraceError

__all__ = [
    "agent_traces",
    "otlp_to_traces",
    "read_otlp_json_lines",
]

GENAI_OPERATIONS: Final[Mapping[str, str]] = {
    "invoke_agent": "agent_run",
    "chat": "model_generation",
    "text_completion": "model_generation",
    "generate_content": "model_generation",
    "execute_tool": "tool_call",
}
"""``gen_ai.operation.name`` → span type; any other operation (``embeddings``,
``create_agent`` …) is a ``generic`` span."""

OPENINFERENCE_KINDS: Final[Mapping[str, str]] = {
    "AGENT": "agent_run",
    "LLM": "model_generation",
    "TOOL": "tool_call",
}
"""``openinference.span.kind`` → span type; any other kind (``CHAIN``, ``RETRIEVER`` …) is a
``generic`` span."""

_GENERIC: Final = "generic"
_ERROR_CODES: Final = frozenset({2, "2", "STATUS_CODE_ERROR"})
_HEX_ID: Final = re.compile(r"[0-9a-fA-F]+")
_BASE64_ID: Final = {"traceId": 24, "spanId": 12, "parentSpanId": 12}  # 16 and 8 bytes
_OI_MESSAGE: Final = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)")
_OI_TOOL_CALL: Final = re.compile(r"tool_calls\.(\d+)\.tool_call\.(.+)")
_OI_CONTENT: Final = re.compile(r"contents\.(\d+)\.message_content\.(.+)")


class _Malformed(Exception):  # noqa: N818 - internal signal, turned into a TraceError value
    """A field of a span could not be read (internal; never leaves this module)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


_VALUE_KEYS: Final = {
    "stringValue": "string", "string_value": "string", "boolValue": "bool",
    "bool_value": "bool", "intValue": "int", "int_value": "int", "doubleValue": "double",
    "double_value": "double", "arrayValue": "array", "array_value": "array",
    "kvlistValue": "kvlist", "kvlist_value": "kvlist", "bytesValue": "bytes",
    "bytes_value": "bytes",
}


def _any_value(value: object, where: str) -> Any:
    """One OTLP ``AnyValue`` (JSON encoding) as a plain Python value."""
    if not isinstance(value, Mapping):
        raise _Malformed(where, f"must be an AnyValue object, got {short_repr(value)}")
    if not value:
        return None
    name, raw = next(iter(value.items()))
    kind = _VALUE_KEYS.get(name) if len(value) == 1 else None
    if kind == "string":
        if not isinstance(raw, str):
            raise _Malformed(where, f"stringValue must be a string, got {short_repr(raw)}")
        return raw
    if kind == "bool":
        if not isinstance(raw, bool):
            raise _Malformed(where, f"boolValue must be a boolean, got {short_repr(raw)}")
        return raw
    if kind == "int":
        # The JSON encoding writes 64-bit integers as strings.
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise _Malformed(where, f"intValue must be an integer, got {short_repr(raw)}")
        try:
            return int(raw)
        except ValueError:
            raise _Malformed(where, f"intValue must be an integer, "
                                    f"got {short_repr(raw)}") from None
    if kind == "double":
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise _Malformed(where, f"doubleValue must be a number, got {short_repr(raw)}")
        try:
            return float(raw)
        except ValueError:
            raise _Malformed(where, f"doubleValue must be a number, "
                                    f"got {short_repr(raw)}") from None
    if kind == "array":
        items = raw.get("values", []) if isinstance(raw, Mapping) else None
        if not isinstance(items, list):
            raise _Malformed(where, f"arrayValue must hold a values list, got {short_repr(raw)}")
        return [_any_value(v, f"{where}[{i}]") for i, v in enumerate(items)]
    if kind == "kvlist":
        pairs = raw.get("values", []) if isinstance(raw, Mapping) else None
        if not isinstance(pairs, list):
            raise _Malformed(where, f"kvlistValue must hold a values list, "
                                    f"got {short_repr(raw)}")
        return _key_values(pairs, where)
    if kind == "bytes":
        return raw  # base64 text, kept as is
    raise _Malformed(where, f"unknown AnyValue {short_repr(value)}")


def _key_values(pairs: object, where: str) -> dict[str, Any]:
    if pairs is None:
        return {}
    if not isinstance(pairs, list):
        raise _Malformed(where, f"must be a list of key/value objects, got {short_repr(pairs)}")
    out: dict[str, Any] = {}
    for index, pair in enumerate(pairs):
        key = pair.get("key") if isinstance(pair, dict | Mapping) else None
        if not isinstance(key, str):
            raise _Malformed(f"{where}[{index}]", f"must be an object with a string key, "
                                                  f"got {short_repr(pair)}")
        value = cast(Mapping[str, Any], pair).get("value", _NO_VALUE)
        # The common case first: one string value (no location string built for it).
        if type(value) is dict and len(value) == 1 and type(value.get("stringValue")) is str:
            out[key] = value["stringValue"]
            continue
        try:
            out[key] = _any_value(value, "")
        except _Malformed as exc:
            raise _Malformed(f"{where}[{index}] ({key}){exc.field}", exc.problem) from None
    return out


_NO_VALUE: Final[Mapping[str, Any]] = {}


def _field(raw: Mapping[str, Any], camel: str) -> Any:
    # OTLP/JSON receivers accept the protobuf field names too (snake_case).
    if camel in raw:
        return raw[camel]
    return raw.get(re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), camel))


def _hex_id(raw: Mapping[str, Any], camel: str, *, required: bool) -> str | None:
    value = _field(raw, camel)
    if value is None or value == "":
        if required:
            raise _Malformed(camel, "required, a hex string")
        return None
    if isinstance(value, str) and value.endswith("=") and len(value) == _BASE64_ID[camel]:
        # protobuf's own JSON mapping (google.protobuf.json_format, what a dump of the SDK's
        # OTLP encoder gives) writes ids as base64: always padded, so never hex
        try:
            return base64.b64decode(value, validate=True).hex()
        except binascii.Error:
            pass
    if not isinstance(value, str) or not _HEX_ID.fullmatch(value):
        raise _Malformed(camel, f"must be a hex string, got {short_repr(value)}")
    return value.lower()


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _time(raw: Mapping[str, Any], camel: str, *, required: bool) -> datetime | None:
    value = _field(raw, camel)
    if value is None or value in ("", "0", 0):
        if required:
            raise _Malformed(camel, "required, nanoseconds since the epoch")
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _Malformed(camel, f"must be nanoseconds since the epoch, got {short_repr(value)}")
    try:
        nanos = int(value)
    except ValueError:
        raise _Malformed(camel, f"must be nanoseconds since the epoch, "
                                f"got {short_repr(value)}") from None
    return _EPOCH + timedelta(microseconds=nanos // 1000)


def _json_text(value: Any, field: str) -> Any:
    """A convention's JSON-in-a-string attribute, parsed (structured values pass through)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise _Malformed(field, f"must be JSON, {exc.msg} at character {exc.pos}") from None


def _maybe_json(value: Any) -> Any:
    """A free-form value (tool arguments, ``input.value``): JSON when it parses, else as is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value




def _part_text(parts: object, field: str) -> str:
    if not isinstance(parts, list):
        raise _Malformed(field, f"parts must be a list, got {short_repr(parts)}")
    texts = [p.get("content") for p in parts
             if isinstance(p, Mapping) and p.get("type") == "text"
             and isinstance(p.get("content"), str)]
    return "\n".join(cast(list[str], texts))


def _genai_messages(attributes: Mapping[str, Any], key: str) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` as ``{"role", "content"}`` dicts."""
    if key not in attributes:
        return None
    messages = _json_text(attributes[key], key)
    if not isinstance(messages, list):
        raise _Malformed(key, f"must be a list of messages, got {short_repr(messages)}")
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        where = f"{key}[{index}]"
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise _Malformed(where, f"must be a message with a string role, "
                                    f"got {short_repr(message)}")
        parts = message.get("parts", [])
        converted: dict[str, Any] = {"role": message["role"],
                                     "content": _part_text(parts, where)}
        calls = [{"id": p.get("id"), "name": p.get("name"), "arguments": p.get("arguments")}
                 for p in parts if isinstance(p, Mapping) and p.get("type") == "tool_call"]
        if calls:
            converted["toolCalls"] = calls
        out.append(converted)
    return out


def _system_instructions(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    key = "gen_ai.system_instructions"
    if key not in attributes:
        return []
    parts = _json_text(attributes[key], key)
    text = _part_text(parts, key)
    return [{"role": "system", "content": text}] if text else []


def _last_text(messages: list[dict[str, Any]] | None) -> str | None:
    if not messages:
        return None
    texts: list[str] = [m["content"] for m in messages]
    return next((t for m, t in zip(reversed(messages), reversed(texts), strict=True)
                 if m["role"] == "assistant" and t), texts[-1])


def _usage(attributes: Mapping[str, Any], tokens_in: str, tokens_out: str) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for key, name in ((tokens_in, "inputTokens"), (tokens_out, "outputTokens")):
        value = attributes.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise _Malformed(key, f"must be an integer, got {short_repr(value)}")
            usage[name] = value
    return usage


def _genai(span_type: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    if span_type == "agent_run":
        name = attributes.get("gen_ai.agent.name")
        inputs = _genai_messages(attributes, "gen_ai.input.messages")
        outputs = _genai_messages(attributes, "gen_ai.output.messages")
        text = _last_text(outputs)
        return {"entity_type": "agent", "entity_name": name,
                "entity_id": attributes.get("gen_ai.agent.id") or name,
                "input": inputs, "output": None if text is None else {"text": text}}
    if span_type == "model_generation":
        inputs = _genai_messages(attributes, "gen_ai.input.messages")
        outputs = _genai_messages(attributes, "gen_ai.output.messages")
        text = _last_text(outputs)
        messages = _system_instructions(attributes) + (inputs or [])
        model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
        reasons = attributes.get("gen_ai.response.finish_reasons")
        extra: dict[str, Any] = {"model": model,
                                 "usage": _usage(attributes, "gen_ai.usage.input_tokens",
                                                 "gen_ai.usage.output_tokens")}
        if isinstance(reasons, list) and reasons:
            extra["finishReason"] = reasons[0]
        return {"entity_type": "llm", "entity_name": model, "entity_id": model,
                "input": {"messages": messages} if messages else None,
                "output": None if text is None else {"text": text},
                "mastra_attributes": extra}
    name = attributes.get("gen_ai.tool.name")
    return {"entity_type": "tool", "entity_name": name, "entity_id": name,
            "input": _maybe_json(attributes.get("gen_ai.tool.call.arguments")),
            "output": _maybe_json(attributes.get("gen_ai.tool.call.result"))}




def _oi_messages(attributes: Mapping[str, Any], direction: str) -> list[dict[str, Any]] | None:
    """``llm.input_messages.N.message.*`` (flattened) as ``{"role", "content"}`` dicts."""
    found: dict[int, dict[str, Any]] = {}
    contents: dict[int, dict[int, str]] = {}
    for key, value in attributes.items():
        match = _OI_MESSAGE.fullmatch(key)
        if match is None or match.group(1) != direction:
            continue
        message = found.setdefault(int(match.group(2)), {"role": None, "content": ""})
        rest = match.group(3)
        if rest == "role":
            message["role"] = value
        elif rest == "content":
            message["content"] = value
        elif (content := _OI_CONTENT.fullmatch(rest)) and content.group(2) == "text":
            contents.setdefault(int(match.group(2)), {})[int(content.group(1))] = value
        elif call := _OI_TOOL_CALL.fullmatch(rest):
            calls = message.setdefault("toolCalls", {})
            entry = calls.setdefault(int(call.group(1)), {})
            entry[call.group(2)] = value
    if not found:
        return None
    out: list[dict[str, Any]] = []
    for index in sorted(found):
        message = found[index]
        field = f"llm.{direction}_messages.{index}.message"
        if not isinstance(message["role"], str):
            raise _Malformed(f"{field}.role", f"required, a string, "
                                              f"got {short_repr(message['role'])}")
        if index in contents and not message["content"]:
            message["content"] = "\n".join(str(contents[index][i]) for i in sorted(contents[index]))
        if not isinstance(message["content"], str):
            raise _Malformed(f"{field}.content", f"must be a string, "
                                                 f"got {short_repr(message['content'])}")
        if "toolCalls" in message:
            message["toolCalls"] = [
                {"id": c.get("id"), "name": c.get("function.name"),
                 "arguments": _maybe_json(c.get("function.arguments"))}
                for _, c in sorted(message["toolCalls"].items())
            ]
        out.append(message)
    return out


def _oi_value(attributes: Mapping[str, Any], key: str) -> Any:
    value = attributes.get(key)
    if attributes.get(f"{key.rsplit('.', 1)[0]}.mime_type") == "application/json":
        return _json_text(value, key)
    return value


def _openinference(span_type: str, attributes: Mapping[str, Any], name: str) -> dict[str, Any]:
    if span_type == "agent_run":
        agent = attributes.get("agent.name") or name
        value = _oi_value(attributes, "input.value")
        output = attributes.get("output.value")
        if output is not None and not isinstance(output, str):
            output = json.dumps(output)
        return {"entity_type": "agent", "entity_name": agent, "entity_id": agent,
                "input": value, "output": None if output is None else {"text": output}}
    if span_type == "model_generation":
        inputs = _oi_messages(attributes, "input")
        text = _last_text(_oi_messages(attributes, "output"))
        model = attributes.get("llm.model_name")
        return {"entity_type": "llm", "entity_name": model, "entity_id": model,
                "input": {"messages": inputs} if inputs else None,
                "output": None if text is None else {"text": text},
                "mastra_attributes": {
                    "model": model,
                    "usage": _usage(attributes, "llm.token_count.prompt",
                                    "llm.token_count.completion"),
                }}
    tool = attributes.get("tool.name") or name
    return {"entity_type": "tool", "entity_name": tool, "entity_id": tool,
            "input": _maybe_json(attributes.get("input.value")),
            "output": _maybe_json(attributes.get("output.value"))}




def _classify(attributes: Mapping[str, Any]) -> tuple[str, str | None]:
    """The span type and the convention that decided it (``None``: neither)."""
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str):
        return GENAI_OPERATIONS.get(operation, _GENERIC), "genai"
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str):
        return OPENINFERENCE_KINDS.get(kind.upper(), _GENERIC), "openinference"
    return _GENERIC, None


def _span(raw: object, resource: Mapping[str, Any], scope: Mapping[str, Any]) -> Span:
    if not isinstance(raw, Mapping):
        raise _Malformed("span", f"must be an object, got {short_repr(raw)}")
    span_id = _hex_id(raw, "spanId", required=True)
    trace_id = _hex_id(raw, "traceId", required=True)
    parent = _hex_id(raw, "parentSpanId", required=False)
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise _Malformed("name", f"must be a string, got {short_repr(name)}")
    attributes = _key_values(raw.get("attributes"), "attributes")
    span_type, convention = _classify(attributes)
    mapped: dict[str, Any] = {}
    if convention == "genai" and span_type != _GENERIC:
        mapped = _genai(span_type, attributes)
    elif convention == "openinference" and span_type != _GENERIC:
        mapped = _openinference(span_type, attributes, name or "")
    status = raw.get("status") or {}
    if not isinstance(status, Mapping):
        raise _Malformed("status", f"must be an object, got {short_repr(status)}")
    failed = status.get("code") in _ERROR_CODES
    error = None
    if failed:
        error = {"message": status.get("message") or "",
                 "type": attributes.get("error.type") or "error"}
    span_attributes: dict[str, Any] = dict(attributes)
    span_attributes.update(mapped.pop("mastra_attributes", {}))
    if span_type == "tool_call":
        span_attributes["success"] = not failed
    events = raw.get("events") or []
    if not isinstance(events, list):
        raise _Malformed("events", f"must be a list, got {short_repr(events)}")
    extra: dict[str, Any] = {
        "otel": {"kind": raw.get("kind"), "convention": convention,
                 "resource": resource, "scope": scope,
                 "events": [{"name": e.get("name"),
                             "attributes": _key_values(e.get("attributes"),
                                                       f"events[{i}].attributes")}
                            for i, e in enumerate(events) if isinstance(e, Mapping)]},
    }
    return Span(
        span_id=cast(str, span_id), span_type=span_type, trace_id=trace_id,
        parent_span_id=parent, name=name,
        started_at=cast(datetime, _time(raw, "startTimeUnixNano", required=True)),
        ended_at=_time(raw, "endTimeUnixNano", required=False),
        error=error, attributes=span_attributes, extra=extra, **mapped,
    )


def _scope_name(scope_spans: Mapping[str, Any]) -> dict[str, Any]:
    scope = scope_spans.get("scope") or {}
    if not isinstance(scope, Mapping):
        return {}
    return {k: scope[k] for k in ("name", "version") if isinstance(scope.get(k), str)}


def _spans_of(payload: object) -> Iterator[Result[Span, TraceError]]:
    """Every span of one OTLP/JSON request, in file order; a malformed one as a TraceError."""
    if not isinstance(payload, Mapping):
        yield Failure(TraceError(kind="invalid_otlp", message=(
            f"an OTLP trace request must be an object, got {short_repr(payload)}")))
        return
    resource_spans = _field(payload, "resourceSpans")
    if not isinstance(resource_spans, list):
        yield Failure(TraceError(kind="invalid_otlp", message=(
            f"resourceSpans: required, a list, got {short_repr(resource_spans)}")))
        return
    for r_index, entry in enumerate(resource_spans):
        where = f"resourceSpans[{r_index}]"
        if not isinstance(entry, Mapping):
            yield Failure(TraceError(kind="invalid_otlp",
                                     message=f"{where}: must be an object"))
            continue
        try:
            resource_json = entry.get("resource") or {}
            resource = _key_values(
                resource_json.get("attributes") if isinstance(resource_json, Mapping) else None,
                f"{where}.resource.attributes")
        except _Malformed as exc:
            yield Failure(TraceError(kind="invalid_otlp", message=str(exc)))
            continue
        scope_spans = _field(entry, "scopeSpans") or []
        if not isinstance(scope_spans, list):
            yield Failure(TraceError(kind="invalid_otlp",
                                     message=f"{where}.scopeSpans: must be a list"))
            continue
        for s_index, group in enumerate(scope_spans):
            spans = _field(group, "spans") if isinstance(group, Mapping) else None
            if not isinstance(spans, list):
                yield Failure(TraceError(kind="invalid_otlp", message=(
                    f"{where}.scopeSpans[{s_index}].spans: must be a list")))
                continue
            scope = _scope_name(cast(Mapping[str, Any], group))
            for index, raw in enumerate(spans):
                try:
                    yield Success(_span(raw, resource, scope))
                except _Malformed as exc:
                    yield Failure(_span_error(raw, f"{where}.scopeSpans[{s_index}]"
                                                   f".spans[{index}]", exc))


def _span_error(raw: object, where: str, exc: _Malformed) -> TraceError:
    span_id = raw.get("spanId", raw.get("span_id")) if isinstance(raw, Mapping) else None
    trace_id = raw.get("traceId", raw.get("trace_id")) if isinstance(raw, Mapping) else None
    name = raw.get("name") if isinstance(raw, Mapping) else None
    label = f"span {span_id}" if isinstance(span_id, str) and span_id else where
    if isinstance(name, str) and name:
        label += f" ({name!r})"
    return TraceError(
        kind="invalid_span", message=f"{label}: {exc}",
        trace_id=trace_id if isinstance(trace_id, str) and trace_id else None,
        span_id=span_id if isinstance(span_id, str) and span_id else None,
    )


def otlp_to_traces(payload: object) -> Result[tuple[Trace, ...], TraceError]:
    """The traces of one OTLP/JSON ``ExportTraceServiceRequest``, one per trace id.

    Traces come in the order their first span appears; a trace's spans keep file order.
    ``Failure`` names the span (its id and name) and the field for the first malformed span.

    >>> span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
    ...         "name": "chat gpt-4o", "startTimeUnixNano": "1544712660000000000",
    ...         "attributes": [
    ...             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
    ...             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}}]}
    >>> traces = otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    >>> traces.unwrap()[0].spans[0].span_type, traces.unwrap()[0].spans[0].attributes["model"]
    ('model_generation', 'gpt-4o')
    >>> otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "ab"}]}]}]}
    ...               ).failure().message
    'span ab: traceId: required, a hex string'
    """
    grouped: dict[str, list[Span]] = {}
    for item in _spans_of(payload):
        if isinstance(item, Failure):
            return Failure(item.failure())
        span = item.unwrap()
        grouped.setdefault(cast(str, span.trace_id), []).append(span)
    return Success(tuple(_complete(Trace(spans=s, trace_id=t)) for t, s in grouped.items()))


def read_otlp_json_lines(lines: Iterable[str | bytes]) -> Iterator[Result[Trace, TraceError]]:
    """Stream the traces of a file of OTLP/JSON requests, one request per line.

    This is what the OpenTelemetry Collector's file exporter writes; a file holding a single
    (possibly pretty-printed) request is read whole when its first line does not parse alone.
    A trace is yielded once its root span (no parent) has been read, at the end of that line:
    exporters send a span when it ends, and a root ends after its children. Spans of a trace
    without a root are yielded at the end. Memory holds only the traces still waiting for
    their root. A line that is not JSON or not a request is a ``Failure`` naming its line
    number; a malformed span fails its trace (the rest of the file goes on).

    >>> line = ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "01", '
    ...         '"spanId": "02", "name": "root", "startTimeUnixNano": "1"}]}]}]}')
    >>> first, second = read_otlp_json_lines([line, "not json"])
    >>> first.unwrap().trace_id, second.failure().message
    ('01', 'line 2: not JSON (Expecting value at character 0)')
    """
    return read_otlp_requests((f"line {n}", p) for n, p in _payloads(lines))


def read_otlp_requests(
    requests: Iterable[tuple[str, object]],
) -> Iterator[Result[Trace, TraceError]]:
    """Stream the traces of a sequence of OTLP/JSON requests, each with where it was read.

    What :func:`read_otlp_json_lines` does once it has parsed the lines, for readers of other
    framings (the protobuf reader of ``scorecore_adapters.otel``): each item is a request (as
    ``otlp_to_traces`` takes it) with a label for the messages (``"line 3"``, ``"frame 2 at
    byte 120"``); a trace is yielded once its root span has been read, the spans of a trace
    without a root at the end. An item that is already a ``TraceError`` (a request its reader
    could not decode) is passed on as a ``Failure``.

    >>> root = {"traceId": "01", "spanId": "02", "name": "root", "startTimeUnixNano": "1"}
    >>> request = {"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}
    >>> first, second = read_otlp_requests([("frame 1", request), ("frame 2", {"x": 1})])
    >>> first.unwrap().trace_id, second.failure().message
    ('01', 'frame 2: resourceSpans: required, a list, got None')
    """
    pending: dict[str, list[Span]] = {}
    broken: dict[str, TraceError] = {}
    rooted: set[str] = set()
    for where, payload in requests:
        if isinstance(payload, TraceError):
            yield Failure(payload)
            continue
        for item in _spans_of(payload):
            if isinstance(item, Failure):
                error = item.failure()
                if error.trace_id is None:
                    yield Failure(attrs.evolve(error, message=f"{where}: {error.message}"))
                else:
                    broken.setdefault(error.trace_id.lower(), attrs.evolve(
                        error, message=f"{where}: {error.message}"))
                continue
            span = item.unwrap()
            trace_id = cast(str, span.trace_id)
            pending.setdefault(trace_id, []).append(span)
            if span.parent_span_id is None:
                rooted.add(trace_id)
        for trace_id in sorted(rooted, key=list(pending).index):
            yield _finished(trace_id, pending.pop(trace_id), broken)
        rooted.clear()
    for trace_id, spans in pending.items():
        yield _finished(trace_id, spans, broken)
    for error in broken.values():
        yield Failure(error)
    broken.clear()


def _text(line: str | bytes) -> str:
    return line.decode("utf-8", "replace") if isinstance(line, bytes) else line


def _not_json(number: int, exc: json.JSONDecodeError) -> TraceError:
    return TraceError(kind="invalid_otlp",
                      message=f"line {number}: not JSON ({exc.msg} at character {exc.pos})")


def _payloads(lines: Iterable[str | bytes]) -> Iterator[tuple[int, object | TraceError]]:
    """Each non-blank line's JSON, numbered from 1; a line that is not JSON as a TraceError."""
    iterator = iter(lines)
    number = 0
    for line in iterator:
        number += 1
        text = _text(line)
        if not text.strip():
            continue
        try:
            yield number, json.loads(text)
        except json.JSONDecodeError as exc:
            if number > 1:
                yield number, _not_json(number, exc)
                continue
            # A pretty-printed single request spans many lines: try the whole file.
            rest = [_text(r) for r in iterator]
            try:
                yield 1, json.loads(text + "".join(rest))
            except json.JSONDecodeError:
                # Not that either: JSON lines whose first line is broken.
                yield 1, _not_json(1, exc)
                for offset, other in enumerate(rest, start=2):
                    if other.strip():
                        try:
                            yield offset, json.loads(other)
                        except json.JSONDecodeError as error:
                            yield offset, _not_json(offset, error)
            return


def _finished(
    trace_id: str, spans: list[Span], broken: dict[str, TraceError]
) -> Result[Trace, TraceError]:
    error = broken.pop(trace_id, None)
    if error is not None:
        return Failure(error)
    return Success(_complete(Trace(spans=spans, trace_id=trace_id)))


def _complete(trace: Trace) -> Trace:
    """Fill an agent span's missing input or output from its model calls.

    An agent span that does not record its messages (content capture off, or an
    instrumentation that keeps them on the model spans) gets its input from its first direct
    model child's non-system input messages and its output from its last model child's text.
    """
    agents = [s for s in trace.spans
              if s.span_type == "agent_run" and (s.input is None or s.output is None)]
    if not agents:
        return trace
    replaced: dict[str, Span] = {}
    for agent in agents:
        models = sorted((s for s in trace.spans if s.parent_span_id == agent.span_id
                         and s.span_type == "model_generation"), key=lambda s: s.started_at)
        if not models:
            continue
        changes: dict[str, Any] = {}
        first = models[0].input
        if agent.input is None and isinstance(first, Mapping):
            messages = [m for m in first.get("messages", []) if m.get("role") != "system"]
            changes["input"] = messages or None
        last = next((s.output for s in reversed(models) if s.output is not None), None)
        if agent.output is None and last is not None:
            changes["output"] = last
        if changes:
            replaced[agent.span_id] = attrs.evolve(agent, **changes)
    if not replaced:
        return trace
    return attrs.evolve(trace, spans=[replaced.get(s.span_id, s) for s in trace.spans])


def agent_traces(trace: Trace) -> tuple[Trace, ...]:
    """One trace per agent root span: the subtree of each ``agent_run`` span that has no
    ``agent_run`` ancestor, with that span made the root.

    An agent is often not the root of its OpenTelemetry trace (an HTTP server span, a
    workflow or a ``CHAIN`` span sits above it); :func:`~scorecore.traces.trace_to_agent_run`
    scores the root agent span, so each agent gets its own trace. The span it hung from is
    kept in its ``extra["otel"]["parentSpanId"]``. Nested agents stay inside their caller's
    subtree.

    >>> from datetime import datetime
    >>> t0 = datetime(2025, 1, 1)
    >>> spans = [Span(span_id="http", span_type="generic", started_at=t0),
    ...          Span(span_id="a", span_type="agent_run", parent_span_id="http", started_at=t0),
    ...          Span(span_id="m", span_type="model_generation", parent_span_id="a",
    ...               started_at=t0)]
    >>> [(s.span_id, s.parent_span_id) for s in agent_traces(Trace(spans=spans))[0].spans]
    [('a', None), ('m', 'a')]
    """
    children: dict[str | None, list[Span]] = {}
    for span in trace.spans:
        children.setdefault(span.parent_span_id, []).append(span)
    ids = {s.span_id for s in trace.spans}
    roots = [s for s in trace.spans if s.parent_span_id is None or s.parent_span_id not in ids]
    found: list[Span] = []
    stack = list(reversed(roots))
    while stack:
        span = stack.pop()
        if span.span_type == "agent_run":
            found.append(span)
            continue
        stack.extend(reversed(children.get(span.span_id, [])))
    out: list[Trace] = []
    for agent in found:
        if agent.parent_span_id is None:
            subtree = [agent]
        else:
            otel = dict(agent.extra.get("otel", {}))
            otel["parentSpanId"] = agent.parent_span_id
            subtree = [attrs.evolve(agent, parent_span_id=None,
                                    extra={**agent.extra, "otel": otel})]
        queue = [agent.span_id]
        while queue:
            for child in children.get(queue.pop(), []):
                subtree.append(child)
                queue.append(child.span_id)
        if len(subtree) == len(trace.spans) and agent.parent_span_id is None:
            out.append(trace)
        else:
            out.append(Trace(spans=subtree, trace_id=trace.trace_id))
    return tuple(out)
