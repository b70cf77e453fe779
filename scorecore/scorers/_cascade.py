"""A cascade of scorers: a cheap judge scores every run, a stronger one only the runs the cheap
one was unsure of.

Each tier is a scorer whose result may say how sure it was (``ScoreResult.confidence``:
``ScorePromptStep(score_from="probabilities")`` or ``samples=k``). Tiers run one after another,
never concurrently: the point is not to pay for the next tier.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeVar, final

import attrs
from returns.result import Failure, Success

from scorecore import (
    NotScorable,
    Runtime,
    Scorer,
    ScorerDefinitionError,
    ScoreResult,
    ScorerRunError,
)
from scorecore.composite import CompositeDetails, CompositeScorer, run_members, short_repr
from scorecore.scorers._members import (
    Member,
    MemberResult,
    MemberRun,
    Outcome,
    merged_judge,
    result_of,
)
from scorecore.scorers._panel import _check_ids, _check_shapes

__all__ = ["CascadeResult", "cascade"]

In = TypeVar("In")
Out = TypeVar("Out")

LOW_CONFIDENCE: Final = "low_confidence"


def _floats(values: object) -> tuple[float | None, ...]:
    return tuple(None if v is None else float(v) for v in values)  # type: ignore[attr-defined]


@final
@attrs.frozen(kw_only=True)
class CascadeResult(CompositeDetails):
    """How a cascade reached its result: which tier decided, and what each tier that ran said.

    A cascade's result keeps it: ``result.details_as(CascadeResult)``.

    Attributes:
        tier: the 0-based index of the tier whose result the cascade gave; ``None`` when no
            tier was sure enough (the run is then not scorable, kind ``"low_confidence"``).
        scorer_ids: the id of each tier that ran, in order (the tiers after the deciding one
            never ran).
        scores: each tier's score (``None``: not scorable).
        confidences: each tier's confidence (``None``: the tier does not measure it).
        min_confidence: the confidence a tier needed to decide.
        costs: what each tier that ran cost on this run, in USD: the sum of the ``cost_usd``
            of that tier's own judge executions (a tier escalated past paid its calls too;
            an unpriced execution counts 0). Empty in rows written before it was kept.
    """

    kind: ClassVar[str] = "cascade"

    tier: int | None
    scorer_ids: tuple[str, ...]
    scores: tuple[float | None, ...]
    confidences: tuple[float | None, ...]
    min_confidence: float
    costs: tuple[float, ...] = ()

    @property
    def escalations(self) -> int:
        """How many times the run went on to a stronger tier."""
        return len(self.scorer_ids) - 1

    def to_json(self) -> dict[str, object]:
        """The tiers as a row keeps them (``metadata["cascade"]``)."""
        return {"tier": self.tier, "scorerIds": list(self.scorer_ids),
                "scores": list(self.scores), "confidences": list(self.confidences),
                "minConfidence": self.min_confidence, "costs": list(self.costs)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CascadeResult:
        """The tiers back from :meth:`to_json`'s JSON."""
        tier = data["tier"]
        return cls(tier=None if tier is None else int(tier),
                   scorer_ids=tuple(str(s) for s in data["scorerIds"]),
                   scores=_floats(data["scores"]), confidences=_floats(data["confidences"]),
                   min_confidence=float(data["minConfidence"]),
                   costs=tuple(float(c) for c in data.get("costs") or ()))


def cascade(
    *tiers: Scorer[In, Out],
    min_confidence: float = 0.8,
    id: str | None = None,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
) -> Scorer[In, Out]:
    """Tiers of scorers, cheapest first: a run goes to the next tier only when the one before
    was unsure of it.

    Tier 0 scores every run. A tier decides a run when it scores it with a ``confidence`` of
    at least ``min_confidence`` (or with no confidence at all: a tier that does not measure
    it, such as a panel, is trusted), or when it finds the run not scorable for a reason of
    the run's own (a step's ``not_scorable``). A score below ``min_confidence``, or a judge
    that could not decide (a not-scorable kind such as ``"no_logprobs"``), sends the run on.
    After the last tier the run is not scorable with kind ``"low_confidence"`` (a judge that
    could not decide: a batch counts it against its failure budget). A tier whose run fails
    fails the cascade's run with its cause. The result's ``details`` is a
    :class:`CascadeResult` naming the deciding ``tier`` (0-based); its ``judge`` holds every
    tier's executions (what the run cost), its ``confidence`` the deciding tier's.

    Args:
        tiers: the scorers, cheapest first (at least one), all taking runs of one shape,
            each with its own id.
        min_confidence: the confidence a tier needs to decide, from 0 to 1.
        id: the cascade's id; defaults to ``"cascade(a, b)"`` from the tiers' ids.
        name: a display name (the id by default).
        description: what the cascade measures.
        version: your label for this definition, part of the fingerprint.

    Raises:
        ScorerDefinitionError: no tiers, a tier that is not a scorer, repeated ids, tiers of
            different run shapes, or ``min_confidence`` outside [0, 1].

    >>> from scorecore import JudgeConfig, ScorePromptStep, create_scorer
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> def voter(id: str, votes: list[float]):
    ...     judge = JudgeConfig(model=ScriptedJudge([{"score": v} for v in votes]),
    ...                         instructions="Judge.")
    ...     return create_scorer(id=id, description="d", judge=judge).generate_score(
    ...         ScorePromptStep(description="vote", create_prompt=lambda ctx: "Pass?",
    ...                         samples=len(votes)))
    >>> both = cascade(voter("cheap", [1, 0, 1]), voter("strong", [1, 1, 1]),
    ...                min_confidence=0.8)
    >>> result = both.run_sync(input="q", output="a").unwrap()
    >>> result.score, result.confidence, result.details_as(CascadeResult).tier
    (1.0, 1.0, 1)
    """
    cascade_id: object = id  # the caller's value, whatever the annotation says
    if cascade_id is not None and (not isinstance(cascade_id, str) or not cascade_id.strip()):
        raise _refuse("cascade", "id", f"must be a non-empty str, got {short_repr(cascade_id)}",
                      cascade_id)
    if not tiers:
        raise _refuse(str(cascade_id or "cascade"), "tiers",
                      "must name at least one scorer, got none", tiers)
    for index, tier in enumerate(tiers):
        if not isinstance(tier, Scorer):
            raise _refuse(str(cascade_id or "cascade"), "tiers",
                          f"must all be scorers, got {short_repr(tier)} at {index}", tier)
    members: tuple[Member, ...] = tiers
    cascade_id = str(cascade_id or f"cascade({', '.join(t.id for t in members)})")
    _check_ids(cascade_id, members)
    shape = _check_shapes(cascade_id, members)
    floor: object = min_confidence
    if (isinstance(floor, bool) or not isinstance(floor, int | float)
            or not 0.0 <= floor <= 1.0):
        raise _refuse(cascade_id, "min_confidence",
                      f"must be a number from 0 to 1, got {short_repr(min_confidence)}",
                      min_confidence)
    if description is not None and not isinstance(description, str):
        raise _refuse(cascade_id, "description", f"must be a str, got {short_repr(description)}",
                      description)
    policy = _Policy(cascade_id=cascade_id, tiers=members, min_confidence=float(floor))
    scorer: CompositeScorer[In, Out] = CompositeScorer(
        kind="cascade", id=cascade_id, name=name or cascade_id,
        description=description or f"A cascade of {len(members)} tiers",
        members=members, runner=policy.run, shape=shape, version=version,
        policy={"min_confidence": float(floor), "tiers": len(members)},
    )
    return scorer


