"""JSON schemas rewritten for llama.cpp's JSON-schema-to-grammar converter.

Two judges decode a reply under a grammar built from the step's schema: :class:`LocalModel`
in process, and :class:`~scorecore_adapters.openai.OpenAIChatModel` in ``json_object`` mode,
where llama.cpp's server builds the grammar. The converter refuses some valid schemas (a node
made only of annotations, ``{"description": ...}``, is "unrecognized"), and llama-cpp-python's
server then silently decodes under a grammar for *any* JSON. Both judges send the rewrite below,
which keeps the schema's meaning and takes the converter's blind spots out of it.

>>> grammar_schema({"type": "object", "properties": {"note": {"description": "free text"}}})
... # doctest: +NORMALIZE_WHITESPACE
{'type': 'object', 'properties': {'note': {'type': ['object', 'array', 'string', 'number',
 'boolean', 'null']}}}
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from scorecore.validators import is_int

__all__ = ["STRING_BOUND", "GrammarUnsupported", "grammar_schema"]

# Keywords that annotate a schema without constraining it: dropped before conversion (the
# converter reads a schema made only of annotations as "unrecognized").
_ANNOTATIONS: Final = frozenset({
    "description", "title", "examples", "default", "$comment", "$schema", "$id", "$anchor",
    "deprecated", "readOnly", "writeOnly",
})
_ANY_JSON: Final = ("object", "array", "string", "number", "boolean", "null")
_SUB_MAPS: Final = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUB_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUB_ONE: Final = (
    "items", "additionalProperties", "not", "contains", "if", "then", "else", "additionalItems",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems",
)
_DEFS: Final = ("$defs", "definitions")
# Definitions are renamed so that their grammar rules cannot collide with the converter's own
# (it names a definition's rule after the last segment of its $ref, "string" included).
_DEF_NAME: Final = "scorecore-def-{}"


class GrammarUnsupported(ValueError):  # noqa: N818 - a refusal, carries the sentence
    """A schema the grammar converter cannot express; the message says what."""


def _pointer_segments(ref: str) -> list[str]:
    fragment = urllib.parse.unquote(ref[1:])  # drop the "#"
    return [p.replace("~1", "/").replace("~0", "~") for p in fragment.split("/")[1:]]


def grammar_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` rewritten for llama.cpp's JSON-schema-to-grammar converter.

    Annotations are dropped, ``{}`` becomes "any JSON value", root-level definitions get names
    of their own, a reference to the root (``#``, a class containing itself) points to a copy
    of the root kept under ``$defs``, and an array without ``items`` gets "any value" items so
    its ``minItems``/``maxItems`` hold. Raises :class:`GrammarUnsupported` for what cannot be
    decoded.
    """
    root = dict(schema)
    renames: dict[str, str] = {}
    defs: dict[str, Any] = {}
    for key in _DEFS:
        found = root.pop(key, None)
        if found is None:
            continue
        if not isinstance(found, Mapping):
            raise GrammarUnsupported(f"{key} is not an object")
        for name, sub in found.items():
            new = _DEF_NAME.format(len(defs))
            renames[f"{key}/{name}"] = new
            defs[new] = sub
    root_ref = _mentions_root(root) or any(_mentions_root(sub) for sub in defs.values())
    root_name = _DEF_NAME.format(len(defs))

    def ref(value: object) -> str:
        if not isinstance(value, str) or not value.startswith("#"):
            raise GrammarUnsupported(f"the reference {value!r} is not local (only '#…' references "
                               f"are followed)")
        if value == "#":
            return f"#/$defs/{root_name}"
        parts = _pointer_segments(value)
        if len(parts) >= 2 and f"{parts[0]}/{parts[1]}" in renames:
            rest = "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[2:])
            target = f"#/$defs/{renames[f'{parts[0]}/{parts[1]}']}"
            return f"{target}/{rest}" if rest else target
        if parts and parts[0] in _DEFS:
            raise GrammarUnsupported(f"the reference {value!r} names no definition")
        return f"#/$defs/{root_name}{value[1:]}" if root_ref else value

    converted_root: dict[str, Any] = _clean(root, ref)
    converted_defs = {name: _clean(sub, ref) for name, sub in defs.items()}
    if root_ref:
        converted_defs[root_name] = converted_root
        # Not a bare {"$ref": …}: the converter does not look inside a node holding a $ref,
        # so the references within $defs would never be resolved.
        converted_root = {"anyOf": [{"$ref": f"#/$defs/{root_name}"}]}
    if converted_defs:
        converted_root = {**converted_root, "$defs": converted_defs}
    return converted_root


