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

__all__ = [
    "DEFAULT_LABELS_TABLE",
    "Label",
    "LabelConflictError",
    "LabelStore",
    "labels_for_calibration",
]
