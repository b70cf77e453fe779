"""A batch's rows by scorer and item, its trials taken as one row (``compare``, ``calibrate``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from scorecore.evals._rows._row import ScoreRow, row_item_id
from scorecore.evals._stats._sums import mean_of

__all__: list[str] = []  # internal: used by compare and calibrate


def rows_by_item(rows: Iterable[ScoreRow]) -> dict[str, dict[str, ScoreRow]]:
    """Each scorer's row per item; an item's trials become one row (see :func:`one_row`)."""
    grouped: dict[str, dict[str, list[ScoreRow]]] = {}
    for row in rows:
        grouped.setdefault(row.scorer_id, {}).setdefault(row_item_id(row), []).append(row)
    return {sid: {key: one_row(trials) for key, trials in items.items()}
            for sid, items in grouped.items()}


def one_row(trials: Sequence[ScoreRow]) -> ScoreRow:
    """An item's rows over its trials as one: scored with the mean of the scored trials if
    any trial scored, else the first trial's row (one trial: that row)."""
    if len(trials) == 1:
        return trials[0]
    ordered = sorted(trials, key=lambda r: (r.run_id != f"{r.batch_id}:{row_item_id(r)}",
                                            r.run_id))
    scores = [r.score for r in ordered if r.status == "scored" and r.score is not None]
    if not scores:
        return ordered[0]
    first_scored = next(r for r in ordered if r.status == "scored")
    return attrs.evolve(first_scored, score=mean_of(scores))
