"""``scorecore view``: a local review workbench over the score store, and its labels.

Reviewers browse batches, read runs in full and label what the judge got wrong; labels are
rows of the store (:class:`LabelStore`), read back by ``scorecore calibrate --labels store``
or written out by ``scorecore labels export``.
"""

from __future__ import annotations

from scorecore_adapters.storage._labels import (
    DEFAULT_LABELS_TABLE,
    Label,
    LabelConflictError,
    LabelStore,
    labels_for_calibration,
)
from scorecore_adapters.view._app import create_app
from scorecore_adapters.view._queue import (
    Candidate,
    LedgerLine,
    QueueEntry,
    agreement_ledger,
    candidate_of,
    review_queue,
)
from scorecore_adapters.view._runs import RunEntry, RunFilter, RunPage, entries_of, page_of
from scorecore_adapters.view._scale import Scale, scale_of
from scorecore_adapters.view._security import Guard
from scorecore_adapters.view._server import bind, running, serve

__all__ = [
    "DEFAULT_LABELS_TABLE",
    "Candidate",
    "Guard",
    "Label",
    "LabelConflictError",
    "LabelStore",
    "LedgerLine",
    "QueueEntry",
    "RunEntry",
    "RunFilter",
    "RunPage",
    "Scale",
    "agreement_ledger",
    "bind",
    "candidate_of",
    "create_app",
    "entries_of",
    "labels_for_calibration",
    "page_of",
    "review_queue",
    "running",
    "scale_of",
    "serve",
]
