"""Running a scorer once: structure and prepare the run, call each step, settle its answer.

Every helper on this path answers ``Success(value)`` or ``Failure(cause)`` with ``cause`` a
:data:`~scorecore.RunFailureCause` (the one failure encoding of the run path); ``run_pipeline``
turns a failure into ``Failure(ScorerRunError)`` naming the step. Function steps, the hot path,
are called inline: how each is called (sync or async) was decided when the step was added.
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any, Final, cast

import attrs
from returns.result import Failure, Result, Success

from scorecore._causes import (
    InputMismatch,
    InvalidScore,
    InvalidStepValue,
    PrepareRunFailed,
    RunFailureCause,
    StepFailed,
    StepRaised,
    exception_message,
)
from scorecore._config import PromptStep, ResolvedJudge, ScorePromptStep
from scorecore._convert import structure_run_value
from scorecore._errors import ScorerRunError
from scorecore._invoke import execute_judge
from scorecore._judge import StepName
from scorecore._reprs import short_repr
from scorecore._runtime import Runtime
from scorecore._structured import SCORE_SCHEMA
from scorecore._values import (
    CalculateScoreContext,
    JudgeExecution,
    NotScorable,
    ReasonContext,
    ScoreResult,
    ScorerRun,
    StepContext,
    StepResults,
    make_context,
    make_reason_context,
    make_results,
    make_score_result,
)

if TYPE_CHECKING:
    from scorecore._scorer import StepInfo, _Definition

__all__: list[str] = []  # internal: Scorer.run is the entry point

# Answers of these exact types are plain step results: neither awaitable nor a Result nor a
# not-scorable marker, so the checks below are skipped for them (the common case).
_PLAIN: Final[frozenset[type]] = frozenset({float, int, str, bool, dict, list, tuple, type(None)})
_NO_RESULTS: Final[StepResults[None, None]] = StepResults(
    preprocess_step_result=None, analyze_step_result=None
)


def _type_name(value: object) -> str:
    return type(value).__qualname__


def _as_score(value: object) -> float | None:
    """The score as a float, or ``None`` when ``value`` is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        score = float(value)
    # A huge int (10**400) overflows float(): it is not a finite real score, not a crash.
    # Anything else comes from a user's int/float subclass whose __float__ raised.
    except Exception:  # noqa: BLE001 - user code boundary
        return None
    return score if math.isfinite(score) else None


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
    preprocess: Any,
    analyze: Any,
    score: float | None,
    reason: str | None,
    not_scorable: NotScorable | None = None,
) -> ScoreResult[Any, Any]:
    if judged is None:
        return make_score_result(
            run, score, not_scorable, reason, preprocess, None, analyze, None, None, None, {}
        )
    prompts = judged.prompts
    return make_score_result(
        run, score, not_scorable, reason, preprocess, prompts.get("preprocess"), analyze,
        prompts.get("analyze"), prompts.get("generate_score"), prompts.get("generate_reason"),
        judged.executions,
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
        structured = structure_run_value(getattr(run, which), expected, which=which)
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
        prepared: Any = definition.prepare_run(run)
        if inspect.isawaitable(prepared):
            prepared = await prepared
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


async def run_pipeline(  # noqa: PLR0915 - one loop on purpose: a call saved is ~2 % of a run
    definition: _Definition, run: ScorerRun[Any, Any], runtime: Runtime
) -> Result[ScoreResult[Any, Any], ScorerRunError]:
    """Run every step once; never raises for what a step, a judge or the input did."""
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
    cause: RunFailureCause
    for index, info in enumerate(steps):
        name = info.name
        ctx: StepContext[Any, Any, Any, Any] | ReasonContext[Any, Any, Any, Any]
        if name == "generate_reason":
            ctx = make_reason_context(run, results, score or 0.0)
        else:
            ctx = make_context(run, results)
        value: Any
        if info.kind == "function":
            step: Any = info.definition  # a user's function: the boundary of typed code
            try:
                if info.is_coroutine:
                    value = await step(ctx)
                else:
                    value = step(ctx)
                    if type(value) not in _PLAIN and inspect.isawaitable(value):
                        value = await value
            except Exception as exc:  # noqa: BLE001 - a user's step is the boundary
                cause = StepRaised.from_exception(exc)
                return _failed(definition, name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=score,
                    reason=reason))
            if type(value) not in _PLAIN:
                settled = _settle(name, value)
                if isinstance(settled, Failure):
                    return _failed(definition, name, steps[:index], settled.failure(), _result(
                        run, judged, preprocess=preprocess, analyze=analyze, score=score,
                        reason=reason))
                value = settled.unwrap()
        else:
            if judged is None:
                judged = _Judged()
            answered = await _prompt_step(info, ctx, judged, runtime)
            if isinstance(answered, Failure):
                return _failed(definition, name, steps[:index], answered.failure(), _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=score,
                    reason=reason))
            value = answered.unwrap()
        if type(value) is NotScorable:
            return Success(_result(
                run, judged, preprocess=preprocess, analyze=analyze, score=None, reason=None,
                not_scorable=attrs.evolve(value, step=name),
            ))
        if name == "generate_score":
            score = _as_score(value)
            if score is None:
                cause = InvalidScore(value_repr=short_repr(value), type_name=_type_name(value))
                return _failed(definition, name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=None,
                    reason=None))
        elif name == "generate_reason":
            if not isinstance(value, str):
                cause = InvalidStepValue(
                    what="generate_reason", expected="a str", value_repr=short_repr(value),
                    type_name=_type_name(value),
                )
                return _failed(definition, name, steps[:index], cause, _result(
                    run, judged, preprocess=preprocess, analyze=analyze, score=score,
                    reason=None))
            reason = value
        elif name == "preprocess":
            preprocess = value
            results = make_results(value, None)
        else:
            analyze = value
            results = make_results(preprocess, value)
    return Success(_result(
        run, judged, preprocess=preprocess, analyze=analyze, score=score, reason=reason))


