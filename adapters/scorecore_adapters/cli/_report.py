"""``scorecore report BATCH``: one self-contained HTML file with everything about a batch."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from scorecore_adapters._workbenches import find_view
from scorecore_adapters.cli._calibrate import calibration_of, labels_of, report_thresholds
from scorecore_adapters.cli._common import EXIT_PASSED, UsageError, read_batch
from scorecore_adapters.cli._compare import baseline_of, compare_batches, thresholds_of
from scorecore_adapters.report import render_report


def report(args: argparse.Namespace, out: TextIO) -> int:
    """Write the HTML report of a stored batch (and its comparison with ``--baseline``, under
    ``compare``'s rules: changed scorers compared and marked unless
    ``--require-same-scorers``)."""
    thresholds = thresholds_of(args.threshold)
    store, rows = read_batch(args.store, args.batch)
    known = sorted({row.scorer_id for row in rows})
    for name in thresholds:
        if name not in known:
            raise UsageError(f"--threshold for scorer {name!r}, which batch {args.batch!r} did "
                             f"not run; its scorers: {', '.join(known)}")
    baseline = comparison = None
    if args.baseline is not None:
        args.baseline = baseline_of(None, args.baseline, args.store, args.batch)
        _, baseline = read_batch(args.store, args.baseline)
        comparison = compare_batches(baseline, rows, args, thresholds)
    calibration = labels = None
    if args.labels is None and (args.kind != "binary" or args.scale or args.label_value
                                or args.min_kappa is not None):
        raise UsageError("--kind, --scale, --label-value and --min-kappa describe --labels: "
                         "give --labels FILE")
    if args.labels is not None:
        labels = labels_of(args)
        calibration = calibration_of(args, rows, threshold=report_thresholds(thresholds, rows),
                                     labels=labels)
    view_url = None if args.no_view_links else args.view_url or find_view(store.url)
    html = render_report(rows, batch_id=args.batch, baseline=baseline, thresholds=thresholds,
                         tolerance=args.tolerance, source=store.url, comparison=comparison,
                         max_failures=args.max_failures,
                         max_failure_rate=args.max_failure_rate, calibration=calibration,
                         min_kappa=args.min_kappa, labels=labels, view_url=view_url)
    try:
        Path(args.output).write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write report {args.output}: {exc.strerror}") from None
    size = len(html.encode("utf-8"))
    print(f"report of batch {args.batch} ({len(rows)} rows) written to {args.output} "
          f"({size / 1e6:.2f} MB)", file=out)
    return EXIT_PASSED
