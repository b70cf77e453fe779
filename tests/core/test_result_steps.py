"""Function steps answering in the ``returns`` style: ``Success``, ``Failure`` and ``@safe``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Result, Success, safe

from scorecore import (
    InvalidScore,
    InvalidStepValue,
    ScorerRunError,
    StepFailed,
    StepRaised,
    create_scorer,
    not_scorable,
    to_mastra_json,
)
from scorecore.evals import run_evals
from scorecore_adapters.testing import InMemoryScoreStore
from tests import strategies as sts
from tests.strategies import STEPS

pytestmark = pytest.mark.anyio


@attrs.frozen
class Reason:
    """A user's own error value."""

    text: str


async def test_success_is_the_step_result(anyio_backend: str) -> None:
    """``Success(x)`` from sync and async steps makes ``x`` the step's result."""

    async def analyze(ctx: Any) -> Result[int, str]:
        return Success(ctx.results.preprocess_step_result["w"] * 2)

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: Success({"w": 3}))
        .analyze(analyze)
        .generate_score(lambda ctx: Success(ctx.results.analyze_step_result / 10))
        .generate_reason(lambda ctx: Success(f"{ctx.results.analyze_step_result} words"))
    )
    result = (await scorer.run(input="q", output="a b c")).unwrap()
    assert result.preprocess_step_result == {"w": 3}
    assert result.analyze_step_result == 6
    assert result.score == 0.6
    assert result.reason == "6 words"


async def test_failure_ends_the_run_with_step_failed(anyio_backend: str) -> None:
    """``Failure(e)`` ends the run: cause ``StepFailed`` keeps ``e`` as it is, partial kept."""
    error = Reason("no words")
    reached: list[str] = []

    def score(ctx: Any) -> float:
        reached.append("score")
        return 1.0

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"w": 0})
        .analyze(lambda ctx: Failure(error))
        .generate_score(score)
    )
    failure = (await scorer.run(input="q", output="", run_id="r1")).failure()
    assert isinstance(failure, ScorerRunError)
    assert failure.failed_step == "analyze"
    assert failure.completed_steps == ("preprocess",)
    assert failure.cause == StepFailed(step="analyze", error=error)
    assert failure.cause.error is error
    assert failure.partial.preprocess_step_result == {"w": 0}
    assert failure.partial.run_id == "r1"
    assert reached == []
    assert "analyze returned Failure(Reason(text='no words'))" in str(failure)


async def test_success_of_not_scorable_is_not_scorable(anyio_backend: str) -> None:
    """``Success(not_scorable(...))`` is not-scorable, named after its step."""

    async def analyze(ctx: Any) -> Result[Any, str]:
        return Success(not_scorable("empty"))

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: "P")
        .analyze(analyze)
        .generate_score(lambda ctx: 1.0)
    )
    result = (await scorer.run(input="q", output="")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert (result.not_scorable.step, result.not_scorable.reason) == ("analyze", "empty")
    assert result.preprocess_step_result == "P"


async def test_success_values_are_validated_like_plain_ones(anyio_backend: str) -> None:
    """``Success("0.5")`` is not a score and ``Success(3)`` is not a reason."""
    # mypy rejects both steps (the point of the typed overloads); at run time they fail cleanly.
    bad_score = create_scorer(id="s", description="d").generate_score(
        lambda ctx: Success("0.5")  # type: ignore[arg-type]
    )
    cause = (await bad_score.run(input=1, output=1)).failure().cause
    assert cause == InvalidScore(value_repr="'0.5'", type_name="str")
    bad_reason = (
        create_scorer(id="s", description="d")
        .generate_score(lambda ctx: 1.0)
        .generate_reason(lambda ctx: Success(3))  # type: ignore[arg-type]
    )
    failure = (await bad_reason.run(input=1, output=1)).failure()
    assert isinstance(failure.cause, InvalidStepValue)
    assert failure.partial.score == 1.0


@safe
def _parse_output(ctx: Any) -> dict[str, Any]:
    """The run's output parsed as JSON: ``Failure(JSONDecodeError)`` when it is not JSON."""
    parsed: dict[str, Any] = json.loads(ctx.run.output)
    return parsed


async def test_safe_steps_keep_the_exception(anyio_backend: str) -> None:
    """A ``@safe`` step that raised answers ``Failure(exc)``: the cause keeps the exception."""
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(_parse_output)
        .generate_score(lambda ctx: float(len(ctx.results.preprocess_step_result)))
    )
    assert (await scorer.run(input=1, output='{"a": 1}')).unwrap().score == 1.0
    failure = (await scorer.run(input=1, output="{not json")).failure()
    cause = failure.cause
    assert isinstance(cause, StepFailed)
    assert isinstance(cause.error, json.JSONDecodeError)
    assert cause.error_type == "JSONDecodeError"
    assert cause.message.startswith("Expecting property name")
    assert "preprocess returned Failure(JSONDecodeError: Expecting property name" in str(failure)
    # The failed run's partial result still converts to Mastra JSON.
    assert to_mastra_json(failure.partial)["runId"] == failure.partial.run_id


