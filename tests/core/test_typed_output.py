"""Typed judge output: schemas generated from output_type, replies structured into it."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Literal, Optional, TypedDict

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from returns.result import Failure, Success

from scorecore import (
    JudgeConfig,
    JudgeOutputInvalid,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
)
from scorecore._core._convert import converter
from scorecore._core._declared_types import structure_run_value
from scorecore._core._output_schema import compile_schema, parse_and_validate
from scorecore._core._schema_gen import schema_for_type
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import native_schema
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime

INSTRUCTIONS = "You are a strict evaluator."


class Tone(enum.Enum):
    """How the answer sounds."""

    CALM = "calm"
    ANGRY = "angry"


@attrs.frozen
class Claim:
    """One claim made by the answer."""

    text: str
    """The claim, quoted."""
    verdict: Literal["supported", "unsupported"] = attrs.field(
        metadata={"description": "Whether the context supports it."}
    )
    note: str | None = None


@attrs.frozen
class Claims:
    claims: list[Claim]
    """Every claim in the answer."""
    tone: Tone


@dataclasses.dataclass(frozen=True)
class Verdict:
    supported: bool
    confidence: float = dataclasses.field(metadata={"description": "From 0 to 1."})
    tags: tuple[str, ...] = ()


class _LabelsBase(TypedDict):
    labels: list[str]


class Labels(_LabelsBase, total=False):
    """Labels for the answer."""

    # (NotRequired[...] under ``from __future__ import annotations`` is not seen by Python
    # 3.11's TypedDict, nor by cattrs, so the schema follows __required_keys__ as cattrs does)
    extra: dict[str, int]


@attrs.frozen
class Tree:
    name: str
    children: list[Tree]


@attrs.frozen
class Forest:
    trees: list[Tree]


def valid(schema: dict[str, Any], value: Any) -> bool:
    return Draft202012Validator(schema).is_valid(value)


# --- the generated schema ----------------------------------------------------------------------


def test_attrs_class_schema_has_descriptions_required_fields_and_no_extra_keys() -> None:
    """Field docstrings and metadata become descriptions; defaults make a field optional."""
    schema = schema_for_type(Claims)
    assert schema["type"] == "object"
    assert schema["required"] == ["claims", "tone"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["claims"]["description"] == "Every claim in the answer."
    claim = schema["properties"]["claims"]["items"]
    assert claim["description"] == "One claim made by the answer."
    assert claim["required"] == ["text", "verdict"]
    assert claim["properties"]["text"] == {"type": "string", "description": "The claim, quoted."}
    assert claim["properties"]["verdict"] == {
        "enum": ["supported", "unsupported"], "description": "Whether the context supports it.",
    }
    assert claim["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert schema["properties"]["tone"] == {"enum": ["calm", "angry"],
                                            "description": "How the answer sounds."}
    assert "$defs" not in schema  # nothing recursive: everything inline


def test_dataclass_and_typeddict_schemas() -> None:
    """Dataclass defaults (and factories) and TypedDict NotRequired keys are optional."""
    verdict = schema_for_type(Verdict)
    assert verdict["required"] == ["supported", "confidence"]
    assert verdict["properties"]["confidence"] == {"type": "number", "description": "From 0 to 1."}
    assert verdict["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert "description" not in verdict  # not the signature dataclasses write as __doc__
    labels = schema_for_type(Labels)
    assert labels["required"] == ["labels"]
    assert labels["description"] == "Labels for the answer."
    assert labels["properties"]["extra"] == {
        "type": "object", "additionalProperties": {"type": "integer"},
    }


@pytest.mark.parametrize(
    ("type_", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (Literal["a", 1, None], {"enum": ["a", 1, None]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"},
                                                             {"type": "string"}],
                           "minItems": 2, "maxItems": 2, "items": False}),
        (tuple[()], {"type": "array", "maxItems": 0}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (tuple, {"type": "array", "items": {}}),
        (dict[str, bool], {"type": "object", "additionalProperties": {"type": "boolean"}}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ],
)
def test_plain_type_schemas(type_: Any, schema: dict[str, Any]) -> None:
    """Scalars, literals, containers and unions map to the JSON Schema keywords."""
    assert schema_for_type(type_) == schema


def test_recursive_classes_use_defs() -> None:
    """A class that contains itself is written once under $defs; the root refers to '#'."""
    forest = schema_for_type(Forest)
    assert forest["properties"]["trees"]["items"] == {"$ref": "#/$defs/Tree"}
    assert forest["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    tree = schema_for_type(Tree)
    assert tree["properties"]["children"]["items"] == {"$ref": "#"}
    nested = {"name": "a", "children": [{"name": "b", "children": []}]}
    assert valid(forest, {"trees": [nested]})
    assert not valid(forest, {"trees": [{"name": "a", "children": [{"name": 1}]}]})


@pytest.mark.parametrize(
    ("type_", "words"),
    [
        (dict[int, str], "str keys"),
        (bytes, "bytes"),
        (list[complex], "complex at (root)[]"),
        (Literal[b"x"], "not JSON"),
    ],
)
def test_types_without_a_schema_are_refused_naming_where(type_: Any, words: str) -> None:
    """A type with no JSON form is a ScorerDefinitionError naming it and its place."""
    with pytest.raises(ScorerDefinitionError, match="cannot be sent to a judge") as info:
        PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=type_)
    assert words in str(info.value)
    assert info.value.field == "output_type"


def test_unsupported_field_is_named_by_its_path() -> None:
    """The error gives the field path inside the class."""

    @attrs.frozen
    class Bad:
        when: list[complex]

    with pytest.raises(ScorerDefinitionError, match=r"complex at \(root\)\.when\[\]"):
        schema_for_type(Bad)


def test_schema_is_a_fresh_copy() -> None:
    """Mutating a returned schema does not change the next one (the generator caches)."""
    first = schema_for_type(Claims)
    first["properties"].clear()
    assert schema_for_type(Claims)["properties"]


# --- the step options --------------------------------------------------------------------------


def test_output_type_and_output_schema_are_exclusive() -> None:
    """Giving both is a ScorerDefinitionError; the schema is readable back from the step."""
    with pytest.raises(ScorerDefinitionError, match="output_type or output_schema, not both"):
        PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims,
                   output_schema={"type": "object"})
    with pytest.raises(ScorerDefinitionError, match="not both"):
        ScorePromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Verdict,
                        output_schema={"type": "object"},
                        calculate_score=lambda ctx: ctx.judge_output.confidence)
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims)
    assert step.output_schema == schema_for_type(Claims)


def test_evolve_regenerates_the_schema() -> None:
    """attrs.evolve with another output_type sends that type's schema."""
    step: PromptStep[Any, Any] = PromptStep(
        description="d", create_prompt=lambda ctx: "p", output_type=Claims
    )
    other = attrs.evolve(step, output_type=Verdict)
    assert other.output_schema == schema_for_type(Verdict)


