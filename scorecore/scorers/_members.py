"""How the built-in composites (a panel, a cascade, a pairwise judgement) type their members,
and what they read of their members' outcomes.

A composite's members may take any run shape: the composite checks at build time that they
all take the same one (or builds them itself), so inside it a member, its run and its result
are typed once, here, rather than ``Any`` at every use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from returns.result import Failure, Result

from scorecore import JudgeExecution, Scorer, ScoreResult, ScorerRun, ScorerRunError, StepName

__all__: list[str] = []  # internal: shared by the panel, the cascade and the pairwise judgement

Member: TypeAlias = Scorer[Any, Any]
"""A member scorer, of the run shape the composite was built for."""

MemberRun: TypeAlias = ScorerRun[Any, Any]
"""A run as the composite and its members receive it."""

MemberResult: TypeAlias = ScoreResult[Any, Any]
"""A member's result, or the composite's own."""

Outcome: TypeAlias = Result[MemberResult, ScorerRunError]
"""What a member's run (or the composite's) gives: its result or why it failed."""

JudgeCalls: TypeAlias = Mapping[StepName, tuple[JudgeExecution, ...]]
"""A run's judge executions per prompt step (``ScoreResult.judge``)."""


def result_of(outcome: Outcome) -> MemberResult:
    """A member's result, or the partial result it failed with (what it read and paid)."""
    if isinstance(outcome, Failure):
        error: ScorerRunError = outcome.failure()
        partial: MemberResult = error.partial
        return partial
    return outcome.unwrap()


def merged_judge(outcomes: Iterable[Outcome]) -> dict[StepName, tuple[JudgeExecution, ...]]:
    """Each step's judge executions from every outcome (a failed run's too), in the order
    given: what the composite's run cost, as the batch's economics counts it."""
    merged: dict[StepName, tuple[JudgeExecution, ...]] = {}
    for outcome in outcomes:
        for step, executions in result_of(outcome).judge.items():
            merged[step] = (*merged.get(step, ()), *executions)
    return merged
