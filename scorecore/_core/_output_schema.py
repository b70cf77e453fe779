"""Structured output: conveying a JSON schema to the judge, parsing and validating replies."""

from __future__ import annotations

import itertools
import json
import json.scanner
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, final

import attrs
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012
from returns.result import Failure, Result, Success

from scorecore._core._cache import SchemaKey
from scorecore._core._declared_types import structure_run_value
from scorecore._core._fast_schema import TooDeep, fast_check
from scorecore._core._judge import JsonPromptInjection, JudgeMessage, JudgeRequest
from scorecore._core._reprs import short_repr
from scorecore._core._slot_init import fast_init

__all__ = ["schema_in_prompt"]  # the rest is internal: used by the pipeline only

Routing: TypeAlias = Literal["native", "inline", "system"]

SCORE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}},
    "required": ["score"],
    "additionalProperties": False,
}



class TypedSchema(dict[str, Any]):
    """A JSON schema generated from a prompt step's ``output_type``, which it carries.

    It is sent like any schema; a reply that validates is then structured into
    ``output_type`` with the project's converter (see :func:`parse_and_validate`).
    """

    __slots__ = ("output_type",)

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        output_type: Any,  # noqa: ANN401 - a type form (a union, list[str]), not a type[...]
    ) -> None:
        super().__init__(schema)
        self.output_type = output_type

    def __reduce__(self) -> tuple[Any, ...]:
        # copy.deepcopy and pickle rebuild it with its type (a dict subclass with slots).
        return (_typed_schema, (dict(self), self.output_type))


def _typed_schema(
    schema: dict[str, Any],
    output_type: Any,  # noqa: ANN401 - a type form, as TypedSchema holds it
) -> TypedSchema:
    return TypedSchema(schema, output_type=output_type)


# A message whose content is a checked message's content with a note added: a str, so
# JudgeMessage's checks (a role of two, a str content) hold without running them.
_message = fast_init(JudgeMessage, checked_by_caller=True)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def routing_for(injection: JsonPromptInjection, *, model_supports_native: bool) -> Routing:
    """Decide how a schema reaches the model."""
    if injection == "auto":
        return "native" if model_supports_native else "inline"
    if injection is False:
        return "native"
    if injection is True or injection == "system":
        return "system"
    return "inline"


# What validating an arbitrary reply may raise besides reporting errors: RecursionError for a
# deeply nested reply (or a schema that refers to itself without end), OverflowError for a huge
# integer against a float ``multipleOf``, ValueError/TypeError from comparisons of odd values,
# Unresolvable for a $ref (refused at build time; kept here as a guard).
_VALIDATION_ERRORS = (RecursionError, OverflowError, ValueError, TypeError, Unresolvable)
_MAX_ERRORS = 50
_ERROR_LIMIT = 300
# Samples a schema is tried on when a step is built, so that a schema that cannot validate
# anything fails then, not on every run.
_SAMPLES: tuple[Any, ...] = (None, True, 0, 1.5, "", [], {})


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


