"""What :func:`~scorecore.evals.calibrate` reports: per scorer, its agreement with labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, final

import attrs

from scorecore.evals._checks import by_scorer_id

__all__ = [
    "Calibration",
    "CalibrationKind",
    "CalibrationStatistic",
    "ConfusionMatrix",
    "Estimate",
    "FittedThreshold",
    "LabelValue",
    "ScorerCalibration",
]

CalibrationKind: TypeAlias = Literal["binary", "ordinal", "continuous"]
"""What the labels are: pass/fail, ordered grades (1..5), or numbers on a scale."""

CalibrationStatistic: TypeAlias = Literal[
    "kappa", "spearman", "kendall", "mae", "accuracy", "precision", "recall"
]
"""A statistic of :class:`ScorerCalibration` (its attribute holding the :class:`Estimate`)."""

STATISTICS: Final[Mapping[CalibrationKind, tuple[CalibrationStatistic, ...]]] = {
    "binary": ("kappa", "accuracy", "precision", "recall"),
    "ordinal": ("kappa", "mae", "accuracy", "precision", "recall"),
    "continuous": ("spearman", "kendall", "kappa", "mae", "accuracy", "precision", "recall"),
}
"""The statistics computed for each kind of labels, in the order a table shows them: the one
home of that fact for ``calibrate``, the ``calibrate`` command and the HTML report."""

LabelValue: TypeAlias = bool | int | float | str
"""One human label: a bool, a number, or a string given a value by ``label_values``."""

CHANCE_CAVEAT: Final = "agreement with your labels is at chance level: do not gate on this judge"
"""What :meth:`ScorerCalibration.caveat` says when κ's interval includes 0 (chance)."""

FITTED_NOTE: Final = (
    "fitted on these labels: the kappa it reaches here is optimistic; check it on other "
    "labels before using it as a threshold"
)


@final
@attrs.frozen(kw_only=True)
class Estimate:
    """A statistic on the labelled items with its seeded bootstrap interval.

    Attributes:
        value: the statistic on every paired item; ``None`` when it is undefined there.
        low: the interval's lower end (``None`` when there is no interval).
        high: its upper end.
        reason: why ``value`` (or the interval) is ``None``, in one line.
        undefined_resamples: resamples where the statistic was undefined, left out of the
            interval (with more than the interval's lower tail, there is no interval).

    >>> Estimate(value=0.8, low=0.6, high=0.93).describe()
    '0.800 [0.600, 0.930]'
    >>> Estimate(value=None, reason="the labels hold one class only (pass)").describe()
    'undefined: the labels hold one class only (pass)'
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None
    undefined_resamples: int = 0

    def describe(self) -> str:
        """``"0.800 [0.600, 0.930]"``, or why there is no value or no interval."""
        if self.value is None:
            return f"undefined: {self.reason}"
        if self.low is None or self.high is None:
            return f"{self.value:.3f} (no interval: {self.reason})"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def to_json(self) -> dict[str, Any]:
        """``{"value", "low", "high", "reason", "undefinedResamples"}``."""
        return {"value": self.value, "low": self.low, "high": self.high, "reason": self.reason,
                "undefinedResamples": self.undefined_resamples}


@final
@attrs.frozen(kw_only=True)
class ConfusionMatrix:
    """Counts of items by their label (rows) and the scorer's verdict (columns).

    Attributes:
        classes: the classes in order (``("fail", "pass")`` or ordinal grades ``("1", … )``).
        counts: ``counts[label][scorer]``, in the order of ``classes``.

    >>> m = ConfusionMatrix(classes=("fail", "pass"), counts=((5, 1), (2, 12)))
    >>> m.count("pass", "fail"), m.total
    (2, 20)
    """

    classes: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        """Every item counted."""
        return sum(sum(row) for row in self.counts)

    def count(self, label: str, scorer: str) -> int:
        """Items labelled ``label`` that the scorer put in ``scorer``."""
        return self.counts[self.classes.index(label)][self.classes.index(scorer)]

    def to_json(self) -> dict[str, Any]:
        """``{"classes", "counts", "rows": "label", "columns": "scorer"}``."""
        return {"classes": list(self.classes), "counts": [list(r) for r in self.counts],
                "rows": "label", "columns": "scorer"}


@final
@attrs.frozen(kw_only=True)
class FittedThreshold:
    """The score threshold that would maximise κ (pass/fail) on these labels.

    It is **fitted on the labels it is measured on**, so its κ is optimistic: validate it on
    other labels before relying on it (``FITTED_NOTE``).

    Attributes:
        threshold: the cut (an item passes when its score is at least this), one of the
            scores; the lowest such score nearest the given threshold when several cuts tie.
            ``None`` when no cut has a κ, or none beats chance (κ > 0): no threshold turns
            scores that say nothing about the labels, or run against them, into a judge.
        kappa: Cohen's κ of pass/fail at ``threshold``.
        kappa_at_threshold: the same κ at the threshold given to :func:`calibrate`.
        fitted_on: how many labelled items it was fitted on.
        reason: why there is none, in one line.
    """

    threshold: float | None
    kappa: float | None
    kappa_at_threshold: float | None
    fitted_on: int
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The fitted threshold as JSON, with ``fittedOnLabels`` and a note saying so."""
        return {"threshold": self.threshold, "kappa": self.kappa,
                "kappaAtThreshold": self.kappa_at_threshold, "fittedOnLabels": True,
                "fittedOn": self.fitted_on, "reason": self.reason, "note": FITTED_NOTE}


