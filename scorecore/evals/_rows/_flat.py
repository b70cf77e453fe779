"""Item results as flat result rows and back: how a runner carries results between processes.

A worker turns each finished :class:`ItemResult` into one flat row per (item, scorer)
(:func:`result_rows`: ids, status, score, reason, errors, a failed run's stored cause, the
pair's judge costs and its panel or pairwise part); the driver regroups the rows into results
(:func:`item_results`) and folds them into the report :func:`run_evals` gives
(:func:`fold_result_rows`). The values are plain (int, float, bool, text, ``None``), so any
columnar format carries them (``scorecore_adapters.ray`` uses Arrow): :data:`RESULT_COLUMNS`
names them and their types.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from scorecore._core._values import ScoreResult, ScorerRun, ScorerRunError
from scorecore.evals._economics._batch import EconomicsFold, pair_costs
from scorecore.evals._report._fold import ReportFold
from scorecore.evals._report._values import EvalReport, ItemResult, ScorerOutcome
from scorecore.evals._rows._row import ScoreRow, row_id
from scorecore.evals._trust._fold import TrustFold

__all__ = ["RESULT_COLUMNS", "fold_result_rows", "item_results", "result_rows"]

RESULT_COLUMNS: Final[tuple[tuple[str, type[object]], ...]] = (
    ("index", int), ("run_id", str), ("item_id", str), ("scorer_id", str), ("status", str),
    ("score", float), ("reason", str), ("error", str), ("item_error", str),
    ("item_error_kind", str), ("failure", str), ("resumed", bool), ("duplicate_of", int),
    ("cost_usd", float), ("cost_known", bool), ("saved_usd", float), ("cache_hits", int),
    ("cache_misses", int), ("model_calls", int), ("budget_stopped", bool),
    ("spent_usd", float), ("spent_tokens", int), ("trust", str), ("not_scorable_kind", str),
)
"""Each result row's columns, in order, with the type of their values (each may be ``None``
but ``index``, ``run_id``, ``scorer_id``, ``status`` and the counts)."""

_TRUST_KEYS: Final = ("panel", "pairwise", "cascade")
"""The stored row's metadata the report's trust values are folded from (``trust`` column)."""
_FAILURE_KEYS: Final = ("failedStep", "completedSteps", "cause")
"""The stored row's metadata a failed run's error is rebuilt from (``failure`` column)."""


def _text(value: str | None) -> str | None:
    # Rows travel as UTF-8 text: a lone surrogate in a reason must not fail the whole batch.
    return None if value is None else value.encode("utf-8", "replace").decode("utf-8")


def _metadata_of(rows: Iterable[ScoreRow], keys: Sequence[str]) -> dict[tuple[str, str], str]:
    """The part of each stored row's metadata under ``keys`` (a panel or pairwise result, a
    failed run's cause), as JSON text, by (run id, scorer id), for the rows that have one."""
    out: dict[tuple[str, str], str] = {}
    for row in rows:
        metadata = row.metadata or {}
        kept = {key: metadata[key] for key in keys if key in metadata}
        if kept:
            out[(row.run_id, row.scorer_id)] = json.dumps(kept)
    return out


def result_rows(
    results: Iterable[ItemResult], *, stored: Iterable[ScoreRow] = (),
    spent: tuple[float, int] = (0.0, 0),
) -> list[dict[str, Any]]:
    """One result row per (item, scorer), an item's rows together, in the results' order.

    Args:
        results: finished items (as :class:`~scorecore.evals.engine.ItemScorer` and
            :class:`~scorecore.evals.engine.ItemRows` give them).
        stored: the rows stored for them: a pair's panel or pairwise part (``trust``, JSON
            text) is what its stored row keeps, which the report's ``panels`` and
            ``pairwise`` are folded from; a failed pair's step and structured cause
            (``failure``, JSON text) too, which :func:`item_results` rebuilds its
            ``run_error`` from.
        spent: what the worker's meter spent on these items (USD, tokens), put on the first
            row (0 on the others), so that summing the column gives the batch's spend.

    >>> from scorecore.evals import ItemResult
    >>> from scorecore.evals.results import ScorerOutcome
    >>> result = ItemResult(index=0, item_id="q1", run_id="b:q1", item=None,
    ...                     outcomes=(ScorerOutcome(scorer_id="s", status="scored", score=0.5),))
    >>> [row] = result_rows([result])
    >>> row["run_id"], row["scorer_id"], row["score"], row["cost_usd"]
    ('b:q1', 's', 0.5, 0.0)
    >>> list(item_results([row])) == [result]
    True
    """
    stored = list(stored)
    trust = _metadata_of(stored, _TRUST_KEYS)
    failures = _metadata_of((row for row in stored if row.status == "failed"), _FAILURE_KEYS)
    rows = [
        {"index": r.index, "run_id": r.run_id, "item_id": _text(r.item_id),
         "scorer_id": o.scorer_id, "status": o.status, "score": o.score,
         "reason": _text(o.reason), "error": _text(o.error), "item_error": _text(r.error),
         "item_error_kind": r.error_kind,
         "failure": None if o.resumed else failures.get((r.run_id, o.scorer_id)),
         "resumed": o.resumed, "duplicate_of": r.duplicate_of, **pair_costs(o),
         "spent_usd": 0.0, "spent_tokens": 0,
         "trust": None if o.resumed else trust.get((r.run_id, o.scorer_id)),
         "not_scorable_kind": o.not_scorable_kind}
        for r in results for o in r.outcomes
    ]
    if rows:
        rows[0]["spent_usd"], rows[0]["spent_tokens"] = spent
    return rows


