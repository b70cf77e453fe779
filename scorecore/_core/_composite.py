"""Scorers made of scorers: the kernel's part of a panel of judges and a pairwise judgement.

A :class:`CompositeScorer` is a :class:`~scorecore.Scorer` whose run is a function (its
*runner*) of other scorers' runs. Its members run through the same pipeline with the same
runtime as any scorer, so the judge cache, trials, prices and the budget apply to each member's
judge calls with no special case. Its fingerprint is its kind, id, policy and its members'
fingerprints; its steps are its members' steps (the judges it may ask).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, cast

import anyio
from returns.result import Result

from scorecore._core._causes import InputMismatch
from scorecore._core._declared_types import structure_run_value
from scorecore._core._definition import StepInfo, _Definition
from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._fingerprint import composite_fingerprint
from scorecore._core._pipeline import run_pipeline
from scorecore._core._runtime import Runtime
from scorecore._core._scorer import Scorer
from scorecore._core._values import In, Out, ScoreResult, ScorerRun, ScorerRunError

__all__: list[str] = []  # internal: scorecore.scorers.panel and pairwise are the public face


Runner: TypeAlias = Callable[
    [ScorerRun, Runtime], Awaitable[Result[ScoreResult, ScorerRunError]]
]
"""What a composite scorer's run is: the run as given (``run_id`` set) and the runtime."""

# A scorer's type, input type and output type (type forms: object).
Shape: TypeAlias = tuple[Literal["agent", "trajectory"] | None, object, object]
"""A scorer's run shape: its ``type``, ``input_type`` and ``output_type``."""


class CompositeScorer(Scorer[In, Out, Any, Any]):
    """A scorer whose run combines the runs of its member scorers."""

    __slots__ = ("_fingerprint", "_members", "_shape")

    def __init__(
        self,
        *,
        kind: str,
        id: str,
        name: str,
        description: str,
        members: Sequence[Scorer],
        runner: Runner,
        policy: Mapping[str, object],
        shape: Shape,
        version: str | None = None,
    ) -> None:
        scorer_type: Literal["agent", "trajectory"] | None = shape[0]
        super().__init__(_Definition(
            id=id, name=name, description=description, judge=None, type=scorer_type,
            input_type=None, output_type=None, prepare_run=None, version=version,
            runner=runner,
        ))
        self._members = tuple(members)
        self._shape = shape
        self._fingerprint = composite_fingerprint(
            kind=kind, scorer_id=id, version=version, policy=policy,
            members=[m.fingerprint for m in self._members],
        )

    @property
    def fingerprint(self) -> str:
        """A stable hash of the kind, id, ``version``, policy and every member's fingerprint."""
        return self._fingerprint

    @property
    def steps(self) -> tuple[StepInfo, ...]:
        """Every member's steps, in member order (the judges this scorer may ask)."""
        return tuple(step for member in self._members for step in member.steps)

    @property
    def has_judge(self) -> bool:
        """Whether any member asks a judge."""
        return any(step.kind == "prompt" for step in self.steps)

    def generate_reason(self, step: object, /) -> Scorer[In, Out, Any, Any]:
        """Refused: a scorer made of scorers gives its own reason.

        Raises:
            ScorerDefinitionError: always.
        """
        raise ScorerDefinitionError(
            f"scorer {self.id!r}: .generate_reason() cannot be added to a scorer made of "
            f"scorers (a panel or a pairwise judgement); its reason names its members' verdicts",
            scorer_id=self.id, step="generate_reason", field="step", value=step,
        )

    def __repr__(self) -> str:
        members = ", ".join(m.id for m in self._members)
        return f"{type(self).__name__}(id={self.id!r}, members=[{members}])"


def shape_of(scorer: Scorer) -> Shape:
    """The run shape of ``scorer``: its type, input type and output type."""
    if isinstance(scorer, CompositeScorer):
        return scorer._shape
    definition = scorer._definition
    return (definition.type, definition.input_type, definition.output_type)


async def run_member(
    scorer: Scorer, run: ScorerRun, runtime: Runtime
) -> Result[ScoreResult, ScorerRunError]:
    """Run ``scorer`` on ``run`` with ``runtime``, as ``scorer.run`` would; never raises for
    what a step, a judge or the input did."""
    return await run_pipeline(scorer._definition, run, runtime)


async def run_members(
    runs: Sequence[tuple[Scorer, ScorerRun]], runtime: Runtime
) -> list[Result[ScoreResult, ScorerRunError]]:
    """Each scorer's outcome on its run, all run concurrently, in the order given."""
    outcomes: list[Result[ScoreResult, ScorerRunError] | None] = [None] * len(runs)

    async def one(index: int, scorer: Scorer, run: ScorerRun) -> None:
        outcomes[index] = await run_member(scorer, run, runtime)

    async with anyio.create_task_group() as group:
        for index, (scorer, run) in enumerate(runs):
            group.start_soon(one, index, scorer, run)
    return [cast(Result[ScoreResult, ScorerRunError], o) for o in outcomes]


def structure_value(
    value: object, expected: object, *, which: Literal["input", "output", "baseline_output"]
) -> Result[Any, InputMismatch]:  # Any: a value of the type ``expected`` names
    """``value`` structured into ``expected`` as a run's input or output is, or the
    :class:`~scorecore.InputMismatch` naming every bad field under ``which``."""
    return structure_run_value(value, expected, which=which)
