"""Calibrating a batch's scorers against human labels: pairing, then agreement with intervals.

Pure: no I/O (``scorecore_adapters.labels.read_labels`` reads a labels file), no numpy. Every
statistic comes with a percentile bootstrap interval over the paired items, drawn from the
seeded stream of ``compare`` (:mod:`scorecore.evals._stats._bootstrap`), one stream per scorer, so
the same rows, labels and seed give the same intervals everywhere.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final, get_args

import attrs

from scorecore._core._reprs import short_repr
from scorecore.evals._calibrate._values import (
    STATISTICS,
    Calibration,
    CalibrationKind,
    ConfusionMatrix,
    Estimate,
    FittedThreshold,
    LabelValue,
    ScorerCalibration,
)
from scorecore.evals._checks import is_finite_number
from scorecore.evals._compare._values import DEFAULT_PASS_MIN
from scorecore.evals._report._values import EvalReport, ScorerOutcome
from scorecore.evals._rows._row import ScoreRow, row_id, row_item_id
from scorecore.evals._rows._trials import rows_by_item
from scorecore.evals._stats._bootstrap import (
    bootstrap_key,
    check_settings,
    percentile_interval,
    resample_indices,
)
from scorecore.evals._stats._paired import RankedPairs, kappa
from scorecore.scorers import PanelResult
from scorecore.validators import is_int

__all__ = ["calibrate"]

_MAX_GRADES: Final = 100
_KINDS: Final = get_args(CalibrationKind)


def _label_error(item: str, value: object, problem: str) -> ValueError:
    return ValueError(f"calibrate: the label of item {short_repr(item, 80)} {problem}, "
                      f"got {short_repr(value, 80)}")


def _number(item: str, value: object, label_values: Mapping[str, float | bool]) -> float:
    """A label as a number: a string through ``label_values``, a bool as 1 or 0."""
    given = value
    if isinstance(value, str):
        if value not in label_values:
            known = ", ".join(map(repr, sorted(label_values))) or "none given"
            # Each option is named as the API and the command line spell it: the same
            # message reaches both.
            raise _label_error(item, given, f"is a string without a value in label_values / "
                                            f"--label-value ({known})")
        value = label_values[value]
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not is_finite_number(value):
        raise _label_error(item, given, "must be a bool, a finite number or a string")
    return float(value)


@attrs.frozen(kw_only=True)
class _Labels:
    """The labels in the labels' units, checked for their kind, and the ordinal grades."""

    values: Mapping[str, float]
    grades: tuple[int, int] | None  # ordinal: the lowest and highest grade


def _label(
    item: str, raw: LabelValue, kind: CalibrationKind, scale: tuple[float, float] | None,
    label_values: Mapping[str, float | bool],
) -> float:
    """One label in the labels' units, checked against ``kind`` and ``scale``."""
    value = _number(item, raw, label_values)
    if kind == "binary" and value not in (0.0, 1.0):
        raise _label_error(item, raw, "must be true/false or 1/0 for binary labels (for "
                                      "grades: kind='ordinal' or 'continuous' / --kind)")
    if kind != "binary" and isinstance(raw, bool):
        raise _label_error(item, raw, f"is a bool, a binary label, not a {kind} one")
    if kind == "ordinal" and not value.is_integer():
        raise _label_error(item, raw, "must be a whole number for ordinal labels (for other "
                                      "numbers: kind='continuous' / --kind continuous)")
    if scale is not None and not scale[0] <= value <= scale[1]:
        raise _label_error(item, raw, f"is outside the scale {scale[0]:g}..{scale[1]:g} "
                                      f"(scale / --scale)")
    return value


def _read_labels(
    labels: Mapping[str, LabelValue], kind: CalibrationKind,
    scale: tuple[float, float] | None, label_values: Mapping[str, float | bool],
) -> _Labels:
    values: dict[str, float] = {}
    problems: list[str] = []
    for item, raw in labels.items():
        if not isinstance(item, str):
            # One error type for every bad label (the command line reports it as such).
            raise ValueError(f"calibrate: labels are keyed by item id (str), got the key "  # noqa: TRY004
                             f"{short_repr(item, 80)}")
        try:
            values[item] = _label(item, raw, kind, scale, label_values)
        except ValueError as exc:  # every bad label is named, not the first only
            problems.append(str(exc))
    if problems:
        raise ValueError("\n".join(problems))
    grades = None
    if kind == "ordinal":
        if scale is not None:
            grades = (int(scale[0]), int(scale[1]))
        elif values:
            grades = (int(min(values.values())), int(max(values.values())))
        if grades is not None and grades[1] - grades[0] + 1 > _MAX_GRADES:
            raise ValueError(f"calibrate: ordinal labels span {grades[0]}..{grades[1]}, more "
                             f"than {_MAX_GRADES} grades; use kind='continuous' / --kind "
                             f"continuous")
    return _Labels(values=values, grades=grades)