async def test_stored_rows_show_the_failure_readably(anyio_backend: str) -> None:
    """A stored row of a run ended by ``Failure`` names the step, the error's type and message."""
    scorer = (
        create_scorer(id="parse", description="d")
        .preprocess(_parse_output)
        .analyze(lambda ctx: Failure(Reason("no words")) if not ctx.results.preprocess_step_result
                 else ctx.results.preprocess_step_result)
        .generate_score(lambda ctx: 1.0)
    )
    store = InMemoryScoreStore()
    items = [{"id": "bad", "input": "q", "output": "{oops"}, {"id": "empty", "input": "q",
                                                             "output": "{}"}]
    await run_evals(items, [scorer], store=store, batch_id="b")
    metadata = {row.metadata["failedStep"]: row.metadata for row in store.rows.values()
                if row.status == "failed" and row.metadata is not None}
    assert len(metadata) == len(store.rows) == 2
    bad_error = metadata["preprocess"]["error"]
    assert "preprocess returned Failure(JSONDecodeError: Expecting property name" in bad_error
    empty = metadata["analyze"]
    assert "analyze returned Failure(Reason(text='no words'))" in empty["error"]
    assert empty["completedSteps"] == ["preprocess"]


def test_step_failed_describes_odd_errors_safely() -> None:
    """An error whose repr raises or is huge is still described in one bounded line."""

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert StepFailed(step="analyze", error=Broken()).describe().startswith(
        "analyze returned Failure(<Broken "
    )

    class UnprintableError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    described = StepFailed(step="analyze", error=UnprintableError()).describe()
    assert described.startswith("analyze returned Failure(")
    assert described.endswith("UnprintableError message; str() raised RuntimeError>)")
    long = StepFailed(step="preprocess", error="x" * 100_000).describe()
    assert len(long) < 400
    assert "100,000 chars" in long
    assert StepFailed(step="preprocess", error=None).describe() == (
        "preprocess returned Failure(None)"
    )


# --- the law: for any mix of answers, the outcome is the one the rules give -------------------

KINDS = ("plain", "success", "failure", "not_scorable", "success_not_scorable", "raise", "safe")


@attrs.frozen
class Answer:
    kind: str
    payload: Any
    is_async: bool


def _payloads(step: str) -> st.SearchStrategy[Any]:
    if step == "generate_score":
        return st.one_of(
            sts.finite_scores, st.integers(), st.booleans(), sts.text, st.just(math.inf),
            st.just(10**400),
        )
    if step == "generate_reason":
        return st.one_of(sts.text, st.integers(), st.none())
    return sts.json_values


def _answers(step: str) -> st.SearchStrategy[Answer]:
    return st.builds(Answer, kind=st.sampled_from(KINDS), payload=_payloads(step),
                     is_async=st.booleans())


class BoomError(Exception):
    """Raised by a step told to raise."""


