"""Structured output: conveying a JSON schema to the judge, parsing and validating replies."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from jsonschema import Draft202012Validator
from returns.result import Failure, Result, Success

from scorecore._judge import JsonPromptInjection, JudgeMessage

__all__: list[str] = []  # internal: used by the pipeline only

Routing: TypeAlias = Literal["native", "inline", "system"]

SCORE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}},
    "required": ["score"],
    "additionalProperties": False,
}

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def routing_for(injection: JsonPromptInjection, *, model_supports_native: bool) -> Routing:
    """Decide how a schema reaches the model (design.md §3.1)."""
    if injection == "auto":
        return "native" if model_supports_native else "inline"
    if injection is False:
        return "native"
    if injection is True or injection == "system":
        return "system"
    return "inline"


_COMPILED: dict[int, tuple[Mapping[str, Any], str, Draft202012Validator]] = {}


def _compiled(schema: Mapping[str, Any]) -> tuple[str, Draft202012Validator]:
    # Steps keep their schema objects for the scorer's lifetime, so the schema text and its
    # validator are computed once per schema object, not once per judge call. The schema is
    # held in the entry so its id cannot be reused by another object while cached.
    entry = _COMPILED.get(id(schema))
    if entry is None or entry[0] is not schema:
        if len(_COMPILED) >= 256:
            _COMPILED.clear()
        text = json.dumps(schema, ensure_ascii=False, sort_keys=True)
        entry = (schema, text, Draft202012Validator(json.loads(text)))
        _COMPILED[id(schema)] = entry
    return entry[1], entry[2]


def _schema_text(schema: Mapping[str, Any]) -> str:
    return _compiled(schema)[0]


def inject(
    messages: tuple[JudgeMessage, ...], schema: Mapping[str, Any], routing: Routing
) -> tuple[JudgeMessage, ...]:
    """Write the schema into the messages for the ``inline`` and ``system`` routings."""
    if routing == "native":
        return messages
    if routing == "system":
        note = (
            "\n\nYour whole reply must be one JSON value that validates against this JSON "
            f"schema:\n{_schema_text(schema)}\nReply with the JSON only: no prose, no markdown."
        )
        if messages and messages[0].role == "system":
            first = JudgeMessage(role="system", content=messages[0].content + note)
            return (first, *messages[1:])
        return (JudgeMessage(role="system", content=note.lstrip()), *messages)
    note = (
        "\n\nAnswer with a single JSON value that validates against this JSON schema:\n"
        f"{_schema_text(schema)}\nWrite nothing but the JSON: no explanation, no code fences."
    )
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            patched = JudgeMessage(role="user", content=messages[index].content + note)
            return (*messages[:index], patched, *messages[index + 1 :])
    return (*messages, JudgeMessage(role="user", content=note.lstrip()))


def _extract_json_text(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        match = _FENCE.search(stripped)
        if match:
            return match.group(1).strip()
    return stripped


def parse_and_validate(text: str, schema: Mapping[str, Any]) -> Result[Any, tuple[str, ...]]:
    """Parse the judge's text as JSON (a fenced json block is accepted) and validate it.

    Returns every schema error at once (``path: message``), or the parse error.
    """
    body = _extract_json_text(text)
    if not body:
        return Failure(("reply is empty",))
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return Failure((f"reply is not valid JSON: {exc.msg} at {where}",))
    validator = _compiled(schema)[1]
    if validator.is_valid(value):
        return Success(value)
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        return Failure(tuple(
            f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors
        ))
    return Success(value)
