"""The law: ``run()`` returns a ``Result`` whatever the input, steps and judge do.

Every entry point of a run gets arbitrary and hostile values: the input, output, ground truth
and extra keys; the return value (or exception) of every function step; the reply of the judge
for every prompt step; ``create_prompt`` and ``calculate_score``; the output schema. Where the
outcome is knowable, the test states it exactly (an oracle); elsewhere it states the kinds of
failure allowed. Values are drawn as recipes (``tests.strategies.Hostile``) and built inside the
test, so a failing example prints a short recipe, never a 12,000-deep list.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Result, Success

from scorecore import (
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    JudgeConfig,
    JudgeFailed,
    JudgeOutputInvalid,
    ProcessorAborted,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    ScoreResult,
    ScorerRunError,
    StepRaised,
    create_scorer,
    not_scorable,
)
from scorecore.judge import JudgeRequest, JudgeResponse, Retry
from scorecore_adapters.testing import FunctionJudge, judge_error, virtual_runtime
from tests import strategies as sts
from tests.strategies import STEPS

Outcome = Result[ScoreResult[Any, Any], ScorerRunError]


def run_sync(scorer: Any, **kwargs: Any) -> Outcome:
    runtime, _ = virtual_runtime()
    outcome: Outcome = anyio.run(lambda: scorer.run(runtime=runtime, **kwargs))
    return outcome


def as_score(value: Any) -> float | None:
    """The oracle for a score: a finite real number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        score = float(value)
    except Exception:  # ShyInt's __float__ raises on purpose
        return None
    return score if math.isfinite(score) else None


def assert_bounded(error: ScorerRunError) -> None:
    """A failure is readable: its message and every text of its cause stay short."""
    assert len(str(error)) < 40_000
    for field in attrs.fields(type(error.cause)):
        value = getattr(error.cause, field.name)
        if isinstance(value, str) and field.name not in ("traceback", "raw_output"):
            assert len(value) < 2_000, field.name


run_kwargs = st.fixed_dictionaries(
    {"input": sts.run_values, "output": sts.run_values},
    optional={
        "ground_truth": sts.run_values,
        "run_id": sts.odd_text,
        "request_context": st.dictionaries(sts.odd_text, sts.hostile, max_size=1),
        "extra": st.fixed_dictionaries({"extra_key": sts.hostile}),
    },
)


def realize_kwargs(drawn: Mapping[str, Any]) -> dict[str, Any]:
    return {k: sts.realize(v) for k, v in drawn.items()}


# --- function steps: an exact oracle ---------------------------------------------------------

step_behaviours = st.one_of(
    st.tuples(st.sampled_from(["return", "return_async"]), sts.run_values),
    st.tuples(st.just("return"), st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.just("return"), st.text()),
    st.tuples(st.just("raise"), sts.exception_kinds),
    st.tuples(st.just("not_scorable"), st.none() | sts.odd_text),
)


def function_step(behaviour: tuple[str, Any], value: Any) -> Any:
    kind, _ = behaviour
    if kind == "return_async":
        async def step_async(ctx: Any) -> Any:
            return value
        return step_async

    def step(ctx: Any) -> Any:
        if kind == "raise":
            raise value
        return value
    return step


@settings(max_examples=700)
@given(
    behaviours=st.tuples(step_behaviours, step_behaviours, step_behaviours, step_behaviours),
    kwargs=run_kwargs,
    text=sts.odd_text,
)
def test_function_steps_never_make_run_raise(
    behaviours: tuple[tuple[str, Any], ...], kwargs: dict[str, Any], text: str
) -> None:
    """Whatever four function steps return or raise, run() gives the Result the oracle says."""
    values: list[Any] = []
    for kind, drawn in behaviours:
        if kind == "raise":
            values.append(sts.build_exception(drawn, text))
        elif kind == "not_scorable":
            values.append(not_scorable(drawn))
        else:
            values.append(sts.realize(drawn))
    steps = [function_step(b, v) for b, v in zip(behaviours, values, strict=True)]
    scorer = (
        create_scorer(id="fuzz", description="d")
        .preprocess(steps[0]).analyze(steps[1]).generate_score(steps[2]).generate_reason(steps[3])
    )

    outcome = run_sync(scorer, **realize_kwargs(kwargs))

    score: float | None = None
    for index, (name, (kind, _), value) in enumerate(
        zip(STEPS, behaviours, values, strict=True)
    ):
        if kind == "raise":
            error = outcome.failure()
            assert (error.failed_step, error.completed_steps) == (name, STEPS[:index])
            assert isinstance(error.cause, StepRaised)
            assert error.cause.exception is value
            assert error.partial.score == score
            assert_bounded(error)
            return
        if kind == "not_scorable":
            result = outcome.unwrap()
            assert result.not_scorable is not None
            assert result.not_scorable.step == name
            assert result.score is None
            return
        if name == "generate_score":
            score = as_score(value)
            if score is None:
                error = outcome.failure()
                assert error.failed_step == "generate_score"
                assert isinstance(error.cause, InvalidScore)
                assert error.cause.type_name == type(value).__qualname__
                assert_bounded(error)
                return
        if name == "generate_reason" and not isinstance(value, str):
            error = outcome.failure()
            assert error.failed_step == "generate_reason"
            assert isinstance(error.cause, InvalidStepValue)
            assert error.partial.score == score
            assert_bounded(error)
            return
    result = outcome.unwrap()
    assert result.score == score
    assert result.reason == values[3]