def test_typed_score_prompt_step_needs_calculate_score() -> None:
    """Without calculate_score a typed reply has no score field to read."""
    with pytest.raises(ScorerDefinitionError, match="needs a calculate_score"):
        ScorePromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Verdict)


# --- runs --------------------------------------------------------------------------------------

GOOD_CLAIMS = {"claims": [{"text": "sky is green", "verdict": "unsupported"}], "tone": "calm"}


def typed_scorer(judge: Any) -> Any:
    return (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS))
        .analyze(PromptStep(description="claims", output_type=Claims,
                            create_prompt=lambda ctx: f"Claims in: {ctx.run.output}"))
        .generate_score(lambda ctx: sum(c.verdict == "supported"
                                        for c in ctx.results.analyze_step_result.claims) / 1.0)
    )


@pytest.mark.anyio
async def test_reply_is_structured_into_the_type() -> None:
    """The step result is an instance of output_type, nested classes and enums included."""
    judge = ScriptedJudge([GOOD_CLAIMS])
    runtime, _ = virtual_runtime()
    result = (await typed_scorer(judge).run(input="q", output="a", runtime=runtime)).unwrap()
    assert result.analyze_step_result == Claims(
        claims=[Claim(text="sky is green", verdict="unsupported")], tone=Tone.CALM,
    )
    assert result.score == 0.0
    assert result.judge["analyze"][0].output == result.analyze_step_result
    sent = judge.requests[0]
    assert json.loads(json.dumps(sent.output_schema)) == schema_for_type(Claims)


