"""OTLP/JSON field readers: AnyValue attributes, hex ids, timestamps, JSON-in-a-string values.

Every reader raises :class:`Malformed` for a bad value (turned into a span's ``TraceError`` by
the span reader) and bounds what it builds: values nest at most :data:`MAX_DEPTH` deep, so no
later step can exhaust the stack on a hostile payload.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from scorecore._core._reprs import short_repr

_HEX_ID: Final = re.compile(r"[0-9a-fA-F]+")
_BASE64_ID: Final = {"traceId": 24, "spanId": 12, "parentSpanId": 12}  # 16 and 8 bytes


class Malformed(Exception):  # noqa: N818 - internal signal, turned into a TraceError value
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


MAX_DEPTH: Final = 64
"""How deep an attribute value or a JSON-in-a-string value may nest: deeper is malformed (no
instrumentation writes more than a few levels; a bound keeps every later step iterative-safe)."""


def any_value(value: object, where: str, depth: int = 0) -> object:
    """One OTLP ``AnyValue`` (JSON encoding) as a plain Python value."""
    if depth > MAX_DEPTH:
        raise Malformed(where, f"nested deeper than {MAX_DEPTH} levels")
    if not isinstance(value, Mapping):
        raise Malformed(where, f"must be an AnyValue object, got {short_repr(value)}")
    if not value:
        return None
    name, raw = next(iter(value.items()))
    kind = _VALUE_KEYS.get(name) if len(value) == 1 else None
    if kind == "string":
        if not isinstance(raw, str):
            raise Malformed(where, f"stringValue must be a string, got {short_repr(raw)}")
        return raw
    if kind == "bool":
        if not isinstance(raw, bool):
            raise Malformed(where, f"boolValue must be a boolean, got {short_repr(raw)}")
        return raw
    if kind == "int":
        # The JSON encoding writes 64-bit integers as strings.
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise Malformed(where, f"intValue must be an integer, got {short_repr(raw)}")
        try:
            return int(raw)
        except (ValueError, OverflowError):
            raise Malformed(where, f"intValue must be an integer, "
                                    f"got {short_repr(raw)}") from None
    if kind == "double":
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise Malformed(where, f"doubleValue must be a number, got {short_repr(raw)}")
        try:
            number = float(raw)
        except (ValueError, OverflowError):
            raise Malformed(where, f"doubleValue must be a number, "
                                    f"got {short_repr(raw)}") from None
        # 1e400 reads as infinity: kept (OTLP allows it), never turned into an integer later
        return number
    if kind == "array":
        items = raw.get("values", []) if isinstance(raw, Mapping) else None
        if not isinstance(items, list):
            raise Malformed(where, f"arrayValue must hold a values list, got {short_repr(raw)}")
        return [any_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
    if kind == "kvlist":
        pairs = raw.get("values", []) if isinstance(raw, Mapping) else None
        if not isinstance(pairs, list):
            raise Malformed(where, f"kvlistValue must hold a values list, "
                                    f"got {short_repr(raw)}")
        return key_values(pairs, where, depth + 1)
    if kind == "bytes":
        return raw  # base64 text, kept as is
    raise Malformed(where, f"unknown AnyValue {short_repr(value)}")


def key_values(pairs: object, where: str, depth: int = 0) -> dict[str, object]:
    if pairs is None:
        return {}
    if not isinstance(pairs, list):
        raise Malformed(where, f"must be a list of key/value objects, got {short_repr(pairs)}")
    out: dict[str, object] = {}
    for index, pair in enumerate(pairs):
        key = pair.get("key") if isinstance(pair, dict | Mapping) else None
        if not isinstance(key, str):
            raise Malformed(f"{where}[{index}]", f"must be an object with a string key, "
                                                  f"got {short_repr(pair)}")
        value = cast(Mapping[str, object], pair).get("value", _NO_VALUE)
        # The common case first: one string value (no location string built for it).
        if type(value) is dict and len(value) == 1 and type(value.get("stringValue")) is str:
            out[key] = value["stringValue"]
            continue
        try:
            out[key] = any_value(value, "", depth)
        except Malformed as exc:
            raise Malformed(f"{where}[{index}] ({key}){exc.field}", exc.problem) from None
    return out


_NO_VALUE: Final[Mapping[str, object]] = {}


def field(raw: Mapping[str, object], camel: str) -> object:
    # OTLP/JSON receivers accept the protobuf field names too (snake_case).
    if camel in raw:
        return raw[camel]
    return raw.get(re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), camel))


def hex_id(raw: Mapping[str, object], camel: str, *, required: bool) -> str | None:
    value = field(raw, camel)
    if value is None or value == "":
        if required:
            raise Malformed(camel, "required, a hex string")
        return None
    if isinstance(value, str) and value.endswith("=") and len(value) == _BASE64_ID[camel]:
        # protobuf's own JSON mapping (google.protobuf.json_format, what a dump of the SDK's
        # OTLP encoder gives) writes ids as base64: always padded, so never hex
        try:
            return base64.b64decode(value, validate=True).hex()
        except binascii.Error:
            pass
    if not isinstance(value, str) or not _HEX_ID.fullmatch(value):
        raise Malformed(camel, f"must be a hex string, got {short_repr(value)}")
    return value.lower()


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_NANOS: Final = 2 ** 64  # OTLP's fixed64; the largest is in the year 2554


def timestamp(raw: Mapping[str, object], camel: str, *, required: bool) -> datetime | None:
    value = field(raw, camel)
    if value is None or value in ("", "0", 0):
        if required:
            raise Malformed(camel, "required, nanoseconds since the epoch")
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Malformed(camel, f"must be nanoseconds since the epoch, got {short_repr(value)}")
    try:
        nanos = int(value)
    except ValueError:  # also a number of more than 4,300 digits
        raise Malformed(camel, f"must be nanoseconds since the epoch, "
                                f"got {short_repr(value)}") from None
    if not 0 <= nanos < _MAX_NANOS:
        raise Malformed(camel, f"must be nanoseconds since the epoch (an unsigned 64-bit "
                                f"integer), got {short_repr(value)}")
    return _EPOCH + timedelta(microseconds=nanos // 1000)


def parse_json(text: str) -> object:
    """``text`` parsed; raises ``ValueError`` for text that is not JSON, holds a number of
    more than 4,300 digits, or nests deeper than :data:`MAX_DEPTH`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    # fewer brackets than the bound cannot nest past it (the common case: no walk at all)
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: object) -> int:
    """How deep ``value`` nests (iteratively: a deep value must not exhaust the stack)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            item = list(item.values())
        if isinstance(item, list | tuple):
            if level + 1 > MAX_DEPTH:
                return level + 1
            deepest = max(deepest, level + 1)
            stack.extend((v, level + 1) for v in item if isinstance(v, Mapping | list | tuple))
    return deepest


def json_text(value: object, field: str) -> object:
    """A convention's JSON-in-a-string attribute, parsed (structured values pass through)."""
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value)
    except json.JSONDecodeError as exc:
        raise Malformed(field, f"must be JSON, {exc.msg} at character {exc.pos}") from None
    except ValueError as exc:
        raise Malformed(field, f"must be JSON, {exc}") from None


