"""The fast schema check answers exactly as jsonschema does, and the usual schemas get one."""

from __future__ import annotations

import json
from typing import Any, Literal

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry

import scorecore.scorers
from scorecore._core._fast_schema import MAX_DEPTH, TooDeep, fast_check
from scorecore._core._output_schema import SCORE_SCHEMA, compile_schema, parse_and_validate
from scorecore._core._schema_gen import schema_for_type
from scorecore_adapters._schema_strategies import values_for_schema

_names = st.sampled_from(["a", "b", "score", "n", ""])
_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
    [0.0, -0.0, 1.0, 1.5, -2.5, 1e300, 2**60]) | st.sampled_from(["", "a", "b", "ab", "1"])
_types = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null"])
_counts = st.integers(0, 3)
_bounds = st.integers(-2, 2) | st.sampled_from([0.5, -1.5, 1e300])


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keywords: dict[str, st.SearchStrategy[Any]] = {
        "type": _types | st.lists(_types, max_size=3),
        "enum": st.lists(_scalars, min_size=1, max_size=4),
        "const": _scalars,
        "properties": st.dictionaries(_names, inner, max_size=3),
        "required": st.lists(_names, max_size=3),
        "additionalProperties": inner,
        "items": inner,
        "prefixItems": st.lists(inner, max_size=3),
        "minItems": _counts, "maxItems": _counts, "minLength": _counts, "maxLength": _counts,
        "minimum": _bounds, "maximum": _bounds,
        "exclusiveMinimum": _bounds, "exclusiveMaximum": _bounds,
        "anyOf": st.lists(inner, min_size=1, max_size=3),
        "allOf": st.lists(inner, min_size=1, max_size=3),
        "oneOf": st.lists(inner, min_size=1, max_size=3),
        "not": inner,
        "description": st.just("annotation"),
        "format": st.just("email"),
    }
    return st.booleans() | st.fixed_dictionaries(
        {}, optional=keywords  # type: ignore[arg-type]
    )


_schema = st.recursive(st.booleans() | st.just({}), _schemas, max_leaves=8)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_names, inner, max_size=4),
    max_leaves=12,
)


def _reference(schema: Any) -> Draft202012Validator:
    return Draft202012Validator(schema, registry=Registry())


@given(_schema, st.lists(_json, min_size=1, max_size=8))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_the_fast_check_answers_as_jsonschema(schema: Any, values: list[Any]) -> None:
    """For any schema of the modelled keywords and any JSON value: the same verdict."""
    check = fast_check(schema)
    assert check is not None
    reference = _reference(schema)
    for value in values:
        assert check(value) == reference.is_valid(value), (schema, value)


@given(_schema, st.data())
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
          max_examples=60)
def test_values_drawn_to_fit_the_schema_get_its_verdict(schema: Any, data: st.DataObject) -> None:
    """Values drawn to fit the schema (the valid side, rarely hit at random): same verdict."""
    try:
        value = data.draw(values_for_schema(schema))
    except Exception:
        return
    check = fast_check(schema)
    assert check is not None
    assert check(value) == _reference(schema).is_valid(value), (schema, value)


@attrs.frozen
class _Claim:
    text: str
    supported: bool
    weight: float | None = None


@attrs.frozen
class _Verdicts:
    verdicts: list[_Claim]
    label: Literal["yes", "no", "unsure"]
    children: list[_Verdicts] = attrs.Factory(list)


def test_the_usual_schemas_get_a_fast_check() -> None:
    """The score schema, schemas made from output types (with $defs, anyOf, enum) and every
    schema of the built-in scorers take the fast path."""
    schemas: list[Any] = [SCORE_SCHEMA, schema_for_type(_Claim), schema_for_type(_Verdicts),
                          schema_for_type(list[int]), schema_for_type(tuple[int, str])]
    for name in ("answer_relevancy", "faithfulness", "hallucination", "bias", "toxicity"):
        factory = getattr(scorecore.scorers, name)
        steps = factory(_NoJudge())._definition.steps
        schemas += [s.definition.output_schema for s in steps
                    if getattr(s.definition, "output_schema", None) is not None]
    assert len(schemas) > 8
    for schema in schemas:
        assert compile_schema(schema).check is not None, schema


class _NoJudge:
    model_id = "none"
    provider = "none"
    supports_structured_output = False

    async def generate(self, request: Any, /) -> Any:
        raise AssertionError("not called")


def test_a_recursive_schema_is_checked_to_any_depth_by_jsonschema() -> None:
    """Past MAX_DEPTH the fast check steps aside; the verdict is jsonschema's."""
    compiled = compile_schema(schema_for_type(_Verdicts))
    assert compiled.check is not None
    leaf: dict[str, Any] = {"verdicts": [], "label": "yes"}
    deep = leaf
    for _ in range(MAX_DEPTH + 5):
        deep = {"verdicts": [], "label": "no", "children": [deep]}
    with pytest.raises(TooDeep):
        compiled.check(deep)
    assert parse_and_validate(json.dumps(deep), compiled).unwrap() == deep
    bad = json.loads(json.dumps(deep).replace('"yes"', '"maybe"'))
    (error,) = parse_and_validate(json.dumps(bad), compiled).failure()
    assert error.startswith("children/0/children/0/")


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a"},
    {"type": "number", "multipleOf": 2},
    {"type": "array", "uniqueItems": True},
    {"type": "object", "patternProperties": {"^x": {}}},
    {"$ref": "#/$defs/a b", "$defs": {"a b": {}}},
    {"$id": "https://example.com/s", "type": "object"},
    {"enum": [[1], {"a": 1}]},
    {"minLength": 1.0},
    {"x-vendor": True},
])
def test_schemas_with_other_keywords_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    """Nothing is guessed: an unmodelled keyword means no fast check at all."""
    assert fast_check(schema) is None


def test_an_invalid_reply_gets_jsonschema_s_errors() -> None:
    """The fast check only says whether; what is wrong is still jsonschema's message."""
    compiled = compile_schema(SCORE_SCHEMA)
    assert compiled.check is not None
    errors = parse_and_validate('{"score": "high", "extra": 1}', compiled).failure()
    assert errors == (
        "(root): Additional properties are not allowed ('extra' was unexpected)",
        "score: 'high' is not of type 'number'",
    )
