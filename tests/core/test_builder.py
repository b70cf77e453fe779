"""Tests of the immutable builder: branching, canonical order, definition errors."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    StepJudge,
    create_scorer,
)
from scorecore_adapters.testing import ScriptedJudge
from tests.strategies import STEPS

SCHEMA = {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}


def judge() -> JudgeConfig:
    return JudgeConfig(model=ScriptedJudge([]), instructions="Judge strictly.")


def fn_for(step: str) -> Any:
    return (lambda ctx: 0.5) if step == "generate_score" else (lambda ctx: "x")


def add(builder: Any, step: str, definition: Any = None) -> Any:
    return getattr(builder, step)(fn_for(step) if definition is None else definition)


def test_builder_methods_return_new_values_and_branch() -> None:
    """Each step method returns a new scorer; the original stays reusable for other branches."""
    base = create_scorer(id="s", description="d").preprocess(lambda ctx: 2)
    double = base.generate_score(lambda ctx: ctx.results.preprocess_step_result * 0.5)
    half = base.generate_score(lambda ctx: ctx.results.preprocess_step_result * 0.25)
    assert [s.name for s in base.steps] == ["preprocess"]
    assert [s.name for s in double.steps] == ["preprocess", "generate_score"]
    with_reason = double.generate_reason(lambda ctx: "r")
    assert [s.name for s in double.steps] == ["preprocess", "generate_score"]
    assert len(with_reason.steps) == 3
    assert anyio.run(lambda: double.run(input=0, output=0)).unwrap().score == 1.0
    assert anyio.run(lambda: half.run(input=0, output=0)).unwrap().score == 0.5
    assert anyio.run(lambda: with_reason.run(input=0, output=0)).unwrap().reason == "r"


@given(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6))
def test_any_chain_is_accepted_iff_strictly_canonical(chain: list[str]) -> None:
    """A chain of step additions is accepted iff strictly increasing in canonical order.

    (``generate_reason`` also needs ``generate_score`` before it: a reason explains a score.)
    """
    increasing = all(STEPS.index(a) < STEPS.index(b) for a, b in itertools.pairwise(chain))
    reason_ok = "generate_reason" not in chain or "generate_score" in chain
    builder: Any = create_scorer(id="s", description="d")
    error: ScorerDefinitionError | None = None
    for step in chain:
        try:
            builder = add(builder, step)
        except ScorerDefinitionError as exc:
            error = exc
            break
    if error is not None:
        assert not (increasing and reason_ok)
        assert error.step == step
        assert f".{step}()" in str(error)
    else:
        assert increasing
        assert reason_ok
        assert [s.name for s in builder.steps] == chain


@pytest.mark.parametrize(
    ("first", "second"),
    [(a, b) for a in STEPS for b in STEPS if STEPS.index(a) >= STEPS.index(b)],
)
def test_every_out_of_order_pair_and_duplicate_names_the_step(first: str, second: str) -> None:
    """Adding a step twice or after a later one raises naming the step and saying why."""
    builder: Any = create_scorer(id="s", description="d")
    if first == "generate_reason":
        builder = add(builder, "generate_score")
    builder = add(builder, first)
    with pytest.raises(ScorerDefinitionError) as info:
        add(builder, second)
    assert info.value.step == second
    assert info.value.scorer_id == "s"
    message = str(info.value)
    assert f".{second}()" in message
    if second in [s.name for s in builder.steps]:
        assert "twice" in message
    else:
        assert f"before .{first}()" in message


def test_reason_before_score_is_a_definition_error() -> None:
    """``generate_reason`` on a builder without ``generate_score`` explains the order."""
    with pytest.raises(ScorerDefinitionError, match=r"generate_reason\(\) needs .generate_score"):
        create_scorer(id="s", description="d").generate_reason(lambda ctx: "r")  # type: ignore[attr-defined]


def test_unknown_attribute_is_still_an_attribute_error() -> None:
    """Only step names get the definition error; other missing attributes stay AttributeError."""
    builder = create_scorer(id="s", description="d")
    with pytest.raises(AttributeError):
        builder.run  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize("bad", ["", "   ", "\n"])
def test_empty_or_blank_id_raises(bad: str) -> None:
    """An empty or blank id is rejected when the scorer is created."""
    with pytest.raises(ScorerDefinitionError, match="non-empty id") as info:
        create_scorer(id=bad, description="d")
    assert info.value.field == "id"


def test_name_defaults_to_id() -> None:
    """``name`` is the id unless given."""
    assert create_scorer(id="acc", description="d").name == "acc"
    assert create_scorer(id="acc", description="d", name="Accuracy").name == "Accuracy"


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("bad", [42, "not a function", None, {"description": "x"}])
def test_non_callable_step_raises(step: str, bad: Any) -> None:
    """A step that is neither callable nor a prompt object is rejected when added."""
    builder: Any = create_scorer(id="s", description="d")
    if step == "generate_reason":
        builder = builder.generate_score(fn_for("generate_score"))
    with pytest.raises(ScorerDefinitionError) as info:
        getattr(builder, step)(bad)
    assert info.value.step == step
    assert info.value.value == bad


@pytest.mark.parametrize("step", STEPS)
def test_prompt_step_without_judge_raises(step: str) -> None:
    """A prompt step with no resolvable model or instructions is rejected when added."""
    prompt: Any = (
        ScorePromptStep(description="p", create_prompt=lambda ctx: "p")
        if step == "generate_score"
        else PromptStep(description="p", create_prompt=lambda ctx: "p")
        if step == "generate_reason"
        else PromptStep(description="p", create_prompt=lambda ctx: "p", output_schema=SCHEMA)
    )
    builder: Any = create_scorer(id="s", description="d")
    if step == "generate_reason":
        builder = builder.generate_score(fn_for("generate_score"))
    with pytest.raises(ScorerDefinitionError) as info:
        getattr(builder, step)(prompt)
    assert info.value.step == step
    assert "neither a judge model nor instructions could be resolved" in str(info.value)


@pytest.mark.parametrize(
    ("scorer_judge", "step_judge", "missing"),
    [
        (None, StepJudge(instructions="i"), "no judge model could be resolved"),
        (None, StepJudge(model=ScriptedJudge([])), "no instructions could be resolved"),
        (JudgeConfig(model=ScriptedJudge([]), instructions=""), None,
         "no instructions could be resolved"),
        (JudgeConfig(model=ScriptedJudge([]), instructions="i"), StepJudge(instructions=""),
         "no instructions could be resolved"),
    ],
)
def test_partially_resolvable_judge_names_what_is_missing(
    scorer_judge: JudgeConfig | None, step_judge: StepJudge | None, missing: str
) -> None:
    """The error says which of the model and the instructions is missing (empty counts)."""
    builder = create_scorer(id="s", description="d", judge=scorer_judge)
    with pytest.raises(ScorerDefinitionError, match=f"but {missing}"):
        builder.generate_score(
            ScorePromptStep(description="p", create_prompt=lambda ctx: "p", judge=step_judge)
        )


def test_step_judge_alone_suffices() -> None:
    """A step judge with a model and instructions needs no scorer-level judge."""
    scorer = create_scorer(id="s", description="d").generate_score(ScorePromptStep(
        description="p", create_prompt=lambda ctx: "p",
        judge=StepJudge(model=ScriptedJudge([]), instructions="i"),
    ))
    assert scorer.has_judge


@pytest.mark.parametrize("step", ["preprocess", "analyze"])
def test_preprocess_and_analyze_prompt_steps_need_a_schema(step: str) -> None:
    """A preprocess/analyze PromptStep without ``output_schema`` is rejected when added."""
    builder: Any = create_scorer(id="s", description="d", judge=judge())
    with pytest.raises(ScorerDefinitionError, match="output_schema") as info:
        getattr(builder, step)(PromptStep(description="p", create_prompt=lambda ctx: "p"))
    assert info.value.field == "output_schema"


@attrs.frozen
class _Why:
    text: str


@pytest.mark.parametrize("typed", [
    {"output_schema": SCHEMA}, {"output_type": _Why},
], ids=["output_schema", "output_type"])
def test_a_reason_prompt_step_with_a_reply_type_is_refused(typed: dict[str, Any]) -> None:
    """generate_reason asks for plain text: a PromptStep with output_type or output_schema is
    refused when added instead of silently asking for (and returning) plain text."""
    builder = create_scorer(id="s", description="d", judge=judge()).generate_score(
        fn_for("generate_score"))
    step: Any = PromptStep(description="p", create_prompt=lambda ctx: "p", **typed)
    with pytest.raises(ScorerDefinitionError, match="generate_reason asks the judge for plain"
                       ) as info:
        builder.generate_reason(step)
    assert info.value.field == "output_schema"


@pytest.mark.parametrize("step", ["preprocess", "analyze", "generate_reason"])
def test_score_prompt_step_only_in_generate_score(step: str) -> None:
    """A ScorePromptStep anywhere but generate_score is rejected when added."""
    builder: Any = create_scorer(id="s", description="d", judge=judge())
    if step == "generate_reason":
        builder = builder.generate_score(fn_for("generate_score"))
    with pytest.raises(ScorerDefinitionError, match="ScorePromptStep"):
        getattr(builder, step)(ScorePromptStep(description="p", create_prompt=lambda ctx: "p"))


@pytest.mark.parametrize(
    "schema",
    [{"type": "no-such-type"}, {"properties": 3}, {"required": "x"}, {"minimum": "zero"}],
)
@pytest.mark.parametrize("cls", [PromptStep, ScorePromptStep])
def test_invalid_json_schema_raises(schema: dict[str, Any], cls: Any) -> None:
    """An invalid JSON schema is rejected when the prompt step is built."""
    with pytest.raises(ValueError, match="not a valid JSON schema"):
        cls(description="p", create_prompt=lambda ctx: "p", output_schema=schema)


def test_non_mapping_schema_raises() -> None:
    """A schema that is not a mapping is rejected."""
    with pytest.raises(TypeError, match="JSON schema mapping"):
        PromptStep(description="p", create_prompt=lambda ctx: "p", output_schema=[1])  # type: ignore[arg-type]


def test_steps_describe_kind_and_description() -> None:
    """``steps`` lists each step with its kind and description."""
    scorer = (
        create_scorer(id="s", description="d", judge=judge())
        .analyze(PromptStep(description="find claims", create_prompt=lambda ctx: "p",
                            output_schema=SCHEMA))
        .generate_score(fn_for("generate_score"))
    )
    assert [(s.name, s.kind, s.description) for s in scorer.steps] == [
        ("analyze", "prompt", "find claims"), ("generate_score", "function", None),
    ]


class _Scores:
    """A callable class: its docstring describes the class, not a step."""

    def __call__(self, ctx: Any) -> float:
        return 0.5

    def method(self, ctx: Any) -> float:
        """Score by method."""
        return 0.5


def _scores(ctx: Any, weight: float) -> float:
    """Score by function."""
    return weight


@pytest.mark.parametrize(("step", "description"), [
    (_scores, "Score by function."),
    (_Scores().method, "Score by method."),
    (functools.partial(_scores, weight=0.5), None),
    (_Scores(), None),
    (lambda ctx: 0.5, None),
], ids=["function", "method", "partial", "callable-object", "lambda"])
def test_a_function_steps_description_is_its_own_docstring_only(
    step: Any, description: str | None
) -> None:
    """StepInfo.description is a function's or method's docstring; a partial or a callable
    object has none (their __doc__ documents functools.partial or the class)."""
    scorer = create_scorer(id="s", description="d").generate_score(step)
    assert scorer.steps[0].description == description
