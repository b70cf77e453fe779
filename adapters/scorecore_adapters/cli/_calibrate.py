"""``scorecore calibrate BATCH --labels FILE``: scorers against human labels; a κ gate."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, TextIO

import anyio
import attrs

from scorecore.evals import (
    Calibration,
    LabelValue,
    ScoreRow,
    StoreError,
    Threshold,
    calibrate,
)
from scorecore.evals.engine import TrustFold
from scorecore.evals.results import (
    CascadeSummary,
    ConfusionMatrix,
    Estimate,
    ScorerCalibration,
)
from scorecore_adapters.cli._common import (
    EXIT_FAILED,
    EXIT_PASSED,
    UsageError,
    clip,
    open_url,
    print_table,
    printable,
)
from scorecore_adapters.cli._labels import STORE, store_label_values
from scorecore_adapters.cli._trust import print_cascades
from scorecore_adapters.labels import LabelFileError, read_labels
from scorecore_adapters.report._calibration import (
    LabelledRows,
    estimate_notes,
    statistic_columns,
)
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Store

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


def _ids(ids: Sequence[str], total: int | None = None) -> str:
    total = len(ids) if total is None else total
    shown = ", ".join(printable(clip(i, 60)) for i in ids[:_LISTED])
    return shown + (f", … ({total} in all)" if total > _LISTED else "")


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


def print_calibration(
    result: Calibration, labels: str, out: TextIO, *,
    without_label: tuple[int, Sequence[str]] | None = None,
) -> None:
    """The calibration as a table, then each scorer's confusion matrix and the notes;
    ``without_label``: the count and the first ids of the items without a label, when
    ``result`` was computed from the labelled items' rows only."""
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
    count, first = ((len(result.rows_without_labels), result.rows_without_labels)
                    if without_label is None else without_label)
    if count:
        print(f"items without a label: {_ids(first, count)}", file=out)


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


@attrs.define
class LabelledScan:
    """What a calibration reads of a stored batch, a page at a time: the labelled items' rows
    (:class:`LabelledRows`) and the cascade runs of the rows ``keep`` takes, never the batch."""

    labelled: LabelledRows
    trust: TrustFold = attrs.field(factory=TrustFold)
    rows: int = 0

    async def read(self, store: Store, batch_id: str, keep: Callable[[ScoreRow], bool]) -> None:
        """Read ``batch_id``'s pages (the store open); no rows is a usage error."""
        async with aclosing(store.pages(batch_id)) as pages:
            async for page in pages:
                self.rows += len(page)
                self.labelled.add(page)
                for row in page:
                    if keep(row):
                        self.trust.add_row(row)
        if not self.rows:
            raise UsageError(f"no rows for batch {batch_id!r} in {store.url}")


async def unlabelled_ids(
    store: Store, batch_id: str, labels: Mapping[str, LabelValue], take: Callable[[str], None]
) -> None:
    """Give ``take`` each item id of the batch without a label, sorted (the store open): the
    database lists the distinct ids, a page at a time."""
    async with aclosing(store.item_ids(batch_id)) as pages:
        async for page in pages:
            for item in page:
                if item not in labels:
                    take(item)


def in_store(url: str, work: Callable[[Store], Awaitable[None]]) -> None:
    """``work(store)`` in the store ``url`` names, open read-only; unreadable rows are usage
    errors."""
    store = open_url(url, must_exist=True, read_only=True)

    async def run() -> None:
        async with store:
            await work(store)

    try:
        anyio.run(run)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def scan_labelled(
    url: str, batch_id: str, labels: Mapping[str, LabelValue], keep: Callable[[ScoreRow], bool],
) -> LabelledScan:
    """``batch_id`` read once, a page at a time, for its calibration against ``labels``."""
    scan = LabelledScan(LabelledRows(labels))
    in_store(url, lambda store: scan.read(store, batch_id, keep))
    return scan


def labelled_cascades(
    trust: TrustFold, scorer_ids: Sequence[str], labels: Mapping[str, LabelValue],
    thresholds: Mapping[str, float],
) -> list[CascadeSummary]:
    """Each cascade of ``scorer_ids`` (in that order) with its tiers' agreement on the runs
    each decided, at its scorer's pass mark (its threshold, 0.5 without one)."""
    by_mark: dict[float, dict[str, CascadeSummary]] = {}
    found = []
    for sid in scorer_ids:
        mark = thresholds.get(sid, 0.5)
        if mark not in by_mark:
            by_mark[mark] = {c.scorer_id: c for c in trust.cascades(labels, threshold=mark)}
        if sid in by_mark[mark]:
            found.append(by_mark[mark][sid])
    return found


