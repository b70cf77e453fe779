"""Results people can read: failure causes grouped, and one self-contained HTML report.

:func:`render_report` turns a batch's stored rows (and optionally a baseline batch's) into
one HTML file with inline CSS, script and SVG charts and no network asset: it opens from disk,
offline. Every value from the rows is escaped; the items' data is packed (gzip, base64) and
unpacked by the browser, so a 10,000-item batch keeps its values in a file of a few megabytes;
past a 4.5 MB budget long values are cut (the store keeps them whole); failure causes never.

>>> from scorecore.evals import ScoreRow
>>> rows = [ScoreRow(id="1", scorer_id="exact", run_id="b:1", batch_id="b", status="scored",
...                  score=1.0, dataset_item_id="1")]
>>> page = render_report(rows, batch_id="b")
>>> page.startswith("<!DOCTYPE html>"), "http://" in page or "https://" in page
(True, False)
"""

from scorecore_adapters.report._causes import (
    FailureCause,
    FailureGroup,
    FailureTally,
    cause_of_outcome,
    cause_of_row,
    group_failures,
)
from scorecore_adapters.report._html import render_report

__all__ = [
    "FailureCause",
    "FailureGroup",
    "FailureTally",
    "cause_of_outcome",
    "cause_of_row",
    "group_failures",
    "render_report",
]
