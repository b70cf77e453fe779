"""Hypothesis strategies for the JSON values a JSON schema (draft 2020-12) accepts.

Written here rather than taken from hypothesis-jsonschema, whose last release (0.23.1) fails
with current hypothesis (``'many' object has no attribute 'more'``). It covers what scorecore's
``output_type`` schemas use (types, ``enum``, ``const``, ``anyOf``/``oneOf``/``allOf``,
``properties``/``required``/``additionalProperties``, ``items``/``prefixItems``, ``$ref``
into ``$defs`` or to the root) and the common bounds (``minimum``/``maximum`` and their
exclusive forms, ``minLength``/``maxLength``, ``pattern``, ``minItems``/``maxItems``,
``uniqueItems``, ``multipleOf``). Every value drawn is checked against the whole schema with
``Draft202012Validator``, so keywords it does not model only make drawing slower, never wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

__all__ = ["values_for_schema"]

# From this depth on (a recursive schema) only required keys and minimal arrays are drawn, so
# values end; past _MAX_DEPTH a branch draws nothing (only a schema that requires infinite
# nesting gets there).
_PRUNE_DEPTH = 4
_MAX_DEPTH = 40
_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


def _keys() -> st.SearchStrategy[str]:
    return st.text(max_size=12)


def _any_json() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**53), 2**53),
        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys(), inner, max_size=3),
        max_leaves=6,
    )


class _Builder:
    __slots__ = ("_root",)

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root

    def build(self, schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return _any_json()
        if schema is False or not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return st.nothing()
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return self.build({**self._resolve(schema["$ref"]), **rest}, depth + 1)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k != key}
                return st.one_of([self.build({**rest, **sub}, depth + 1)
                                  for sub in schema[key] if isinstance(sub, Mapping)])
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for sub in schema["allOf"]:
                if isinstance(sub, Mapping):
                    merged = _merge(merged, sub)
            return self.build(merged, depth + 1)
        types = schema.get("type", _implied_types(schema))
        if isinstance(types, str):
            types = [types]
        makers: dict[str, Callable[[Mapping[str, Any], int], st.SearchStrategy[Any]]] = {
            "object": self._object, "array": self._array, "string": _string,
            "integer": _integer, "number": _number,
            "boolean": lambda _s, _d: st.booleans(), "null": lambda _s, _d: st.none(),
        }
        return st.one_of([makers[t](schema, depth) for t in types if t in makers])

    def _resolve(self, ref: object) -> Mapping[str, Any]:
        if ref == "#":
            return self._root
        if isinstance(ref, str) and ref.startswith("#/"):
            node: Any = self._root
            for part in ref[2:].split("/"):
                node = node.get(part.replace("~1", "/").replace("~0", "~")) \
                    if isinstance(node, Mapping) else None
            if isinstance(node, Mapping):
                return node
        return {"not": {}}  # an unresolvable reference accepts nothing

    def _object(self, schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = [k for k in schema.get("required", ()) if isinstance(k, str)]
        extra = schema.get("additionalProperties", True)
        fixed = {k: self.build(properties.get(k, extra), depth + 1) for k in required}
        # Deep down (a recursive schema) only what is required is drawn, so values end.
        deep = depth >= _PRUNE_DEPTH
        optional = {} if deep else {k: self.build(v, depth + 1) for k, v in properties.items()
                                    if k not in fixed}
        base = st.fixed_dictionaries(fixed, optional=optional)
        if extra is False or deep:
            return base
        others = st.dictionaries(
            _keys().filter(lambda k: k not in properties), self.build(extra, depth + 1),
            max_size=2,
        )
        return st.tuples(base, others).map(lambda pair: {**pair[1], **pair[0]})

    def _array(self, schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
        prefix = [self.build(s, depth + 1) for s in schema.get("prefixItems", ())]
        items = schema.get("items", True)
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        rest_low = max(low - len(prefix), 0)
        rest_high = rest_low + 4 if high is None else max(int(high) - len(prefix), 0)
        if depth >= _PRUNE_DEPTH and rest_low == 0:
            items = False  # deep down (a recursive schema) arrays stay as short as allowed
        rest = st.just([]) if items is False else st.lists(
            self.build(items, depth + 1), min_size=rest_low, max_size=rest_high,
            unique_by=_canonical if schema.get("uniqueItems") else None,
        )
        return st.tuples(st.tuples(*prefix), rest).map(lambda p: [*p[0], *p[1]])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _implied_types(schema: Mapping[str, Any]) -> list[str]:
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    if "pattern" in schema or "minLength" in schema or "maxLength" in schema:
        return ["string"]
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return ["number"]
    return list(_TYPES)


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(a)
    for key, value in b.items():
        if key == "required":
            merged[key] = [*merged.get(key, ()), *value]
        elif key == "properties":
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def _string(schema: Mapping[str, Any], _depth: int) -> st.SearchStrategy[Any]:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if "pattern" in schema:
        return st.from_regex(schema["pattern"]).filter(
            lambda s: len(s) >= low and (high is None or len(s) <= high))
    return st.text(min_size=low, max_size=low + 20 if high is None else int(high))


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None, bool, bool]:
    low, high = schema.get("minimum"), schema.get("maximum")
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    exclude_low = exclude_high = False
    if isinstance(ex_low, int | float) and not isinstance(ex_low, bool) and \
            (low is None or ex_low >= low):
        low, exclude_low = ex_low, True
    if isinstance(ex_high, int | float) and not isinstance(ex_high, bool) and \
            (high is None or ex_high <= high):
        high, exclude_high = ex_high, True
    return low, high, exclude_low, exclude_high


def _integer(schema: Mapping[str, Any], _depth: int) -> st.SearchStrategy[Any]:
    low, high, exclude_low, exclude_high = _bounds(schema)
    first = None if low is None else math.floor(low) + 1 if exclude_low else math.ceil(low)
    last = None if high is None else math.ceil(high) - 1 if exclude_high else math.floor(high)
    step = schema.get("multipleOf")
    values = st.integers(min_value=first, max_value=last)
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        values = values.map(lambda n: n - n % step).filter(
            lambda n: (first is None or n >= first) and (last is None or n <= last))
    return values


def _number(schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    low, high, exclude_low, exclude_high = _bounds(schema)
    floats = st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False,
                       exclude_min=exclude_low and low is not None,
                       exclude_max=exclude_high and high is not None)
    return floats | _integer(schema, depth)


def values_for_schema(schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """JSON values for ``schema``; the caller filters them with a validator."""
    root = schema if isinstance(schema, Mapping) else {}
    return _Builder(root).build(schema)