@final
@attrs.frozen(kw_only=True)
class ScorerCalibration:
    """One scorer's agreement with the labels over the items it scored and that are labelled.

    Attributes:
        scorer_id: the scorer.
        n: labelled items the scorer scored (an item's trials count once, at their mean).
        threshold: an item passes when its score is at least this (score units).
        kappa: the agreement the gate reads: Cohen's κ of pass/fail at ``threshold``
            (binary and continuous labels) or quadratic-weighted κ of the grades (ordinal).
        kappa_kind: ``"cohen"`` or ``"quadratic"``: which κ ``kappa`` is.
        accuracy: the share of items where the scorer's pass/fail agrees with the label's.
        precision: of the items the scorer passed, the share the labels pass.
        recall: of the items the labels pass, the share the scorer passed.
        confusion: pass/fail counts at ``threshold`` (rows: label, columns: scorer).
        grades: ordinal labels: counts by grade (the score rounded to the nearest grade).
        spearman: continuous labels: Spearman's ρ of scores and labels.
        kendall: continuous labels: Kendall's τ-b.
        mae: ordinal and continuous labels: the mean absolute error in the labels' units.
        fitted_threshold: the threshold that would maximise κ here (fitted on these labels).
        not_scored: labelled items whose runs all failed or were not scorable, by status.
        without_row: labelled items this scorer has no row for.
    """

    scorer_id: str
    n: int
    threshold: float
    kappa: Estimate
    kappa_kind: Literal["cohen", "quadratic"]
    accuracy: Estimate
    precision: Estimate
    recall: Estimate
    confusion: ConfusionMatrix
    fitted_threshold: FittedThreshold
    grades: ConfusionMatrix | None = None
    spearman: Estimate | None = None
    kendall: Estimate | None = None
    mae: Estimate | None = None
    not_scored: Mapping[str, str] = attrs.field(factory=dict)
    without_row: tuple[str, ...] = ()

    def estimate(self, statistic: CalibrationStatistic) -> Estimate | None:
        """The estimate of ``statistic`` (``None`` where the labels' kind has none).

        >>> e = Estimate(value=0.5, low=0.25, high=0.75)
        >>> m = ConfusionMatrix(classes=("pass", "fail"), counts=((1, 0), (0, 1)))
        >>> s = ScorerCalibration(scorer_id="s", n=2, threshold=0.5, kappa=e,
        ...     kappa_kind="cohen", accuracy=e, precision=e, recall=e, confusion=m,
        ...     fitted_threshold=FittedThreshold(threshold=None, kappa=None,
        ...                                      kappa_at_threshold=None, fitted_on=2))
        >>> s.estimate("kappa") is e, s.estimate("spearman")
        (True, None)
        """
        found: Estimate | None = getattr(self, statistic)
        return found

    def caveat(self) -> str | None:
        """One line when this scorer's agreement with the labels cannot be told from chance
        (``None`` when κ's whole interval is above 0): ``CHANCE_CAVEAT`` when the interval
        includes 0 (or, without an interval, κ is at most 0), or why κ says nothing
        (undefined, no interval, below chance). A gate on such a judge's scores gates on
        noise.

        >>> from scorecore.evals import ScoreRow, calibrate
        >>> rows = [ScoreRow(id=str(i), scorer_id="judge", run_id=f"b:{i}", batch_id="b",
        ...                  status="scored", score=0.9 if i % 4 < 2 else 0.1,
        ...                  dataset_item_id=str(i)) for i in range(40)]
        >>> labels = {str(i): i % 2 == 0 for i in range(40)}  # right on half, wrong on half
        >>> calibrate(rows, labels, resamples=200).scorer("judge").caveat()
        'agreement with your labels is at chance level: do not gate on this judge'
        """
        k = self.kappa
        if k.value is None:
            return (f"agreement with your labels cannot be measured ({k.reason}): do not "
                    f"gate on this judge")
        if k.low is None or k.high is None:
            if k.value <= 0:  # at chance (or worse), and no interval to say otherwise
                return CHANCE_CAVEAT
            return (f"agreement with your labels has no interval ({k.reason}): do not gate "
                    f"on this judge")
        if k.high < 0:
            return ("agreement with your labels is below chance level (the scores run "
                    "against the labels): do not gate on this judge")
        if k.low <= 0:
            return CHANCE_CAVEAT
        return None

    def kappa_problem(self, min_kappa: float) -> str | None:
        """Why this scorer fails a gate of ``min_kappa`` (the interval's lower end), or
        ``None`` when it passes."""
        k = self.kappa
        name = "quadratic-weighted kappa" if self.kappa_kind == "quadratic" else "kappa"
        if k.value is None:
            return f"{self.scorer_id}: {name} is undefined ({k.reason}), so it cannot " \
                   f"reach {min_kappa:g}"
        if k.low is None:
            return f"{self.scorer_id}: {name} {k.value:.3f} has no interval ({k.reason}), " \
                   f"so it cannot be shown to reach {min_kappa:g}"
        if k.low < min_kappa:
            return f"{self.scorer_id}: {name} {k.value:.3f}, interval's lower end " \
                   f"{k.low:.3f} < {min_kappa:g}"
        return None

    def to_json(self) -> dict[str, Any]:
        """The scorer's calibration as JSON (camelCase keys)."""
        def optional(e: Estimate | None) -> dict[str, Any] | None:
            return None if e is None else e.to_json()

        return {
            "id": self.scorer_id, "n": self.n, "threshold": self.threshold,
            "kappa": self.kappa.to_json(), "kappaKind": self.kappa_kind,
            "accuracy": self.accuracy.to_json(), "precision": self.precision.to_json(),
            "recall": self.recall.to_json(), "confusion": self.confusion.to_json(),
            "grades": None if self.grades is None else self.grades.to_json(),
            "spearman": optional(self.spearman), "kendall": optional(self.kendall),
            "mae": optional(self.mae), "fittedThreshold": self.fitted_threshold.to_json(),
            "notScored": dict(self.not_scored), "withoutRow": list(self.without_row),
            "caveat": self.caveat(),
        }


