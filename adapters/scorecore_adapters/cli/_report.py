"""``scorecore report BATCH``: one self-contained HTML file with everything about a batch."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from contextlib import aclosing, closing
from typing import TextIO, final

import anyio
import attrs

from scorecore.evals import Calibration, Comparison, LabelValue, StoreError, Threshold
from scorecore_adapters._workbenches import find_view
from scorecore_adapters.cli._calibrate import calibration_of, labels_of, report_thresholds
from scorecore_adapters.cli._common import EXIT_PASSED, UsageError, open_url
from scorecore_adapters.cli._compare import baseline_of, compare_stored, thresholds_of
from scorecore_adapters.report._baseline import BaselineScores
from scorecore_adapters.report._calibration import LabelledRows
from scorecore_adapters.report._data import DEFAULT_BUDGET
from scorecore_adapters.report._html import write_page
from scorecore_adapters.report._scan import ReportBuild
from scorecore_adapters.storage import Store


def report(args: argparse.Namespace, out: TextIO) -> int:
    """Write the HTML report of a stored batch (and its comparison with ``--baseline``, under
    ``compare``'s rules: changed scorers compared and marked unless
    ``--require-same-scorers``)."""
    thresholds = thresholds_of(args.threshold)
    if args.labels is None and (args.kind != "binary" or args.scale or args.label_value
                                or args.min_kappa is not None):
        raise UsageError("--kind, --scale, --label-value and --min-kappa describe --labels: "
                         "give --labels FILE")
    store = open_url(args.store, must_exist=True, read_only=True)
    known = anyio.run(_scorers, store, args.batch)
    _check_thresholds(thresholds, known, args.batch)
    labels = None if args.labels is None else labels_of(args)
    comparison = None
    with closing(BaselineScores()) as scores:
        if args.baseline is not None:
            args.baseline = baseline_of(None, args.baseline, args.store, args.batch)
            # The store pairs the batches (compare's streaming pairing); report's seed is 0.
            paired = argparse.Namespace(**{**vars(args), "base": args.baseline,
                                           "new": args.batch, "seed": 0})
            comparison = compare_stored(paired, thresholds)
            anyio.run(_baseline_scores, store, args.baseline, scores)
        view_url = None if args.no_view_links else args.view_url or find_view(store.url)
        build = ReportBuild(known, thresholds=thresholds, max_failures=args.max_failures,
                            max_failure_rate=args.max_failure_rate, budget=DEFAULT_BUDGET,
                            baseline=scores)
        # The calibration pairs the labelled items' rows with their labels: those rows are
        # taken as the first scan reads the batch, the rest of the page is folded from it.
        labelled = None if labels is None else LabelledRows(labels)
        with closing(build):
            anyio.run(_scan, store, args.batch, build, labelled)
            page = _Page(comparison=comparison, source=store.url, view_url=view_url)
            if labels is not None and labelled is not None and build.digest is not None:
                rows = labelled.rows()
                page = attrs.evolve(
                    page, labels=labels, without_label=labelled.without_label(
                        items=build.digest.items),
                    calibration=calibration_of(
                        args, rows, threshold=report_thresholds(thresholds, rows),
                        labels=labels))
            return _write(args, build, out, page)


async def _scorers(store: Store, batch_id: str) -> list[str]:
    try:
        async with store:
            found = sorted(await store.batch_scorers(batch_id))
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if not found:
        raise UsageError(f"no rows for batch {batch_id!r} in {store.url}")
    return found


async def _baseline_scores(store: Store, batch_id: str, scores: BaselineScores) -> None:
    """The baseline's scores, for each item's delta, read a page at a time."""
    try:
        async with store, aclosing(store.pages(batch_id)) as pages:
            async for page in pages:
                scores.add(page)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


async def _scan(
    store: Store, batch_id: str, build: ReportBuild, labelled: LabelledRows | None
) -> None:
    """Feed ``build`` its scans (and ``labelled`` the first), the batch read a page at a
    time."""
    try:
        async with store:
            for scan in build.scans():
                async with aclosing(store.pages(batch_id)) as pages:
                    async for page in pages:
                        scan.add(page)
                        if labelled is not None:
                            labelled.add(page)
                scan.end()
                labelled = None
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _check_thresholds(
    thresholds: Mapping[str, Threshold], known: Sequence[str], batch_id: str
) -> None:
    for name in thresholds:
        if name not in known:
            raise UsageError(f"--threshold for scorer {name!r}, which batch {batch_id!r} did "
                             f"not run; its scorers: {', '.join(known)}")


@final
@attrs.frozen(kw_only=True)
class _Page:
    """What the page shows beside the scans: the comparison, the calibration, where from."""

    comparison: Comparison | None
    source: str
    view_url: str | None
    calibration: Calibration | None = None
    labels: Mapping[str, LabelValue] | None = None
    without_label: tuple[int, tuple[str, ...]] | None = None


def _write(args: argparse.Namespace, build: ReportBuild, out: TextIO, shown: _Page) -> int:
    try:
        with open(args.output, "w", encoding="utf-8") as page:
            write_page(page, build, batch_id=args.batch, thresholds=thresholds_of(args.threshold),
                       source=shown.source, comparison=shown.comparison,
                       view_url=shown.view_url, calibration=shown.calibration,
                       min_kappa=args.min_kappa, labels=shown.labels,
                       without_label=shown.without_label)
        size = os.path.getsize(args.output)
    except OSError as exc:
        raise UsageError(f"cannot write report {args.output}: {exc.strerror}") from None
    assert build.digest is not None  # noqa: S101 - after the scans
    print(f"report of batch {args.batch} ({build.digest.rows} rows) written to {args.output} "
          f"({size / 1e6:.2f} MB)", file=out)
    return EXIT_PASSED