def _mentions_root(schema: object) -> bool:
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if item.get("$ref") == "#":
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _clean(schema: object, ref: Callable[[object], str]) -> Any:
    if schema is True:
        return {"type": list(_ANY_JSON)}
    if schema is False:
        raise GrammarUnsupported("a schema is false (no value can satisfy it)")
    if not isinstance(schema, Mapping):
        raise GrammarUnsupported(f"{schema!r} is not a schema")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key in _DEFS:
            raise GrammarUnsupported(f"{key} is only read at the root of the schema")
        if key == "$ref":
            out[key] = ref(value)
        elif key in _SUB_MAPS and isinstance(value, Mapping):
            out[key] = {name: _clean(sub, ref) for name, sub in value.items()}
        elif key in _SUB_LISTS and isinstance(value, list):
            out[key] = [_clean(sub, ref) for sub in value]
        elif key in _SUB_ONE and isinstance(value, bool):
            out[key] = value  # additionalProperties/items: true or false keep their meaning
        elif key in _SUB_ONE:
            out[key] = _clean(value, ref)
        else:
            out[key] = value
    if not out:
        return {"type": list(_ANY_JSON)}
    if set(out) == {"allOf"} and len(out["allOf"]) == 1:
        only: Any = out["allOf"][0]  # {"allOf": [X], "description": …} as a $ref is written
        return only
    is_array = out.get("type") == "array"
    if is_array and "prefixItems" in out and out.get("items", False) is not False:
        raise GrammarUnsupported(
            "an array with prefixItems and more items after them (items) cannot be decoded: "
            "the grammar converter reads only one of the two"
        )
    if is_array and "prefixItems" not in out and out.get("items") is False:
        out["items"] = {"type": list(_ANY_JSON)}
        out["maxItems"] = 0
    elif is_array and "prefixItems" not in out and "items" not in out:
        out["items"] = {"type": list(_ANY_JSON)}
    if out.get("additionalProperties") is True:
        out["additionalProperties"] = {"type": list(_ANY_JSON)}
    return _bounded_string(_bounded(out))


STRING_BOUND: Final = 600
"""Characters a reply string may have under the grammar when its schema sets no ``maxLength``.

A small model can run on inside a string until the output cap (the bundled SmolLM2 counted
"117 different types of grapes, 118 …" in noise_sensitivity's replies): a grammar holds a reply
to the schema's shape, but a string has no end of its own, so the reply was cut off at the cap
and was not JSON. With a bound the grammar closes the string at 600 characters (about 150
tokens) and the reply ends as JSON. Only the grammar carries it: the core still validates the
reply against the step's own schema, and a field with its own ``maxLength`` keeps it.
"""
_FREE_STRING_KEYS: Final = frozenset({"type", "minLength"})


def _bounded_string(out: dict[str, Any]) -> dict[str, Any]:
    if out.get("type") != "string" or not set(out) <= _FREE_STRING_KEYS:
        return out  # an enum, a const, a pattern, a format or its own maxLength: as it is
    low = out.get("minLength", 0)
    return {**out, "maxLength": max(STRING_BOUND, low) if is_int(low) else STRING_BOUND}


# The converter ignores minimum/maximum: a bounded number becomes the list of its values at two
# decimals (a 0-1 score: 0, 0.01, ..., 1), an integer the list of its values, when the list is
# this short; a grammar then holds the judge to the bounds instead of only telling it.
_MAX_VALUES: Final = 2001


def _finite(value: object) -> TypeGuard[int | float]:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def _bounded(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    low, high = out.get("minimum"), out.get("maximum")
    plain = set(out) <= {"type", "minimum", "maximum"}
    if (kind not in ("number", "integer") or not plain or not _finite(low)
            or not _finite(high)):
        return out
    if kind == "integer":
        first, last = math.ceil(low), math.floor(high)
        if not 0 < last - first + 1 <= _MAX_VALUES:
            return out
        return {"enum": list(range(first, last + 1))}
    first, last = math.ceil(low * 100), math.floor(high * 100)
    if not 0 < last - first + 1 <= _MAX_VALUES:
        return out
    values: list[int | float] = []
    for hundredths in range(first, last + 1):
        if hundredths % 100 == 0:
            values += [hundredths // 100, float(hundredths // 100)]  # "1" and "1.0"
        else:
            values.append(hundredths / 100)
    return {"enum": values}