def _check_options(
    kind: object, scale: object, confidence: object, resamples: object, seed: object
) -> tuple[float, float] | None:
    if kind not in _KINDS:
        raise ValueError(f"calibrate: kind must be one of {', '.join(_KINDS)}, got "
                         f"{short_repr(kind)}")
    check_settings(confidence, resamples)
    if not is_int(seed):
        raise ValueError(f"calibrate: seed must be an int, got {short_repr(seed)}")
    if scale is None:
        return None
    if kind == "binary":
        raise ValueError("calibrate: scale is for ordinal and continuous labels, not binary")
    if (not isinstance(scale, tuple | list) or len(scale) != 2
            or not all(is_finite_number(v) for v in scale)
            or not scale[0] < scale[1] or not math.isfinite(scale[1] - scale[0])):
        raise ValueError(f"calibrate: scale must be (low, high), finite numbers with low < "
                         f"high and a finite span, got {short_repr(scale)}")
    if kind == "ordinal" and not all(float(v).is_integer() for v in scale):
        raise ValueError(f"calibrate: an ordinal scale must be whole grades, got "
                         f"{short_repr(scale)}")
    return (float(scale[0]), float(scale[1]))


def _thresholds(threshold: object, scorer_ids: Sequence[str]) -> dict[str, float]:
    def checked(name: str, value: object) -> float:
        if not is_finite_number(value):
            raise ValueError(f"calibrate: {name} must be a finite number, got "
                             f"{short_repr(value)}")
        return float(value)

    if threshold is None:
        return dict.fromkeys(scorer_ids, DEFAULT_PASS_MIN)
    if isinstance(threshold, Mapping):
        unknown = sorted(set(threshold) - set(scorer_ids))
        if unknown:
            raise ValueError(f"calibrate: threshold for scorer(s) not calibrated: "
                             f"{', '.join(map(repr, unknown))}")
        return {sid: checked(f"threshold[{sid!r}]", threshold.get(sid, DEFAULT_PASS_MIN))
                for sid in scorer_ids}
    value = checked("threshold", threshold)
    return dict.fromkeys(scorer_ids, value)


def _panel_json(outcome: ScorerOutcome) -> dict[str, Any] | None:
    """A panel run's members as its stored row keeps them (``metadata["panel"]``)."""
    result = outcome.result
    if result is None and outcome.run_error is not None:
        result = outcome.run_error.partial
    panel = None if result is None else result.details_as(PanelResult)
    if panel is None:
        return None
    return {panel.kind: panel.to_json()}


def _rows_of(rows_or_report: Iterable[ScoreRow] | EvalReport) -> list[ScoreRow]:
    """The rows to calibrate; a report's kept results as the rows ``run_evals`` stores."""
    if not isinstance(rows_or_report, EvalReport):
        return list(rows_or_report)
    report = rows_or_report
    if report.results is None:
        raise ValueError("calibrate: the report has no per-item results; run "
                         "run_evals(..., keep_results=True), or pass the batch's stored rows")
    return [
        ScoreRow(id=row_id(result.run_id, o.scorer_id), scorer_id=o.scorer_id,
                 run_id=result.run_id, batch_id=report.batch_id, status=o.status,
                 score=o.score, dataset_item_id=result.item_id or f"#{result.index}",
                 metadata=_panel_json(o))
        for result in report.results for o in result.outcomes
    ]