@pytest.mark.anyio
async def test_mismatch_is_a_format_failure_naming_each_field_and_uses_the_fallback() -> None:
    """A reply that does not fit is retried once; if the retry fits, the run succeeds."""
    wrong = {"claims": [{"text": 3, "verdict": "maybe"}], "tone": "bored", "extra": 1}
    judge = ScriptedJudge([wrong, GOOD_CLAIMS])
    runtime, _ = virtual_runtime()
    result = (await typed_scorer(judge).run(input="q", output="a", runtime=runtime)).unwrap()
    assert result.judge["analyze"][0].attempt_count == 2
    assert result.analyze_step_result.tone is Tone.CALM


@pytest.mark.anyio
async def test_both_attempts_wrong_lists_every_bad_field() -> None:
    """After the one fallback the run fails with JudgeOutputInvalid naming every field."""
    wrong = {"claims": [{"text": 3, "verdict": "maybe"}], "tone": "bored", "extra": 1}
    judge = ScriptedJudge([wrong, wrong])
    runtime, _ = virtual_runtime()
    failure = (await typed_scorer(judge).run(input="q", output="a", runtime=runtime)).failure()
    cause = failure.cause
    assert isinstance(cause, JudgeOutputInvalid)
    assert cause.attempts == 2
    text = "\n".join(cause.errors)
    for field in ("claims/0/text", "claims/0/verdict", "tone", "extra"):
        assert field in text or field.replace("/", ".") in text, (field, text)


def test_a_valid_reply_that_does_not_structure_names_the_field() -> None:
    """Schema-valid but not structurable (1.0 for an int field) is reported per field."""

    @attrs.frozen
    class Count:
        n: int

    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Count)
    assert step.output_schema is not None
    compiled = compile_schema(step.output_schema)
    assert parse_and_validate('{"n": 2}', compiled) == Success(Count(n=2))
    outcome = parse_and_validate('{"n": 2.5}', compiled)
    assert isinstance(outcome, Failure)
    assert any("n" in error for error in outcome.failure())


@attrs.frozen
class _Counts:
    n: int
    many: list[int]
    maybe: int | None = None


@given(n=st.integers(-(2**53), 2**53), many=st.lists(st.integers(-1000, 1000), max_size=3),
       maybe=st.none() | st.integers(-(2**53), 2**53))
def test_a_reply_may_write_an_int_field_as_a_whole_json_number(
    n: int, many: list[int], maybe: int | None
) -> None:
    """JSON has one number type and a schema's "integer" admits 1.0: a reply writing an int
    field as ``n.0`` (at any depth) is structured into the int; a run's typed input stays strict.
    """
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=_Counts)
    assert step.output_schema is not None
    compiled = compile_schema(step.output_schema)
    reply = {"n": float(n), "many": [float(m) for m in many],
             "maybe": None if maybe is None else float(maybe)}
    outcome = parse_and_validate(json.dumps(reply), compiled)
    assert outcome == Success(_Counts(n=n, many=many, maybe=maybe))
    structured = outcome.unwrap()
    assert type(structured.n) is int
    assert all(type(m) is int for m in structured.many)
    as_input = structure_run_value(reply, _Counts, which="input")
    assert isinstance(as_input, Failure)
    assert any("expected int" in error for error in as_input.failure().errors)