def maybe_json(value: object) -> object:
    """A free-form value (tool arguments, ``input.value``): JSON when it parses, else as is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return parse_json(value)
        except ValueError:
            return value
    return value


def serialized(value: object) -> object:
    """A value an SDK wrote with ``JSON.stringify`` / ``json.dumps`` (a tool's result, a
    decorated function's return value): parsed, a quoted string included; as is when it is
    not JSON."""
    if isinstance(value, str):
        try:
            return parse_json(value)
        except ValueError:
            return value
    return value


def text_or_none(value: object) -> str | None:
    """A name or model read from an attribute: a non-empty string, else nothing."""
    return value if isinstance(value, str) and value else None





def last_text(messages: list[dict[str, Any]] | None) -> str | None:
    if not messages:
        return None
    texts: list[str] = [m["content"] for m in messages]
    return next((t for m, t in zip(reversed(messages), reversed(texts), strict=True)
                 if m["role"] == "assistant" and t), texts[-1])


def usage(attributes: Mapping[str, object], tokens_in: str, tokens_out: str) -> dict[str, object]:
    usage: dict[str, object] = {}
    for key, name in ((tokens_in, "inputTokens"), (tokens_out, "outputTokens")):
        value = attributes.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise Malformed(key, f"must be an integer, got {short_repr(value)}")
            usage[name] = value
    return usage

