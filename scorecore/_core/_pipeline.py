"""Running a scorer once: structure and prepare the run, call each step, settle its answer.

Every helper on this path answers ``Success(value)`` or ``Failure(cause)`` with ``cause`` a
:data:`~scorecore.RunFailureCause` (the one failure encoding of the run path), except a prompt
step, which answers its value or ``_Stopped(cause)`` (a cached re-run reads thousands of them:
no ``Result`` is built around each); ``run_pipeline`` turns a failure into
``Failure(ScorerRunError)`` naming the step. Function steps, the hot path, are called inline:
how each is called (sync or async) was decided when the step was added.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Final, final

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._causes import (
    ExampleEcho,
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    PrepareRunFailed,
    RunFailureCause,
    StepFailed,
    StepRaised,
    exception_message,
)
from scorecore._core._confident import confident_score
from scorecore._core._config import PromptStep, ResolvedJudge, ScorePromptStep
from scorecore._core._declared_types import structure_run_value
from scorecore._core._definition import _ASYNC, _PROMPT, _SYNC, StepInfo, _Definition
from scorecore._core._invoke import execute_judge, with_output
from scorecore._core._judge import StepName
from scorecore._core._output_schema import CompiledSchema
from scorecore._core._reprs import short_repr
from scorecore._core._runtime import Runtime
from scorecore._core._slot_init import fast_init, new_success
from scorecore._core._sync import maybe_await
from scorecore._core._trajectory import Trajectory, to_trajectory
from scorecore._core._values import (
    CalculateScoreContext,
    JudgeExecution,
    NotScorable,
    ReasonContext,
    ScoreResult,
    ScorerRun,
    ScorerRunError,
    StepContext,
    StepResults,
)
from scorecore._core._verdicts import Confident
from scorecore.validators import is_number

__all__: list[str] = []  # internal: Scorer.run is the entry point

# Answers of these exact types are plain step results: neither awaitable nor a Result nor a
# not-scorable marker, so the checks below are skipped for them (the common case).
_PLAIN: Final[frozenset[type]] = frozenset({float, int, str, bool, dict, list, tuple, type(None)})
_NO_RESULTS: Final[StepResults[None, None]] = StepResults(
    preprocess_step_result=None, analyze_step_result=None
)


# Fast constructors for the run path, which builds about eight of these values per run: each
# is written from its class's fields (fast_init), takes every field positionally and sets the
# slots directly, in half the time ``__init__`` takes (tests/core/test_fast_values.py checks
# each builds what ``__init__`` builds).
make_run: Final = fast_init(ScorerRun)
"""``ScorerRun(...)`` for ``Scorer.run`` (every field given, positionally)."""
make_score_result: Final = fast_init(ScoreResult)
"""``ScoreResult`` from every field's value, in field order, for the run path."""
_new_results: Final = fast_init(StepResults)
_new_context: Final = fast_init(StepContext)
_new_reason_context: Final = fast_init(ReasonContext)


def _type_name(value: object) -> str:
    return type(value).__qualname__


def _as_score(value: object) -> float | None:
    """The score as a float, or ``None`` when ``value`` is not a finite real number."""
    if not is_number(value):
        return None
    try:
        score = float(value)
    # A huge int (10**400) overflows float(): it is not a finite real score, not a crash.
    # Anything else comes from a user's int/float subclass whose __float__ raised.
    except Exception:  # noqa: BLE001 - user code boundary
        return None
    return score if math.isfinite(score) else None


@final
class _Stopped:
    """Why a prompt step gave no value (the run loop's own marker: no step's value is one)."""

    __slots__ = ("cause",)

    def __init__(self, cause: RunFailureCause) -> None:
        self.cause = cause


class _Judged:
    """The prompts and judge executions of one run's prompt steps (absent without any)."""

    __slots__ = ("executions", "prompts")

    def __init__(self) -> None:
        self.prompts: dict[StepName, str] = {}
        self.executions: dict[StepName, tuple[JudgeExecution, ...]] = {}

    def record(self, step: StepName, execution: JudgeExecution) -> None:
        self.executions[step] = (*self.executions.get(step, ()), execution)


def _result(
    run: ScorerRun[Any, Any],
    judged: _Judged | None,
    *,
    # The steps' results: whatever the user's functions or prompt steps returned (P and A).
    preprocess: Any,  # noqa: ANN401
    analyze: Any,  # noqa: ANN401
    score: float | None,
    reason: str | None,
    not_scorable: NotScorable | None = None,
    confidence: float | None = None,
) -> ScoreResult[Any, Any]:
    if judged is None:
        return make_score_result(
            run, score, not_scorable, reason, preprocess, None, analyze, None, None, None, {},
            None, confidence,
        )
    prompts = judged.prompts
    return make_score_result(
        run, score, not_scorable, reason, preprocess, prompts.get("preprocess"), analyze,
        prompts.get("analyze"), prompts.get("generate_score"), prompts.get("generate_reason"),
        judged.executions, None, confidence,
    )


