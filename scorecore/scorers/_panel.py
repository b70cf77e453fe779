"""A panel of judges (a jury): several scorers on one run, an aggregate, and their agreement.

The members run concurrently, each through its own pipeline with the run's runtime (so the
judge cache, trials, prices and budget see each member's judge calls as any other). A member
that fails gives its seat to the next replacement; replacements run in rounds, seats in order,
so which replacement took which seat does not depend on timing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal, TypeAlias, TypedDict, TypeVar, cast

import attrs
from returns.result import Failure, Success

from scorecore import (
    BudgetExhausted,
    InvalidScore,
    NotScorable,
    RunFailureCause,
    Runtime,
    Scorer,
    ScorerDefinitionError,
    ScoreResult,
    ScorerRunError,
    StepRaised,
)
from scorecore.composite import (
    CompositeScorer,
    MemberFailure,
    PanelFailed,
    Shape,
    run_members,
    shape_of,
    short_repr,
)
from scorecore.scorers._details import PanelMember, PanelResult
from scorecore.scorers._members import (
    JudgeCalls,
    Member,
    MemberRun,
    Outcome,
    merged_judge,
    result_of,
)

__all__ = ["Aggregate", "OnTie", "panel"]

In = TypeVar("In")
Out = TypeVar("Out")

Aggregate: TypeAlias = Literal["median", "mean", "min", "max", "majority"]
"""How a panel combines its members' scores (or give a function of the scores)."""

OnTie: TypeAlias = Literal["fail", "pass", "not_scorable"]
"""What a tied majority vote gives: ``"fail"`` (0.0, fail-closed), ``"pass"`` (1.0), or
``"not_scorable"``."""

_AGGREGATES: Final[Mapping[str, Callable[[Sequence[float]], float]]] = {
    "median": statistics.median,
    "mean": lambda scores: math.fsum(scores) / len(scores),
    "min": min,
    "max": max,
}
_ON_TIE: Final = ("fail", "pass", "not_scorable")


def _refuse(panel_id: str, field: str, message: str, value: object) -> ScorerDefinitionError:
    return ScorerDefinitionError(f"panel {panel_id!r}: {field} {message}", scorer_id=panel_id,
                                 field=field, value=value)


def _is_number(value: object) -> bool:
    return (not isinstance(value, bool) and isinstance(value, int | float)
            and math.isfinite(value))


def _scorers(panel_id: str, field: str, value: object) -> tuple[Member, ...]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise _refuse(panel_id, field, f"must be a list of scorers, got {short_repr(value)}",
                      value)
    for index, scorer in enumerate(value):
        if not isinstance(scorer, Scorer):
            raise _refuse(panel_id, field, f"[{index}] must be a Scorer (with a generate_score "
                          f"step), got {short_repr(scorer)}", scorer)
    return tuple(value)


def _check_ids(panel_id: str, scorers: Sequence[Member]) -> None:
    seen: set[str] = set()
    for scorer in scorers:
        if scorer.id in seen:
            raise _refuse(panel_id, "members", f"repeat the scorer id {scorer.id!r}: every member "
                          f"and replacement needs its own id (built-in scorers take id=...)",
                          scorer.id)
        seen.add(scorer.id)


def _check_shapes(panel_id: str, scorers: Sequence[Member]) -> Shape:
    shape = shape_of(scorers[0])
    for scorer in scorers[1:]:
        other = shape_of(scorer)
        if other != shape:
            raise _refuse(
                panel_id, "members",
                f"must all take runs of one shape: {scorers[0].id!r} takes "
                f"(type, input, output) = {_shape_text(shape)}, {scorer.id!r} takes "
                f"{_shape_text(other)}", scorer.id)
    return shape


def _shape_text(shape: Shape) -> str:
    return "(" + ", ".join(getattr(part, "__name__", None) or repr(part) for part in shape) + ")"


def _aggregate_name(aggregate: object) -> str:
    if isinstance(aggregate, str):
        return aggregate
    return getattr(aggregate, "__qualname__", None) or type(aggregate).__qualname__