@pytest.mark.anyio
async def test_score_prompt_step_calculate_score_reads_the_typed_output() -> None:
    """ctx.judge_output is the structured value."""
    judge = ScriptedJudge([{"supported": True, "confidence": 0.75}])
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS),
    ).generate_score(ScorePromptStep(
        description="rate", output_type=Verdict, create_prompt=lambda ctx: "Rate",
        calculate_score=lambda ctx: ctx.judge_output.confidence if ctx.judge_output.supported
        else 0.0,
    ))
    runtime, _ = virtual_runtime()
    result = (await scorer.run(input="q", output="a", runtime=runtime)).unwrap()
    assert result.score == 0.75
    assert judge.requests[0].output_schema == schema_for_type(Verdict)


@pytest.mark.anyio
async def test_default_score_prompt_step_still_asks_for_a_score() -> None:
    """With neither output_type nor output_schema the judge is asked for {"score": number}."""
    judge = ScriptedJudge([{"score": 0.5}])
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate"))
    runtime, _ = virtual_runtime()
    assert (await scorer.run(input="q", output="a", runtime=runtime)).unwrap().score == 0.5
    assert judge.requests[0].output_schema == {
        "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"],
        "additionalProperties": False,
    }


# --- providers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("type_", [Claims, Verdict, Labels, Forest, list[Claim], Tone])
def test_openai_strict_schema_of_a_generated_schema_accepts_its_values(type_: Any) -> None:
    """The strict transform keeps the schema usable: a sample value (nulls filled) validates."""
    strict = native_schema(schema_for_type(type_))
    Draft202012Validator.check_schema(strict)
    assert strict["type"] == "object"
    assert strict["additionalProperties"] is False


def test_anthropic_forced_tool_carries_the_generated_schema() -> None:
    """The generated schema is the forced tool's input_schema."""
    from scorecore.judge import JudgeMessage, JudgeRequest  # noqa: PLC0415 - local to the test

    model = AnthropicModel(model="claude-test", api_key="k")
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims)
    body = model.build_body(JudgeRequest(
        messages=[JudgeMessage(role="user", content="hi")], output_schema=step.output_schema,
        native_schema=True,
    ))
    assert body["tools"][0]["input_schema"] == schema_for_type(Claims)
    assert body["tool_choice"]["type"] == "tool"


def test_anthropic_wrapped_root_keeps_defs_resolvable() -> None:
    """A non-object root (list of a recursive class) is wrapped; its $defs move to the root."""
    from scorecore.judge import JudgeMessage, JudgeRequest  # noqa: PLC0415 - local to the test

    model = AnthropicModel(model="claude-test", api_key="k")
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=list[Tree])
    body = model.build_body(JudgeRequest(
        messages=[JudgeMessage(role="user", content="hi")], output_schema=step.output_schema,
        native_schema=True,
    ))
    tool_schema = body["tools"][0]["input_schema"]
    assert "Tree" in tool_schema["$defs"]
    nested = {"name": "a", "children": [{"name": "b", "children": []}]}
    assert valid(tool_schema, {"value": [nested]})
    assert not valid(tool_schema, {"value": [{"name": "a", "children": [{"name": 1}]}]})


# --- the law: whatever the type, its values validate and come back -------------------------------

_SCALARS: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (str, st.text(max_size=20)),
    (int, st.integers()),
    (float, st.floats(allow_nan=False, allow_infinity=False)),
    (bool, st.booleans()),
    (Literal["a", "b", 3], st.sampled_from(["a", "b", 3])),
    (Tone, st.sampled_from(list(Tone))),
]


_LIST: Any = list  # subscripted with types drawn at run time
_DICT: Any = dict


