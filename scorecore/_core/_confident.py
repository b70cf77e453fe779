"""A score prompt step that measures how sure its judge was: from the verdict probabilities,
or from the agreement of several samples.

Only steps with ``score_from="probabilities"`` (falling back to samples when asked to) or
``samples > 1`` come here; every other prompt step keeps the pipeline's own path (and pays
nothing for this one).
"""

from __future__ import annotations

import math
from typing import Final, Protocol, TypeAlias

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._causes import ExampleEcho, InvalidScore, RunFailureCause, StepRaised
from scorecore._core._config import ResolvedJudge, ScorePromptStep
from scorecore._core._invoke import JudgeOutcome, execute_judge, with_output
from scorecore._core._judge import StepName
from scorecore._core._output_schema import CompiledSchema
from scorecore._core._reprs import short_repr
from scorecore._core._runtime import Runtime
from scorecore._core._sync import maybe_await
from scorecore._core._values import (
    CalculateScoreContext,
    JudgeExecution,
    NotScorable,
    StepContext,
)
from scorecore._core._verdicts import NO_LOGPROBS as NO_LOGPROBS_REASON
from scorecore._core._verdicts import (
    Confident,
    agreement,
    read_verdicts,
    top_logprobs_for,
    weigh,
)
from scorecore.validators import is_number

__all__: list[str] = []  # internal: the pipeline's prompt step calls it

_STEP: Final[StepName] = "generate_score"
NO_LOGPROBS: Final = "no_logprobs"


def _finite(value: object) -> float | None:
    if not is_number(value):
        return None
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):  # a huge int, or a user's odd subclass
        return None
    return number if math.isfinite(number) else None


class Recorder(Protocol):
    """Where the step's judge executions are recorded (the pipeline's record of the run)."""

    def record(self, step: StepName, execution: JudgeExecution, /) -> None: ...


# The type parameters' defaults: the step and its context as the pipeline holds them.
_Step: TypeAlias = ScorePromptStep
_Ctx: TypeAlias = StepContext


async def confident_score(
    step: _Step, *, judge: ResolvedJudge, prompt: str, schema: CompiledSchema | None,
    ctx: _Ctx, judged: Recorder, runtime: Runtime,
) -> Result[Confident | NotScorable, RunFailureCause]:
    """Ask the judge as the step says and return the score with its confidence, a
    not-scorable marker, or why the step failed. Never raises for what the judge did."""
    if step.score_from == "probabilities":
        return await _from_probabilities(step, judge=judge, prompt=prompt, schema=schema,
                                         judged=judged, runtime=runtime)
    return await _from_samples(step, judge=judge, prompt=prompt, schema=schema, ctx=ctx,
                               judged=judged, runtime=runtime)


def _settled(outcome: JudgeOutcome, judged: Recorder) -> NotScorable | RunFailureCause | None:
    """Record the execution; what ends the step when it did not answer."""
    error = outcome.execution.error
    if error is None:
        return None
    judged.record(_STEP, outcome.execution)
    if isinstance(error, ExampleEcho):
        return NotScorable(reason=error.describe(), kind=error.kind)
    return error


async def _from_probabilities(
    step: _Step, *, judge: ResolvedJudge, prompt: str, schema: CompiledSchema | None,
    judged: Recorder, runtime: Runtime,
) -> Result[Confident | NotScorable, RunFailureCause]:
    verdicts = step.verdicts or {}
    outcome = await execute_judge(
        judge=judge, prompt=prompt, schema=schema, step=_STEP, runtime=runtime,
        example=step.example, top_logprobs=top_logprobs_for(verdicts),
    )
    stopped = _settled(outcome, judged)
    if isinstance(stopped, NotScorable):
        return Success(stopped)
    if stopped is not None:
        return Failure(stopped)
    weighed = weigh(outcome.logprobs, verdicts, key=step.verdict_key)
    if weighed == NO_LOGPROBS_REASON and step.fallback_samples is not None:
        # Asked for: a judge without log-probabilities is sampled instead, its first reply
        # the first sample.
        return await _from_samples(step, judge=judge, prompt=prompt, schema=schema, ctx=None,
                                   judged=judged, runtime=runtime, first=outcome)
    if not isinstance(weighed, Confident):
        # Never a silent default: the run is not scorable, and the kind says the judge is why.
        judged.record(_STEP, outcome.execution)
        return Success(NotScorable(
            reason=f"cannot score from probabilities: {weighed} ({judge.model.provider} "
                   f"{judge.model.model_id!r})", kind=NO_LOGPROBS))
    judged.record(_STEP, with_output(outcome.execution, weighed.score))
    return Success(weighed)


async def _from_samples(
    step: _Step, *, judge: ResolvedJudge, prompt: str, schema: CompiledSchema | None,
    ctx: _Ctx | None, judged: Recorder, runtime: Runtime, first: JudgeOutcome | None = None,
) -> Result[Confident | NotScorable, RunFailureCause]:
    """``step.samples`` samples, or (``first`` given: the probabilities' reply) the
    ``fallback_samples`` of a judge without log-probabilities, each scored by its verdict."""
    settings = judge.model_settings
    base = 0 if settings.seed is None else settings.seed
    scores: list[float] = []
    count = step.samples if first is None else step.fallback_samples or 1
    for sample in range(count):
        if sample == 0 and first is not None:
            outcome = first
        else:
            # Each sample its own seed: its own reply, cache entry and budget share.
            seeded = attrs.evolve(judge,
                                  model_settings=attrs.evolve(settings, seed=base + sample))
            outcome = await execute_judge(
                judge=seeded, prompt=prompt, schema=schema, step=_STEP, runtime=runtime,
                example=step.example,
            )
        stopped = _settled(outcome, judged)
        if isinstance(stopped, NotScorable):
            return Success(stopped)
        if stopped is not None:
            return Failure(stopped)
        value = outcome.value
        if first is not None:
            read = read_verdicts(value, outcome.execution.raw_output or "", step.verdicts or {},
                                 step.verdict_key)
            if isinstance(read, str):
                judged.record(_STEP, outcome.execution)
                return Success(NotScorable(
                    reason=f"cannot score sample {sample + 1} of {count}: {read}",
                    kind=NO_LOGPROBS))
            value = read
        elif step.calculate_score is None or ctx is None:
            value = value.get("score") if isinstance(value, dict) else value
        else:
            calc_ctx = CalculateScoreContext(run=ctx.run, results=ctx.results,
                                             judge_output=value)
            try:
                value = await maybe_await(step.calculate_score(calc_ctx))
            except Exception as exc:  # noqa: BLE001 - user code boundary
                raised = StepRaised.from_exception(exc, where="calculate_score")
                judged.record(_STEP, attrs.evolve(outcome.execution, status="failed",
                                                  error=raised))
                return Failure(raised)
        judged.record(_STEP, with_output(outcome.execution, value))
        if isinstance(value, NotScorable):  # calculate_score's verdict on this sample's reply
            return Success(value)
        score = _finite(value)
        if score is None:
            return Failure(InvalidScore(value_repr=short_repr(value),
                                        type_name=type(value).__qualname__))
        scores.append(score)
    return Success(Confident(math.fsum(scores) / len(scores), agreement(scores)))