def item_results(rows: Iterable[Mapping[str, Any]]) -> Iterator[ItemResult]:
    """The items' results back from :func:`result_rows`'s rows (an item's rows together).

    The results carry ids, statuses, scores, reasons, errors and a failed run's
    ``run_error`` (its step and structured cause; its ``partial`` result holds the run id
    only); the full results (step results, prompts, judge calls) are in the store's rows.
    """
    item: list[Mapping[str, Any]] = []
    for row in rows:
        if item and item[0]["index"] != row["index"]:
            yield _item_result(item)
            item = []
        item.append(row)
    if item:
        yield _item_result(item)


def _item_result(rows: Sequence[Mapping[str, Any]]) -> ItemResult:
    first = rows[0]
    return ItemResult(
        index=first["index"], item_id=first["item_id"], run_id=first["run_id"], item=None,
        error=first["item_error"], duplicate_of=first["duplicate_of"],
        error_kind=first.get("item_error_kind"),
        outcomes=tuple(
            ScorerOutcome(scorer_id=r["scorer_id"], status=r["status"], score=r["score"],
                          reason=r["reason"], error=r["error"], resumed=r["resumed"],
                          run_error=_run_error(r), not_scorable_kind=r.get("not_scorable_kind"))
            for r in rows
        ),
    )


def _run_error(row: Mapping[str, Any]) -> ScorerRunError | None:
    """A failed pair's run error, rebuilt from its stored step and cause (``failure``)."""
    if row.get("failure") is None:
        return None
    metadata = json.loads(row["failure"])
    cause = ScoreRow(id=row_id(row["run_id"], row["scorer_id"]), scorer_id=row["scorer_id"],
                     run_id=row["run_id"], batch_id="", status="failed",
                     metadata=metadata).failure_cause()
    step = metadata.get("failedStep")
    if cause is None or not isinstance(step, str):
        return None
    return ScorerRunError(
        scorer_id=row["scorer_id"], failed_step=step,
        completed_steps=tuple(metadata.get("completedSteps") or ()), cause=cause,
        partial=ScoreResult(run=ScorerRun(input=None, output=None, run_id=row["run_id"])),
    )


def _trust_row(row: Mapping[str, Any], batch_id: str) -> ScoreRow:
    """A result row's trust part as the stored row :meth:`TrustFold.add_row` reads."""
    item_id = row["item_id"] if row["item_id"] is not None else f"#{row['index']}"
    return ScoreRow(id=row_id(row["run_id"], row["scorer_id"]), scorer_id=row["scorer_id"],
                    run_id=row["run_id"], batch_id=batch_id, status=row["status"],
                    score=row["score"], dataset_item_id=item_id,
                    metadata=json.loads(row["trust"]))


def fold_result_rows(
    rows: Iterable[Mapping[str, Any]],
    fold: ReportFold,
    *,
    batch_id: str,
    duration: float,
    economics: EconomicsFold | None = None,
) -> EvalReport:
    """The report :func:`run_evals` gives, folded from result rows in one pass.

    The rows come in any order of items, each item's rows together; ``fold`` counts the
    results, a :class:`TrustFold` the panel and pairwise parts, and ``economics`` (when the
    batch is metered) the costs and the workers' spend.
    """
    trust = TrustFold()

    def counted() -> Iterator[Mapping[str, Any]]:
        for row in rows:
            if row["trust"] is not None:
                trust.add_row(_trust_row(row, batch_id))
            if economics is not None:
                economics.add_row(row)
            yield row

    for result in item_results(counted()):
        fold.add(result)
    report = fold.report(batch_id=batch_id, duration=duration)
    if economics is not None:
        report = economics.finish(report)
    return trust.finish(report)