def _check_min_kappa(min_kappa: object) -> float:
    if (isinstance(min_kappa, bool) or not isinstance(min_kappa, int | float)
            or not -1 <= min_kappa <= 1):
        raise ValueError(f"min_kappa must be a number in [-1, 1], got {min_kappa!r}")
    return float(min_kappa)


@final
@attrs.frozen(kw_only=True)
class Calibration:
    """A batch's scorers measured against human labels (see :func:`calibrate`).

    Attributes:
        batch_id: the batch.
        kind: ``"binary"``, ``"ordinal"`` or ``"continuous"`` labels.
        scale: the labels' ``(low, high)`` that scores in [0, 1] map onto, if given.
        labels: how many labels were given.
        confidence: the bootstrap intervals' confidence.
        resamples: the bootstrap's resample count.
        seed: its seed (the same rows, labels and seed give the same intervals).
        scorers: one calibration per scorer, by scorer id.
        labels_without_rows: labelled items the batch has no row for.
        rows_without_labels: items of the batch without a label.
    """

    batch_id: str
    kind: CalibrationKind
    scale: tuple[float, float] | None
    labels: int
    confidence: float
    resamples: int
    seed: int
    scorers: tuple[ScorerCalibration, ...]
    labels_without_rows: tuple[str, ...] = ()
    rows_without_labels: tuple[str, ...] = ()

    @property
    def statistics(self) -> tuple[CalibrationStatistic, ...]:
        """The statistics given for this kind of labels, in the order a table shows them
        (read each with :meth:`ScorerCalibration.estimate`)."""
        return STATISTICS[self.kind]

    def scorer(self, scorer_id: str) -> ScorerCalibration:
        """One scorer's calibration.

        Raises:
            KeyError: no scorer has that id.
        """
        return by_scorer_id(self.scorers, scorer_id)

    def failed_checks(self, min_kappa: float) -> tuple[str, ...]:
        """One line per scorer failing the gate ``κ ≥ min_kappa``, read at the lower end of
        κ's interval; an undefined κ or interval fails too (never a pass on nothing)."""
        bound = _check_min_kappa(min_kappa)
        if not self.scorers:
            return ("no scorer to calibrate",)
        return tuple(p for s in self.scorers if (p := s.kappa_problem(bound)) is not None)

    def to_json(self) -> dict[str, Any]:
        """The calibration as JSON-ready data (camelCase keys, like the eval report)."""
        return {
            "batchId": self.batch_id, "kind": self.kind,
            "scale": None if self.scale is None else list(self.scale),
            "labels": self.labels, "confidence": self.confidence,
            "resamples": self.resamples, "seed": self.seed,
            "labelsWithoutRows": list(self.labels_without_rows),
            "rowsWithoutLabels": list(self.rows_without_labels),
            "scorers": [s.to_json() for s in self.scorers],
        }
