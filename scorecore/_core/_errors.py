"""scorecore's exceptions.

The tree is deliberately shallow::

    ScorecoreError                 base of everything scorecore raises
    ├── ScorerDefinitionError      misuse: a wrong option of a scorer, step, judge, processor or
    │                              adapter, naming the field and the value (also ValueError
    │                              and TypeError)
    ├── ScorerRunError             a failed run: the value inside ``Failure``
    ├── EvalConfigError            bad ``run_evals`` arguments (also ValueError; scorecore.evals)
    ├── StoreError                 a score store failed (scorecore.evals)
    └── ScorerNotFoundError        a registry lookup found nothing (also KeyError; scorecore.live)

Run-time failures are *values*: :meth:`Scorer.run` returns ``Failure(ScorerRunError)`` and
never raises for anything a step, a judge or the input did. The structured ``cause`` says
what went wrong (see :mod:`scorecore._core._causes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scorecore._core._causes import RunFailureCause
    from scorecore._core._values import PartialResult, StepName

__all__ = ["ScorecoreError", "ScorerDefinitionError", "ScorerRunError"]


class ScorecoreError(Exception):
    """Base class of every exception scorecore raises."""


class ScorerDefinitionError(ScorecoreError, ValueError, TypeError):
    """A scorer, or an option it is built from, was defined wrongly (raised when built).

    It is also a ``ValueError`` and a ``TypeError``, the errors Python raises for such misuse.

    Attributes:
        scorer_id: the scorer being built, when known.
        step: the step being added, when the problem is about a step.
        field: the offending option, when one is to blame.
        value: the offending value, when one is to blame.
    """

    def __init__(
        self,
        message: str,
        *,
        scorer_id: str | None = None,
        step: str | None = None,
        field: str | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message)
        self.scorer_id = scorer_id
        self.step = step
        self.field = field
        self.value = value


class ScorerRunError(ScorecoreError):
    """A scorer run failed. Returned as ``Failure(ScorerRunError)``; ``raise result.failure()``.

    ``result.unwrap()`` raises returns' ``UnwrapFailedError`` chained from this error, so the
    traceback shows this error's message first.

    Attributes:
        scorer_id: the scorer that failed.
        failed_step: the step that failed (``"prepare_run"`` or ``"input"`` before any step).
        completed_steps: the steps that finished before the failure, in order.
        cause: a structured value describing the failure.
        partial: every result gathered before the failure, including failed judge executions.
    """

    def __init__(
        self,
        *,
        scorer_id: str,
        failed_step: StepName | str,
        completed_steps: tuple[StepName, ...],
        cause: RunFailureCause,
        partial: PartialResult,
    ) -> None:
        self.scorer_id = scorer_id
        self.failed_step = failed_step
        self.completed_steps = completed_steps
        self.cause = cause
        self.partial = partial
        super().__init__(self._message())

    def _message(self) -> str:
        done = ", ".join(self.completed_steps) or "none"
        return (
            f"scorer {self.scorer_id!r} failed at step {self.failed_step!r} "
            f"(completed: {done}): {self.cause.describe()}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions with keyword-only constructors need help to pickle (e.g. across processes).
        return (_rebuild_run_error, (self.scorer_id, self.failed_step, self.completed_steps,
                                     self.cause, self.partial))


def _rebuild_run_error(
    scorer_id: str,
    failed_step: str,
    completed_steps: tuple[StepName, ...],
    cause: RunFailureCause,
    partial: PartialResult,
) -> ScorerRunError:
    return ScorerRunError(scorer_id=scorer_id, failed_step=failed_step,
                          completed_steps=completed_steps, cause=cause, partial=partial)


# Tracebacks, reprs and pickles name these by the module users import them from.
for _public in (ScorecoreError, ScorerDefinitionError, ScorerRunError):
    _public.__module__ = "scorecore"
del _public
