"""Mutations of real OTLP trace payloads and the reader paths they are fed to (shared by the
fuzz test and the campaign script ``benchmarks/otlp_fuzz.py``).

A mutation takes a payload (OTLP/JSON, hex ids) and a ``random.Random`` and changes it in
place the ways broken exporters, hostile senders and bit rot do: a leaf replaced by an extreme
value (huge or negative timestamps, ``1e400``, 5,000-digit numbers, lists where objects go), a
value nested thousands deep, a span id used twice with the copy's parent below the original,
parent cycles, dropped keys. :func:`exercise` runs every public reader path on the result and
returns how many traces it read; anything it raises is an escape.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import random
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from returns.result import Success

from scorecore.traces import (
    agent_traces,
    extract_trajectory_from_trace,
    otlp_to_traces,
    read_otlp_json_lines,
    trace_to_agent_run,
)

FIXTURES = Path(__file__).parent / "fixtures" / "otlp"


def seeds() -> list[dict[str, Any]]:
    """The real payloads every mutation starts from."""
    found = [json.loads((FIXTURES / n).read_text()) for n in
             ("genai_agent.json", "openinference_agent.json")]
    lines = (FIXTURES / "collector_file_exporter.jsonl").read_text().splitlines()
    return found + [json.loads(line) for line in lines if line.strip()]


_BIG_INT = "@@a 5000-digit integer@@"


def _deep(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _deep_kvlist(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(depth):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def _nasty(rng: random.Random) -> Any:
    choices: list[Callable[[], Any]] = [
        lambda: "9" * rng.choice((20, 25, 40)),
        lambda: "-" + "9" * rng.choice((1, 19, 30)),
        lambda: -1,
        lambda: 2 ** 70,
        lambda: float("inf"),  # written as Infinity: what 1e400 parses to
        lambda: float("nan"),
        lambda: _BIG_INT,  # a 5,000-digit JSON number once written (see dumps)
        lambda: "7" * 5000,
        list,
        lambda: [1, [2]],
        dict,
        lambda: {"a": {"b": []}},
        lambda: None,
        lambda: True,
        lambda: "",
        lambda: "\x00\x1b[31m",
        lambda: _deep(rng.choice((200, 3000)), 1),
        lambda: "[" * 100_000 + "]" * 100_000,
        lambda: _deep_kvlist(rng.choice((50, 3000))),
        lambda: {"stringValue": '[{"role": "user", "parts": ' + "[" * 100_000 + "]" * 100_000
                 + "}]"},
        lambda: {"doubleValue": float("inf")},
        lambda: {"intValue": "9" * 5000},
        lambda: {"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": 1}]}},
    ]
    return rng.choice(choices)()


def _spans(payload: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for resource in payload.get("resourceSpans", []) if isinstance(payload, dict) else []:
        for scope in resource.get("scopeSpans", []) if isinstance(resource, dict) else []:
            spans = scope.get("spans", []) if isinstance(scope, dict) else []
            out.extend(s for s in spans if isinstance(s, dict))
    return out


def _nodes(value: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    # iterative, and not into values nested deeper than a real payload (an earlier mutation's)
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        yield path, item
        if len(path) > 40:
            continue
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))


def _set(payload: Any, path: tuple[Any, ...], value: Any) -> None:
    target = payload
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def replace_any_node(payload: Any, rng: random.Random) -> None:
    """A random value anywhere (leaf, object or list) becomes an extreme one."""
    nodes = [p for p, _ in _nodes(payload) if p]
    _set(payload, rng.choice(nodes), _nasty(rng))


def replace_span_field(payload: Any, rng: random.Random) -> None:
    """A field every span has (ids, times, status, name) becomes an extreme value."""
    spans = _spans(payload)
    if spans:
        key = rng.choice(("startTimeUnixNano", "endTimeUnixNano", "status", "name", "spanId",
                          "parentSpanId", "traceId", "attributes", "events", "kind"))
        span = rng.choice(spans)
        if key == "status":
            span[key] = rng.choice(({"code": [2]}, {"code": {"x": 1}}, {"code": 2.5},
                                    {"code": 2, "message": [1]}, [], "ERROR"))
        else:
            span[key] = _nasty(rng)


def replace_attribute(payload: Any, rng: random.Random) -> None:
    """An attribute's value becomes an extreme AnyValue, or a key gets a 5,000-digit index."""
    spans = [s for s in _spans(payload) if isinstance(s.get("attributes"), list)
             and s["attributes"]]
    if not spans:
        return
    attributes = rng.choice(spans)["attributes"]
    index = rng.randrange(len(attributes))
    if rng.random() < 0.3:
        digits = "1" * rng.choice((5000, 20))
        attributes.append({"key": f"llm.input_messages.{digits}.message.role",
                           "value": {"stringValue": "user"}})
        attributes.append({"key": f"llm.output_messages.0.message.tool_calls.{digits}"
                                  ".tool_call.function.name", "value": {"stringValue": "t"}})
    elif isinstance(attributes[index], dict):
        attributes[index]["value"] = _nasty(rng)