def _failed(
    definition: _Definition,
    step: str,
    completed: tuple[StepInfo, ...],
    cause: RunFailureCause,
    partial: ScoreResult[Any, Any],
) -> Failure[ScorerRunError]:
    return Failure(ScorerRunError(
        scorer_id=definition.id,
        failed_step=step,
        completed_steps=tuple(info.name for info in completed),
        cause=cause,
        partial=partial,
    ))


def _structure(
    definition: _Definition, run: ScorerRun[Any, Any]
) -> Result[ScorerRun[Any, Any], RunFailureCause]:
    mismatches: list[InputMismatch] = []
    for which, expected in (("input", definition.input_type), ("output", definition.output_type)):
        if expected is None:
            continue
        # A Trajectory output (type="trajectory") may be given as the agent's messages.
        structured = (
            to_trajectory(run.output) if which == "output" and expected is Trajectory
            else structure_run_value(getattr(run, which), expected, which=which)
        )
        if isinstance(structured, Success):
            run = attrs.evolve(run, **{which: structured.unwrap()})
        else:
            mismatches.append(structured.failure())
    if mismatches:
        # Report every bad field of both the input and the output at once.
        errors = tuple(e for m in mismatches for e in m.errors)
        return Failure(attrs.evolve(mismatches[0], errors=errors))
    return Success(run)


async def _prepare(
    definition: _Definition, run: ScorerRun[Any, Any]
) -> Result[ScorerRun[Any, Any], RunFailureCause]:
    if definition.prepare_run is None:
        return Success(run)
    try:
        prepared: object = await maybe_await(definition.prepare_run(run))
    except Exception as exc:  # noqa: BLE001 - user code boundary
        return Failure(PrepareRunFailed(
            exception_type=_type_name(exc), message=exception_message(exc),
            traceback=StepRaised.from_exception(exc).traceback, exception=exc,
        ))
    if not isinstance(prepared, ScorerRun):
        return Failure(PrepareRunFailed(
            exception_type="TypeError",
            message=f"prepare_run must return a ScorerRun, got {short_repr(prepared)}",
        ))
    return Success(prepared)


def _settle(step: StepName, value: object) -> Result[object, RunFailureCause]:
    """A step's answer that is not a plain value: ``Success(x)`` is ``x``, ``Failure(e)`` ends."""
    if isinstance(value, Success):
        return Success(value.unwrap())
    if isinstance(value, Failure):
        return Failure(StepFailed(step=step, error=value.failure()))
    return Success(value)


async def _start(
    definition: _Definition, run: ScorerRun[Any, Any]
) -> Result[ScorerRun[Any, Any], ScorerRunError]:
    """The run as the steps see it: structured into the declared types, then prepared."""
    step = "input"
    started = _structure(definition, run)
    if isinstance(started, Success):
        step = "prepare_run"
        started = await _prepare(definition, started.unwrap())
    if isinstance(started, Failure):
        return _failed(definition, step, (), started.failure(), _result(
            run, None, preprocess=None, analyze=None, score=None, reason=None))
    return Success(started.unwrap())