def _refuse(cascade_id: str, field: str, message: str, value: object) -> ScorerDefinitionError:
    return ScorerDefinitionError(f"cascade {cascade_id!r}: {field} {message}",
                                 scorer_id=cascade_id, field=field, value=value)


@attrs.frozen(kw_only=True)
class _Policy:
    """How one cascade runs its tiers and settles on a result."""

    cascade_id: str
    tiers: tuple[Member, ...]
    min_confidence: float

    def _unsure(self, result: MemberResult) -> bool:
        """Whether ``result`` sends the run on to the next tier."""
        if result.not_scorable is not None:
            return result.not_scorable.judge_undecided
        confidence = result.confidence
        return confidence is not None and not (
            math.isfinite(confidence) and confidence >= self.min_confidence)

    async def run(self, run: MemberRun, runtime: Runtime) -> Outcome:
        if run.run_id is None:
            run = attrs.evolve(run, run_id=runtime.new_id())
        ids: list[str] = []
        scores: list[float | None] = []
        confidences: list[float | None] = []
        costs: list[float] = []
        # Every tier's outcome: the run's judge executions are theirs, the deciding tier's and
        # those escalated past.
        outcomes: list[Outcome] = []
        result: MemberResult | None = None
        for index, tier in enumerate(self.tiers):
            (outcome,) = await run_members([(tier, run)], runtime)
            outcomes.append(outcome)
            ids.append(tier.id)
            costs.append(_cost(result_of(outcome)))
            if isinstance(outcome, Failure):
                error: ScorerRunError = outcome.failure()
                details = self._details(None, ids, [*scores, None], [*confidences, None],
                                        costs)
                return Failure(ScorerRunError(
                    scorer_id=self.cascade_id, failed_step=error.failed_step,
                    completed_steps=error.completed_steps, cause=error.cause,
                    partial=attrs.evolve(error.partial, judge=merged_judge(outcomes),
                                         details=details)))
            result = outcome.unwrap()
            scores.append(result.score)
            confidences.append(result.confidence)
            if not self._unsure(result):
                return Success(attrs.evolve(
                    result, judge=merged_judge(outcomes),
                    details=self._details(index, ids, scores, confidences, costs)))
        assert result is not None  # noqa: S101 - tiers is never empty (checked when built)
        said = ", ".join(f"{tier_id}: {_said(score, confidence)}"
                         for tier_id, score, confidence in zip(ids, scores, confidences,
                                                               strict=True))
        return Success(ScoreResult(
            run=result.run, judge=merged_judge(outcomes), confidence=confidences[-1],
            details=self._details(None, ids, scores, confidences, costs),
            not_scorable=NotScorable(
                reason=f"no tier reached confidence {self.min_confidence:g} ({said})",
                kind=LOW_CONFIDENCE)))

    def _details(
        self, tier: int | None, ids: list[str], scores: list[float | None],
        confidences: list[float | None], costs: list[float],
    ) -> CascadeResult:
        return CascadeResult(tier=tier, scorer_ids=tuple(ids), scores=tuple(scores),
                             confidences=tuple(confidences), min_confidence=self.min_confidence,
                             costs=tuple(costs))


def _cost(result: MemberResult) -> float:
    """One tier's judge cost on one run, as the batch's economics counts it."""
    return math.fsum(e.cost_usd or 0.0 for executions in result.judge.values()
                     for e in executions)


def _said(score: float | None, confidence: float | None) -> str:
    if score is None:
        return "not scorable"
    return f"{score:g}" + ("" if confidence is None else f" at confidence {confidence:.2f}")
