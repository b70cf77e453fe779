"""``scorecore calibrate BATCH --labels FILE``: scorers against human labels; a κ gate."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from scorecore.evals import (
    Calibration,
    LabelValue,
    ScoreRow,
    Threshold,
    calibrate,
    cascade_summaries,
)
from scorecore.evals.results import ConfusionMatrix, Estimate, ScorerCalibration
from scorecore_adapters.cli._common import (
    EXIT_FAILED,
    EXIT_PASSED,
    UsageError,
    clip,
    print_json,
    print_table,
    printable,
    read_batch,
)
from scorecore_adapters.cli._labels import STORE, store_label_values
from scorecore_adapters.cli._trust import print_cascades
from scorecore_adapters.labels import LabelFileError, read_labels
from scorecore_adapters.report._calibration import estimate_notes, statistic_columns
from scorecore_adapters.report._text import number

_LISTED = 10


def _value(text: str) -> float | bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"--label-value must look like TEXT=NUMBER or TEXT=true, got "
                         f"{text!r} as the value") from None


def _label_values(texts: Sequence[str]) -> dict[str, float | bool]:
    values: dict[str, float | bool] = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise UsageError(f"--label-value must look like TEXT=VALUE (good=1), got {text!r}")
        values[name] = _value(value)
    return values


def _scale(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    low, colon, high = text.partition(":")
    if colon:
        try:
            return (float(low), float(high))
        except ValueError:
            pass
    raise UsageError(f"--scale must look like LOW:HIGH (1:5), got {text!r}")


def labels_of(args: argparse.Namespace) -> dict[str, LabelValue]:
    """The ``--labels`` file, checked against ``--kind``, ``--scale`` and ``--label-value``
    (before a batch runs, so a bad file costs no judge call); bad labels are usage errors."""
    if args.labels == STORE:
        batch = getattr(args, "batch", None)
        if batch is None:
            raise UsageError("--labels store reads a stored batch's labels: this command "
                             "has no batch; give --labels FILE")
        labels = store_label_values(args.store, batch, getattr(args, "scorer", None) or [])
        calibration_of(args, [], threshold=None, labels=labels)
        return labels
    try:
        labels = read_labels(args.labels)
    except LabelFileError as exc:
        # Every bad line, one per line, as the file's problems list them.
        raise UsageError("\n".join(exc.problems)) from None
    calibration_of(args, [], threshold=None, labels=labels)
    return labels


def calibration_of(
    args: argparse.Namespace, rows: Sequence[ScoreRow], *,
    threshold: float | Mapping[str, float] | None, scorer_ids: Sequence[str] | None = None,
    labels: Mapping[str, LabelValue] | None = None,
) -> Calibration:
    """The batch's rows calibrated against ``--labels`` (read from the file unless given) with
    the label flags; bad labels or options are usage errors."""
    if labels is None:
        labels = labels_of(args)
    try:
        return calibrate(rows, labels, kind=args.kind, threshold=threshold,
                         scale=_scale(args.scale), label_values=_label_values(args.label_value),
                         scorer_ids=scorer_ids, seed=getattr(args, "seed", 0))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def report_thresholds(
    thresholds: Mapping[str, Threshold], rows: Sequence[ScoreRow]
) -> dict[str, float]:
    """``report``'s ``--threshold ID=MIN`` as calibration thresholds (the MIN of scorers the
    batch ran; other scorers pass at 0.5)."""
    present = {r.scorer_id for r in rows}
    return {sid: t.min for sid, t in thresholds.items()
            if t.min is not None and sid in present}


def _estimate(e: Estimate | None) -> str:
    if e is None:
        return "-"
    if e.value is None:
        return "undefined"
    if e.low is None or e.high is None:
        return f"{number(e.value)} (no interval)"
    return f"{number(e.value)} [{number(e.low)}, {number(e.high)}]"


def _fitted(s: ScorerCalibration) -> str:
    f = s.fitted_threshold
    if f.threshold is None or f.kappa is None:
        return "-"
    return f"{f.threshold:g} (kappa {f.kappa:.3f})"


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(printable(clip(i, 60)) for i in ids[:_LISTED])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _LISTED else "")


def _matrix(name: str, what: str, matrix: ConfusionMatrix, out: TextIO) -> None:
    width = max(len(c) for c in (*matrix.classes, "label"))
    counts = [max(len(str(v)) for v in column) for column in zip(*matrix.counts, strict=True)]
    cells = [max(w, len(c)) for w, c in zip(counts, matrix.classes, strict=True)]
    print(f"{name}: {what} (rows: label, columns: scorer)", file=out)
    print("  " + "label".ljust(width) + "  "
          + "  ".join(c.rjust(w) for c, w in zip(matrix.classes, cells, strict=True)), file=out)
    for label, row in zip(matrix.classes, matrix.counts, strict=True):
        print("  " + label.ljust(width) + "  "
              + "  ".join(str(v).rjust(w) for v, w in zip(row, cells, strict=True)), file=out)


def _notes(result: Calibration, s: ScorerCalibration, out: TextIO) -> None:
    for name, state, reason in estimate_notes(result, s, html=False):
        print(f"{s.scorer_id}: {name} {state}: {reason}", file=out)
    if s.fitted_threshold.threshold is None and s.fitted_threshold.reason is not None:
        print(f"{s.scorer_id}: no fitted threshold: {s.fitted_threshold.reason}", file=out)
    if s.not_scored:
        listed = [f"{item} ({status})" for item, status in s.not_scored.items()]
        print(f"{s.scorer_id}: labelled items not scored (left out): {_ids(listed)}",
              file=out)
    if s.without_row:
        print(f"{s.scorer_id}: labelled items it has no row for: {_ids(s.without_row)}",
              file=out)


def print_calibration(result: Calibration, labels: str, out: TextIO) -> None:
    """The calibration as a table, then each scorer's confusion matrix and the notes."""
    scale = f", scale {result.scale[0]:g}:{result.scale[1]:g}" if result.scale else ""
    print(f"calibrate {result.batch_id} against {labels}: {result.labels} label(s), "
          f"{result.kind}{scale} ({100 * result.confidence:g}% bootstrap intervals, "
          f"{result.resamples} resamples, seed {result.seed})", file=out)
    columns = statistic_columns(result, html=False)
    headers = ("scorer", "n", "threshold", *(h for h, _ in columns), "fitted threshold")
    rows = [(s.scorer_id, str(s.n), f">= {s.threshold:g}",
             *(_estimate(s.estimate(stat)) for _, stat in columns), _fitted(s))
            for s in result.scorers]
    print_table(headers, rows, rich_output=out.isatty(), out=out)
    for s in result.scorers:
        _matrix(s.scorer_id, f"pass/fail at >= {s.threshold:g}", s.confusion, out)
        if s.grades is not None:
            _matrix(s.scorer_id, "grades (scores rounded to the nearest grade)", s.grades, out)
        _notes(result, s, out)
        caveat = s.caveat()
        if caveat is not None:
            print(f"{s.scorer_id}: {caveat}", file=out)
    if any(s.fitted_threshold.threshold is not None for s in result.scorers):
        print("fitted threshold: the cut that maximises kappa on these labels, fitted on "
              "them: its kappa is optimistic; check it on other labels before using it",
              file=out)
    if result.labels_without_rows:
        print(f"labels without rows in {result.batch_id}: {_ids(result.labels_without_rows)}",
              file=out)
    if result.rows_without_labels:
        print(f"items without a label: {_ids(result.rows_without_labels)}", file=out)