# --- typed input and output --------------------------------------------------------------------


@dataclasses.dataclass
class Ticket:
    subject: str
    priority: int


@attrs.frozen
class Labelled:
    title: str
    labels: dict[str, str]
    tags: list[str] = attrs.field(factory=list)
    score: float = 0.0


TYPED = (
    create_scorer(id="ticket", description="d", input_type=Ticket, output_type=Labelled)
    .generate_score(lambda ctx: 1.0),
    create_scorer(id="agent", description="d", type="agent").generate_score(lambda ctx: 1.0),
)

shaped_like_labelled = st.fixed_dictionaries(
    {"title": sts.run_values, "labels": st.dictionaries(sts.odd_text | st.integers(),
                                                        sts.run_values, max_size=2)},
    optional={"tags": sts.run_values, "score": sts.run_values, "extra": sts.run_values},
)
shaped_like_ticket = st.fixed_dictionaries(
    {"subject": sts.run_values, "priority": sts.run_values},
    optional={1: sts.run_values, "x": sts.run_values},
)


@settings(max_examples=400)
@given(
    value=sts.run_values | shaped_like_ticket,
    output=sts.run_values | shaped_like_labelled,
    agent_output=sts.run_values | st.lists(st.dictionaries(sts.odd_text, sts.run_values)),
)
def test_typed_scorers_never_make_run_raise(value: Any, output: Any, agent_output: Any) -> None:
    """Any value where a type is declared is structured or an InputMismatch naming the field."""
    for scorer, out in zip(TYPED, (output, agent_output), strict=True):
        outcome = run_sync(scorer, input=sts.realize(value), output=sts.realize(out))
        if isinstance(outcome, Success):
            assert outcome.unwrap().score == 1.0
            continue
        error = outcome.failure()
        assert error.failed_step == "input"
        assert isinstance(error.cause, InputMismatch)
        assert error.cause.errors
        assert all(" @ input" in e or " @ output" in e for e in error.cause.errors)
        assert_bounded(error)


# --- prompt steps: judge replies, create_prompt, calculate_score, processors -----------------

SCHEMAS: tuple[dict[str, Any], ...] = (
    {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
     "required": ["claims"]},
    {},
    {"type": "object", "properties": {"a": {"$ref": "#"}, "n": {"multipleOf": 0.5}}},
    {"type": "array", "uniqueItems": True},
    {"enum": [1, "a", None, [1], {"a": 1}]},
)

reply_items = st.one_of(
    sts.reply_texts.map(lambda text: ("text", text)),
    st.tuples(st.just("error"), st.sampled_from([None, 400, 401, 429, 500, 503])),
    st.tuples(st.just("raise"), sts.exception_kinds),
    st.tuples(st.just("odd_usage"), sts.reply_texts),
)


def judge_from(replies: list[tuple[str, Any]], text: str, *, native: bool) -> FunctionJudge:
    queue = list(replies)

    def answer(request: JudgeRequest) -> Any:
        if not queue:
            return ""
        kind, value = queue.pop(0)
        if kind == "error":
            return judge_error(value, message=text)
        if kind == "raise":
            raise sts.build_exception(value, text)
        if kind == "odd_usage":  # a hand-written model returning a response it should not
            return JudgeResponse(text=value, usage=None)  # type: ignore[arg-type]
        return value

    return FunctionJudge(answer, supports_structured_output=native)


