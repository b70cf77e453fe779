"""Checked by ``mypy --strict``, never executed: calibrating scorers against human labels."""

from __future__ import annotations

from typing import Literal, assert_type

from scorecore.evals import Calibration, EvalReport, LabelValue, ScoreRow, calibrate
from scorecore.evals.results import ConfusionMatrix, Estimate
from scorecore_adapters.labels import read_labels


def calibrated(rows: list[ScoreRow], report: EvalReport) -> None:
    labels = read_labels("labels.jsonl")
    assert_type(labels, dict[str, LabelValue])
    result = calibrate(rows, labels, kind="ordinal", scale=(1, 5), label_values={"good": 4})
    assert_type(result, Calibration)
    assert_type(calibrate(report, {"a": True}, threshold={"judge": 0.7}), Calibration)
    judge = result.scorer("judge")
    assert_type(judge.kappa, Estimate)
    assert_type(judge.kappa.value, float | None)
    assert_type(judge.kappa_kind, Literal["cohen", "quadratic"])
    assert_type(judge.spearman, Estimate | None)
    assert_type(judge.grades, ConfusionMatrix | None)
    assert_type(judge.fitted_threshold.threshold, float | None)
    assert_type(result.failed_checks(0.6), tuple[str, ...])
    assert_type(judge.caveat(), str | None)
    calibrate(rows, labels, kind="nominal")  # type: ignore[arg-type]
    calibrate(rows, {"a": [1, 2]})  # type: ignore[dict-item]