def panel(
    members: Sequence[Scorer[In, Out]],
    *,
    aggregate: Aggregate | Callable[[Sequence[float]], float] = "median",
    threshold: float | None = None,
    min_successful: int | None = None,
    replacements: Sequence[Scorer[In, Out]] = (),
    on_tie: OnTie = "fail",
    id: str | None = None,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
) -> Scorer[In, Out]:
    """A panel of judges: the members score each run concurrently and their scores are combined.

    Typically the same scorer factory with different judges (each with its own ``id=``), or
    different prompts on one judge. The result's ``panel`` keeps every member's score, reason
    and judge executions, the aggregate, the spread and whether the members agreed.

    Args:
        members: the scorers on the panel (at least one), all taking runs of one shape.
        aggregate: ``"median"`` (default), ``"mean"``, ``"min"``, ``"max"``, ``"majority"``
            (each member votes pass when its score is at least ``threshold``; the score is 1.0
            when most pass, 0.0 when most fail), or a function of the counted scores (in seat
            order) returning a finite number.
        threshold: the pass mark votes are taken at; required for ``"majority"``. With any
            aggregate it makes ``agreed`` mean "all voted alike".
        min_successful: how many members must score; fewer is a failed run whose cause
            (:class:`~scorecore.scorers.PanelFailed`) names each member and why it failed.
            Defaults to every member. When nobody failed but too few could score (the others
            were not scorable), the run is not scorable.
        replacements: scorers that take the seat of a member that failed, in order.
        on_tie: what a tied majority vote gives: ``"fail"`` (0.0, the default: fail-closed),
            ``"pass"`` (1.0) or ``"not_scorable"`` (kind ``"panel_tie"``: the judges could
            not decide, so a batch counts it against its failure budget); the result's
            ``panel.tie`` says it was a tie. Only for ``"majority"``.
        id: the panel's id; defaults to ``"panel(a, b, c)"`` from the members' ids.
        name: a display name (the id by default).
        description: what the panel measures.
        version: your label for this definition, part of the fingerprint.

    Raises:
        ScorerDefinitionError: no members, a member that is not a scorer, repeated ids,
            members of different run shapes, an unknown aggregate, ``"majority"`` without a
            threshold, a threshold that is not a finite number, ``min_successful`` out of
            1..len(members), or an unknown ``on_tie``; the message names the field and value.

    >>> from scorecore import create_scorer
    >>> def judge(id: str, score: float):
    ...     return create_scorer(id=id, description="d").generate_score(lambda ctx: score)
    >>> jury = panel([judge("a", 0.9), judge("b", 0.7), judge("c", 0.2)])
    >>> result = jury.run_sync(input="q", output="a").unwrap()
    >>> members = result.details_as(PanelResult)  # every member's verdict and the spread
    >>> result.score, members.agreed, round(members.std_dev, 3)
    (0.7, False, 0.294)
    """
    panel_id = id
    if panel_id is not None and (not isinstance(cast(object, panel_id), str)
                                 or not panel_id.strip()):
        raise _refuse("panel", "id", f"must be a non-empty str, got {short_repr(panel_id)}",
                      panel_id)
    seats = _scorers(panel_id or "panel", "members", members)
    if not seats:
        raise _refuse(panel_id or "panel", "members", "must name at least one scorer, got none",
                      members)
    panel_id = panel_id or f"panel({', '.join(s.id for s in seats)})"
    spares = _scorers(panel_id, "replacements", replacements)
    _check_ids(panel_id, (*seats, *spares))
    shape = _check_shapes(panel_id, (*seats, *spares))
    if not callable(aggregate) and aggregate not in (*_AGGREGATES, "majority"):
        raise _refuse(panel_id, "aggregate", "must be 'median', 'mean', 'min', 'max', "
                      f"'majority' or a function of the scores, got {short_repr(aggregate)}",
                      aggregate)
    if threshold is not None and not _is_number(threshold):
        raise _refuse(panel_id, "threshold", f"must be a finite number or None, got "
                      f"{short_repr(threshold)}", threshold)
    if aggregate == "majority" and threshold is None:
        raise _refuse(panel_id, "threshold", "is required with aggregate='majority' (members "
                      "vote pass when their score is at least the threshold), got None", None)
    floor: object = len(seats) if min_successful is None else min_successful
    if isinstance(floor, bool) or not isinstance(floor, int) or not 1 <= floor <= len(seats):
        raise _refuse(panel_id, "min_successful", f"must be an int from 1 to {len(seats)} (the "
                      f"number of members), got {short_repr(min_successful)}", min_successful)
    if on_tie not in _ON_TIE:
        raise _refuse(panel_id, "on_tie", f"must be 'fail', 'pass' or 'not_scorable', got "
                      f"{short_repr(on_tie)}", on_tie)
    if on_tie != "fail" and aggregate != "majority":
        raise _refuse(panel_id, "on_tie", f"applies to aggregate='majority' only (got "
                      f"aggregate={_aggregate_name(aggregate)!r}), got {on_tie!r}", on_tie)
    if description is not None and not isinstance(description, str):
        raise _refuse(panel_id, "description", f"must be a str, got {short_repr(description)}",
                      description)
    policy = _Policy(
        panel_id=panel_id, seats=seats, spares=spares,
        aggregate=aggregate if callable(aggregate) else str(aggregate),
        threshold=None if threshold is None else float(threshold), min_successful=floor,
        on_tie=on_tie,
    )
    scorer: CompositeScorer[In, Out] = CompositeScorer(
        kind="panel", id=panel_id, name=name or panel_id,
        description=description or f"A panel of {len(seats)} judges ({policy.name})",
        members=(*seats, *spares), runner=policy.run, shape=shape, version=version,
        policy={"aggregate": aggregate, "threshold": threshold, "min_successful": floor,
                "on_tie": on_tie, "seats": len(seats)},
    )
    return scorer