def print_agreement(result: Calibration, labels: str, out: TextIO) -> None:
    """Each scorer's κ against the labels in one line, and a caveat line for a scorer whose
    agreement cannot be told from chance (``scorecore eval --labels``)."""
    print(f"agreement with the labels in {labels} ({result.labels} label(s), {result.kind}; "
          f"{100 * result.confidence:g}% bootstrap intervals):", file=out)
    for s in result.scorers:
        kappa = "quadratic kappa" if s.kappa_kind == "quadratic" else "kappa"
        print(f"  {s.scorer_id}: {kappa} {_estimate(s.kappa)}, accuracy "
              f"{_estimate(s.accuracy)} over {s.n} labelled item(s), passing at "
              f">= {s.threshold:g}", file=out)
        caveat = s.caveat()
        if caveat is not None:
            print(f"  {s.scorer_id}: {caveat}", file=out)


def calibrate_command(args: argparse.Namespace, out: TextIO) -> int:
    """Calibrate a stored batch against labels; with ``--min-kappa``, exit 1 when a scorer's
    κ interval reaches below it (or κ is undefined)."""
    _, rows = read_batch(args.store, args.batch)
    labels = labels_of(args)
    result = calibration_of(args, rows, threshold=args.threshold,
                            scorer_ids=args.scorer or None, labels=labels)
    # A cascade's tiers against the labels: each tier's agreement on the runs it decided.
    chosen = [r for r in rows if not args.scorer or r.scorer_id in args.scorer]
    pass_mark = 0.5 if args.threshold is None else float(args.threshold)
    failed: tuple[str, ...] = ()
    if args.min_kappa is not None:
        failed = result.failed_checks(args.min_kappa)
    code = EXIT_FAILED if failed else EXIT_PASSED
    if args.json:
        document: dict[str, Any] = {
            **result.to_json(), "labelsFile": args.labels, "minKappa": args.min_kappa,
            "verdict": None if args.min_kappa is None else ("failed" if failed else "passed"),
            "failedChecks": list(failed), "exitCode": code,
            "cascades": [c.to_json() for c in cascade_summaries(chosen, labels=labels,
                                                                threshold=pass_mark)],
        }
        print_json(document, out)
        return code
    print_calibration(result, args.labels, out)
    print_cascades(cascade_summaries(chosen, labels=labels, threshold=pass_mark), out=out)
    if args.min_kappa is None:
        print("no gate: --min-kappa K exits 1 when a scorer's kappa interval reaches below K",
              file=out)
    elif failed:
        print(f"verdict: failed (min kappa {args.min_kappa:g}, read at the interval's lower "
              f"end)", file=out)
        for line in failed:
            print(f"  {line}", file=out)
    else:
        print(f"verdict: passed: every scorer's kappa interval is above {args.min_kappa:g}",
              file=out)
    return code
