"""scorecore's exceptions.

The tree is deliberately shallow::

    ScorecoreError                 base of everything scorecore raises
    ├── ScorerDefinitionError      misuse: a wrong option of a scorer, step, judge, processor or
    │                              adapter, naming the field and the value (also ValueError
    │                              and TypeError)
    ├── ScorerRunError             a failed run: the value inside ``Failure`` (defined next to
    │                              the ``PartialResult`` it carries, in ``_values``)
    ├── EvalConfigError            bad ``run_evals`` arguments (also ValueError; scorecore.evals)
    ├── StoreError                 a score store failed (scorecore.evals)
    └── ScorerNotFoundError        a registry lookup found nothing (also KeyError; scorecore.live)

Run-time failures are *values*: :meth:`Scorer.run` returns ``Failure(ScorerRunError)`` and
never raises for anything a step, a judge or the input did. The structured ``cause`` says
what went wrong (see :mod:`scorecore._core._causes`).
"""

from __future__ import annotations

__all__ = ["ScorecoreError", "ScorerDefinitionError"]


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
        value: object = None,
    ) -> None:
        super().__init__(message)
        self.scorer_id = scorer_id
        self.step = step
        self.field = field
        self.value = value


# Tracebacks, reprs and pickles name these by the module users import them from.
for _public in (ScorecoreError, ScorerDefinitionError):
    _public.__module__ = "scorecore"
del _public