def _types(depth: int) -> st.SearchStrategy[tuple[Any, st.SearchStrategy[Any]]]:
    scalars = st.sampled_from(_SCALARS)
    if depth == 0:
        return scalars
    inner = _types(depth - 1)

    def list_of(pair: tuple[Any, Any]) -> tuple[Any, Any]:
        return _LIST[pair[0]], st.lists(pair[1], max_size=3)

    def dict_of(pair: tuple[Any, Any]) -> tuple[Any, Any]:
        return _DICT[str, pair[0]], st.dictionaries(st.text(max_size=5), pair[1], max_size=3)

    def optional(pair: tuple[Any, Any]) -> tuple[Any, Any]:
        return Optional[pair[0]], st.none() | pair[1]  # noqa: UP045

    def record(pairs: list[tuple[Any, Any]]) -> tuple[Any, Any]:
        names = [f"f{i}" for i in range(len(pairs))]
        cls = attrs.make_class("Record", {n: attrs.field(type=p[0]) for n, p in zip(names, pairs,
                                                                                    strict=True)},
                               frozen=True)
        return cls, st.builds(cls, **{n: p[1] for n, p in zip(names, pairs, strict=True)})

    return st.one_of(
        scalars,
        inner.map(list_of),
        inner.map(dict_of),
        inner.map(optional),
        st.lists(inner, min_size=1, max_size=4).map(record),
    )


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_values_of_any_supported_type_validate_and_round_trip(data: st.DataObject) -> None:
    """For any type built from the supported forms, a value of it, unstructured to JSON,
    validates against the generated schema and structures back to the same value."""
    type_, values = data.draw(_types(3))
    value = data.draw(values)
    schema = schema_for_type(type_)
    as_json = converter.unstructure(value, type_)
    as_json = json.loads(json.dumps(as_json))  # what a judge would send
    assert valid(schema, as_json)
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=type_)
    assert step.output_schema is not None
    outcome = parse_and_validate(json.dumps(as_json), compile_schema(step.output_schema))
    assert outcome == Success(value), outcome


@attrs.frozen
class Bounded:
    score: float = attrs.field(metadata={"json_schema": {"minimum": 0, "maximum": 1}})
    """How well it did."""


def test_a_fields_json_schema_metadata_joins_its_schema() -> None:
    """``metadata={"json_schema": {...}}`` adds keywords a type cannot say (a 0-1 score), so a
    judge decoding under the schema is held to them and the core's check refuses the rest."""
    assert schema_for_type(Bounded)["properties"]["score"] == {
        "type": "number", "minimum": 0, "maximum": 1, "description": "How well it did."}


def test_json_schema_metadata_that_is_not_a_mapping_is_refused_naming_the_field() -> None:
    @attrs.frozen
    class Wrong:
        score: float = attrs.field(metadata={"json_schema": "minimum 0"})

    with pytest.raises(ScorerDefinitionError,
                       match=r"'json_schema' is not a mapping.*at \(root\)\.score"):
        schema_for_type(Wrong)


def test_a_raw_line_break_inside_a_reply_string_is_read() -> None:
    """llama.cpp's JSON grammar lets a string hold a raw control character (its ``char`` rule
    is ``[^"\\\\]``), so a grammar-held reply over HTTP may put a real line break inside an
    explanation: strict JSON refuses it ("Invalid control character"), which made such a reply
    a format failure (measured with benchmarks/real_judge.py over llama_cpp.server). It is
    read as the text it is; a control character outside a string is still refused."""
    compiled = compile_schema({"type": "object", "properties": {"reason": {"type": "string"}},
                               "required": ["reason"]})
    assert parse_and_validate('{"reason": "line one\nline two\ttab"}', compiled).unwrap() == {
        "reason": "line one\nline two\ttab"}
    refused = parse_and_validate('{"reason": "x"}\x01', compiled).failure()
    assert refused[0].startswith("reply is not valid JSON")
