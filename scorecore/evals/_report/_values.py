"""What a batch reports: outcomes per item and scorer, thresholds, gates, and the verdict's rule.

:class:`~scorecore.evals._report._fold.ReportFold` folds :class:`ItemResult` values into the
:class:`EvalReport` that :func:`run_evals` returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias, final

import attrs

from scorecore._core._redact import redact_text
from scorecore._core._values import JUDGE_UNDECIDED_KINDS, ScoreResult, ScorerRunError
from scorecore.evals._checks import by_scorer_id
from scorecore.evals._economics._values import EconomicsSummary, TrialsSummary
from scorecore.evals._run._items import EvalItem, ItemFailureKind
from scorecore.evals._trust._values import CascadeSummary, PairwiseSummary, PanelAgreement
from scorecore.validators import check_fraction

__all__ = [
    "EvalReport",
    "GateResult",
    "ItemResult",
    "OutcomeStatus",
    "ScorerOutcome",
    "ScorerSummary",
    "Threshold",
    "ThresholdResult",
]

OutcomeStatus: TypeAlias = Literal["scored", "not_scorable", "failed"]
"""How one scorer fared on one item."""


@final
@attrs.frozen(kw_only=True)
class ScorerOutcome:
    """How one scorer fared on one item.

    Attributes:
        scorer_id: the scorer.
        status: ``"scored"``, ``"not_scorable"`` or ``"failed"``.
        score: the score when scored.
        reason: the scorer's reason (or the not-scorable reason).
        error: one line saying why it failed, when it failed.
        result: the full result of a run that succeeded in this call.
        run_error: the run's error value, when the scorer returned ``Failure``.
        resumed: ``True`` when the outcome was read from the store (resume), not run again.
        not_scorable_kind: a not-scorable run's ``kind`` (:class:`~scorecore.NotScorable`); one of
            the judge's kinds (``"position_bias"`` …) counts against the failure budget.
    """

    scorer_id: str
    status: OutcomeStatus
    score: float | None = None
    reason: str | None = None
    error: str | None = None
    result: ScoreResult[Any, Any] | None = attrs.field(default=None, eq=False, repr=False)
    run_error: ScorerRunError | None = attrs.field(default=None, eq=False, repr=False)
    resumed: bool = False
    not_scorable_kind: str | None = None

    @property
    def judge_undecided(self) -> bool:
        """Whether the run is not scorable because the judge could not decide."""
        return self.status == "not_scorable" and self.not_scorable_kind in JUDGE_UNDECIDED_KINDS


@final
@attrs.frozen(kw_only=True)
class ItemResult:
    """Everything that happened to one item.

    Attributes:
        index: the item's position in the dataset (0-based).
        item_id: the item's own id, if it had one.
        run_id: the deterministic run id, ``f"{batch_id}:{item_id}"`` or
            ``f"{batch_id}:#{index}"``.
        item: the item, or ``None`` when it could not be read.
        output: the output that was scored (the target's, or the item's).
        error: why the whole item failed (unreadable item, raising target, repeated id),
            else ``None``.
        error_kind: the kind of that failure (``"target_raised"`` or ``"item"``), else
            ``None``; reports group by it.
        outcomes: one outcome per scorer, in the scorers' order.
        duplicate_of: the index of the earlier item whose id (hence run id) this item
            repeats; such an item is failed and nothing is stored for it.
        trial: which trial of the item this is (0 without ``trials``; run ids of trials
            after the first are ``f"{batch_id}/trial-{trial}:…"``).
        extra: for an item that could not be read, what its source still knew about it
            (:class:`InvalidItem`'s ``extra``); a read item's are on ``item``.
    """

    index: int
    item_id: str | None
    run_id: str
    item: EvalItem | None
    output: Any = None
    error: str | None = None
    outcomes: tuple[ScorerOutcome, ...] = ()
    duplicate_of: int | None = None
    trial: int = 0
    error_kind: ItemFailureKind | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


def _check_bound(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        check_fraction(f"Threshold.{attribute.name}", value)


@final
@attrs.frozen(kw_only=True)
class Threshold:
    """Bounds a scorer's mean score must stay within (inclusive), each in [0, 1].

    A plain number given to ``run_evals(thresholds=...)`` means ``Threshold(min=number)``.

    >>> Threshold(min=0.7).check(0.75), Threshold(min=0.2, max=0.5).check(0.6)
    (True, False)
    >>> Threshold(min=0.7).check(None)
    False
    """

    min: float | None = attrs.field(default=None, validator=_check_bound)
    max: float | None = attrs.field(default=None, validator=_check_bound)

    def __attrs_post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("Threshold needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"Threshold.min ({self.min}) must not exceed max ({self.max})")

    def check(self, mean: float | None) -> bool:
        """Whether ``mean`` is within the bounds; no mean (nothing scored) never passes."""
        if mean is None or not math.isfinite(mean):
            return False
        if self.min is not None and mean < self.min:
            return False
        return self.max is None or mean <= self.max

    def describe(self) -> str:
        """``">= 0.7"``, ``"<= 0.3"`` or ``"0.2..0.5"``."""
        if self.max is None:
            return f">= {self.min:g}"
        if self.min is None:
            return f"<= {self.max:g}"
        return f"{self.min:g}..{self.max:g}"


@final
@attrs.frozen(kw_only=True)
class ThresholdResult:
    """Whether a scorer's mean met its threshold."""

    scorer_id: str
    threshold: Threshold
    mean: float | None
    passed: bool


@final
@attrs.frozen(kw_only=True)
class GateResult:
    """Whether a gate scorer averaged 1.0 (every scored item got the full score)."""

    scorer_id: str
    mean: float | None
    passed: bool


@final
@attrs.frozen(kw_only=True)
class ScorerSummary:
    """One scorer's aggregate over the batch.

    ``mean`` is the arithmetic mean of numeric scores; not-scorable and failed runs are
    excluded and counted separately. ``None`` when nothing was scored. It is computed exactly
    (the sum is kept without rounding, then divided once), so the same scores give the same
    mean to the last bit in whatever order the items completed, and a resumed batch reports
    what an uninterrupted one would.

    ``undecided_by`` counts, by kind, the not-scorable runs the *judge* could not decide
    (``{"position_bias": 3}``; the kinds of :class:`~scorecore.NotScorable` that say the
    judge could not decide): they are among ``not_scorable`` and count against the failure
    budget.
    """

    scorer_id: str
    mean: float | None
    scored: int
    not_scorable: int
    failed: int
    undecided_by: Mapping[str, int] = attrs.field(factory=dict)

    @property
    def total(self) -> int:
        """Every item the scorer saw."""
        return self.scored + self.not_scorable + self.failed

    @property
    def undecided(self) -> int:
        """Not-scorable runs the judge could not decide (every kind)."""
        return sum(self.undecided_by.values())


@final
@attrs.frozen(kw_only=True)
class EvalReport:
    """The outcome of :func:`run_evals`.

    Attributes:
        batch_id: the batch's id (stored rows carry it; resume with it).
        verdict: ``"passed"`` when every check passed, else ``"failed"`` (see
            :attr:`failed_checks` for the checks and :attr:`verdict_reason` for why, in one
            line). The checks: the batch has items; every scorer has a scored run among the
            items it applies to (a scorer whose every run failed, not-scorable ones aside,
            scored nothing); every gate and threshold passed; and the failed scorer runs,
            with the not-scorable runs the *judge* could not decide (position bias, a panel
            tie, low confidence, an echoed example), stay within ``max_failures`` or
            ``max_failure_rate``. Runs not scorable because the item does not apply never
            count.
        total_items: items read from the dataset; with ``trials=N``, each trial of an item
            counts (N times the dataset's items).
        failed_items: items that failed as a whole (unreadable item or raising target), each
            trial counted as ``total_items`` counts.
        scorers: per-scorer aggregates, in the scorers' order.
        thresholds: the threshold checks, in the scorers' order.
        gates: the gate checks, in the gates' order.
        results: per-item results in dataset order (then trial order), only with
            ``keep_results=True``.
        duration: seconds, measured with the runtime's clock.
        max_failures: the failed scorer runs tolerated (``None``: any number; run_evals'
            default is 0, so any failed run fails the verdict).
        max_failure_rate: the share of scorer runs (over every scorer) that may fail, or
            ``None``. Failures fail the verdict only when beyond both allowances.
        economics: judge cost, savings, cache hits and budget spend, when the batch ran with
            a cache, pricing, budget or trials.
        trials: each scorer's spread across trials, with ``trials > 1``.
        panels: each panel's agreement between its members (Krippendorff's alpha, the items
            where members disagree most), for the runs of this call (a resumed batch's stored
            runs: :func:`panel_agreements` over its rows).
        pairwise: each pairwise scorer's win rate and share of position-biased items.
        cascades: each cascade's tiers: the share of runs each decided and its judge cost
            (:func:`cascade_summaries` over the stored rows adds the agreement with labels).
    """

    batch_id: str
    verdict: Literal["passed", "failed"]
    total_items: int
    failed_items: int
    scorers: tuple[ScorerSummary, ...]
    thresholds: tuple[ThresholdResult, ...] = ()
    gates: tuple[GateResult, ...] = ()
    results: tuple[ItemResult, ...] | None = attrs.field(default=None, repr=False)
    duration: float = 0.0
    max_failures: int | None = None
    economics: EconomicsSummary | None = None
    trials: TrialsSummary | None = None
    max_failure_rate: float | None = None
    panels: tuple[PanelAgreement, ...] = ()
    pairwise: tuple[PairwiseSummary, ...] = ()
    cascades: tuple[CascadeSummary, ...] = ()

    @property
    def failed_runs(self) -> int:
        """Scorer runs that failed, over every scorer (an item failed as a whole counts once
        per scorer)."""
        return sum(s.failed for s in self.scorers)

    @property
    def undecided_runs(self) -> int:
        """Not-scorable runs the judge could not decide, over every scorer (they count
        against the failure budget with :attr:`failed_runs`)."""
        return sum(s.undecided for s in self.scorers)

    @property
    def passed(self) -> bool:
        """``verdict == "passed"``."""
        return self.verdict == "passed"

    @property
    def total_runs(self) -> int:
        """Scorer runs over every scorer: scored, not scorable and failed."""
        return sum(s.total for s in self.scorers)

    @property
    def failed_checks(self) -> tuple[str, ...]:
        """One line per failed check: an empty batch, scorers with no scored run, gates,
        thresholds, then the failure budget."""
        return failed_checks_of(
            total_items=self.total_items, scorers=self.scorers, gates=self.gates,
            thresholds=self.thresholds, max_failures=self.max_failures,
            max_failure_rate=self.max_failure_rate,
        )

    @property
    def verdict_reason(self) -> str | None:
        """Why the verdict failed, in one line (``None`` when it passed): the first failed
        check, and how many more failed.

        ``"scorer 'faithfulness' has no scored run (59 failed)"``
        """
        checks = self.failed_checks
        if not checks:
            return None
        more = f" (and {len(checks) - 1} more failed check(s))" if len(checks) > 1 else ""
        return checks[0] + more

    def summary(self, scorer_id: str) -> ScorerSummary:
        """The aggregate of one scorer.

        Raises:
            KeyError: no scorer has that id.
        """
        return by_scorer_id(self.scorers, scorer_id)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (per-item results summarised, when kept)."""
        out: dict[str, Any] = {
            "batchId": self.batch_id,
            "verdict": self.verdict,
            "totalItems": self.total_items,
            "failedItems": self.failed_items,
            "durationSeconds": self.duration,
            "scores": {s.scorer_id: s.mean for s in self.scorers},
            "scorers": [
                {"id": s.scorer_id, "mean": s.mean, "scored": s.scored,
                 "notScorable": s.not_scorable, "failed": s.failed,
                 "undecidedByJudge": dict(s.undecided_by)}
                for s in self.scorers
            ],
            "thresholdResults": [
                {"id": t.scorer_id, "passed": t.passed, "averageScore": t.mean,
                 "threshold": {"min": t.threshold.min, "max": t.threshold.max}}
                for t in self.thresholds
            ],
            "gateResults": [
                {"id": g.scorer_id, "passed": g.passed, "score": g.mean} for g in self.gates
            ],
            "failedRuns": self.failed_runs,
            "undecidedRuns": self.undecided_runs,
            "maxFailures": self.max_failures,
            "maxFailureRate": self.max_failure_rate,
            "failedChecks": list(self.failed_checks),
            "verdictReason": self.verdict_reason,
        }
        if self.economics is not None:
            out["economics"] = self.economics.to_json()
        if self.trials is not None:
            out["trials"] = self.trials.to_json()
        if self.panels:
            out["panels"] = [p.to_json() for p in self.panels]
        if self.pairwise:
            out["pairwise"] = [p.to_json() for p in self.pairwise]
        if self.cascades:
            out["cascades"] = [c.to_json() for c in self.cascades]
        if self.results is not None:
            out["results"] = [
                {
                    # Reasons and errors may quote a reply: redacted, as stored rows are.
                    "index": r.index, "itemId": r.item_id, "runId": r.run_id,
                    "error": _redacted(r.error),
                    "scores": [
                        {"scorerId": o.scorer_id, "status": o.status, "score": o.score,
                         "reason": _redacted(o.reason), "error": _redacted(o.error),
                         "resumed": o.resumed}
                        for o in r.outcomes
                    ],
                }
                for r in self.results
            ]
        return out


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact_text(text)


def _fmt(mean: float | None) -> str:
    return "n/a" if mean is None else f"{mean:.3g}"


def _kinds(undecided_by: Mapping[str, int]) -> str:
    """``"3 position bias, 1 low confidence"``: the judge's kinds, most frequent first."""
    ordered = sorted(undecided_by.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in ordered)


def _unscored(summary: ScorerSummary) -> str | None:
    """Why a scorer fails the verdict for scoring nothing, or ``None``.

    A scorer applies to the items it did not find not scorable; it must have scored at least
    one of them. One whose every run was not scorable applies to no item (like a skipped
    scorer): that alone is not a failure, unless the judge could not decide them (then the
    items applied and nothing was decided).
    """
    if summary.scored or not (summary.failed or summary.undecided):
        return None
    counts = []
    if summary.failed:
        counts.append(f"{summary.failed} failed")
    if summary.undecided:
        counts.append(f"{summary.undecided} undecided by the judge "
                      f"({_kinds(summary.undecided_by)})")
    if summary.not_scorable > summary.undecided:
        counts.append(f"{summary.not_scorable - summary.undecided} not scorable")
    return f"scorer {summary.scorer_id!r} has no scored run ({', '.join(counts)})"


def _too_many_failures(
    failed: int, undecided_by: Mapping[str, int], total: int, max_failures: int | None,
    max_failure_rate: float | None,
) -> str | None:
    """The failure budget's line when the ``failed`` runs and those the judge could not decide
    (``undecided_by``, by kind), of ``total``, exceed both allowances."""
    undecided = sum(undecided_by.values())
    counted = failed + undecided
    if not counted or max_failures is None or counted <= max_failures:
        return None
    # Division is correctly rounded: 29 of 100 against 0.29 compares equal, as it should.
    if max_failure_rate is not None and counted / total <= max_failure_rate:
        return None
    what = f"{failed} failed scorer run(s)"
    if undecided:
        what = (f"{counted} scorer run(s) failed or undecided by the judge ({failed} failed, "
                f"{_kinds(undecided_by)})")
    if max_failure_rate is None:
        return f"too many failures: {what}, at most {max_failures} allowed"
    return (f"too many failures: {what} of {total} ({counted / total:.1%}), at most "
            f"{max_failures} or {max_failure_rate:.1%} allowed")


def failed_checks_of(
    *,
    total_items: int,
    scorers: Sequence[ScorerSummary],
    gates: Sequence[GateResult],
    thresholds: Sequence[ThresholdResult],
    max_failures: int | None,
    max_failure_rate: float | None,
) -> tuple[str, ...]:
    """Every check of a batch that failed, one line each; none: passed."""
    failures: list[str] = []
    if total_items == 0:
        failures.append("the batch has no items")
    failures.extend(line for s in scorers if (line := _unscored(s)) is not None)
    failures.extend(f"gate {gate.scorer_id}: mean {_fmt(gate.mean)}, needs 1.0"
                    for gate in gates if not gate.passed)
    failures.extend(
        f"threshold {res.scorer_id}: mean {_fmt(res.mean)}, needs {res.threshold.describe()}"
        for res in thresholds if not res.passed
    )
    undecided_by: dict[str, int] = {}
    for s in scorers:
        for kind, n in s.undecided_by.items():
            undecided_by[kind] = undecided_by.get(kind, 0) + n
    budget = _too_many_failures(sum(s.failed for s in scorers), undecided_by,
                                sum(s.total for s in scorers), max_failures, max_failure_rate)
    if budget is not None:
        failures.append(budget)
    return tuple(failures)
