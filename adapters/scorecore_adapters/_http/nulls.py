"""The reply repair both HTTP judges apply: ``null`` dropped where the user's schema leaves a
property optional and non-null."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["accepts_null", "prune_optional_nulls"]


def accepts_null(schema: object) -> bool:
    """Whether a JSON schema (as far as its ``type``/``anyOf``/``enum`` tell) admits ``null``."""
    if not isinstance(schema, Mapping):
        return True  # ``true`` or an unknown form: anything goes
    type_ = schema.get("type")
    if type_ is None:
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(alternatives, list):
            return any(accepts_null(alt) for alt in alternatives)
        return "enum" not in schema and "const" not in schema
    return type_ == "null" or (isinstance(type_, list) and "null" in type_)


def prune_optional_nulls(value: Any, schema: Any) -> Any:
    """``value`` without the ``null``s in properties ``schema`` leaves optional and non-null.

    OpenAI's strict mode makes optional properties nullable and the model then sends
    ``null`` for them; Claude's tool inputs sometimes do the same. Dropping those keys turns
    the reply into what the user's own schema expects, so the core's validation holds.
    Follows ``properties`` and ``items``; other combinators are left alone.
    """
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return value
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is None and key not in required and key in props and not accepts_null(sub):
                continue
            out[key] = prune_optional_nulls(item, sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prune_optional_nulls(item, schema["items"]) for item in value]
    return value