async def _prompt_step(
    info: StepInfo, ctx: Any, judged: _Judged, runtime: Runtime
) -> Result[Any, RunFailureCause]:
    # A prompt step: its definition is a prompt object and its judge was resolved when added.
    step = cast("PromptStep[Any] | ScorePromptStep[Any, Any]", info.definition)
    judge = cast("ResolvedJudge", info.judge)
    name = info.name
    try:
        prompt: Any = step.create_prompt(ctx)
        if inspect.isawaitable(prompt):
            prompt = await prompt
    except Exception as exc:  # noqa: BLE001 - user code boundary
        return Failure(StepRaised.from_exception(exc, where="create_prompt"))
    if not isinstance(prompt, str):
        return Failure(InvalidStepValue(
            what="create_prompt", expected="a str", value_repr=short_repr(prompt),
            type_name=_type_name(prompt),
        ))
    judged.prompts[name] = prompt
    schema = step.output_schema
    if isinstance(step, ScorePromptStep) and schema is None:
        schema = SCORE_SCHEMA
    outcome = await execute_judge(
        judge=judge, prompt=prompt, schema=schema if name != "generate_reason" else None,
        step=name, runtime=runtime,
    )
    execution = outcome.execution
    value = outcome.value
    if not outcome.failed and isinstance(step, ScorePromptStep):
        if step.calculate_score is None:
            value = value.get("score") if isinstance(value, dict) else value
        else:
            calc_ctx = CalculateScoreContext(run=ctx.run, results=ctx.results, judge_output=value)
            try:
                value = step.calculate_score(calc_ctx)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:  # noqa: BLE001 - user code boundary
                raised = StepRaised.from_exception(exc, where="calculate_score")
                judged.executions[name] = (
                    attrs.evolve(execution, status="failed", error=raised),
                )
                return Failure(raised)
        execution = attrs.evolve(execution, output=value)
    judged.record(name, execution)
    if execution.error is not None:
        return Failure(execution.error)
    return Success(value)