class _Unlabelled:
    """The items without a label: their count and the first :data:`_LISTED` ids."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def take(self, item: str) -> None:
        self.count += 1
        if len(self.first) < _LISTED:
            self.first.append(item)


def json_with_unlabelled(
    url: str, document: Mapping[str, Any], at: Sequence[str], *, batch_id: str,
    labels: Mapping[str, LabelValue], write: Callable[[Iterable[str]], None],
    ensure_ascii: bool,
) -> None:
    """``write`` the text ``json.dumps(document, indent=2)`` makes and a newline, with the list
    at the key path ``at`` (its value in ``document`` is not read) being the ids of the batch
    without a label, as the store ``url`` lists them, one id at a time: never all held.

    The ids are spooled (to a file past 1 MB) before ``write`` is called: a store failing
    midway raises its error and nothing is written, never half a JSON document that a pipe or
    a later reader would take for whole."""
    depth = len(at)
    attempt = 0
    while True:
        # A string the document cannot already hold where the list goes: NUL is escaped in
        # JSON text, and a document that happens to hold this one gets the next.
        marker = json.dumps(f"\0unlabelled {attempt}", ensure_ascii=ensure_ascii)
        text = json.dumps(_placed(document, at, json.loads(marker)), indent=2,
                          ensure_ascii=ensure_ascii, default=str)
        if text.count(marker) == 1:
            break
        attempt += 1
    head, tail = text.split(marker, 1)
    inner = "\n" + "  " * (depth + 1)
    with tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+",
                                       encoding="utf-8") as spool:
        written = 0

        def take(item: str) -> None:
            nonlocal written
            spool.write(("," if written else "") + inner
                        + json.dumps(item, ensure_ascii=ensure_ascii))
            written += 1

        in_store(url, lambda store: unlabelled_ids(store, batch_id, labels, take))
        spool.seek(0)

        def chunks() -> Iterator[str]:
            yield head + "["
            while block := spool.read(1 << 16):
                yield block
            yield ("\n" + "  " * depth + "]" if written else "]") + tail + "\n"

        write(chunks())


def _placed(document: Mapping[str, Any], at: Sequence[str], value: str) -> dict[str, Any]:
    """``document`` with ``value`` at the key path ``at`` (copies along the path only)."""
    key, *rest = at
    return {**document, key: _placed(document[key], rest, value) if rest else value}


def calibrate_command(args: argparse.Namespace, out: TextIO) -> int:
    """Calibrate a stored batch against labels; with ``--min-kappa``, exit 1 when a scorer's
    κ interval reaches below it (or κ is undefined).

    The batch is read a page at a time, keeping only its labelled items' rows (and its
    cascades' runs); the items without a label are listed by the store."""
    labels = labels_of(args)
    chosen = set(args.scorer or ())
    scan = scan_labelled(args.store, args.batch, labels,
                         lambda row: not chosen or row.scorer_id in chosen)
    result = calibration_of(args, scan.labelled.rows(), threshold=args.threshold,
                            scorer_ids=args.scorer or None, labels=labels)
    # A cascade's tiers against the labels: each tier's agreement on the runs it decided.
    pass_mark = 0.5 if args.threshold is None else float(args.threshold)
    cascades = scan.trust.cascades(labels, threshold=pass_mark)
    failed: tuple[str, ...] = ()
    if args.min_kappa is not None:
        failed = result.failed_checks(args.min_kappa)
    code = EXIT_FAILED if failed else EXIT_PASSED
    if args.json:
        document: dict[str, Any] = {
            **result.to_json(), "labelsFile": args.labels, "minKappa": args.min_kappa,
            "verdict": None if args.min_kappa is None else ("failed" if failed else "passed"),
            "failedChecks": list(failed), "exitCode": code,
            "cascades": [c.to_json() for c in cascades],
        }
        json_with_unlabelled(args.store, document, ("rowsWithoutLabels",), batch_id=args.batch,
                             labels=labels, write=out.writelines, ensure_ascii=False)
        return code
    unlabelled = _Unlabelled()
    in_store(args.store, lambda store: unlabelled_ids(store, args.batch, labels,
                                                       unlabelled.take))
    print_calibration(result, args.labels, out,
                      without_label=(unlabelled.count, unlabelled.first))
    print_cascades(cascades, out=out)
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