@final
@attrs.frozen(kw_only=True, eq=False)
class CompiledSchema:
    """A step's output schema ready for every run: its JSON text (sent to the judge), its
    validator and, for a schema of the common keywords, a fast check giving the validator's
    verdict (``None`` otherwise), and its part of the judge cache key; built once when the
    step is added (see :func:`compile_schema`)."""

    schema: Mapping[str, Any]
    text: str
    validator: Draft202012Validator
    key: SchemaKey
    check: Callable[[Any], bool] | None = None
    # What inject appends to the messages for each routing, written once.
    inline_note: str = attrs.field(init=False)
    system_note: str = attrs.field(init=False)

    @inline_note.default
    def _inline_note(self) -> str:
        return _inline_note(self.text)

    @system_note.default
    def _system_note(self) -> str:
        return (
            "\n\nYour whole reply must be one JSON value that validates against this JSON "
            f"schema:\n{self.text}\nReply with the JSON only: no prose, no markdown."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # A validator holds local functions that do not pickle; a scorer sent to another
        # process (Ray, multiprocessing) compiles its schemas again there, once.
        return (compile_schema, (self.schema,))


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Write the schema as JSON and build its validator; raises what ``json.dumps`` raises."""
    text = json.dumps(schema, ensure_ascii=False, sort_keys=True, allow_nan=False)
    # An empty registry: a $ref is resolved within the schema (and the JSON Schema
    # meta-schemas), never fetched over the network.
    parsed = json.loads(text)
    validator = Draft202012Validator(parsed, registry=Registry())
    return CompiledSchema(schema=schema, text=text, validator=validator,
                          check=fast_check(parsed), key=SchemaKey(schema))


def _unresolvable_ref(schema: Mapping[str, Any]) -> str | None:
    root: Resource[Any] = DRAFT202012.create_resource(schema)
    resolver = Registry().resolver_with_root(root)
    pending = [(resolver, root)]
    while pending:
        here, resource = pending.pop()
        contents = resource.contents
        if isinstance(contents, Mapping):
            for keyword in ("$ref", "$dynamicRef"):
                ref = contents.get(keyword)
                if isinstance(ref, str):
                    try:
                        here.lookup(ref)
                    except Unresolvable:
                        return ref
        pending.extend((here.in_subresource(sub), sub) for sub in resource.subresources())
    return None


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why a schema that passed ``check_schema`` still cannot be used, or ``None``.

    It must be writable as JSON (string keys, no sets, no NaN, no 5,000-digit numbers: it
    is sent to the judge), every ``$ref`` must resolve within it (it is never fetched), and
    it must be able to validate a few sample values without raising.
    """
    try:
        compiled = compile_schema(schema)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"cannot be written as JSON ({_cut(str(exc), 120)})"
    except Exception as exc:  # noqa: BLE001 - the schema's own objects (user code) raised
        return f"cannot be written as JSON (writing it raised {type(exc).__qualname__})"
    try:
        ref = _unresolvable_ref(json.loads(compiled.text))
    except RecursionError:
        return "is nested too deeply"
    if ref is not None:
        return f"has a $ref that does not resolve within the schema: {short_repr(ref, 120)}"
    validator = compiled.validator
    for sample in _SAMPLES:
        try:
            validator.is_valid(sample)
        except _VALIDATION_ERRORS as exc:
            return (
                f"cannot validate {sample!r} ({type(exc).__qualname__}; a $ref that refers "
                f"to itself without end?)" if isinstance(exc, RecursionError)
                else f"cannot validate {sample!r} ({type(exc).__qualname__})"
            )
    return None


def inject(
    messages: tuple[JudgeMessage, ...], schema: CompiledSchema, routing: Routing
) -> tuple[JudgeMessage, ...]:
    """Write the schema into the messages for the ``inline`` and ``system`` routings."""
    if routing == "native":
        return messages
    if routing == "system":
        note = schema.system_note
        if messages and messages[0].role == "system":
            first = _message("system", messages[0].content + note)
            return (first, *messages[1:])
        return (JudgeMessage(role="system", content=note.lstrip()), *messages)
    return _inline(messages, schema.inline_note)


def _inline_note(schema_text: str) -> str:
    return (
        "\n\nAnswer with a single JSON value that validates against this JSON schema:\n"
        f"{schema_text}\nWrite nothing but the JSON: no explanation, no code fences."
    )


def _inline(messages: tuple[JudgeMessage, ...], note: str) -> tuple[JudgeMessage, ...]:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            patched = _message("user", messages[index].content + note)
            return (*messages[:index], patched, *messages[index + 1 :])
    return (*messages, JudgeMessage(role="user", content=note.lstrip()))


def schema_in_prompt(request: JudgeRequest) -> JudgeRequest:
    """``request`` with its output schema written into the prompt, as the core writes it for a
    model without native structured output (``json_prompt_injection="inline"``).

    For adapters that were asked for native structured output (``native_schema=True``) and
    find the server cannot give it: the schema and a "JSON only" instruction are appended to
    the last user message and ``native_schema`` becomes ``False``. A request without a schema,
    or whose schema is already in its messages (``native_schema=False``), is returned as is,
    so the instruction is never written twice.

    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> request = JudgeRequest(
    ...     messages=(JudgeMessage(role="user", content="Rate it."),),
    ...     output_schema={"type": "number"},
    ...     native_schema=True,
    ... )
    >>> moved = schema_in_prompt(request)
    >>> moved.native_schema, '{"type": "number"}' in moved.messages[-1].content
    (False, True)
    >>> schema_in_prompt(moved) is moved
    True
    """
    if request.output_schema is None or not request.native_schema:
        return request
    text = json.dumps(request.output_schema, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return attrs.evolve(
        request, messages=_inline(request.messages, _inline_note(text)), native_schema=False
    )


def _extract_json_text(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        match = _FENCE.search(stripped)
        if match:
            return match.group(1).strip()
    return stripped


# The JSON reader json.loads ends in, for a body that is one JSON value with nothing around it
# (what a reply comes to once stripped); anything else, errors included, is json.loads' own.
# Not strict: a raw control character (a real line break) inside a string is read as the text
# it is. llama.cpp's JSON grammar allows one there, so a grammar-held reply may hold it.
_scan = json.scanner.make_scanner(json.JSONDecoder(strict=False))  # type: ignore[arg-type]


def _read_json(body: str) -> Any:  # noqa: ANN401 - JSON of any shape, checked by the schema next
    try:
        value, end = _scan(body, 0)
    except (StopIteration, ValueError, RecursionError):
        return json.loads(body, strict=False)
    return value if end == len(body) else json.loads(body, strict=False)


@final
class Invalid:
    """Why a reply is not the step's value: its parse or schema errors (internal: what
    :func:`read_valid` answers instead of the value, never a value itself)."""

    __slots__ = ("errors",)

    def __init__(self, errors: tuple[str, ...]) -> None:
        self.errors = errors


def parse_and_validate(text: str, schema: CompiledSchema) -> Result[Any, tuple[str, ...]]:
    """Parse the judge's text as JSON (a fenced json block is accepted) and validate it.

    Returns every schema error at once (``path: message``), or the parse error. For a
    :class:`TypedSchema` the valid reply is then structured into its ``output_type``, and
    every field that does not fit is an error (``… @ reply.field``).
    """
    value = read_valid(text, schema)
    return Failure(value.errors) if type(value) is Invalid else Success(value)


def read_valid(text: str, schema: CompiledSchema) -> Any:  # noqa: ANN401 - the reply's JSON
    """:func:`parse_and_validate` for the judge loop: the value, or :class:`Invalid` (no
    ``Result`` built around a reply that is read on every cached run)."""
    body = _extract_json_text(text)
    if not body:
        return Invalid(("reply is empty",))
    try:
        value = _read_json(body)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return Invalid((f"reply is not valid JSON: {exc.msg} at {where}",))
    except RecursionError:
        return Invalid(("reply is not usable JSON: it is nested too deeply to read",))
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            return Invalid(("reply is not usable JSON: it holds an integer of more than 4,300 "
                            "digits, more than Python reads",))
        return Invalid((f"reply is not usable JSON: {_cut(str(exc), 120)}",))
    if schema.check is not None:
        try:
            valid = schema.check(value)
        except (TooDeep, RecursionError):
            pass  # jsonschema answers for a deeply nested reply, as for any other
        else:
            if valid:  # a plain schema's value is the reply's JSON: no _structured call
                plain = schema.schema
                return _structured(value, plain) if isinstance(plain, TypedSchema) else value
    validator = schema.validator
    try:
        if validator.is_valid(value):
            return _structured(value, schema.schema)
        # Bounded: a reply of 100,000 wrong items gives 50 errors, each of bounded length.
        found = list(itertools.islice(validator.iter_errors(value), _MAX_ERRORS))
        errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
        described = tuple(
            _cut(f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}",
                 _ERROR_LIMIT)
            for e in errors
        )
    except _VALIDATION_ERRORS as exc:
        return Invalid((f"reply could not be validated ({type(exc).__qualname__})",))
    if described:
        return Invalid(described)
    return _structured(value, schema.schema)


def _structured(
    value: Any,  # noqa: ANN401 - parsed JSON, structured into the schema's output type here
    schema: Mapping[str, Any],
) -> Any:  # noqa: ANN401 - the value, structured for a TypedSchema, or Invalid
    if not isinstance(schema, TypedSchema):
        return value
    structured = structure_run_value(value, schema.output_type, which="reply")
    if isinstance(structured, Success):
        return structured.unwrap()
    return Invalid(structured.failure().errors)
