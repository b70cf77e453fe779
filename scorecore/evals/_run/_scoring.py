"""Scoring one item: read it, claim its run id, call the target, run every scorer."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, final

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore._core._runtime import Runtime
from scorecore._core._slot_init import fast_init
from scorecore._core._values import ScoreResult, ScorerRunError
from scorecore.evals._checks import is_finite_number
from scorecore.evals._messages import exception_text, text_of
from scorecore.evals._persistence._port import CompletedScore
from scorecore.evals._report._values import ItemResult, ScorerOutcome
from scorecore.evals._run._ids import RunIds
from scorecore.evals._run._items import EvalItem, ItemFailure, raw_id, read_item

__all__ = ["ItemScorer"]


@final
@attrs.frozen(kw_only=True)
class ClaimedItem:
    """A readable item whose run id :meth:`ItemScorer.prepare` claimed, ready to score."""

    index: int
    item: EvalItem
    run_id: str


# The values every scored item builds, set slot by slot (fast_init): these classes check and
# convert nothing, and a keyword call of a frozen class's __init__ costs several times more.
_new_claimed = fast_init(ClaimedItem)
_new_outcome = fast_init(ScorerOutcome)
_new_result = fast_init(ItemResult)


@final
class ItemScorer:
    """Turns one dataset entry into its :class:`ItemResult`; never raises for user code.

    A bad entry, a repeated run id or a raising target fails the item (every scorer ``failed``
    with the item's error); a raising scorer, a ``Failure`` or an invalid score fails that
    scorer only. On resume, pairs the store holds as final (``done``, from
    :meth:`ScoreStore.completed`) are taken from it, not run again. This is what
    :func:`run_evals` runs per item; a distributed runner scores its share of items with one.

    Call it with items in dataset order (run ids are claimed by the first item using them).

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> from scorecore._core._runtime import DEFAULT_RUNTIME
    >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    >>> score = ItemScorer(scorers=[one], target=None, runtime=DEFAULT_RUNTIME, batch_id="b")
    >>> result = anyio.run(score, 0, {"input": "q", "output": "a", "id": "q1"})
    >>> result.run_id, [(o.scorer_id, o.status, o.score) for o in result.outcomes]
    ('b:q1', [('one', 'scored', 1.0)])
    """

    __slots__ = ("_done", "_ids", "_runtime", "_scorers", "_target")

    def __init__(
        self,
        *,
        scorers: Sequence[Any],
        target: Callable[[EvalItem], Any] | None,
        runtime: Runtime,
        batch_id: str,
        done: Mapping[tuple[str, str], CompletedScore] | None = None,
    ) -> None:
        self._scorers = scorers
        self._target = target
        self._runtime = runtime
        self._ids = RunIds(batch_id)
        self._done = done or {}

    def __call__(self, index: int, raw: object) -> Coroutine[Any, Any, ItemResult]:
        """The result of the entry at ``index`` of the dataset, to await."""
        # prepare runs right after the source numbered the item, with no await in between:
        # ids are claimed in dataset order, so "first seen" is the earlier item. run's
        # coroutine is returned, not awaited in one of this method's own: every time a warm
        # re-run's judge steps yield to the event loop, one frame fewer is resumed.
        return self.run(self.prepare(index, raw))

    def prepare(self, index: int, raw: object) -> ItemResult | ClaimedItem:
        """Read the entry and claim its run id (no await): the failed result, or what to run.

        Whoever scores an item several times (one scorer per trial) prepares it for every
        scorer before awaiting any, so a later duplicate id can never claim a run id first.
        """
        read = read_item(raw, index, needs_output=self._target is None)
        item = read.unwrap() if isinstance(read, Success) else None
        item_id, line = (raw_id(raw), None) if item is None else (item.id, item.line)
        run_id = self._ids.of(index, item_id)
        # A repeated run id is reported first (even for an unreadable entry), then a bad entry.
        claim = self._ids.claim(index, item_id, line)
        if type(claim) is Failure:  # RunIds builds it: the exact type, with no ABC lookup
            return self.failed(index, claim.failure(), item_id=item_id, item=item, run_id=run_id)
        if item is None:
            return self.failed(index, read.failure(), item_id=item_id, run_id=run_id)
        return _new_claimed(index, item, run_id)

    async def run(
        self, claimed: ItemResult | ClaimedItem, *, runtime: Runtime | None = None
    ) -> ItemResult:
        """Score what :meth:`prepare` claimed (a failed result is returned as it is).

        ``runtime`` replaces the scorer's own for this item (a trial's, with its meter).
        """
        if isinstance(claimed, ItemResult):
            return claimed
        index, item, run_id = claimed.index, claimed.item, claimed.run_id
        item_id = item.id
        done = self._done
        output: Any = item.output
        if self._target is not None and (
            not done or any((run_id, s.id) not in done for s in self._scorers)
        ):
            produced = await self._output(item)
            if not isinstance(produced, Success):
                return self.failed(index, produced.failure(), item_id=item_id, item=item,
                                   run_id=run_id)
            output = produced.unwrap()
        outcomes: list[ScorerOutcome] = []
        for scorer in self._scorers:
            stored = done.get((run_id, scorer.id)) if done else None
            if stored is not None:
                outcomes.append(ScorerOutcome(
                    scorer_id=scorer.id, status=stored.status, score=stored.score,
                    reason=stored.reason, resumed=True,
                    not_scorable_kind=stored.not_scorable_kind,
                ))
            else:
                outcomes.append(await self._score(scorer, item, output, run_id,
                                                  runtime or self._runtime))
        # index, item_id, run_id, item, output, error, outcomes, duplicate_of, trial,
        # error_kind, extra: ItemResult's fields in order.
        return _new_result(index, item_id, run_id, item, output, None, tuple(outcomes), None, 0,
                           None, {})

    def failed(
        self,
        index: int,
        failure: ItemFailure,
        *,
        item_id: str | None = None,
        item: EvalItem | None = None,
        run_id: str | None = None,
    ) -> ItemResult:
        """The result of item ``index`` failed as a whole: every scorer failed with its error.

        ``run_id`` defaults to the item's (from ``item_id``, else its position).
        """
        outcomes = tuple(
            ScorerOutcome(scorer_id=s.id, status="failed", error=failure.error)
            for s in self._scorers
        )
        return ItemResult(
            index=index, item_id=item_id, run_id=run_id or self._ids.of(index, item_id),
            item=item, error=failure.error, outcomes=outcomes, duplicate_of=failure.duplicate_of,
            error_kind=failure.kind, extra=failure.extra,
        )

    async def _output(self, item: EvalItem) -> Result[Any, ItemFailure]:
        assert self._target is not None  # noqa: S101 - only called with a target
        try:
            output = self._target(item)
            if inspect.isawaitable(output):
                output = await output
        except Exception as exc:  # noqa: BLE001 - the user's target is the boundary
            return Failure(ItemFailure(error=f"target raised {exception_text(exc)}",
                                       kind="target_raised"))
        return Success(output)

    async def _score(
        self, scorer: Any, item: EvalItem, output: Any, run_id: str, runtime: Runtime
    ) -> ScorerOutcome:
        try:
            result = await scorer.run(
                input=item.input, output=output, ground_truth=item.ground_truth,
                request_context=item.request_context,
                expected_trajectory=item.expected_trajectory, run_id=run_id,
                runtime=runtime, extra=item.extra,
            )
        except Exception as exc:  # noqa: BLE001 - a scorer object (user code) is the boundary
            return ScorerOutcome(
                scorer_id=scorer.id, status="failed", error=f"scorer raised {exception_text(exc)}",
            )
        if isinstance(result, Success) and isinstance(result.unwrap(), ScoreResult):
            value: ScoreResult[Any, Any] = result.unwrap()
            if value.not_scorable is not None:
                return ScorerOutcome(scorer_id=scorer.id, status="not_scorable",
                                     reason=value.not_scorable.reason, result=value,
                                     not_scorable_kind=value.not_scorable.kind)
            score: object = value.score  # a scorer object (duck-typed) may give anything
            if not is_finite_number(score):
                return ScorerOutcome(
                    scorer_id=scorer.id, status="failed", result=value,
                    error=f"scorer gave an invalid score {short_repr(score)} "
                          f"(a finite number is needed)",
                )
            # scorer_id, status, score, reason, error, result, run_error, resumed,
            # not_scorable_kind: ScorerOutcome's fields in order.
            return _new_outcome(scorer.id, "scored", float(score), value.reason, None, value,
                                None, False, None)  # noqa: FBT003 - resumed, by position
        if not isinstance(result, Failure):
            return ScorerOutcome(
                scorer_id=scorer.id, status="failed",
                error=f"scorer.run returned {short_repr(result)}, not a Result of a ScoreResult",
            )
        error = result.failure()
        return ScorerOutcome(scorer_id=scorer.id, status="failed", error=text_of(error),
                             run_error=error if isinstance(error, ScorerRunError) else None)
