"""LocalModel's grammars: every schema scorecore generates converts; the rest is refused at build.

These need llama_cpp (the ``local`` extra) and read the bundled model's vocabulary to let
llama.cpp parse each grammar, but run no inference, so they are quick. Marked ``real_model``:
skipped without llama_cpp, failed instead under ``CI=true``.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Literal

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    ModelSettings,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
)
from scorecore import scorers as builtin
from scorecore.judge import JudgeMessage, JudgeRequest, SchemaChecker

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def local() -> Any:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    return LocalModel()


def _builtin_llm_scorers(judge: Any) -> list[Any]:
    """Every built-in LLM-judged scorer, built with ``judge`` (each shape where it has two)."""
    built = []
    for shape in (builtin.AGENT, builtin.TEXT):
        built += [
            builtin.answer_relevancy(judge, shape=shape),
            builtin.answer_similarity(judge, shape=shape),
            builtin.bias(judge, shape=shape),
            builtin.context_precision(judge, context=["c"], shape=shape),
            builtin.context_recall(judge, context=["c"], shape=shape),
            builtin.context_relevance(judge, context=["c"], shape=shape),
            builtin.faithfulness(judge, context=["c"], shape=shape),
            builtin.hallucination(judge, context=["c"], shape=shape),
            builtin.multi_turn_judge(judge, criterion="polite", shape=shape),
            builtin.noise_sensitivity(judge, baseline_response="b", noisy_query="q", shape=shape),
            builtin.prompt_alignment(judge, shape=shape),
            builtin.rubric(judge, criteria=["clear"], shape=shape),
            builtin.summarization(judge, source="s", shape=shape),
            builtin.toxicity(judge, shape=shape),
        ]
    built.append(builtin.llm_tool_call_accuracy(judge, available_tools={"search": "web"}))
    built.append(builtin.llm_trajectory_accuracy(judge, expected_trajectory=["search"]))
    return built


def test_local_model_checks_schemas_at_build(local: Any) -> None:
    assert isinstance(local, SchemaChecker)
    assert local.supports_structured_output


def test_every_builtin_llm_scorer_schema_converts(local: Any) -> None:
    """Each built-in LLM scorer builds on LocalModel: the schema of each of its prompt steps
    (generated from its reply classes) converts to a grammar llama.cpp parses."""
    scorers = _builtin_llm_scorers(local)
    prompt_steps = [s for scorer in scorers for s in scorer.steps if s.kind == "prompt"]
    checked = [s for s in prompt_steps if s.name != "generate_reason"]
    assert len(checked) >= len(scorers)  # every LLM scorer has at least one schema'd step
    for step in checked:
        schema = step.definition.output_schema
        assert schema is not None, step
        assert local.check_output_schema(schema) is None, (step, schema)


class Mood(enum.Enum):
    CALM = "calm"
    TENSE = "tense"


@attrs.frozen
class Leaf:
    label: Literal["a", "b", 3, None]
    weight: float = 1.0


@attrs.frozen
class Node:
    """A class containing itself: its schema refers to the root (``#``)."""

    name: str
    children: list[Node]
    leaf: Leaf | None = None


@attrs.frozen
class Everything:
    """A field of every form scorecore generates a schema for."""

    text: str
    count: int
    ratio: float
    flag: bool
    nothing: None
    mood: Mood
    choice: Literal["yes", "no"]
    leaves: list[Leaf]
    by_name: dict[str, int]
    pair: tuple[str, int]
    empty: tuple[()]
    many: tuple[float, ...]
    maybe: int | None
    tree: Node
    anything: Any
    """An annotation-only schema (the docstring): any value."""


@pytest.mark.parametrize("output_type", [Everything, Node, list[Node], Leaf, int,
                                         dict[str, list[Leaf]], Literal["x"]])
def test_generated_schemas_of_every_form_convert(local: Any, output_type: Any) -> None:
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=output_type)
    assert step.output_schema is not None
    assert local.check_output_schema(step.output_schema) is None


_SCALARS = st.sampled_from([str, int, float, bool, type(None), Literal["a", 1, None], Mood])
_LIST: Any = list
_DICT: Any = dict