@attrs.frozen(kw_only=True)
class _Policy:
    """How one panel runs its members and settles their results."""

    panel_id: str
    seats: tuple[Member, ...]
    spares: tuple[Member, ...]
    aggregate: str | Callable[[Sequence[float]], float]
    threshold: float | None
    min_successful: int
    on_tie: OnTie

    @property
    def name(self) -> str:
        return _aggregate_name(self.aggregate)

    async def run(self, run: MemberRun, runtime: Runtime) -> Outcome:
        if run.run_id is None:
            run = attrs.evolve(run, run_id=runtime.new_id())
        first = await run_members([(scorer, run) for scorer in self.seats], runtime)
        chains = [[(scorer, outcome)] for scorer, outcome in zip(self.seats, first, strict=True)]
        spares = list(self.spares)
        pending = [i for i, chain in enumerate(chains) if isinstance(chain[-1][1], Failure)]
        while pending and spares:
            taken = [(seat, spares.pop(0)) for seat in pending[:len(spares)]]
            outcomes = await run_members([(s, run) for _, s in taken], runtime)
            for (seat, scorer), outcome in zip(taken, outcomes, strict=True):
                chains[seat].append((scorer, outcome))
            pending = [seat for seat, _ in taken if isinstance(chains[seat][-1][1], Failure)]
        return self._settle(run, chains)

    def _settle(
        self, run: MemberRun,
        chains: Sequence[Sequence[tuple[Member, Outcome]]],
    ) -> Outcome:
        members: list[PanelMember] = []
        for chain in chains:
            for index, (scorer, outcome) in enumerate(chain):
                members.append(_member(
                    scorer.id, outcome, self.threshold,
                    replaces=chain[index - 1][0].id if index else None,
                    replaced=index < len(chain) - 1,
                ))
        shown = result_of(chains[0][0][1]).run  # as the first member saw it (typed)
        judge = merged_judge(outcome for chain in chains for _, outcome in chain)
        counted = [m for m in members if m.status == "scored" and not m.replaced]
        scores = [cast(float, m.score) for m in counted]
        base = PanelResult(
            aggregate=self.name, members=tuple(members), min_successful=self.min_successful,
            threshold=self.threshold, **_spread(scores, counted, self.threshold),
        )
        if len(counted) < self.min_successful:
            return self._too_few(shown, judge, base, members)
        return self._aggregate(shown, judge, base, scores)

    def _too_few(
        self, run: MemberRun, judge: JudgeCalls,
        panel: PanelResult, members: Sequence[PanelMember],
    ) -> Outcome:
        failures = tuple(
            MemberFailure(scorer_id=m.scorer_id, failed_step=m.failed_step or "run",
                          cause=m.cause)
            for m in members if m.status == "failed" and m.cause is not None
        )
        unscorable = tuple(m.scorer_id for m in members if m.status == "not_scorable")
        counted = sum(1 for m in members if m.status == "scored" and not m.replaced)
        if not failures:
            why = "; ".join(f"{m.scorer_id}: {m.reason or 'not scorable'}"
                            for m in members if m.status == "not_scorable")
            return Success(ScoreResult(
                run=run, judge=judge, details=panel, not_scorable=NotScorable(
                    reason=f"{counted} panel member(s) could score this run, "
                           f"{self.min_successful} needed ({why})"),
            ))
        # A budget that stopped a member stopped the panel: the run is resumable as any other
        # run the budget stopped.
        budget = next((f.cause for f in failures if isinstance(f.cause, BudgetExhausted)), None)
        cause: RunFailureCause = budget or PanelFailed(
            scored=counted, min_successful=self.min_successful, failures=failures,
            not_scorable=unscorable,
        )
        return Failure(ScorerRunError(
            scorer_id=self.panel_id, failed_step="panel", completed_steps=(), cause=cause,
            partial=ScoreResult(run=run, judge=judge, details=panel),
        ))

    def _aggregate(
        self, run: MemberRun, judge: JudgeCalls,
        panel: PanelResult, scores: Sequence[float],
    ) -> Outcome:
        listed = ", ".join(
            f"{m.scorer_id} {m.score:.3g}" if m.status == "scored" else f"{m.scorer_id} "
            f"{m.status.replace('_', ' ')}" for m in panel.members if not m.replaced)
        if self.aggregate == "majority":
            passes, fails = panel.passes or 0, panel.fails or 0
            head = f"majority at {self.threshold:g}: {passes} pass, {fails} fail"
            if passes != fails:
                score = 1.0 if passes > fails else 0.0
                panel = attrs.evolve(panel, score=score)
                return Success(ScoreResult(run=run, score=score, reason=f"{head} ({listed})",
                                           judge=judge, details=panel))
            panel = attrs.evolve(panel, tie=True)
            if self.on_tie == "not_scorable":
                return Success(ScoreResult(
                    run=run, judge=judge, details=panel, not_scorable=NotScorable(
                        reason=f"{head}: a tie, not scorable by the panel's on_tie ({listed})",
                        kind="panel_tie"),
                ))
            score = 1.0 if self.on_tie == "pass" else 0.0
            panel = attrs.evolve(panel, score=score)
            return Success(ScoreResult(
                run=run, score=score, judge=judge, details=panel,
                reason=f"{head}: a tie, counted as {self.on_tie} ({listed})",
            ))
        combine = _AGGREGATES.get(self.aggregate) if isinstance(self.aggregate, str) else (
            self.aggregate)
        assert combine is not None  # noqa: S101 - checked when the panel was built
        try:
            value: object = combine(tuple(scores))
        except Exception as exc:  # noqa: BLE001 - a user's aggregate function is the boundary
            return self._failed("aggregate", StepRaised.from_exception(exc, where="aggregate"),
                                run, judge, panel)
        if not _is_number(value):
            return self._failed("aggregate", InvalidScore(
                value_repr=short_repr(value), type_name=type(value).__qualname__), run, judge,
                panel)
        score = float(cast(float, value))
        return Success(ScoreResult(
            run=run, score=score, judge=judge, details=attrs.evolve(panel, score=score),
            reason=f"{self.name} of {len(scores)} member score(s): {score:.3g} ({listed})",
        ))

    def _failed(
        self, step: str, cause: RunFailureCause, run: MemberRun,
        judge: JudgeCalls, panel: PanelResult,
    ) -> Outcome:
        return Failure(ScorerRunError(
            scorer_id=self.panel_id, failed_step=step, completed_steps=(), cause=cause,
            partial=ScoreResult(run=run, judge=judge, details=panel),
        ))