def _member_rows(rows: Iterable[ScoreRow]) -> list[ScoreRow]:
    """Each panel member's outcome as a row of its own, scorer id ``"{panel}/{member}"``, from
    the panel's rows (``metadata["panel"]["members"]``): one judge of a jury, calibrated."""
    found = []
    for row in rows:
        panel = (row.metadata or {}).get("panel")
        members = panel.get("members") if isinstance(panel, Mapping) else None
        for member in members if isinstance(members, list) else ():
            name = member.get("scorerId") if isinstance(member, Mapping) else None
            if not isinstance(name, str):
                continue
            status, score = member.get("status"), member.get("score")
            scored = status == "scored" and is_finite_number(score)
            scorer_id = f"{row.scorer_id}/{name}"
            found.append(ScoreRow(
                id=row_id(row.run_id, scorer_id), scorer_id=scorer_id, run_id=row.run_id,
                batch_id=row.batch_id,
                status="scored" if scored else ("not_scorable" if status == "not_scorable"
                                                else "failed"),
                score=float(score) if scored else None, dataset_item_id=row_item_id(row)))
    return found


@attrs.frozen(kw_only=True)
class _Paired:
    """One scorer's scored, labelled items: what every statistic is computed from."""

    kind: CalibrationKind
    scores: Sequence[float]  # score units
    labels: Sequence[float]  # the labels' units
    label_pass: Sequence[bool]
    cells: Sequence[int]  # 2 * label passes + scorer passes: the pass/fail table's cell
    errors: Sequence[float]  # |score - label| in the labels' units
    grade_cells: Sequence[int]  # ordinal: label grade * grades + scorer grade (0-based)
    grades: int  # ordinal: how many grades
    ranked: RankedPairs | None  # continuous: scores and labels ranked once

    def pass_counts(self, idx: Sequence[int]) -> list[list[int]]:
        """The pass/fail table of the items ``idx``: ``counts[label passes][scorer passes]``."""
        found = Counter(map(self.cells.__getitem__, idx))
        return [[found[0], found[1]], [found[2], found[3]]]

    def grade_counts(self, idx: Sequence[int]) -> list[list[int]]:
        """The grades table of the items ``idx``: ``counts[label grade][scorer grade]``."""
        found = Counter(map(self.grade_cells.__getitem__, idx))
        k = self.grades
        return [[found[i * k + j] for j in range(k)] for i in range(k)]


def _pass_kappa(counts: list[list[int]]) -> Fraction | None:
    # The labels of one class give κ = 0 (or 0/0) whatever the scorer does: not a measure.
    if 0 in (sum(counts[0]), sum(counts[1])):
        return None
    return kappa(counts)


# A statistic of the items ``idx``, given their pass/fail table.
_Statistic = Callable[[_Paired, Sequence[int], list[list[int]]], float | None]