def _types(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return _SCALARS
    inner = _types(depth - 1)

    def record(fields: list[tuple[Any, bool]]) -> Any:
        # attrs wants the fields without a default first
        ordered = sorted(enumerate(fields), key=lambda field: field[1][1])
        return attrs.make_class("Record", {
            f"f{i}": attrs.field(type=t, default=None) if optional else attrs.field(type=t)
            for i, (t, optional) in ordered
        }, frozen=True)

    return st.one_of(
        _SCALARS, inner.map(lambda t: _LIST[t]), inner.map(lambda t: _DICT[str, t]),
        inner.map(lambda t: t | None),
        st.lists(st.tuples(inner, st.booleans()), min_size=1, max_size=4).map(record),
    )


@settings(max_examples=60, deadline=None)
@given(_types(3))
def test_any_generated_schema_converts(output_type: Any) -> None:
    """For any type built from the supported forms, the generated schema converts to a grammar
    llama.cpp parses (the property behind 'every output_type scorecore generates')."""
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=output_type)
    assert step.output_schema is not None
    assert LocalModel().check_output_schema(step.output_schema) is None


@pytest.mark.parametrize(("schema", "says"), [
    ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
     "prefixItems and more items"),
    ({"type": "string", "pattern": "abc"}, "conversion failed"),
    ({"not": {"type": "string"}}, "conversion failed"),
])
def test_a_schema_that_cannot_convert_is_refused_at_build(
    local: Any, schema: dict[str, Any], says: str
) -> None:
    builder = create_scorer(id="s", description="d",
                            judge=JudgeConfig(model=local, instructions="i"))
    with pytest.raises(ScorerDefinitionError) as caught:
        builder.analyze(PromptStep(description="a", output_schema=schema,
                                   create_prompt=lambda ctx: "p"))
    error = caught.value
    assert (error.scorer_id, error.step, error.field) == ("s", "analyze", "output_schema")
    assert local.model_id in str(error)
    assert says in str(error)


def test_grammar_for_schema_names_what_cannot_convert() -> None:
    from scorecore_adapters.local import grammar_for_schema  # noqa: PLC0415 - local extra

    assert 'root ::= "{" space score-kv "}" space' in grammar_for_schema(
        {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]})
    with pytest.raises(ValueError, match=re.escape("'https://example.com/s.json' is not local")):
        grammar_for_schema({"$ref": "https://example.com/s.json"})
    with pytest.raises(ValueError, match="the schema is not JSON"):
        grammar_for_schema({"x": {1, 2}})


def test_the_default_score_schema_converts(local: Any) -> None:
    create_scorer(id="s", description="d", judge=JudgeConfig(model=local, instructions="i"),
                  ).generate_score(ScorePromptStep(description="r", create_prompt=lambda c: "r"))


@pytest.mark.anyio
async def test_a_request_whose_schema_cannot_convert_fails_without_a_call(
    local: Any, anyio_backend: str
) -> None:
    """A request made by hand (no build-time check) gets a bad_request error, not a crash."""
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")],
                           output_schema={"not": {"type": "string"}}, native_schema=True,
                           settings=ModelSettings())
    error = (await local.generate(request)).failure()
    assert (error.kind, error.code, error.is_retryable) == ("bad_request", "schema_unsupported",
                                                            False)
    assert "conversion failed" in error.message


@pytest.mark.parametrize(("option", "value", "says"), [
    ("n_ctx", 0, "LocalModel.n_ctx must be a multiple of 256 (an int >= 256), got 0"),
    ("n_ctx", 1000, "LocalModel.n_ctx must be a multiple of 256 (an int >= 256), got 1000"),
    ("n_threads", 0, "LocalModel.n_threads must be an int >= 1 or None, got 0"),
    ("timeout", -1, "LocalModel.timeout must be a finite number > 0 or None, got -1"),
    ("model_id", "", "LocalModel.model_id must be a non-empty str or None, got ''"),
    ("chat_format", 3, "LocalModel.chat_format must be a non-empty str or None, got 3"),
    ("isolation", "thread",
     'LocalModel.isolation must be "process" or "in_process", got \'thread\''),
    ("repack_weights", 1, "LocalModel.repack_weights must be a bool, got 1"),
])
def test_bad_options_are_refused_naming_the_field(option: str, value: Any, says: str) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    with pytest.raises(ScorerDefinitionError, match=re.escape(says)):
        LocalModel(**{option: value})


def test_a_missing_model_file_is_refused_naming_it(tmp_path: Any) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    missing = tmp_path / "nope.gguf"
    with pytest.raises(ScorerDefinitionError, match=r"LocalModel\.path must name an existing GGUF"):
        LocalModel(missing)