def _step(answer: Answer) -> Callable[[Any], Any]:
    def answer_now() -> Any:
        match answer.kind:
            case "plain":
                return answer.payload
            case "success":
                return Success(answer.payload)
            case "failure":
                return Failure(answer.payload)
            case "not_scorable":
                return not_scorable(str(answer.payload))
            case "success_not_scorable":
                return Success(not_scorable(str(answer.payload)))
            case _:
                raise BoomError(str(answer.payload))

    if answer.kind == "safe":
        payload = answer.payload

        @safe
        def guarded(_ctx: Any) -> Any:
            if isinstance(payload, str) and payload.startswith("a"):
                raise BoomError(payload)
            return payload

        return guarded
    if answer.is_async:
        async def run_async(_ctx: Any) -> Any:
            return answer_now()

        return run_async
    return lambda _ctx: answer_now()


def _valid_score(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _oracle(answers: dict[str, Answer]) -> tuple[Any, ...]:
    """The rules of returns-style steps, written without looking at the implementation."""
    done: list[str] = []
    for step in STEPS:
        answer = answers[step]
        kind, value = answer.kind, answer.payload
        if kind == "safe":
            raised = isinstance(value, str) and value.startswith("a")
            kind = "safe_raised" if raised else "success"
        if kind == "raise":
            return ("failed", step, StepRaised, tuple(done))
        if kind == "failure":
            return ("failed", step, StepFailed, tuple(done), value)
        if kind == "safe_raised":
            return ("failed", step, StepFailed, tuple(done), BoomError)
        if kind in ("not_scorable", "success_not_scorable"):
            return ("not_scorable", step, str(value))
        if step == "generate_score" and not _valid_score(value):
            return ("failed", step, InvalidScore, tuple(done))
        if step == "generate_reason" and not isinstance(value, str):
            return ("failed", step, InvalidStepValue, tuple(done))
        done.append(step)
    return ("scored", answers["generate_score"].payload, answers["generate_reason"].payload)


@given(st.fixed_dictionaries({step: _answers(step) for step in STEPS}))
def test_any_mix_of_answers_ends_as_the_rules_say(answers: dict[str, Answer]) -> None:
    """Plain, Success, Failure, not_scorable, raising and @safe steps in any mix: the oracle."""
    scorer = (
        create_scorer(id="mix", description="d")
        .preprocess(_step(answers["preprocess"]))
        .analyze(_step(answers["analyze"]))
        .generate_score(_step(answers["generate_score"]))
        .generate_reason(_step(answers["generate_reason"]))
    )
    outcome = anyio.run(lambda: scorer.run(input="q", output="a"))
    expected = _oracle(answers)
    match expected:
        case ("scored", score, reason):
            result = outcome.unwrap()
            assert result.score == float(score)
            assert result.reason == reason
        case ("not_scorable", step, why):
            result = outcome.unwrap()
            assert result.score is None
            assert result.not_scorable is not None
            assert (result.not_scorable.step, result.not_scorable.reason) == (step, why)
        case ("failed", step, cause_type, done, *error):
            failure = outcome.failure()
            assert failure.failed_step == step
            assert failure.completed_steps == done
            assert type(failure.cause) is cause_type
            if isinstance(failure.cause, StepFailed) and error[0] is BoomError:
                assert isinstance(failure.cause.error, BoomError)
            elif isinstance(failure.cause, StepFailed):
                assert failure.cause.error is error[0]
    if isinstance(outcome, Failure) or outcome.unwrap().not_scorable is not None:
        # Results of the steps that completed are kept, whatever ended the run.
        kept = outcome.failure().partial if isinstance(outcome, Failure) else outcome.unwrap()
        ran = list(expected[3]) if expected[0] == "failed" else STEPS[: STEPS.index(expected[1])]
        for step, field in (("preprocess", "preprocess_step_result"),
                            ("analyze", "analyze_step_result")):
            if step in ran:
                assert getattr(kept, field) == answers[step].payload
            else:
                assert getattr(kept, field) is None