def _member(
    scorer_id: str, outcome: Outcome, threshold: float | None, *, replaces: str | None,
    replaced: bool,
) -> PanelMember:
    if isinstance(outcome, Failure):
        error = outcome.failure()
        return PanelMember(
            scorer_id=scorer_id, status="failed", replaces=replaces, replaced=replaced,
            failed_step=str(error.failed_step), cause=error.cause, judge=error.partial.judge,
        )
    result = outcome.unwrap()
    if result.not_scorable is not None:
        return PanelMember(scorer_id=scorer_id, status="not_scorable",
                           reason=result.not_scorable.reason, replaces=replaces,
                           replaced=replaced, judge=result.judge)
    score = result.score
    return PanelMember(
        scorer_id=scorer_id, status="scored", score=score, reason=result.reason,
        vote=None if threshold is None or score is None else score >= threshold,
        replaces=replaces, replaced=replaced, judge=result.judge,
    )


class _Spread(TypedDict, total=False):
    """The counted scores' spread, as :class:`PanelResult` fields."""

    std_dev: float
    min: float
    max: float
    agreed: bool | None
    passes: int
    fails: int


def _spread(
    scores: Sequence[float], counted: Sequence[PanelMember], threshold: float | None
) -> _Spread:
    if not scores:
        return {}
    votes = [m.vote for m in counted]
    spread: _Spread = {
        "std_dev": statistics.pstdev(scores), "min": min(scores), "max": max(scores),
        "agreed": None,
    }
    if len(scores) >= 2:
        spread["agreed"] = (len(set(votes)) == 1 if threshold is not None
                            else min(scores) == max(scores))
    if threshold is not None:
        spread["passes"] = sum(1 for v in votes if v)
        spread["fails"] = sum(1 for v in votes if v is False)
    return spread