user_fn_behaviours = st.one_of(
    st.tuples(st.just("ok"), st.none()),
    st.tuples(st.just("return"), sts.run_values),
    st.tuples(st.just("raise"), sts.exception_kinds),
)


def user_fn(behaviour: tuple[str, Any], ok: Any, text: str) -> Any:
    kind, drawn = behaviour
    if kind == "ok":
        return ok
    if kind == "raise":
        exc = sts.build_exception(drawn, text)

        def raising(arg: Any) -> Any:
            raise exc
        return raising
    value = sts.realize(drawn)
    return lambda arg: value


class ErrorProcessorFor:
    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.text = text

    def process_error(self, error: Any, retry_count: int, request: Any) -> Retry | None:
        if self.kind == "raise":
            raise sts.UnprintableError
        return Retry(after=0.5)


ALLOWED_CAUSES = (
    JudgeFailed, JudgeOutputInvalid, InvalidScore, InvalidStepValue, StepRaised,
    ProcessorAborted,
)


@settings(max_examples=700)
@given(
    replies=st.lists(reply_items, max_size=10),
    create_prompts=st.tuples(*[user_fn_behaviours] * 4),
    calculate=st.none() | user_fn_behaviours,
    output_processor=st.none() | user_fn_behaviours,
    error_processor=st.none() | st.sampled_from(["retry", "raise"]),
    injection=st.sampled_from(["auto", "inline", "system", True, False]),
    native=st.booleans(),
    schema=st.sampled_from(range(len(SCHEMAS))),
    kwargs=run_kwargs,
    text=sts.odd_text,
)
def test_prompt_steps_never_make_run_raise(
    *,
    replies: list[tuple[str, Any]],
    create_prompts: tuple[tuple[str, Any], ...],
    calculate: tuple[str, Any] | None,
    output_processor: tuple[str, Any] | None,
    error_processor: str | None,
    injection: Any,
    native: bool,
    schema: int,
    kwargs: dict[str, Any],
    text: str,
) -> None:
    """Whatever the judge answers (or raises) and the user's functions do, run() gives a Result.

    A success has a finite score; a failure names a step and one of the judge-path causes.
    """
    judge = judge_from(replies, text, native=native)
    processors: dict[str, Any] = {}
    if output_processor is not None:
        fn = user_fn(output_processor, lambda reply: reply, text)
        processors["output_processors"] = [type("Out", (), {"process_output": staticmethod(fn)})()]
    if error_processor is not None:
        processors["error_processors"] = [ErrorProcessorFor(error_processor, text)]
        processors["max_processor_retries"] = 2
    config = JudgeConfig(model=judge, instructions="Judge.", json_prompt_injection=injection,
                         **processors)
    prompts = [user_fn(b, lambda ctx: "prompt", text) for b in create_prompts]
    scorer = (
        create_scorer(id="judged", description="d", judge=config)
        .preprocess(PromptStep(description="p", create_prompt=prompts[0],
                               output_schema=SCHEMAS[schema]))
        .analyze(PromptStep(description="a", create_prompt=prompts[1],
                            output_schema=SCHEMAS[0]))
        .generate_score(ScorePromptStep(
            description="s", create_prompt=prompts[2],
            calculate_score=None if calculate is None else user_fn(calculate, None, text),
        ))
        .generate_reason(PromptStep(description="r", create_prompt=prompts[3]))
    )

    outcome = run_sync(scorer, **realize_kwargs(kwargs))

    if isinstance(outcome, Failure):
        error = outcome.failure()
        assert error.failed_step in STEPS
        assert isinstance(error.cause, ALLOWED_CAUSES)
        assert_bounded(error)
    else:
        result = outcome.unwrap()
        assert result.score is not None or result.not_scorable is not None
        if result.score is not None:
            assert math.isfinite(result.score)
            assert isinstance(result.reason, str)