def test_the_grammar_keeps_the_schemas_property_order() -> None:
    """Properties are written in the order the schema (the class) lists them: a small model
    follows the order it is given (reason last, after the verdict it explains)."""
    from scorecore_adapters.local import grammar_for_schema  # noqa: PLC0415 - local extra

    grammar = grammar_for_schema({
        "type": "object",
        "properties": {"verdict": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"],
    })
    assert 'root ::= "{" space verdict-kv "," space reason-kv "}" space' in grammar


def test_a_bounded_score_is_held_to_its_bounds_by_the_grammar() -> None:
    """llama.cpp's converter ignores minimum/maximum, so a 0-1 score was only asked for: the
    bundled model answered 1.5 and 2 for prompt_alignment's scores (each a format failure).
    The grammar now lists the values a bounded number may take (two decimals)."""
    from scorecore_adapters._grammar import grammar_schema  # noqa: PLC0415
    from scorecore_adapters.local import grammar_for_schema  # noqa: PLC0415 - local extra

    score = {"type": "number", "minimum": 0, "maximum": 1}
    values = grammar_schema(score)["enum"]
    assert {0, 0.01, 0.5, 0.99, 1} <= set(values)
    assert all(0 <= v <= 1 for v in values)
    assert len(values) == 103  # 0 and 1 are listed as 0/0.0 and 1/1.0
    assert grammar_schema({"type": "integer", "minimum": 1, "maximum": 5}) == {
        "enum": [1, 2, 3, 4, 5]}
    # Unbounded, half-bounded or too wide a range: left as it was (the core's check reads it).
    for kept in ({"type": "number"}, {"type": "number", "minimum": 0},
                 {"type": "number", "minimum": 0, "maximum": 1e9}):
        assert grammar_schema(kept) == kept
    grammar = grammar_for_schema({"type": "object", "properties": {"score": score},
                                  "required": ["score"]})
    assert '"1.5"' not in grammar
    assert '"0.5"' in grammar


def test_every_score_prompt_alignment_asks_for_is_bounded_in_its_schema(local: Any) -> None:
    """prompt_alignment's and noise_sensitivity's 0-1 scores carry minimum/maximum in the
    schema the judge receives (not only in a sentence), so strict and grammar-held judges
    cannot answer outside them."""
    seen: list[dict[str, Any]] = []

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            if schema.get("type") == "number":
                seen.append(schema)
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    for scorer in (builtin.prompt_alignment(JudgeConfig(model=local, instructions="")),
                   builtin.noise_sensitivity(JudgeConfig(model=local, instructions=""),
                                             baseline_response="b", noisy_query="q")):
        for step in scorer.steps:
            if step.kind == "prompt" and step.name != "generate_reason":
                walk(step.definition.output_schema)
    assert len(seen) == 5
    assert all((s["minimum"], s["maximum"]) == (0, 1) for s in seen)


def test_an_unbounded_string_is_bounded_in_the_grammar_only() -> None:
    """A string the schema leaves unbounded gets STRING_BOUND as maxLength in the grammar's
    schema (a small model ran on inside one to the output cap); a string with its own bound,
    an enum, a pattern or a format is left as it is."""
    from scorecore_adapters._grammar import STRING_BOUND, grammar_schema  # noqa: PLC0415
    from scorecore_adapters.local import grammar_for_schema  # noqa: PLC0415 - local extra

    assert grammar_schema({"type": "string"}) == {"type": "string", "maxLength": STRING_BOUND}
    assert grammar_schema({"type": "string", "minLength": 2}) == {
        "type": "string", "minLength": 2, "maxLength": STRING_BOUND}
    assert grammar_schema({"type": "string", "minLength": 900})["maxLength"] == 900
    for kept in ({"type": "string", "maxLength": 5000}, {"type": "string", "pattern": "a+"},
                 {"type": "string", "format": "date"}, {"enum": ["yes", "no"]},
                 {"type": "string", "enum": ["yes", "no"]}):
        assert grammar_schema(kept) == kept
    nested = grammar_schema({"type": "object", "properties": {"claims": {
        "type": "array", "items": {"type": "string"}}}})
    assert nested["properties"]["claims"]["items"]["maxLength"] == STRING_BOUND
    assert grammar_for_schema({"type": "object", "properties": {"note": {"type": "string"}},
                               "required": ["note"]})