def duplicate_span(payload: Any, rng: random.Random) -> None:
    """A span id used twice, the copy's parent pointing below the original (a cycle)."""
    spans = _spans(payload)
    if not spans:
        return
    original = rng.choice(spans)
    children = [s for s in spans if s.get("parentSpanId") == original.get("spanId")]
    twin = dict(original)  # shallow: an earlier mutation may have nested a value 3,000 deep
    twin["parentSpanId"] = (rng.choice(children).get("spanId", "") if children
                            else original.get("spanId"))
    if rng.random() < 0.5:
        twin["name"] = "changed"
    spans_list = payload["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans_list.append(twin)


def point_parents(payload: Any, rng: random.Random) -> None:
    """Parents rewired at random: cycles, self-parents, parents in another trace."""
    spans = _spans(payload)
    for span in spans:
        if rng.random() < 0.5:
            span["parentSpanId"] = rng.choice(spans).get("spanId", "")


def drop_key(payload: Any, rng: random.Random) -> None:
    """A random key disappears."""
    keyed = [(p, v) for p, v in _nodes(payload) if isinstance(v, dict) and v]
    _, target = rng.choice(keyed)
    del target[rng.choice(list(target))]


MUTATIONS: tuple[Callable[[Any, random.Random], None], ...] = (
    replace_any_node, replace_span_field, replace_attribute, duplicate_span, point_parents,
    drop_key,
)


def mutate(payload: Any, rng: random.Random, count: int = 2) -> Any:
    """A deep copy of ``payload`` with ``count`` random mutations applied."""
    out = copy.deepcopy(payload)
    for _ in range(count):
        # an earlier mutation may have removed what this one changes: the payload stays
        with contextlib.suppress(KeyError, TypeError, IndexError, AttributeError):
            rng.choice(MUTATIONS)(out, rng)
    return out


def _downstream(trace: Any) -> int:
    for agent in agent_traces(trace):
        trace_to_agent_run(agent)
        extract_trajectory_from_trace(agent)
    extract_trajectory_from_trace(trace)
    return 1


def dumps(payload: Any) -> str:
    """``payload`` as one JSON line (values nested a few thousand deep included)."""
    try:
        text = json.dumps(payload)
    except RecursionError:
        # Python 3.12 and later bound json's C encoder by the C stack, which
        # sys.setrecursionlimit does not raise: a 3,000-deep attribute is 12,000 containers.
        text = _dumps_without_recursion(payload)
    return text.replace(f'"{_BIG_INT}"', "7" * 5000)


@dataclasses.dataclass(frozen=True)
class _Text:
    """Already encoded JSON text, on the encoder's stack."""

    text: str


def _key(key: object) -> str:
    # the keys json.dumps accepts, written as it writes them
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return json.dumps(key)
    if isinstance(key, int | float):
        return json.dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _dumps_without_recursion(value: Any) -> str:
    """What ``json.dumps(value)`` writes, with an explicit stack instead of recursion."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item.text)
        elif isinstance(item, dict):
            parts: list[Any] = [_Text("{")]
            for index, (key, inner) in enumerate(item.items()):
                parts.append(_Text((", " if index else "") + json.dumps(_key(key)) + ": "))
                parts.append(inner)
            parts.append(_Text("}"))
            stack.extend(reversed(parts))
        elif isinstance(item, list | tuple):
            parts = [_Text("[")]
            for index, inner in enumerate(item):
                if index:
                    parts.append(_Text(", "))
                parts.append(inner)
            parts.append(_Text("]"))
            stack.extend(reversed(parts))
        else:
            out.append(json.dumps(item))
    return "".join(out)


def exercise_json(payload: Any) -> int:
    """Every JSON reader path on ``payload``; the number of traces read."""
    read = 0
    whole = otlp_to_traces(payload)
    if isinstance(whole, Success):
        read += sum(_downstream(t) for t in whole.unwrap())
    line = dumps(payload)
    for outcome in read_otlp_json_lines([line, line]):
        if isinstance(outcome, Success):
            read += _downstream(outcome.unwrap())
    return read


def protobuf_bytes(payload: Any) -> bytes | None:
    """``payload`` as a protobuf request, or ``None`` when it has no protobuf form."""
    from google.protobuf.json_format import ParseError  # noqa: PLC0415 - the otel extra

    from tests.otlp_payloads import to_protobuf  # noqa: PLC0415

    try:
        return to_protobuf(copy.deepcopy(payload))
    except (ParseError, ValueError, TypeError, KeyError, AttributeError, RecursionError,
            OverflowError):
        return None


def exercise_protobuf(data: bytes) -> int:
    """Both protobuf reader paths on ``data``; the number of traces read."""
    from scorecore_adapters.otel import (  # noqa: PLC0415 - the otel extra
        read_otlp_protobuf,
        read_otlp_protobuf_frames,
    )

    read = 0
    whole = read_otlp_protobuf(data)
    if isinstance(whole, Success):
        read += sum(_downstream(t) for t in whole.unwrap())
    frames = (len(data).to_bytes(4, "big") + data) * 2
    for outcome in read_otlp_protobuf_frames(io.BytesIO(frames)):
        if isinstance(outcome, Success):
            read += _downstream(outcome.unwrap())
    return read


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    """``data`` with a few random bytes changed (bit rot in a protobuf file)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


class TookTooLongError(Exception):
    """Raised by :func:`bounded` when the work under it did not end in time (a hang)."""


@contextlib.contextmanager
def bounded(seconds: int) -> Iterator[None]:
    """Fail with :class:`TookTooLongError` instead of hanging (a reader that loops forever)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise TookTooLongError(f"did not end within {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
