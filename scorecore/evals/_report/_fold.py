"""The report fold: a batch's item results, in any order, into its :class:`EvalReport`.

:class:`ReportFold` is pure (no clock, no I/O, no event loop): it folds :class:`ItemResult` values,
in any order, into the :class:`EvalReport` that :func:`run_evals` returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import final

from scorecore._core._values import JUDGE_UNDECIDED_KINDS
from scorecore.evals._checks import FIXED_BITS, fixed
from scorecore.evals._report._values import (
    EvalReport,
    GateResult,
    ItemResult,
    ScorerOutcome,
    ScorerSummary,
    Threshold,
    ThresholdResult,
    failed_checks_of,
)

__all__ = ["ReportFold"]


# A sum of scores scaled by 2**FIXED_BITS is an exact integer (see fixed): adding is exact,
# hence independent of order.


class _Aggregate:
    """One scorer's counts and exact score sum, folded from outcomes in any order."""

    __slots__ = ("failed", "not_scorable", "scored", "total", "undecided_by")

    def __init__(self) -> None:
        self.scored = 0
        self.not_scorable = 0
        self.failed = 0
        self.total = 0  # the sum of scores times 2**FIXED_BITS, exactly
        self.undecided_by: dict[str, int] = {}

    def add(self, outcome: ScorerOutcome) -> None:
        score = outcome.score
        if outcome.status == "scored" and score is not None and math.isfinite(score):
            self.total += fixed(score)
            self.scored += 1
        elif outcome.status == "not_scorable":
            self.not_scorable += 1
            kind = outcome.not_scorable_kind
            if kind is not None and kind in JUDGE_UNDECIDED_KINDS:
                self.undecided_by[kind] = self.undecided_by.get(kind, 0) + 1
        else:
            self.failed += 1

    def summary(self, scorer_id: str) -> ScorerSummary:
        # int / int is correctly rounded, so the mean is the exact mean rounded once.
        mean = self.total / (self.scored << FIXED_BITS) if self.scored else None
        return ScorerSummary(scorer_id=scorer_id, mean=mean, scored=self.scored,
                             not_scorable=self.not_scorable, failed=self.failed,
                             undecided_by=dict(self.undecided_by))


_GATE = Threshold(min=1.0)


@final
class ReportFold:
    """Folds the results of a batch's items, in any order, into its :class:`EvalReport`.

    Pure: the same results give the same report whatever the order they were added in (means
    are exact, kept results are sorted by index). The verdict follows :attr:`EvalReport.verdict`'s
    rule; ``max_failures`` defaults to 0 (any failed run fails the verdict), as in
    :func:`run_evals`, and ``max_failure_rate`` relaxes it to a share of the runs.

    >>> fold = ReportFold(("exact",), thresholds={"exact": Threshold(min=0.5)})
    >>> scored = ScorerOutcome(scorer_id="exact", status="scored", score=1.0)
    >>> fold.add(ItemResult(index=0, item_id=None, run_id="b:#0", item=None, outcomes=(scored,)))
    >>> report = fold.report(batch_id="b", duration=0.0)
    >>> report.summary("exact").mean, report.verdict
    (1.0, 'passed')
    """

    __slots__ = (
        "_aggregates", "_failed_items", "_gates", "_items", "_max_failure_rate",
        "_max_failures", "_results", "_scorer_ids", "_thresholds",
    )

    def __init__(
        self,
        scorer_ids: Sequence[str],
        *,
        thresholds: Mapping[str, Threshold] | None = None,
        gates: Sequence[str] = (),
        max_failures: int | None = 0,
        max_failure_rate: float | None = None,
        keep_results: bool = False,
    ) -> None:
        self._scorer_ids = tuple(scorer_ids)
        self._thresholds = dict(thresholds or {})
        self._gates = tuple(gates)
        self._max_failures = max_failures
        self._max_failure_rate = max_failure_rate
        self._aggregates = {sid: _Aggregate() for sid in self._scorer_ids}
        self._items = 0
        self._failed_items = 0
        self._results: list[ItemResult] | None = [] if keep_results else None

    def add(self, result: ItemResult) -> None:
        """Fold one item's result in."""
        self._items += 1
        if result.error is not None:
            self._failed_items += 1
        aggregates = self._aggregates
        for outcome in result.outcomes:
            aggregates[outcome.scorer_id].add(outcome)
        if self._results is not None:
            self._results.append(result)

    def report(self, *, batch_id: str, duration: float) -> EvalReport:
        """The report of everything folded in so far."""
        summaries = tuple(self._aggregates[sid].summary(sid) for sid in self._scorer_ids)
        by_id = {s.scorer_id: s for s in summaries}
        checks = self._thresholds
        threshold_results = tuple(
            ThresholdResult(scorer_id=sid, threshold=checks[sid], mean=by_id[sid].mean,
                            passed=checks[sid].check(by_id[sid].mean))
            for sid in self._scorer_ids if sid in checks
        )
        gate_results = tuple(
            GateResult(scorer_id=gid, mean=by_id[gid].mean, passed=_GATE.check(by_id[gid].mean))
            for gid in self._gates
        )
        passed = not failed_checks_of(
            total_items=self._items, scorers=summaries, gates=gate_results,
            thresholds=threshold_results, max_failures=self._max_failures,
            max_failure_rate=self._max_failure_rate,
        )
        results = None
        if self._results is not None:
            results = tuple(sorted(self._results, key=lambda r: (r.index, r.trial)))
        return EvalReport(
            batch_id=batch_id,
            verdict="passed" if passed else "failed",
            total_items=self._items,
            failed_items=self._failed_items,
            scorers=summaries,
            thresholds=threshold_results,
            gates=gate_results,
            results=results,
            duration=duration,
            max_failures=self._max_failures,
            max_failure_rate=self._max_failure_rate,
        )
