"""Checked by ``mypy --strict``, never executed: steps in the returns style."""

from __future__ import annotations

from typing import Any, assert_type

import attrs
from returns.result import Failure, Result, Success, safe

from scorecore import (
    NotScorable,
    ScorerBuilder,
    ScorerRunError,
    StepContext,
    StepFailed,
    create_scorer,
    not_scorable,
)


@attrs.frozen
class Question:
    text: str


@attrs.frozen
class Reason:
    why: str


typed = create_scorer(id="t", description="d", input_type=Question, output_type=str)
untyped = create_scorer(id="u", description="d")

# --- sync Result steps: T is inferred from Result[T, E] ----------------------------------------


def parse(ctx: StepContext[Question, str, None, None]) -> Result[int, str]:
    return Success(len(ctx.run.input.text)) if ctx.run.input.text else Failure("empty")


parsed = typed.preprocess(parse)
assert_type(parsed, ScorerBuilder[Question, str, int, None])
parsed.generate_score(lambda ctx: ctx.results.preprocess_step_result / 10)
parsed.generate_score(
    lambda ctx: ctx.results.preprocess_step_result.upper()  # type: ignore[attr-defined]
)


def untyped_parse(ctx: Any) -> Result[dict[str, int], Reason]:
    return Success({"w": 3})


assert_type(untyped.preprocess(untyped_parse), ScorerBuilder[Any, Any, dict[str, int], None])
# Known limit (documented in docs/scorers.md): a *lambda* returning Success(...) makes the
# builder Any. mypy first types a lambda with an Any argument, and Success[T] then matches both
# the Result overload and the plain-value one with different results. A named function
# annotated ``-> Result[T, E]`` keeps T (above).
assert_type(typed.preprocess(lambda ctx: Success(len(ctx.run.output))),
            ScorerBuilder[Any, Any, Any, Any])

# --- async Result steps ---------------------------------------------------------------------------


async def fetch(ctx: StepContext[Question, str, None, None]) -> Result[list[str], Reason]:
    return Success(ctx.run.output.split())


fetched = typed.preprocess(fetch)
assert_type(fetched, ScorerBuilder[Question, str, list[str], None])


async def untyped_fetch(ctx: Any) -> Result[tuple[int, ...], Reason]:
    return Success((1, 2))


assert_type(untyped.preprocess(untyped_fetch), ScorerBuilder[Any, Any, tuple[int, ...], None])

# --- @safe functions: the exception is the error -----------------------------------------------


@safe
def to_int(ctx: StepContext[Question, str, None, None]) -> int:
    return int(ctx.run.output)


assert_type(typed.preprocess(to_int), ScorerBuilder[Question, str, int, None])


@safe((ValueError,))
def to_float(ctx: Any) -> float:
    return float(ctx.run.output)


assert_type(untyped.preprocess(to_float), ScorerBuilder[Any, Any, float, None])

# --- plain and Result steps mixed ----------------------------------------------------------------


def check(ctx: StepContext[Question, str, int, None]) -> Result[bool, Reason]:
    if ctx.results.preprocess_step_result == 0:
        return Failure(Reason(why="no words"))
    return Success(True)


mixed = typed.preprocess(lambda ctx: len(ctx.run.output)).analyze(check)
assert_type(mixed, ScorerBuilder[Question, str, int, bool])
mixed_scorer = mixed.generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result else 0.0)


def maybe(ctx: StepContext[Question, str, int, bool]) -> Result[float, Reason] | NotScorable:
    return not_scorable("no answer") if not ctx.run.output else Success(0.5)


mixed.generate_score(maybe)

# --- not scorable next to a Result: the form docs/scorers.md recommends --------------------------


def parse_or_skip(ctx: StepContext[Question, str, None, None]) -> Result[int, Reason] | NotScorable:
    return not_scorable("empty") if not ctx.run.output else Success(len(ctx.run.output))


assert_type(typed.preprocess(parse_or_skip), ScorerBuilder[Question, str, int, None])


def wrapped_marker(
    ctx: StepContext[Question, str, None, None],
) -> Result[int | NotScorable, Reason]:
    return Success(not_scorable("empty")) if not ctx.run.output else Success(1)


# Known limit (documented in docs/scorers.md): the marker inside the Result stays in the type.
assert_type(typed.preprocess(wrapped_marker), ScorerBuilder[Question, str, int | NotScorable, None])
mixed.generate_score(lambda ctx: Success(0.5))


async def async_score(ctx: StepContext[Question, str, int, bool]) -> Result[float, Reason]:
    return Success(1.0)


mixed.generate_score(async_score)

# --- rejections -----------------------------------------------------------------------------------


def str_result(ctx: StepContext[Question, str, int, bool]) -> Result[str, Reason]:
    return Success("high")


mixed.generate_score(str_result)  # type: ignore[arg-type]


async def async_str_result(ctx: StepContext[Question, str, int, bool]) -> Result[str, Reason]:
    return Success("high")


mixed.generate_score(async_str_result)  # type: ignore[arg-type]

# --- the failed run's cause narrows to StepFailed ----------------------------------------------


def explain(error: ScorerRunError) -> str:
    cause = error.cause
    if isinstance(cause, StepFailed):
        assert_type(cause, StepFailed[Any])
        return f"{cause.step}: {cause.error}"
    return "other"
