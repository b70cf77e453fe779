"""The rows :func:`~scorecore.evals.run_evals` stores for one item: :class:`ItemRows`.

One row per scorer run, built by :class:`~scorecore.evals._rows._row.RowBuilder`, as a
:class:`ScoreRow` or as the record a :class:`~scorecore.evals.store.RecordStore` writes; a pair
whose row lost data, or could not be built at all, is failed, so the report says what the store
holds.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from scorecore.evals._messages import exception_text
from scorecore.evals._persistence._record import RecordEncoder, values_of
from scorecore.evals._persistence._sanitize import Sanitizer, is_clean_text
from scorecore.evals._report._values import ItemResult, ScorerOutcome
from scorecore.evals._rows._memo import RowMemo
from scorecore.evals._rows._result_json import CONTEXT_NAMES, context_of
from scorecore.evals._rows._row import (
    RECORD_ATTRS,
    RowBuilder,
    ScoreRow,
    row_id,
    row_of,
    storable_row,
)

__all__ = ["ItemRows"]

_STATUS_AT = RECORD_ATTRS.index("status")
_SCORE_AT = RECORD_ATTRS.index("score")
_METADATA_AT = RECORD_ATTRS.index("metadata")


def _item_cause(result: ItemResult) -> dict[str, Any]:
    # A whole item's failure: its kind as reports show it ("target raised", "item").
    if result.error is None:
        return {}
    kind = (result.error_kind or "item").replace("_", " ")
    return {"cause": {"kind": kind, "step": None, "message": result.error}}


# Values no one can change after the item completed: a row built from them later is the same.
_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None)})
_CONTEXT_VALUES: Final = operator.attrgetter(*CONTEXT_NAMES)


def _target_name(target: object) -> str | None:
    """The entity a row names for the target: ``"module:qualname"``."""
    if target is None:
        return None
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{name}" if module else name


def _scorer_json(scorer: Any) -> dict[str, Any]:
    return {
        "id": scorer.id,
        "name": getattr(scorer, "name", scorer.id),
        "description": getattr(scorer, "description", ""),
        "hasJudge": bool(getattr(scorer, "has_judge", False)),
        "fingerprint": getattr(scorer, "fingerprint", None),
    }


def _failed(outcome: ScorerOutcome, error: str) -> ScorerOutcome:
    if outcome.status == "failed":
        return outcome
    return attrs.evolve(outcome, status="failed", score=None, error=error)


def _lost_data_message(notes: Sequence[object]) -> str:
    first = notes[0] if isinstance(notes[0], Mapping) else {}
    more = f"; {len(notes) - 1} more in metadata.sanitized" if len(notes) > 1 else ""
    return (
        f"the item's data cannot be stored as it is ({first.get('path')}: {first.get('what')}"
        f"{more}); fix the data and resume"
    )


@final
class ItemRows:
    """Maps an item's result to the rows :func:`run_evals` stores for it (one per scorer run).

    Outcomes read from the store (resumed) get no row; an item repeating an earlier item's run
    id gets none at all. A pair whose row lost data (see :func:`storable_row`) is failed in the
    returned result, so the report says what the store holds. With a ``target``, each row
    names it as its entity: ``"module:qualname"``.
    """

    __slots__ = ("_batch_id", "_builder", "_encoder", "_entity", "_memo", "_scorer_json",
                 "_shared_storable", "_target")

    def __init__(
        self, *, batch_id: str, scorers: Sequence[Any], target: object
    ) -> None:
        self._batch_id = batch_id
        self._scorer_json = {s.id: _scorer_json(s) for s in scorers}
        self._target = _target_name(target)
        self._entity = {"id": self._target, "name": self._target} if self._target else None
        # The scorer JSON and the entity are the same in every row: cleaned once, for all items.
        self._memo = RowMemo()
        notes = Sanitizer()
        for value, column in ((self._entity, "entity"),
                              *((json, "scorer") for json in self._scorer_json.values())):
            self._memo.clean(value, column, notes, lasting=True)
        # Nothing in them to clean (the usual case): each row takes the cleaned copies as they
        # are, and the builder does not walk them again. Else every row cleans (and notes) them.
        self._shared_storable = not notes.changed and (
            self._target is None or is_clean_text(self._target))
        if self._shared_storable:
            self._scorer_json = {
                key: self._memo.clean(json, "scorer", notes)
                for key, json in self._scorer_json.items()}
            self._entity = self._memo.clean(self._entity, "entity", notes)
        self._builder = RowBuilder(
            batch_id=batch_id, entity_type="EXTERNAL" if self._target else None,
            entity=self._entity, entity_id=self._target, source="TEST", memo=self._memo,
            shared_storable=self._shared_storable)
        # Records encode the shared columns once for every row (their values never change).
        self._encoder = RecordEncoder()
        if self._shared_storable:
            for json in (self._entity, *self._scorer_json.values()):
                self._encoder.keep(json)

    @staticmethod
    def lasting(result: ItemResult) -> bool:
        """Whether the item's rows may be built later: every value they take from the user (the
        item's input, output, contexts; each run's input, output and step results) is a str,
        a number, a bool or None, which nothing can change in between. A dict or list may be
        changed by the caller once the item completed (a data source reusing it for the next
        item): its rows are built at once, from the values as the item held them.

        >>> import anyio
        >>> from scorecore import create_scorer
        >>> from scorecore.evals import run_evals
        >>> one = create_scorer(id="one", description="d").generate_score(lambda _: 1.0)
        >>> seen = []
        >>> data = [{"input": "q", "output": "a"}, {"input": {"q": 1}, "output": "a"}]
        >>> _ = anyio.run(lambda: run_evals(data, [one], on_item_complete=seen.append))
        >>> [ItemRows.lasting(r) for r in sorted(seen, key=lambda r: r.index)]
        [True, False]
        """
        item = result.item
        if item is not None and (
            type(item.input) not in _IMMUTABLE or item.extra or item.request_context is not None
            or not _IMMUTABLE.issuperset(map(type, _CONTEXT_VALUES(item)))
        ):
            return False
        if type(result.output) not in _IMMUTABLE:
            return False
        for outcome in result.outcomes:
            run_result = outcome.result
            if run_result is None and outcome.run_error is not None:
                run_result = outcome.run_error.partial
            if run_result is None:
                continue
            run = run_result.run
            if not (type(run.input) in _IMMUTABLE and type(run.output) in _IMMUTABLE
                    and type(run_result.preprocess_step_result) in _IMMUTABLE
                    and type(run_result.analyze_step_result) in _IMMUTABLE):
                return False
        return True

    def rows(self, result: ItemResult) -> tuple[ItemResult, list[ScoreRow]]:
        """The item's rows to save, and its result with each pair whose row lost data failed."""
        result, values = self._values(result)
        return result, [row_of(columns) for columns in values]

    def records(self, result: ItemResult) -> tuple[ItemResult, list[tuple[Any, ...]]]:
        """:meth:`rows` as the records a :class:`~scorecore.evals.store.RecordStore` saves
        (the same rows, never made: their columns encoded as they are built)."""
        result, values = self._values(result)
        self._encoder.next_item()
        record = self._encoder.record
        return result, [record(columns) for columns in values]

    def _values(self, result: ItemResult) -> tuple[ItemResult, list[tuple[Any, ...]]]:
        """The item's rows' columns (``RowBuilder.values``), and its result with each pair whose
        row lost data failed."""
        if result.duplicate_of is not None:
            return result, []  # its run id is an earlier item's: never overwrite that item's rows
        rows: list[tuple[Any, ...]] = []
        outcomes: list[ScorerOutcome] = []
        self._memo.next_item()
        item = result.item
        # The item's context and cause, the same in every scorer's row: made (and cleaned) once.
        context = context_of(item, item.extra) if item is not None else {}
        cause = _item_cause(result)
        failed = False
        for outcome in result.outcomes:
            if not outcome.resumed:
                row, kept = self._row(result, outcome, context, cause)
                rows.append(row)
                failed = failed or kept is not outcome
                outcome = kept  # noqa: PLW2901 - failed when its row lost data
            outcomes.append(outcome)
        if failed:
            result = attrs.evolve(result, outcomes=tuple(outcomes))
        return result, rows

    def _row(
        self, result: ItemResult, outcome: ScorerOutcome, context: Mapping[str, Any],
        cause: Mapping[str, Any],
    ) -> tuple[tuple[Any, ...], ScorerOutcome]:
        """The pair's row's columns; a row that lost data (or could not be built) fails the pair.

        Failing it keeps the report honest about what the store holds, and lets a resume run the
        pair again once the data is fixed (a resume skips only scored and not-scorable rows).
        """
        try:
            row = self._build(result, outcome, context, cause)
        except Exception as exc:  # noqa: BLE001 - a safety net: one item never stops a batch
            error = f"its row could not be built ({exception_text(exc)}); stored without its data"
            return values_of(self._bare(result, outcome, error)), _failed(outcome, error)
        metadata = row[_METADATA_AT] or {}
        lost = metadata.get("sanitized")
        if not lost or outcome.status == "failed":
            return row, outcome
        error = _lost_data_message(lost)
        kept = {
            **metadata, "status": "failed", "error": error,
            "uncountedOutcome": {"status": outcome.status, "score": outcome.score},
        }
        failed = list(row)
        failed[_STATUS_AT], failed[_SCORE_AT], failed[_METADATA_AT] = "failed", None, kept
        return tuple(failed), _failed(outcome, error)

    def _bare(self, result: ItemResult, outcome: ScorerOutcome, error: str) -> ScoreRow:
        """A failed row with the pair's ids and the error only."""
        return storable_row(ScoreRow(
            id=row_id(result.run_id, outcome.scorer_id), scorer_id=outcome.scorer_id,
            run_id=result.run_id, batch_id=self._batch_id, status="failed",
            scorer=self._scorer_json[outcome.scorer_id], source="TEST",
            dataset_item_id=result.item_id,
            metadata={"status": "failed", "itemIndex": result.index, "error": error,
                      "sanitized": [{"path": "", "what": "the row could not be built; "
                                                          "its data is not stored"}]},
        ))

    def _build(
        self, result: ItemResult, outcome: ScorerOutcome, context: Mapping[str, Any],
        cause: Mapping[str, Any],
    ) -> tuple[Any, ...]:
        item = result.item
        scorer = self._scorer_json[outcome.scorer_id]
        return self._builder.values(
            result.run_id, outcome.scorer_id, outcome.status, outcome.score, outcome.reason,
            scorer, outcome.result, item.input if item is not None else None, result.output,
            context, item.request_context if item is not None else None, result.item_id,
            {"itemIndex": result.index, "fingerprint": scorer["fingerprint"], **cause},
            outcome.error, outcome.run_error,
        )