# How a step is called, decided once when it is added (see plan_step).
async def run_pipeline(  # noqa: PLR0915 - one loop on purpose: a call saved is ~2 % of a run
    definition: _Definition, run: ScorerRun[Any, Any], runtime: Runtime
) -> Result[ScoreResult[Any, Any], ScorerRunError]:
    """Run every step once; never raises for what a step, a judge or the input did."""
    if definition.runner is not None:  # a scorer made of scorers (a panel, a pairwise judge)
        return await definition.runner(run, runtime)
    if (definition.input_type is not None or definition.output_type is not None
            or definition.prepare_run is not None):
        started = await _start(definition, run)
        if isinstance(started, Failure):
            return started
        run = started.unwrap()
    if run.run_id is None:
        run = attrs.evolve(run, run_id=runtime.new_id())

    steps = definition.steps
    preprocess: Any = None
    analyze: Any = None
    score: float | None = None
    reason: str | None = None
    results: StepResults[Any, Any] = _NO_RESULTS
    judged: _Judged | None = None
    confidence: float | None = None
    cause: RunFailureCause
    ctx: Any
    value: Any
    for index, (slot, mode, call, info) in enumerate(definition.plan):
        if slot == 3:  # generate_reason
            ctx = _new_reason_context(run, results, 0.0 if score is None else score)
        else:
            ctx = _new_context(run, results)
        if mode == _SYNC:
            try:
                value = call(ctx)
                if type(value) not in _PLAIN and inspect.isawaitable(value):
                    value = await value
            except Exception as exc:  # noqa: BLE001 - a user's step is the boundary
                cause = StepRaised.from_exception(exc)
                return _failed(definition, info.name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=score,
                    reason=reason))
        elif mode == _ASYNC:
            try:
                value = await call(ctx)
            except Exception as exc:  # noqa: BLE001 - a user's step is the boundary
                cause = StepRaised.from_exception(exc)
                return _failed(definition, info.name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=score,
                    reason=reason))
        else:
            if judged is None:
                judged = _Judged()
            value = await _prompt_step(info, call, ctx, judged, runtime)
            if type(value) is _Stopped:
                return _failed(definition, info.name, steps[:index], value.cause,
                               _result(run, judged, preprocess=preprocess, analyze=analyze,
                                       score=score, reason=reason))
        if type(value) not in _PLAIN:
            if mode != _PROMPT:
                settled = _settle(info.name, value)
                if isinstance(settled, Failure):
                    return _failed(definition, info.name, steps[:index], settled.failure(),
                                   _result(run, judged, preprocess=preprocess, analyze=analyze,
                                           score=score, reason=reason))
                value = settled.unwrap()
            if type(value) is Confident:  # a prompt step that measured how sure it was
                confidence, value = value.confidence, value.score
            elif type(value) is NotScorable:
                return Success(_result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=None,
                    reason=None, not_scorable=attrs.evolve(value, step=info.name),
                ))
        if slot == 0:
            preprocess = value
            results = _new_results(value, None)
        elif slot == 1:
            analyze = value
            results = _new_results(preprocess, value)
        elif slot == 2:  # generate_score
            score = value if type(value) is float and math.isfinite(value) else _as_score(value)
            if score is None:
                cause = InvalidScore(value_repr=short_repr(value), type_name=_type_name(value))
                return _failed(definition, info.name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=None,
                    reason=None))
        elif isinstance(value, str):
            reason = value
        else:
            cause = InvalidStepValue(
                what="generate_reason", expected="a str", value_repr=short_repr(value),
                type_name=_type_name(value),
            )
            return _failed(definition, info.name, steps[:index], cause, _result(
                run, judged, preprocess=preprocess, analyze=analyze, score=score, reason=None))
    if judged is None:  # the common case, without the keyword call of _result
        return new_success(make_score_result(
            run, score, None, reason, preprocess, None, analyze, None, None, None, {}, None,
            None))
    return new_success(_result(
        run, judged, preprocess=preprocess, analyze=analyze, score=score, reason=reason,
        confidence=confidence))


async def _prompt_step(
    info: StepInfo,
    schema: CompiledSchema | None,
    ctx: Any,  # noqa: ANN401 - the step's context, generic in the run's types
    judged: _Judged,
    runtime: Runtime,
) -> Any:  # noqa: ANN401 - the step's value (its output type), or _Stopped
    # A prompt step: its definition is a prompt object and its judge was resolved when added
    # (typing.cast is a call on every step: the annotations say it instead).
    step: PromptStep[Any] | ScorePromptStep[Any, Any] = info.definition  # type: ignore[assignment]
    judge: ResolvedJudge = info.judge  # type: ignore[assignment]
    name = info.name
    try:
        prompt: object = step.create_prompt(ctx)
        # A str (the common answer) is never awaitable: the check is skipped for it.
        if type(prompt) is not str and inspect.isawaitable(prompt):
            prompt = await prompt
    except Exception as exc:  # noqa: BLE001 - user code boundary
        return _Stopped(StepRaised.from_exception(exc, where="create_prompt"))
    if not isinstance(prompt, str):
        return _Stopped(InvalidStepValue(
            what="create_prompt", expected="a str", value_repr=short_repr(prompt),
            type_name=_type_name(prompt),
        ))
    judged.prompts[name] = prompt
    if type(step) is ScorePromptStep and (step.samples != 1 or step.score_from != "reply"):
        scored = await confident_score(step, judge=judge, prompt=prompt, schema=schema, ctx=ctx,
                                       judged=judged, runtime=runtime)
        return _Stopped(scored.failure()) if isinstance(scored, Failure) else scored.unwrap()
    # A score step without calculate_score takes the reply's score: execute_judge picks it,
    # so the execution is built once with it as its output.
    calculate = step.calculate_score if isinstance(step, ScorePromptStep) else None
    outcome = await execute_judge(
        judge=judge, prompt=prompt, schema=schema,
        step=name, runtime=runtime, example=step.example,
        score_of_reply=calculate is None and isinstance(step, ScorePromptStep),
    )
    execution = outcome.execution
    value = outcome.value
    if calculate is not None and not outcome.failed:
        calc_ctx = CalculateScoreContext(run=ctx.run, results=ctx.results, judge_output=value)
        try:
            value = await maybe_await(calculate(calc_ctx))
        except Exception as exc:  # noqa: BLE001 - user code boundary
            raised = StepRaised.from_exception(exc, where="calculate_score")
            judged.executions[name] = (
                attrs.evolve(execution, status="failed", error=raised),
            )
            return _Stopped(raised)
        execution = with_output(execution, value)
    judged.record(name, execution)
    error = execution.error
    if isinstance(error, ExampleEcho):
        # The judge could not decide the run (it answered about the example, twice): the run
        # is not scorable, and the kind says the judge, not the item, is why.
        return NotScorable(reason=error.describe(), kind=error.kind)
    if error is not None:
        return _Stopped(error)
    return value