@settings(max_examples=500)
@given(number=st.sampled_from(sts.NUMBER_TEXTS), fenced=st.booleans())
def test_judged_score_outcome_follows_the_reply(number: str, fenced: bool) -> None:
    """A ``{"score": n}`` reply scores n when finite; a non-finite n is InvalidScore; an
    unreadable n is JudgeOutputInvalid after the one fallback; anything else invalid too."""
    reply = '{"score": ' + number + "}"
    if fenced:
        reply = f"```json\n{reply}\n```"
    judge = FunctionJudge(lambda request: reply)
    scorer = create_scorer(
        id="judged", description="d", judge=JudgeConfig(model=judge, instructions="Judge.")
    ).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "rate"))

    outcome = run_sync(scorer, input="q", output="a")

    try:
        parsed = json.loads(number)
    except (ValueError, RecursionError):
        parsed = "unreadable"
    is_number = isinstance(parsed, int | float) and not isinstance(parsed, bool)
    if is_number and as_score(parsed) is not None:
        assert outcome.unwrap().score == float(parsed)
    elif is_number:
        error = outcome.failure()
        assert isinstance(error.cause, InvalidScore), error.cause
        assert judge.calls == 1
    else:
        error = outcome.failure()
        assert isinstance(error.cause, JudgeOutputInvalid), error.cause
        assert error.cause.attempts == 2
        assert judge.calls == 2


@settings(max_examples=250)
@given(value=sts.run_values, kwargs=run_kwargs)
def test_calculate_score_result_is_checked_like_a_score(
    value: Any, kwargs: dict[str, Any]
) -> None:
    """Whatever calculate_score returns, a finite real is the score, anything else InvalidScore."""
    built = sts.realize(value)
    judge = FunctionJudge(lambda request: '{"score": 0.5}')
    scorer = create_scorer(
        id="judged", description="d", judge=JudgeConfig(model=judge, instructions="Judge.")
    ).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "rate",
                                     calculate_score=lambda ctx: built))

    outcome = run_sync(scorer, **realize_kwargs(kwargs))

    expected = as_score(built)
    if expected is not None:
        assert outcome.unwrap().score == expected
    else:
        error = outcome.failure()
        assert isinstance(error.cause, InvalidScore)
        assert error.cause.type_name == type(built).__qualname__
        assert_bounded(error)


# --- output schemas: refused at build time, or usable on every run ----------------------------

SCHEMA_KEYWORDS = (
    "type", "properties", "items", "required", "enum", "const", "multipleOf", "maximum",
    "minimum", "maxLength", "pattern", "uniqueItems", "$ref", "$defs", "$id", "$anchor",
    "additionalProperties", "prefixItems", "contains", "allOf", "anyOf", "not", "if", "then",
    "format", "x-extra",
)
schema_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.sampled_from(["object", "array", "string", "number", "integer", "#", "#/$defs/a",
                         "#/properties/a", "other.json", "https://example.com/s.json", "^a+$",
                         "(", "date-time"]),
        st.integers(), st.floats(), st.booleans(), st.none(), sts.hostile,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(SCHEMA_KEYWORDS) | sts.odd_text, inner, max_size=3),
    ),
    max_leaves=8,
)
schemas = st.dictionaries(st.sampled_from(SCHEMA_KEYWORDS) | st.integers(), schema_values,
                          max_size=4)


@settings(max_examples=400)
@given(schema=schemas, replies=st.lists(sts.reply_texts, min_size=2, max_size=2))
def test_schemas_are_refused_at_build_time_or_never_make_run_raise(
    schema: dict[Any, Any], replies: list[str]
) -> None:
    """An output schema is refused when the step is built, or every run with it gives a Result."""
    built = sts.realize(schema)
    refused: ScorerDefinitionError | None = None
    try:
        step = PromptStep(description="a", create_prompt=lambda ctx: "p", output_schema=built)
    except ScorerDefinitionError as exc:
        refused = exc
    if refused is not None:
        assert refused.field == "PromptStep.output_schema"
        assert len(str(refused)) < 2_000
        return
    queue = list(replies)
    judge = FunctionJudge(lambda request: queue.pop(0) if queue else "")
    scorer = (
        create_scorer(id="schema", description="d",
                      judge=JudgeConfig(model=judge, instructions="Judge."))
        .analyze(step)
        .generate_score(lambda ctx: 1.0)
    )

    outcome = run_sync(scorer, input="q", output="a")

    if isinstance(outcome, Failure):
        error = outcome.failure()
        assert error.failed_step == "analyze"
        assert isinstance(error.cause, JudgeOutputInvalid)
        assert_bounded(error)
    else:
        assert outcome.unwrap().score == 1.0