def _headline_kappa(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    if p.kind == "ordinal":
        grades = p.grade_counts(idx)
        if sum(1 for row in grades if any(row)) < 2:
            return None
        found = kappa(grades, quadratic=True)
    else:
        found = _pass_kappa(counts)
    return None if found is None else float(found)


def _accuracy(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    return (counts[0][0] + counts[1][1]) / len(idx) if idx else None


def _precision(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    passed = counts[0][1] + counts[1][1]
    return counts[1][1] / passed if passed else None


def _recall(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    passing = counts[1][0] + counts[1][1]
    return counts[1][1] / passing if passing else None


def _mae(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    if not idx:
        return None
    try:
        return math.fsum(map(p.errors.__getitem__, idx)) / len(idx)
    except OverflowError:
        # Errors near the largest float (labels of ±1e308): their sum overflows, the sum of
        # each divided by n first does not (at the price of a last bit).
        n = len(idx)
        return math.fsum(p.errors[i] / n for i in idx)


def _spearman(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    return None if p.ranked is None else p.ranked.spearman(idx)


def _kendall(p: _Paired, idx: Sequence[int], counts: list[list[int]]) -> float | None:
    return None if p.ranked is None else p.ranked.kendall(idx)


_COMPUTED: Final[Mapping[str, _Statistic]] = {
    "kappa": _headline_kappa, "spearman": _spearman, "kendall": _kendall, "mae": _mae,
    "accuracy": _accuracy, "precision": _precision, "recall": _recall,
}


def _statistics(kind: CalibrationKind) -> dict[str, _Statistic]:
    """The statistics reported for ``kind`` (:data:`STATISTICS`), by field name."""
    return {name: _COMPUTED[name] for name in STATISTICS[kind]}


def _why_undefined(name: str, p: _Paired, idx: Sequence[int]) -> str:
    """Why the statistic ``name`` is undefined on all the paired items."""
    if not idx:
        return "no labelled item was scored"
    label_classes = sorted({p.label_pass[i] for i in idx})
    if name == "kappa" and p.kind == "ordinal":
        return f"the labels hold one grade only ({p.labels[idx[0]]:g})"
    if name == "kappa":
        return f"the labels hold one class only ({'pass' if label_classes[0] else 'fail'})"
    if name == "precision":
        return "the scorer passed no labelled item"
    if name == "recall":
        return "no labelled item passes"
    if len(idx) < 2:
        return "fewer than two items"
    side = "labels" if len({p.labels[i] for i in idx}) == 1 else "scores"
    return f"the {side} are all equal"


_WHAT: Final = {"kappa": "kappa", "accuracy": "accuracy", "precision": "precision",
                "recall": "recall", "mae": "the MAE", "spearman": "Spearman's rho",
                "kendall": "Kendall's tau"}


def _estimates(
    p: _Paired, n: int, *, confidence: float, resamples: int, key: bytes
) -> dict[str, Estimate]:
    statistics = _statistics(p.kind)
    everything = list(range(n))
    counts = p.pass_counts(everything)
    values = {name: stat(p, everything, counts) for name, stat in statistics.items()}
    defined = {name: stat for name, stat in statistics.items() if values[name] is not None}
    draws: dict[str, list[float | None]] = {name: [] for name in defined}
    if defined:
        for idx in resample_indices(n, resamples=resamples, key=key):
            counts = p.pass_counts(idx)
            for name, stat in defined.items():
                draws[name].append(stat(p, idx, counts))
    found = {}
    for name, value in values.items():
        if value is None:
            found[name] = Estimate(value=None, reason=_why_undefined(name, p, everything))
            continue
        interval = percentile_interval(draws[name], confidence=confidence, what=_WHAT[name])
        found[name] = Estimate(value=value, low=interval.low, high=interval.high,
                               reason=interval.reason, undefined_resamples=interval.undefined)
    return found


def _fitted(p: _Paired, n: int, threshold: float) -> FittedThreshold:
    """The score cut maximising pass/fail κ; ties: nearest the given threshold, then lowest."""
    everything = list(range(n))
    at_threshold = _pass_kappa(p.pass_counts(everything)) if n else None
    if at_threshold is None:
        reason = (_why_undefined("kappa", attrs.evolve(p, kind="binary"), everything)
                  if n else "no labelled item was scored")
        return FittedThreshold(threshold=None, kappa=None, kappa_at_threshold=None,
                               fitted_on=n, reason=reason)
    positives = sum(p.label_pass)
    negatives = n - positives
    best: tuple[Fraction, float, float] | None = None  # (κ, -distance, -cut)
    true_pos = false_pos = 0
    order = sorted(range(n), key=lambda i: -p.scores[i])
    start = 0
    while start < n:  # lower the cut one distinct score at a time
        cut = p.scores[order[start]]
        while start < n and p.scores[order[start]] == cut:
            if p.label_pass[order[start]]:
                true_pos += 1
            else:
                false_pos += 1
            start += 1
        counts = [[negatives - false_pos, false_pos], [positives - true_pos, true_pos]]
        found = kappa(counts)
        if found is not None:
            candidate = (found, -abs(cut - threshold), -cut)
            if best is None or candidate > best:
                best = candidate
    if best is None:  # pragma: no cover - the scorer passing every item has κ = 0
        raise AssertionError("no cut")
    if best[0] <= 0:
        # Every cut agrees with the labels at chance or worse (the scores run against them,
        # or say nothing): a fitted "threshold" would only pick the least bad noise.
        return FittedThreshold(
            threshold=None, kappa=None, kappa_at_threshold=float(at_threshold), fitted_on=n,
            reason=f"no cut agrees with the labels better than chance (the best kappa is "
                   f"{float(best[0]):.3f}): the scores say nothing about the labels, or run "
                   f"against them")
    return FittedThreshold(threshold=-best[2], kappa=float(best[0]),
                           kappa_at_threshold=float(at_threshold), fitted_on=n)


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


@attrs.frozen(kw_only=True)
class _Settings:
    kind: CalibrationKind
    scale: tuple[float, float] | None
    confidence: float
    resamples: int
    seed: int


def _calibrate_scorer(
    scorer_id: str, rows: Mapping[str, ScoreRow], labels: _Labels, threshold: float,
    settings: _Settings,
) -> ScorerCalibration:
    kind, scale = settings.kind, settings.scale
    low, span = (scale[0], scale[1] - scale[0]) if scale is not None else (0.0, 1.0)
    label_cut = low + threshold * span  # the threshold in the labels' units
    ids: list[str] = []
    not_scored: dict[str, str] = {}
    for item in sorted(labels.values.keys() & rows.keys()):
        row = rows[item]
        if row.status == "scored" and row.score is not None and math.isfinite(row.score):
            ids.append(item)
        else:
            not_scored[item] = row.status
    scores = [float(rows[i].score) for i in ids]  # type: ignore[arg-type]
    judged = [low + s * span for s in scores]  # the scores in the labels' units
    values = [labels.values[i] for i in ids]
    label_pass = [v == 1.0 if kind == "binary" else v >= label_cut for v in values]
    first, last = labels.grades if labels.grades is not None else (0, 0)
    grades = last - first + 1
    grade_cells = []
    if kind == "ordinal":
        grade_cells = [(int(v) - first) * grades
                       + min(last, max(first, _round_half_up(j))) - first
                       for v, j in zip(values, judged, strict=True)]
    paired = _Paired(
        kind=kind, scores=scores, labels=values, label_pass=label_pass,
        cells=[2 * passes + (s >= threshold) for passes, s in zip(label_pass, scores,
                                                                   strict=True)],
        errors=[abs(j - v) for j, v in zip(judged, values, strict=True)],
        grade_cells=grade_cells, grades=grades,
        ranked=RankedPairs(judged, values) if kind == "continuous" else None,
    )
    n = len(ids)
    key = bootstrap_key(settings.seed, f"calibrate:{scorer_id}")
    found = _estimates(paired, n, confidence=settings.confidence,
                       resamples=settings.resamples, key=key)
    everything = list(range(n))
    confusion = ConfusionMatrix(
        classes=("fail", "pass"),
        counts=tuple(tuple(r) for r in paired.pass_counts(everything)),
    )
    grade_table = None
    if kind == "ordinal":
        grade_table = ConfusionMatrix(
            classes=tuple(str(g) for g in range(first, last + 1)),
            counts=tuple(tuple(r) for r in paired.grade_counts(everything)),
        )
    return ScorerCalibration(
        scorer_id=scorer_id, n=n, threshold=threshold, kappa=found["kappa"],
        kappa_kind="quadratic" if kind == "ordinal" else "cohen",
        accuracy=found["accuracy"], precision=found["precision"], recall=found["recall"],
        confusion=confusion, grades=grade_table, spearman=found.get("spearman"),
        kendall=found.get("kendall"), mae=found.get("mae"),
        fitted_threshold=_fitted(paired, n, threshold),
        not_scored=not_scored,
        without_row=tuple(sorted(labels.values.keys() - rows.keys())),
    )


def calibrate(
    rows_or_report: Iterable[ScoreRow] | EvalReport,
    labels: Mapping[str, LabelValue],
    *,
    kind: CalibrationKind = "binary",
    threshold: float | Mapping[str, float] | None = None,
    scale: tuple[float, float] | None = None,
    label_values: Mapping[str, float | bool] | None = None,
    scorer_ids: Sequence[str] | None = None,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> Calibration:
    """Measure each scorer of a batch against human labels, with seeded bootstrap intervals.

    Items are paired by id (:func:`~scorecore.evals.store.row_item_id`); an item's trials are one
    item scored with the mean of its scored trials (as :func:`compare` does); items whose runs
    all failed or were not scorable are listed apart, not counted. Labelled items without
    rows and rows without labels are listed, never silently dropped.

    An item **passes** when its score is at least ``threshold`` (score units; 0.5 by
    default, or per scorer id), and by the labels when its label is true (binary) or at
    least the threshold in the labels' units. Reported per scorer: ``n``; κ — Cohen's κ of
    pass/fail (binary, continuous) or quadratic-weighted κ of the grades, the score rounded
    half up to the nearest grade (ordinal); accuracy, precision, recall and the confusion
    matrix at the threshold; Spearman's ρ and Kendall's τ-b (continuous); the MAE in the
    labels' units (ordinal, continuous); and the threshold that would maximise κ, **fitted
    on these labels** (:class:`FittedThreshold`). A statistic that is undefined on the
    data (no item, labels of one class only, a constant side) is ``None`` with the reason.

    Args:
        rows_or_report: one batch's stored rows, or the :class:`EvalReport` of
            ``run_evals(..., keep_results=True)``.
        labels: item id → label: a bool, a number or a string valued by ``label_values``
            (``scorecore_adapters.labels.read_labels`` reads them from a JSONL file).
        kind: ``"binary"`` (pass/fail: bool or 1/0), ``"ordinal"`` (whole grades, e.g.
            1..5) or ``"continuous"`` (numbers).
        threshold: when an item passes, in score units: one number, or per scorer id.
        scale: ``(low, high)`` of the labels, for scores in [0, 1] (a score ``s`` reads as
            the label ``low + s * (high - low)``); without it scores and labels share units.
            For ordinal labels it also fixes the grades (else the lowest to the highest label).
        label_values: the value of each string label (``{"good": 1, "bad": 0}``).
        scorer_ids: the scorers to calibrate (default: every scorer of the rows).
        confidence: the intervals' confidence.
        resamples: the bootstrap's resample count.
        seed: the bootstrap's seed; the same rows, labels and seed give the same result.

    Raises:
        ValueError: a bad option, a label that does not fit ``kind``, rows of several
            batches, an unknown scorer id, or a report without kept results.

    >>> from scorecore.evals import ScoreRow, calibrate
    >>> scores = {"a": 0.9, "b": 0.8, "c": 0.2, "d": 0.6, "e": 0.1, "f": 0.7}
    >>> rows = [ScoreRow(id=i, scorer_id="judge", run_id=f"b:{i}", batch_id="b",
    ...                  status="scored", score=s, dataset_item_id=i) for i, s in scores.items()]
    >>> labels = {"a": True, "b": True, "c": False, "d": False, "e": False, "g": True}
    >>> result = calibrate(rows, labels, resamples=200)
    >>> judge = result.scorer("judge")
    >>> judge.n, judge.kappa.value, judge.accuracy.value, judge.fitted_threshold.threshold
    (5, 0.6153846153846154, 0.8, 0.8)
    >>> result.labels_without_rows, result.rows_without_labels
    (('g',), ('f',))
    """
    checked_scale = _check_options(kind, scale, confidence, resamples, seed)
    values = dict(label_values or {})
    all_rows = _rows_of(rows_or_report)
    batches = sorted({r.batch_id for r in all_rows})
    if len(batches) > 1:
        raise ValueError(f"calibrate: rows of several batches ({', '.join(batches[:5])}); "
                         f"calibrate one batch at a time")
    read = _read_labels(labels, kind, checked_scale, values)
    index = rows_by_item(all_rows)
    chosen = sorted(index) if scorer_ids is None else list(scorer_ids)
    if any(sid not in index for sid in chosen):
        members = rows_by_item(_member_rows(all_rows))
        index.update({sid: members[sid] for sid in chosen if sid in members})
        unknown = [sid for sid in chosen if sid not in index]
        if unknown:
            listed = f"; panel members: {', '.join(sorted(members))}" if members else ""
            raise ValueError(f"calibrate: no rows of scorer(s) {', '.join(map(repr, unknown))} "
                             f"(the rows' scorers: {', '.join(sorted(index)) or 'none'}"
                             f"{listed})")
    per_scorer = _thresholds(threshold, chosen)
    settings = _Settings(kind=kind, scale=checked_scale, confidence=confidence,
                         resamples=resamples, seed=seed)
    items = {item for rows in index.values() for item in rows}
    return Calibration(
        batch_id=batches[0] if batches else "",
        kind=kind,
        scale=checked_scale,
        labels=len(read.values),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        scorers=tuple(_calibrate_scorer(sid, index[sid], read, per_scorer[sid], settings)
                      for sid in chosen),
        labels_without_rows=tuple(sorted(read.values.keys() - items)),
        rows_without_labels=tuple(sorted(items - read.values.keys())),
    )
