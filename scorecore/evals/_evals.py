"""Batch evaluation: run scorers over a dataset, aggregate a report, store score rows.

:func:`run_evals` streams items (never materialising the dataset), runs an optional target and
every scorer per item with a concurrency limit, and folds each item into running totals, so
memory stays flat however large the dataset is. A failing item, target, scorer or judge is
recorded for that item and never aborts the batch.

Storage is a port (:class:`ScoreStore`); the SQLite and PostgreSQL adapters live in
``scorecore_adapters.storage``. Rows (:class:`ScoreRow`) follow Mastra's ``mastra_scorers``
columns. Run ids are deterministic per (batch, item), so a batch run again with
``resume=True`` skips what is already stored and finishes with exactly one row per
(item, scorer). :func:`store_sink` sends trace and live scores (:class:`ScoreRecord`) to a
store as rows built the same way.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import re
from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias, cast, final

import anyio
import anyio.abc
import anyio.lowlevel
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream
from returns.result import Failure, Success

from scorecore._convert import camel, converter, to_mastra_json
from scorecore._errors import ScorecoreError, ScorerRunError
from scorecore._redact import redact_secrets
from scorecore._reprs import short_repr
from scorecore._runtime import DEFAULT_RUNTIME, Runtime
from scorecore._scorer import Scorer
from scorecore._values import ScoreResult
from scorecore.evals._storable import Sanitizer, clean_text, is_clean_text, is_encodable_text
from scorecore.traces._traces import ScoreRecord, ScoreSink

__all__ = [
    "CompletedScore",
    "EvalConfigError",
    "EvalItem",
    "EvalReport",
    "GateResult",
    "InvalidItem",
    "ItemLike",
    "ItemResult",
    "OutcomeStatus",
    "ScoreRow",
    "ScoreStore",
    "ScorerOutcome",
    "ScorerSummary",
    "StoreError",
    "Threshold",
    "ThresholdResult",
    "item_from_mapping",
    "row_id",
    "run_evals",
    "store_sink",
]

OutcomeStatus: TypeAlias = Literal["scored", "not_scorable", "failed"]
"""How one scorer fared on one item."""

_RESERVED_EXTRA = frozenset({
    "input", "output", "ground_truth", "run_id", "request_context", "expected_trajectory",
    "runtime",
})


# --------------------------------------------------------------------------- errors


class EvalConfigError(ScorecoreError, ValueError):
    """``run_evals`` was called wrongly (raised before any item runs).

    Attributes:
        field: the offending argument, e.g. ``"thresholds"``.
        value: the offending value.
    """

    def __init__(self, message: str, *, field: str, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class StoreError(ScorecoreError):
    """A score store could not be reached, or could not read or write.

    Raised by :class:`ScoreStore` implementations (never a driver's own exception); it aborts
    :func:`run_evals`, since results could no longer be kept. Rows saved before the error
    stay saved, so the batch can be resumed.

    Attributes:
        store: where the store lives, with any password removed (e.g. ``"sqlite:scores.db"``).
        operation: what was attempted (``"open"``, ``"save"``, ``"completed"``, ``"list_run"``).
    """

    def __init__(self, message: str, *, store: str, operation: str) -> None:
        super().__init__(message)
        self.store = store
        self.operation = operation


# --------------------------------------------------------------------------- items


def _check_request_context(
    _instance: object, _attribute: attrs.Attribute[Any], value: object
) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(
            f"EvalItem.request_context must be a mapping or None, got {short_repr(value)}"
        )


def _id_problem(value: object) -> str | None:
    """Why ``value`` cannot name an item (its run id and stored rows), or ``None``."""
    if not isinstance(value, str) or not value:
        return f"must be a non-empty str or None, got {short_repr(value)}"
    if not is_clean_text(value):
        # Run ids are keys of stored rows: replacing the character could merge two items.
        return (
            f"must not contain a NUL character or a lone surrogate (no store can keep it), "
            f"got {short_repr(value)}"
        )
    return None


def _check_id(instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    problem = None if value is None else _id_problem(value)
    if problem is not None:
        raise TypeError(f"{type(instance).__name__}.id {problem}")


def _check_line(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not _is_int(value) or cast(int, value) < 1):
        raise TypeError(f"EvalItem.line must be an int >= 1 or None, got {short_repr(value)}")


def _check_extra(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"EvalItem.extra must be a mapping, got {short_repr(value)}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"EvalItem.extra keys must be str, got {short_repr(key)}")
        if key in _RESERVED_EXTRA:
            raise ValueError(
                f"EvalItem.extra must not contain {short_repr(key)}: it is a field of the run; "
                f"set it on the item instead"
            )


@final
@attrs.frozen(kw_only=True)
class EvalItem:
    """One dataset item: what the scorers see for it.

    ``output`` is ignored when :func:`run_evals` has a ``target`` (the target's return value
    is the output). ``id`` names the item in run ids and stored rows; without one the
    item's position is used. Ids must be unique within a dataset: :func:`run_evals` reports an
    item repeating an earlier item's id as failed and stores nothing for it. ``extra`` keys
    reach the scorers as the run's extra keys. ``line`` is where a reader found the item in
    its file (1-based); messages about the item then name the line.

    >>> EvalItem(input="2+2?", output="4", ground_truth="4", id="sum").id
    'sum'
    """

    input: Any
    output: Any = None
    ground_truth: Any = None
    request_context: Mapping[str, Any] | None = attrs.field(
        default=None, validator=_check_request_context
    )
    expected_trajectory: Any = None
    id: str | None = attrs.field(default=None, validator=_check_id)
    extra: Mapping[str, Any] = attrs.field(factory=dict, validator=_check_extra)
    line: int | None = attrs.field(default=None, validator=_check_line)


@final
@attrs.frozen(kw_only=True)
class InvalidItem:
    """A placeholder a data source yields for an item it could not read.

    :func:`run_evals` records it as a failed item with ``reason`` (and stores a failed row per
    scorer), then goes on. The command line yields one for a malformed JSONL line.

    >>> InvalidItem(reason="data.jsonl:3: invalid JSON").reason
    'data.jsonl:3: invalid JSON'
    """

    reason: str
    id: str | None = attrs.field(default=None, validator=_check_id)


ItemLike: TypeAlias = EvalItem | Mapping[str, Any] | InvalidItem
"""What a dataset yields: an :class:`EvalItem`, a mapping with the same keys, or a placeholder."""

_KEYS: Mapping[str, str] = {
    "input": "input",
    "output": "output",
    "ground_truth": "ground_truth",
    "groundTruth": "ground_truth",
    "request_context": "request_context",
    "requestContext": "request_context",
    "expected_trajectory": "expected_trajectory",
    "expectedTrajectory": "expected_trajectory",
    "id": "id",
    "extra": "extra",
}
_ACCEPTED = "input, output, ground_truth, request_context, expected_trajectory, id, extra"


def _short(value: object, limit: int = 120) -> str:
    return short_repr(value, limit)


def _fields_from(raw: Mapping[Any, Any], *, needs_output: bool) -> dict[str, Any] | str:
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            return (
                f"unknown field {_short(key)} (accepted: {_ACCEPTED}; "
                f"put anything else under 'extra')"
            )
        if name in fields:
            return f"field {name!r} given twice (snake_case and camelCase)"
        fields[name] = value
    if "input" not in fields:
        return "missing field 'input'"
    if needs_output and "output" not in fields:
        return "missing field 'output' (and no target to produce it)"
    item_id = _int_id(fields.get("id"))
    if item_id is not None:
        fields["id"] = item_id
    if fields.get("extra") is None:
        fields.pop("extra", None)
    return fields


def item_from_mapping(
    raw: Mapping[str, Any], *, needs_output: bool = False, line: int | None = None
) -> EvalItem:
    """Build an :class:`EvalItem` from a mapping with snake_case or Mastra camelCase keys.

    An integer ``id`` becomes a string. ``needs_output`` makes a missing ``output`` an error.
    ``line`` is the item's line in its file, when a reader knows it (see :class:`EvalItem`).

    Raises:
        ValueError: an unknown or duplicated key, a missing ``input`` (or ``output``), or a
            field of the wrong type; the message names the field and value.

    >>> item_from_mapping({"input": "q", "output": "a", "groundTruth": "a", "id": 7}).id
    '7'
    """
    fields = _fields_from(raw, needs_output=needs_output)
    if isinstance(fields, str):
        raise ValueError(fields)  # noqa: TRY004 - a bad dataset item is a value error
    try:
        return EvalItem(**fields, line=line)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def _item_from(raw: object, index: int, *, needs_output: bool) -> EvalItem | str:
    """Turn what the dataset yielded into an item, or say (one line) why it cannot be."""
    if isinstance(raw, EvalItem):
        return raw
    if isinstance(raw, InvalidItem):
        return raw.reason
    if not isinstance(raw, Mapping):
        return (
            f"item #{index}: expected a mapping or EvalItem, "
            f"got {type(raw).__name__} {_short(raw)}"
        )
    try:
        return item_from_mapping(raw, needs_output=needs_output)
    except ValueError as exc:
        return f"item #{index}: {exc}"


# --------------------------------------------------------------------------- outcomes


@final
@attrs.frozen(kw_only=True)
class ScorerOutcome:
    """How one scorer fared on one item.

    Attributes:
        scorer_id: the scorer.
        status: ``"scored"``, ``"not_scorable"`` or ``"failed"``.
        score: the score when scored.
        reason: the scorer's reason (or the not-scorable reason).
        error: one line saying why it failed, when it failed.
        result: the full result of a run that succeeded in this call.
        run_error: the run's error value, when the scorer returned ``Failure``.
        resumed: ``True`` when the outcome was read from the store (resume), not run again.
    """

    scorer_id: str
    status: OutcomeStatus
    score: float | None = None
    reason: str | None = None
    error: str | None = None
    result: ScoreResult[Any, Any] | None = attrs.field(default=None, eq=False, repr=False)
    run_error: ScorerRunError | None = attrs.field(default=None, eq=False, repr=False)
    resumed: bool = False


@final
@attrs.frozen(kw_only=True)
class ItemResult:
    """Everything that happened to one item.

    Attributes:
        index: the item's position in the dataset (0-based).
        item_id: the item's own id, if it had one.
        run_id: the deterministic run id, ``f"{batch_id}:{item_id}"`` or
            ``f"{batch_id}:#{index}"``.
        item: the item, or ``None`` when it could not be read.
        output: the output that was scored (the target's, or the item's).
        error: why the whole item failed (unreadable item, raising target, repeated id),
            else ``None``.
        outcomes: one outcome per scorer, in the scorers' order.
        duplicate_of: the index of the earlier item whose id (hence run id) this item
            repeats; such an item is failed and nothing is stored for it.
    """

    index: int
    item_id: str | None
    run_id: str
    item: EvalItem | None
    output: Any = None
    error: str | None = None
    outcomes: tuple[ScorerOutcome, ...] = ()
    duplicate_of: int | None = None


# --------------------------------------------------------------------------- thresholds


def _unit(owner: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{owner} must be a number in [0, 1] or None, got {value!r}")
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"{owner} must be a finite number in [0, 1], got {value!r}")
    return float(value)


def _check_bound(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _unit(f"Threshold.{attribute.name}", value)


@final
@attrs.frozen(kw_only=True)
class Threshold:
    """Bounds a scorer's mean score must stay within (inclusive), each in [0, 1].

    A plain number given to ``run_evals(thresholds=...)`` means ``Threshold(min=number)``.

    >>> Threshold(min=0.7).check(0.75), Threshold(min=0.2, max=0.5).check(0.6)
    (True, False)
    >>> Threshold(min=0.7).check(None)
    False
    """

    min: float | None = attrs.field(default=None, validator=_check_bound)
    max: float | None = attrs.field(default=None, validator=_check_bound)

    def __attrs_post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("Threshold needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"Threshold.min ({self.min}) must not exceed max ({self.max})")

    def check(self, mean: float | None) -> bool:
        """Whether ``mean`` is within the bounds; no mean (nothing scored) never passes."""
        if mean is None or not math.isfinite(mean):
            return False
        if self.min is not None and mean < self.min:
            return False
        return self.max is None or mean <= self.max

    def describe(self) -> str:
        """``">= 0.7"``, ``"<= 0.3"`` or ``"0.2..0.5"``."""
        if self.max is None:
            return f">= {self.min:g}"
        if self.min is None:
            return f"<= {self.max:g}"
        return f"{self.min:g}..{self.max:g}"


@final
@attrs.frozen(kw_only=True)
class ThresholdResult:
    """Whether a scorer's mean met its threshold."""

    scorer_id: str
    threshold: Threshold
    mean: float | None
    passed: bool


@final
@attrs.frozen(kw_only=True)
class GateResult:
    """Whether a gate scorer averaged 1.0 (every scored item got the full score)."""

    scorer_id: str
    mean: float | None
    passed: bool


@final
@attrs.frozen(kw_only=True)
class ScorerSummary:
    """One scorer's aggregate over the batch.

    ``mean`` is the arithmetic mean of numeric scores; not-scorable and failed runs are
    excluded and counted separately. ``None`` when nothing was scored. It is computed exactly
    (the sum is kept without rounding, then divided once), so the same scores give the same
    mean to the last bit in whatever order the items completed, and a resumed batch reports
    what an uninterrupted one would.
    """

    scorer_id: str
    mean: float | None
    scored: int
    not_scorable: int
    failed: int

    @property
    def total(self) -> int:
        """Every item the scorer saw."""
        return self.scored + self.not_scorable + self.failed


@final
@attrs.frozen(kw_only=True)
class EvalReport:
    """The outcome of :func:`run_evals`.

    Attributes:
        batch_id: the batch's id (stored rows carry it; resume with it).
        verdict: ``"passed"`` when every threshold and gate passed (or there were none),
            else ``"failed"``.
        total_items: items read from the dataset.
        failed_items: items that failed as a whole (unreadable item or raising target).
        scorers: per-scorer aggregates, in the scorers' order.
        thresholds: the threshold checks, in the scorers' order.
        gates: the gate checks, in the gates' order.
        results: per-item results in dataset order, only with ``keep_results=True``.
        duration: seconds, measured with the runtime's clock.
        max_failures: the failed scorer runs tolerated (``None``: any number).
    """

    batch_id: str
    verdict: Literal["passed", "failed"]
    total_items: int
    failed_items: int
    scorers: tuple[ScorerSummary, ...]
    thresholds: tuple[ThresholdResult, ...] = ()
    gates: tuple[GateResult, ...] = ()
    results: tuple[ItemResult, ...] | None = attrs.field(default=None, repr=False)
    duration: float = 0.0
    max_failures: int | None = None

    @property
    def failed_runs(self) -> int:
        """Scorer runs that failed, over every scorer (an item failed as a whole counts once
        per scorer)."""
        return sum(s.failed for s in self.scorers)

    @property
    def passed(self) -> bool:
        """``verdict == "passed"``."""
        return self.verdict == "passed"

    @property
    def failed_checks(self) -> tuple[str, ...]:
        """One line per failed check: gates, thresholds, then the failure budget."""
        failures = []
        if self.max_failures is not None and self.failed_runs > self.max_failures:
            failures.append(
                f"too many failures: {self.failed_runs} failed scorer run(s), "
                f"at most {self.max_failures} allowed"
            )
        gates = [
            f"gate {gate.scorer_id}: mean {_fmt(gate.mean)}, needs 1.0"
            for gate in self.gates if not gate.passed
        ]
        thresholds = [
            f"threshold {res.scorer_id}: mean {_fmt(res.mean)}, needs {res.threshold.describe()}"
            for res in self.thresholds if not res.passed
        ]
        return (*gates, *thresholds, *failures)

    def summary(self, scorer_id: str) -> ScorerSummary:
        """The aggregate of one scorer.

        Raises:
            KeyError: no scorer has that id.
        """
        for summary in self.scorers:
            if summary.scorer_id == scorer_id:
                return summary
        raise KeyError(scorer_id)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (per-item results summarised, when kept)."""
        out: dict[str, Any] = {
            "batchId": self.batch_id,
            "verdict": self.verdict,
            "totalItems": self.total_items,
            "failedItems": self.failed_items,
            "durationSeconds": self.duration,
            "scores": {s.scorer_id: s.mean for s in self.scorers},
            "scorers": [
                {"id": s.scorer_id, "mean": s.mean, "scored": s.scored,
                 "notScorable": s.not_scorable, "failed": s.failed}
                for s in self.scorers
            ],
            "thresholdResults": [
                {"id": t.scorer_id, "passed": t.passed, "averageScore": t.mean,
                 "threshold": {"min": t.threshold.min, "max": t.threshold.max}}
                for t in self.thresholds
            ],
            "gateResults": [
                {"id": g.scorer_id, "passed": g.passed, "score": g.mean} for g in self.gates
            ],
            "failedRuns": self.failed_runs,
            "maxFailures": self.max_failures,
            "failedChecks": list(self.failed_checks),
        }
        if self.results is not None:
            out["results"] = [
                {
                    "index": r.index, "itemId": r.item_id, "runId": r.run_id, "error": r.error,
                    "scores": [
                        {"scorerId": o.scorer_id, "status": o.status, "score": o.score,
                         "reason": o.reason, "error": o.error, "resumed": o.resumed}
                        for o in r.outcomes
                    ],
                }
                for r in self.results
            ]
        return out


_GATE = Threshold(min=1.0)


def _fmt(mean: float | None) -> str:
    return "n/a" if mean is None else f"{mean:.3g}"


# --------------------------------------------------------------------------- storage port


@final
@attrs.frozen(kw_only=True)
class ScoreRow:
    """One stored score: a row of Mastra's ``mastra_scorers`` table (snake_case here).

    Stores write the columns in camelCase (``scorerId``, ``runId`` …); ``status`` is
    scorecore's own column (``"scored"``, ``"not_scorable"`` or ``"failed"``), and a row
    that is not scored has ``score = None`` with the details in ``metadata``. ``created_at``
    and ``updated_at`` are set by the store (``None`` on rows not yet saved).

    Rows hold only what every store keeps (see :func:`storable_row`): data that cannot be
    kept as it is (a NUL character, a lone surrogate, nesting deeper than 200 levels, an int
    of more than 4,300 digits, an object whose ``str()`` raises) is replaced, and
    ``metadata["sanitized"]`` lists each replacement as ``{"path": …, "what": …}``.
    """

    id: str
    scorer_id: str
    run_id: str
    batch_id: str
    status: OutcomeStatus
    score: float | None = None
    reason: str | None = None
    scorer: Mapping[str, Any] = attrs.field(factory=dict)
    input: Any = None
    output: Any = None
    preprocess_step_result: Any = None
    analyze_step_result: Any = None
    preprocess_prompt: str | None = None
    analyze_prompt: str | None = None
    generate_score_prompt: str | None = None
    generate_reason_prompt: str | None = None
    additional_context: Mapping[str, Any] | None = None
    request_context: Mapping[str, Any] | None = None
    entity_type: str | None = None
    entity: Mapping[str, Any] | None = None
    entity_id: str | None = None
    source: Literal["LIVE", "TEST"] = "TEST"
    dataset_item_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    trace_id: str | None = None
    span_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @classmethod
    def from_record(
        cls,
        record: ScoreRecord,
        *,
        source: Literal["LIVE", "TEST"] | None = None,
        batch_id: str | None = None,
    ) -> ScoreRow:
        """The row storing a trace or live score, built as :func:`run_evals` builds its rows.

        ``source`` defaults to Mastra's: ``"LIVE"`` for live scoring, ``"TEST"`` for trace
        scoring. ``batch_id`` defaults to the record's trace id, else its run id. The entity
        columns come from the span (``entity_type`` = span type, ``entity_id``,
        ``entity = {"traceId", "spanId"}``) or the live call (``entity_type="function"``,
        ``entity = {"id", "name"}``); ``trace_id``/``span_id`` are set when known. The id is
        :func:`row_id` of (run id, scorer id), so saving the record again replaces its row;
        ``request_context`` and ``additional_context`` pass through :func:`redact_secrets`.

        >>> from scorecore._values import ScorerRun
        >>> result = ScoreResult(run=ScorerRun(input="q", output="a", run_id="r1"), score=1.0)
        >>> row = ScoreRow.from_record(ScoreRecord(
        ...     scorer_id="s", scorer_name="S", source="live", result=result,
        ...     entity_type="function", entity_id="app:answer"))
        >>> row.source, row.batch_id, row.status, row.score, row.entity
        ('LIVE', 'r1', 'scored', 1.0, {'id': 'app:answer', 'name': 'app:answer'})
        """
        result = record.result
        run = result.run
        if record.source == "trace":
            entity: dict[str, Any] = {"traceId": record.trace_id, "spanId": record.span_id}
        else:
            entity = {"id": record.entity_id, "name": record.entity_id}
        not_scorable = result.not_scorable
        return _score_row(
            run_id=record.run_id, scorer_id=record.scorer_id,
            batch_id=batch_id or record.trace_id or record.run_id,
            status="scored" if not_scorable is None else "not_scorable",
            score=result.score,
            reason=result.reason if not_scorable is None else not_scorable.reason,
            scorer={"id": record.scorer_id, "name": record.scorer_name,
                    "description": record.scorer_description, "hasJudge": record.has_judge},
            result=result, input=run.input, output=run.output,
            context=_context(run.ground_truth, run.expected_trajectory, {}),
            request_context=run.request_context,
            entity_type=record.entity_type, entity=entity, entity_id=record.entity_id,
            source=source or ("LIVE" if record.source == "live" else "TEST"),
            dataset_item_id=None, metadata={"scoreSource": record.source},
            trace_id=record.trace_id, span_id=record.span_id,
        )


@final
@attrs.frozen(kw_only=True)
class CompletedScore:
    """What a store remembers of a finished (run, scorer) pair, for resume."""

    status: Literal["scored", "not_scorable"]
    score: float | None = None
    reason: str | None = None


class ScoreStore(Protocol):
    """Where score rows are kept (SQLite, PostgreSQL, … in ``scorecore_adapters.storage``).

    Contract:

    - ``save(rows)`` writes every row or none (one transaction), and is idempotent per
      ``(run_id, scorer_id)``: saving a pair again replaces the earlier row (its
      ``created_at`` is kept, ``updated_at`` changes), so there is never more than one row
      per pair. When it returns, the rows are durable.
    - ``completed(batch_id)`` maps each ``(run_id, scorer_id)`` of the batch whose row is
      final (``"scored"`` or ``"not_scorable"``) to its outcome; failed rows are left out, so
      a resumed batch runs them again.
    - ``list_run(batch_id)`` returns the batch's rows, ordered by dataset position then
      scorer id (insertion order where the position is unknown).
    - ``has_batch(batch_id)`` tells whether any row (of any status) is stored for the batch;
      :func:`run_evals` asks it before writing, to refuse mixing two datasets in one batch.
    - Every method raises :class:`StoreError` (never a driver's exception) when the store
      cannot be reached or the operation fails; nothing else.
    """

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` atomically (see the class contract)."""
        ...

    async def completed(self, batch_id: str, /) -> Mapping[tuple[str, str], CompletedScore]:
        """The final outcomes already stored for ``batch_id``, keyed by (run id, scorer id)."""
        ...

    async def list_run(self, batch_id: str, /) -> Sequence[ScoreRow]:
        """Every row stored for ``batch_id``."""
        ...

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row is stored for ``batch_id``."""
        ...


def _context(
    ground_truth: Any, expected_trajectory: Any, extra: Mapping[str, Any]
) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if ground_truth is not None:
        context["groundTruth"] = ground_truth
    if expected_trajectory is not None:
        context["expectedTrajectory"] = expected_trajectory
    context.update(extra)
    return context


def _score_row(
    *,
    run_id: str,
    scorer_id: str,
    batch_id: str,
    status: OutcomeStatus,
    score: float | None,
    reason: str | None,
    scorer: Mapping[str, Any],
    result: ScoreResult[Any, Any] | None,
    input: Any,
    output: Any,
    context: Mapping[str, Any],
    request_context: Mapping[str, Any] | None,
    entity_type: str | None,
    entity: Mapping[str, Any] | None,
    entity_id: str | None,
    source: Literal["LIVE", "TEST"],
    dataset_item_id: str | None,
    metadata: Mapping[str, Any],
    error: str | None = None,
    run_error: ScorerRunError | None = None,
    trace_id: str | None = None,
    span_id: str | None = None,
) -> ScoreRow:
    """The one place a stored row is built (``run_evals`` and :meth:`ScoreRow.from_record`).

    ``result`` (or the failed run's partial result) gives the run's input and output, the
    prompts and step results; ``metadata`` gets the status, the error, not-scorable details
    and judge executions after ``metadata``'s own keys; the contexts are redacted. The row is
    :func:`storable_row`: what no store can keep is replaced and listed in
    ``metadata["sanitized"]``.
    """
    if result is None and run_error is not None:
        result = run_error.partial
    clean = Sanitizer()
    data: Mapping[str, Any] = _result_json(result, clean) if result is not None else {}
    meta: dict[str, Any] = {"status": status, **metadata}
    if error is not None:
        meta["error"] = error
    if run_error is not None:
        meta["failedStep"] = run_error.failed_step
        meta["completedSteps"] = list(run_error.completed_steps)
    if "notScorable" in data:
        meta["notScorable"] = data["notScorable"]
    if "judge" in data:
        meta["judge"] = data["judge"]
    # Cleaned before redaction: redact_secrets recurses and must not meet a 10,000-deep value.
    if context:
        context = redact_secrets(clean.value(context, "additionalContext"))
    if request_context is not None:
        request_context = redact_secrets(clean.value(request_context, "requestContext"))
    row = ScoreRow(
        id=row_id(run_id, scorer_id),
        scorer_id=scorer_id,
        run_id=run_id,
        batch_id=batch_id,
        status=status,
        score=score,
        reason=reason,
        scorer=scorer,
        input=data.get("input", input),
        output=data.get("output", output),
        preprocess_step_result=data.get("preprocessStepResult"),
        analyze_step_result=data.get("analyzeStepResult"),
        preprocess_prompt=data.get("preprocessPrompt"),
        analyze_prompt=data.get("analyzePrompt"),
        generate_score_prompt=data.get("generateScorePrompt"),
        generate_reason_prompt=data.get("generateReasonPrompt"),
        additional_context=context or None,
        request_context=request_context,
        entity_type=entity_type,
        entity=entity,
        entity_id=entity_id,
        source=source,
        dataset_item_id=dataset_item_id,
        metadata=meta,
        trace_id=trace_id,
        span_id=span_id,
    )
    return storable_row(row, clean)


_PROMPT_FIELDS = (
    "preprocess_prompt", "analyze_prompt", "generate_score_prompt", "generate_reason_prompt",
)


def _result_json(result: ScoreResult[Any, Any], clean: Sanitizer) -> Mapping[str, Any]:
    """The result's Mastra JSON; field by field (noting failures) when it cannot be built whole.

    Unstructuring walks the user's values (their hooks run, and a value nested thousands deep
    exhausts the stack): a failure keeps the field's raw value, which the sanitizer then renders
    as far as it can, instead of losing the row.
    """
    try:
        return to_mastra_json(result)
    except Exception:  # noqa: BLE001, S110 - user values (see above); redone field by field
        pass
    run = result.run
    data: dict[str, Any] = {camel(name): getattr(result, name) for name in _PROMPT_FIELDS}
    fields = {
        "input": run.input, "output": run.output,
        "preprocessStepResult": result.preprocess_step_result,
        "analyzeStepResult": result.analyze_step_result,
        "notScorable": result.not_scorable, "judge": dict(result.judge) or None,
    }
    for key, value in fields.items():
        if value is None and key not in ("input", "output"):
            continue
        try:
            data[key] = converter.unstructure(value)
        except Exception as exc:  # noqa: BLE001 - user values (see above)
            data[key] = value
            if not isinstance(value, _PLAIN):  # plain data loses nothing in the sanitizer
                clean.note(key, f"converting it to JSON raised {type(exc).__name__}; "
                                "stored as its text")
    return data


_PLAIN = (dict, list, tuple, str, int, float, bool)
_ROW_KEYS = frozenset({"id", "scorer_id", "run_id", "batch_id"})
_ROW_KEPT = frozenset({"score", "created_at", "updated_at", "metadata"})


def storable_row(row: ScoreRow, sanitizer: Sanitizer | None = None) -> ScoreRow:
    """``row`` in a form every store keeps, each piece of data it could not keep noted.

    JSON columns become plain JSON (dicts with str keys, lists, str, finite numbers); in every
    column, NUL characters and lone surrogates become U+FFFD, subtrees nested deeper than 200
    levels and ints of more than 4,300 digits become placeholder strings, and objects
    whose ``str()`` raises a placeholder. Each such replacement is listed, with its path, in
    ``metadata["sanitized"]`` (after any notes already there). Stores apply it to every row
    they save; :func:`run_evals` applies it when building rows and reports a pair whose row
    lost data as failed, so a resume retries it once the data is fixed.

    Key columns (``id``, ``scorer_id``, ``run_id``, ``batch_id``) are left as they are:
    replacing a character there could merge two rows into one. :func:`run_evals` refuses ids
    with a NUL character or a lone surrogate before building rows.

    Raises:
        ValueError: a key column is not a str, or holds a lone surrogate (no store can encode
            it). A NUL character is left to the store: SQLite keeps it, PostgreSQL refuses it.

    >>> row = ScoreRow(id="r/s", scorer_id="s", run_id="r", batch_id="b", status="scored",
    ...                score=1.0, output="a\\x00b")
    >>> kept = storable_row(row)
    >>> kept.output, kept.metadata
    ('a�b', {'sanitized': [{'path': 'output', 'what': 'NUL character replaced by U+FFFD'}]})
    """
    clean = sanitizer if sanitizer is not None else Sanitizer()
    changes: dict[str, Any] = {}
    for name in _ROW_FIELDS:
        value = getattr(row, name)
        if value is None or name in _ROW_KEPT:
            continue
        if name in _ROW_KEYS:
            if not isinstance(value, str) or not is_encodable_text(value):
                raise ValueError(
                    f"ScoreRow.{name} must be a str without lone surrogates, "
                    f"got {short_repr(value)}"
                )
            continue
        changes[name] = clean.value(value, camel(name))
    metadata = row.metadata
    if metadata is not None:
        metadata = clean.value(metadata, "metadata")
    if clean.changed:
        kept = dict(metadata) if isinstance(metadata, Mapping) else {}
        earlier = kept.get("sanitized")
        kept["sanitized"] = [*(earlier if isinstance(earlier, list) else ()), *clean.report()]
        metadata = kept
    return attrs.evolve(row, **changes, metadata=metadata)


_ROW_FIELDS = tuple(field.name for field in attrs.fields(ScoreRow))


def store_sink(
    store: ScoreStore,
    *,
    source: Literal["LIVE", "TEST"] | None = None,
    batch_id: str | None = None,
) -> ScoreSink:
    """A sink saving each trace or live score to ``store`` as one :class:`ScoreRow`.

    Pass it as ``sink=`` to :func:`~scorecore.score_trace`, :func:`~scorecore.score_traces`,
    :func:`~scorecore.scored` or :class:`~scorecore.LiveScorer`. Each record becomes
    :meth:`ScoreRow.from_record` (``source`` and ``batch_id`` as there: by default ``"LIVE"``
    for live scoring and ``"TEST"`` for traces, batched by trace id, else run id) and is saved
    at once, idempotently per (run, scorer). The store must be open while scores arrive (keep
    ``async with store`` around the ``live_scoring()`` block). A failing save is reported as
    the sink's failure (``sink_failed`` / ``sink_raised``), never raised to the caller.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> from scorecore.traces._traces import score_trace
    >>> class Rows:
    ...     rows: list[ScoreRow] = []
    ...     async def save(self, rows): self.rows.extend(rows)
    ...     async def completed(self, batch_id): return {}
    ...     async def list_run(self, batch_id): return self.rows
    >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    >>> span = {"spanId": "s", "spanType": "tool_call", "startedAt": "2025-01-01T00:00:00Z"}
    >>> store = Rows()
    >>> _ = anyio.run(lambda: score_trace(one, {"traceId": "t", "spans": [span]},
    ...                                   sink=store_sink(store)))
    >>> [(r.scorer_id, r.score, r.source, r.batch_id, r.span_id) for r in store.rows]
    [('one', 1.0, 'TEST', 't', 's')]
    """

    async def save(record: ScoreRecord) -> None:
        await store.save([ScoreRow.from_record(record, source=source, batch_id=batch_id)])

    return save


def row_id(run_id: str, scorer_id: str) -> str:
    """The stored row's id: a UUID-shaped digest of (run id, scorer id), stable across runs.

    >>> row_id("b1:#0", "exact") == row_id("b1:#0", "exact") != row_id("b1:#0", "other")
    True
    """
    # surrogatepass: defined for any str (UTF-8 otherwise, so ids of valid text are unchanged).
    key = f"{run_id}\x00{scorer_id}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


# --------------------------------------------------------------------------- run_evals


# Every finite float is an integer multiple of 2**-1074 (the smallest subnormal), so a sum of
# scores scaled by 2**1074 is an exact integer: adding is exact, hence independent of order.
_SCALE_BITS = 1074


class _Aggregate:
    """One scorer's counts and exact score sum, folded from outcomes in any order."""

    __slots__ = ("failed", "not_scorable", "scored", "total")

    def __init__(self) -> None:
        self.scored = 0
        self.not_scorable = 0
        self.failed = 0
        self.total = 0  # the sum of scores times 2**_SCALE_BITS, exactly

    def add(self, outcome: ScorerOutcome) -> None:
        score = outcome.score
        if outcome.status == "scored" and score is not None and math.isfinite(score):
            numerator, denominator = float(score).as_integer_ratio()
            # denominator is 2**k with k <= 1074: scale to the common 2**1074.
            self.total += numerator << (_SCALE_BITS + 1 - denominator.bit_length())
            self.scored += 1
        elif outcome.status == "not_scorable":
            self.not_scorable += 1
        else:
            self.failed += 1

    def summary(self, scorer_id: str) -> ScorerSummary:
        # int / int is correctly rounded, so the mean is the exact mean rounded once.
        mean = self.total / (self.scored << _SCALE_BITS) if self.scored else None
        return ScorerSummary(scorer_id=scorer_id, mean=mean, scored=self.scored,
                             not_scorable=self.not_scorable, failed=self.failed)


_END: Any = object()
_QUEUED_ITEMS = 64


class _Source:
    """Pulls items one at a time from a sync or async iterable, numbering them."""

    __slots__ = ("_async", "_index", "_iter", "_lock")

    def __init__(self, data: Iterable[Any] | AsyncIterable[Any]) -> None:
        self._index = 0
        self._lock = anyio.Lock()
        self._async: Any = None
        self._iter: Iterator[Any] | None = None
        if isinstance(data, AsyncIterable):
            self._async = aiter(data)
        else:
            self._iter = iter(data)

    async def next(self) -> tuple[int, Any]:
        if self._iter is not None:
            value = next(self._iter, _END)
        else:
            # Async generators refuse concurrent __anext__ calls; pull one at a time.
            async with self._lock:
                try:
                    value = await anext(self._async)
                except StopAsyncIteration:
                    value = _END
        index = self._index
        if value is not _END:
            self._index += 1
        return index, value

    @property
    def count(self) -> int:
        return self._index


def _target_name(target: Callable[..., Any] | None) -> str | None:
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
    }


class _Batch:
    """The state of one ``run_evals`` call (private: one instance per call)."""

    def __init__(
        self,
        *,
        scorers: tuple[Any, ...],
        target: Callable[[EvalItem], Any] | None,
        store: ScoreStore | None,
        on_item_complete: Callable[[ItemResult], Any] | None,
        runtime: Runtime,
        batch_id: str,
        done: Mapping[tuple[str, str], CompletedScore],
        keep_results: bool,
    ) -> None:
        self.scorers = scorers
        self.scorer_json = {s.id: _scorer_json(s) for s in scorers}
        self.target = target
        self.target_name = _target_name(target)
        self.store = store
        self.on_item_complete = on_item_complete
        self.runtime = runtime
        self.batch_id = batch_id
        self.done = done
        self.aggregates = {s.id: _Aggregate() for s in scorers}
        self.failed_items = 0
        self.results: list[ItemResult] | None = [] if keep_results else None
        self.error: BaseException | None = None
        self.run_keys = _RunKeys()

    # ---- one item

    async def process(self, index: int, raw: object) -> ItemResult:
        # Up to its first await this runs right after _Source.next() numbered the item, with no
        # await in between: ids are claimed in dataset order, so "first seen" is the earlier item.
        item = _item_from(raw, index, needs_output=self.target is None)
        if isinstance(item, str):
            item_id = raw.id if isinstance(raw, InvalidItem) else _raw_id(raw)
            line = None
        else:
            item_id, line = item.id, item.line
        run_id = self.run_id(index, item_id)
        taken = self.run_keys.claim(index, item_id, line)
        if taken is not None:
            first, message = taken
            failed = self.failed_item(index, item_id, run_id,
                                      None if isinstance(item, str) else item, message)
            return attrs.evolve(failed, duplicate_of=first)
        if isinstance(item, str):
            return self.failed_item(index, item_id, run_id, None, item)
        done = self.done
        pending = not done or any((run_id, s.id) not in done for s in self.scorers)
        output = item.output
        if pending and self.target is not None:
            try:
                output = self.target(item)
                if inspect.isawaitable(output):
                    output = await output
            except Exception as exc:  # noqa: BLE001 - the user's target is the boundary
                message = f"target raised {_exception_text(exc)}"
                return self.failed_item(index, item.id, run_id, item, message)
        outcomes: list[ScorerOutcome] = []
        for scorer in self.scorers:
            stored = done.get((run_id, scorer.id)) if done else None
            if stored is not None:
                outcomes.append(ScorerOutcome(
                    scorer_id=scorer.id, status=stored.status, score=stored.score,
                    reason=stored.reason, resumed=True,
                ))
            else:
                outcomes.append(await self.score(scorer, item, output, run_id))
        return ItemResult(index=index, item_id=item.id, run_id=run_id, item=item, output=output,
                          outcomes=tuple(outcomes))

    def run_id(self, index: int, item_id: str | None) -> str:
        return f"{self.batch_id}:{item_id}" if item_id else f"{self.batch_id}:#{index}"

    def failed_item(
        self, index: int, item_id: str | None, run_id: str, item: EvalItem | None, error: str
    ) -> ItemResult:
        outcomes = tuple(
            ScorerOutcome(scorer_id=s.id, status="failed", error=error) for s in self.scorers
        )
        return ItemResult(index=index, item_id=item_id, run_id=run_id, item=item, error=error,
                          outcomes=outcomes)

    async def score(
        self, scorer: Any, item: EvalItem, output: Any, run_id: str
    ) -> ScorerOutcome:
        try:
            result = await scorer.run(
                input=item.input, output=output, ground_truth=item.ground_truth,
                request_context=item.request_context,
                expected_trajectory=item.expected_trajectory, run_id=run_id,
                runtime=self.runtime, **item.extra,
            )
        except Exception as exc:  # noqa: BLE001 - a scorer object (user code) is the boundary
            return ScorerOutcome(
                scorer_id=scorer.id, status="failed", error=f"scorer raised {_exception_text(exc)}",
            )
        if isinstance(result, Success) and isinstance(result.unwrap(), ScoreResult):
            value: ScoreResult[Any, Any] = result.unwrap()
            if value.not_scorable is not None:
                return ScorerOutcome(scorer_id=scorer.id, status="not_scorable",
                                     reason=value.not_scorable.reason, result=value)
            score: object = value.score  # a scorer object (duck-typed) may give anything
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(
                score
            ):
                return ScorerOutcome(
                    scorer_id=scorer.id, status="failed", result=value,
                    error=f"scorer gave an invalid score {short_repr(score)} "
                          f"(a finite number is needed)",
                )
            return ScorerOutcome(scorer_id=scorer.id, status="scored", score=float(score),
                                 reason=value.reason, result=value)
        if not isinstance(result, Failure):
            return ScorerOutcome(
                scorer_id=scorer.id, status="failed",
                error=f"scorer.run returned {short_repr(result)}, not a Result of a ScoreResult",
            )
        error = result.failure()
        return ScorerOutcome(scorer_id=scorer.id, status="failed", error=_text_of(error),
                             run_error=error if isinstance(error, ScorerRunError) else None)

    # ---- bookkeeping

    def record(self, result: ItemResult) -> None:
        if result.error is not None:
            self.failed_items += 1
        aggregates = self.aggregates
        for outcome in result.outcomes:
            aggregates[outcome.scorer_id].add(outcome)
        if self.results is not None:
            self.results.append(result)

    def rows(self, result: ItemResult) -> tuple[ItemResult, list[ScoreRow]]:
        """The item's rows to save, and its result with each pair whose row lost data failed."""
        if result.duplicate_of is not None:
            return result, []  # its run id is an earlier item's: never overwrite that item's rows
        rows: list[ScoreRow] = []
        outcomes: list[ScorerOutcome] = []
        for outcome in result.outcomes:
            if not outcome.resumed:
                row, outcome = self.row(result, outcome)  # noqa: PLW2901 - possibly failed now
                rows.append(row)
            outcomes.append(outcome)
        if any(a is not b for a, b in zip(outcomes, result.outcomes, strict=True)):
            result = attrs.evolve(result, outcomes=tuple(outcomes))
        return result, rows

    def row(
        self, item_result: ItemResult, outcome: ScorerOutcome
    ) -> tuple[ScoreRow, ScorerOutcome]:
        """The pair's row; a row that lost data (or could not be built) fails the pair.

        Failing it keeps the report honest about what the store holds, and lets a resume run the
        pair again once the data is fixed (a resume skips only scored and not-scorable rows).
        """
        try:
            row = self.build_row(item_result, outcome)
        except Exception as exc:  # noqa: BLE001 - a safety net: one item never stops a batch
            error = f"its row could not be built ({_exception_text(exc)}); stored without its data"
            return self.bare_row(item_result, outcome, error), _failed(outcome, error)
        metadata = row.metadata or {}
        lost = metadata.get("sanitized")
        if not lost or outcome.status == "failed":
            return row, outcome
        error = _lost_data_message(lost)
        kept = {
            **metadata, "status": "failed", "error": error,
            "uncountedOutcome": {"status": outcome.status, "score": outcome.score},
        }
        row = attrs.evolve(row, status="failed", score=None, metadata=kept)
        return row, _failed(outcome, error)

    def bare_row(self, item_result: ItemResult, outcome: ScorerOutcome, error: str) -> ScoreRow:
        """A failed row with the pair's ids and the error only."""
        return storable_row(ScoreRow(
            id=row_id(item_result.run_id, outcome.scorer_id), scorer_id=outcome.scorer_id,
            run_id=item_result.run_id, batch_id=self.batch_id, status="failed",
            scorer=self.scorer_json[outcome.scorer_id], source="TEST",
            dataset_item_id=item_result.item_id,
            metadata={"status": "failed", "itemIndex": item_result.index, "error": error,
                      "sanitized": [{"path": "", "what": "the row could not be built; "
                                                          "its data is not stored"}]},
        ))

    def build_row(self, item_result: ItemResult, outcome: ScorerOutcome) -> ScoreRow:
        item = item_result.item
        target = self.target_name
        return _score_row(
            run_id=item_result.run_id, scorer_id=outcome.scorer_id, batch_id=self.batch_id,
            status=outcome.status, score=outcome.score, reason=outcome.reason,
            scorer=self.scorer_json[outcome.scorer_id], result=outcome.result,
            input=item.input if item is not None else None, output=item_result.output,
            context=(_context(item.ground_truth, item.expected_trajectory, item.extra)
                     if item is not None else {}),
            request_context=item.request_context if item is not None else None,
            entity_type="EXTERNAL" if target else None,
            entity={"id": target, "name": target} if target else None,
            entity_id=target, source="TEST", dataset_item_id=item_result.item_id,
            metadata={"itemIndex": item_result.index},
            error=outcome.error, run_error=outcome.run_error,
        )

    # ---- tasks

    async def worker(
        self,
        source: _Source,
        send: anyio.abc.ObjectSendStream[list[ScoreRow]] | None,
        scope: anyio.CancelScope,
    ) -> None:
        try:
            processed = 0
            while True:
                index, raw = await source.next()
                if raw is _END:
                    return
                rows: list[ScoreRow] = []
                try:
                    result = await self.process(index, raw)
                except Exception as exc:  # noqa: BLE001 - a safety net: one item never stops a batch
                    # Not expected (process() guards each call of user code); nothing is stored
                    # for the item, so a resume runs it again.
                    result = self.failed_item(
                        index, None, self.run_id(index, None), None,
                        f"item #{index}: scorecore failed on it: {_exception_text(exc)}",
                    )
                else:
                    if send is not None:
                        result, rows = self.rows(result)
                self.record(result)
                if rows and send is not None:
                    await send.send(rows)
                if self.on_item_complete is not None:
                    called = self.on_item_complete(result)
                    if inspect.isawaitable(called):
                        await called
                processed += 1
                if processed % 32 == 0:
                    # Items with only synchronous work never yield; let others run now and then.
                    await anyio.lowlevel.checkpoint()
        except Exception as exc:  # noqa: BLE001 - re-raised by run_evals, outside the group
            self.fail(exc, scope)

    async def writer(
        self, receive: MemoryObjectReceiveStream[list[ScoreRow]], scope: anyio.CancelScope
    ) -> None:
        store = self.store
        assert store is not None  # noqa: S101 - only started with a store
        try:
            async with receive:
                async for rows in receive:
                    batch = list(rows)
                    # Save whatever else is already queued with it: fewer, larger commits.
                    while len(batch) < 512:
                        try:
                            batch.extend(receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    await store.save(batch)
        except Exception as exc:  # noqa: BLE001 - re-raised by run_evals, outside the group
            self.fail(exc, scope)

    def fail(self, exc: BaseException, scope: anyio.CancelScope) -> None:
        if self.error is None:
            self.error = exc
        scope.cancel()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_id(value: object) -> str | None:
    """An int id as text (ints too long for ``str()`` are left to be refused as ids)."""
    if _is_int(value) and cast(int, value).bit_length() <= 64:
        return str(value)
    return None


def _raw_id(raw: object) -> str | None:
    """The usable id of a dataset entry that is not a valid item, for its run id."""
    if isinstance(raw, Mapping):
        value = raw.get("id")
        value = _int_id(value) or value
        if isinstance(value, str) and _id_problem(value) is None:
            return value
    return None


def _exception_text(exc: BaseException) -> str:
    """``"ValueError: message"``: bounded, printable, even when ``str(exc)`` raises."""
    return f"{type(exc).__qualname__}: {_text_of(exc)}"


def _text_of(value: object, limit: int = 1_000) -> str:
    try:
        text = str(value)
    except Exception as exc:  # noqa: BLE001 - __str__ of a user's object is user code
        return f"<str() raised {type(exc).__qualname__}>"
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} chars)"
    return clean_text(text)


def _failed(outcome: ScorerOutcome, error: str) -> ScorerOutcome:
    if outcome.status == "failed":
        return outcome
    return attrs.evolve(outcome, status="failed", score=None, error=error)


def _lost_data_message(notes: Sequence[Any]) -> str:
    first = notes[0] if isinstance(notes[0], Mapping) else {}
    more = f"; {len(notes) - 1} more in metadata.sanitized" if len(notes) > 1 else ""
    return (
        f"the item's data cannot be stored as it is ({first.get('path')}: {first.get('what')}"
        f"{more}); fix the data and resume"
    )


_POSITION_ID = re.compile(r"#(0|[1-9][0-9]{0,17})")


@final
class _RunKeys:
    """Which item first used each run id, so that no item overwrites another's rows.

    An item's run id is its id, or ``#<position>`` without one: ids are kept (flat memory for
    id-less items: one bit each), and an id spelled ``#<position>`` is checked against the
    id-less item at that position.
    """

    __slots__ = ("_first", "_idless", "_position_ids")

    # The first item of each id: its index, and its line (when known) in the bits above.
    _LINE_SHIFT = 40

    def __init__(self) -> None:
        self._first: dict[str, int] = {}
        self._idless = bytearray()
        self._position_ids = False

    def claim(self, index: int, item_id: str | None, line: int | None) -> tuple[int, str] | None:
        """Claim the run id of item ``index``; ``(first index, message)`` if already taken."""
        if item_id is None:
            byte = index >> 3
            if byte >= len(self._idless):
                self._idless.extend(bytes(byte + 1024 - len(self._idless)))
            self._idless[byte] |= 1 << (index & 7)
            packed = self._first.get(f"#{index}") if self._position_ids else None
            if packed is None:
                return None
            first, where = self._unpack(packed)
            return first, (f"no id, and its run id (position #{index}) is the id of an earlier "
                           f"item, first seen at {where}")
        packed = self._first.get(item_id)
        if packed is not None:
            first, where = self._unpack(packed)
            return first, f"duplicate id {short_repr(item_id)}, first seen at {where}"
        position = _POSITION_ID.fullmatch(item_id)
        if position is not None:
            self._position_ids = True
            other = int(position[1])
            if other < index and other >> 3 < len(self._idless) and (
                self._idless[other >> 3] >> (other & 7)
            ) & 1:
                return other, (f"duplicate id {short_repr(item_id)}: it is the run id of item "
                               f"#{other}, which has no id")
        self._first[item_id] = index | ((line or 0) << self._LINE_SHIFT)
        return None

    def _unpack(self, packed: int) -> tuple[int, str]:
        index = packed & ((1 << self._LINE_SHIFT) - 1)
        line = packed >> self._LINE_SHIFT
        return index, f"line {line}" if line else f"item #{index}"


def _check_scorers(scorers: object, gates: object) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    if isinstance(scorers, Scorer) or not isinstance(scorers, Iterable) or isinstance(
        scorers, str | bytes | Mapping
    ):
        raise EvalConfigError(
            f"run_evals: scorers must be a list of scorers, got {_short(scorers)}"
            + (" (wrap a single scorer in a list)" if isinstance(scorers, Scorer) else ""),
            field="scorers", value=scorers,
        )
    chosen: list[Any] = []
    for scorer in scorers:
        if not isinstance(getattr(scorer, "id", None), str) or not callable(
            getattr(scorer, "run", None)
        ):
            raise EvalConfigError(
                f"run_evals: every scorer needs an 'id' and a 'run' method, got {_short(scorer)}",
                field="scorers", value=scorer,
            )
        chosen.append(scorer)
    gate_ids: list[str] = []
    if gates is not None:
        if isinstance(gates, str | bytes | Mapping) or not isinstance(gates, Iterable):
            raise EvalConfigError(
                f"run_evals: gates must be a list of scorer ids or scorers, got {_short(gates)}",
                field="gates", value=gates,
            )
        for gate in gates:
            if isinstance(gate, str):
                gate_ids.append(gate)
            elif isinstance(getattr(gate, "id", None), str) and callable(
                getattr(gate, "run", None)
            ):
                gate_ids.append(gate.id)
                if all(s is not gate for s in chosen) and all(s.id != gate.id for s in chosen):
                    chosen.append(gate)
            else:
                raise EvalConfigError(
                    f"run_evals: a gate must be a scorer id or a scorer, got {_short(gate)}",
                    field="gates", value=gate,
                )
    if not chosen:
        raise EvalConfigError("run_evals needs at least one scorer or gate", field="scorers",
                              value=scorers)
    seen: set[str] = set()
    for scorer in chosen:
        if scorer.id in seen:
            raise EvalConfigError(
                f"run_evals: two scorers share the id {scorer.id!r}; ids must be unique",
                field="scorers", value=scorer.id,
            )
        seen.add(scorer.id)
    for gate_id in gate_ids:
        if gate_id not in seen:
            raise EvalConfigError(
                f"run_evals: gate {gate_id!r} is not one of the scorers "
                f"({', '.join(sorted(seen))})", field="gates", value=gate_id,
            )
    return tuple(chosen), tuple(dict.fromkeys(gate_ids))


def _check_thresholds(thresholds: object, ids: Sequence[str]) -> dict[str, Threshold]:
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise EvalConfigError(
            f"run_evals: thresholds must map scorer ids to a number or Threshold, "
            f"got {_short(thresholds)}", field="thresholds", value=thresholds,
        )
    out: dict[str, Threshold] = {}
    for key, value in thresholds.items():
        if key not in ids:
            raise EvalConfigError(
                f"run_evals: threshold for unknown scorer {key!r} "
                f"(scorers: {', '.join(ids)})", field="thresholds", value=key,
            )
        if isinstance(value, Threshold):
            out[key] = value
            continue
        try:
            bound = _unit(f"threshold for {key!r}", value)
        except (TypeError, ValueError) as exc:
            raise EvalConfigError(f"run_evals: {exc}", field="thresholds", value=value) from None
        if bound is None:
            raise EvalConfigError(
                f"run_evals: threshold for {key!r} must be a number in [0, 1] or a Threshold, "
                f"got None", field="thresholds", value=value,
            )
        out[key] = Threshold(min=bound)
    return out


async def _check_batch(store: ScoreStore, batch_id: str, *, resume: bool) -> None:
    """Refuse to mix a new dataset into a stored batch, or to resume a batch never stored."""
    exists = await store.has_batch(batch_id)
    if exists and not resume:
        raise EvalConfigError(
            f"run_evals: batch {_short(batch_id)} already has rows in the store; pass "
            f"resume=True to continue it, or choose a new batch_id",
            field="batch_id", value=batch_id,
        )
    if resume and not exists:
        raise EvalConfigError(
            f"run_evals: cannot resume batch {_short(batch_id)}: the store holds no rows "
            f"for it (start it with resume=False)",
            field="resume", value=resume,
        )


async def run_evals(
    data: Iterable[ItemLike] | AsyncIterable[ItemLike],
    scorers: Iterable[Scorer[Any, Any]],
    *,
    target: Callable[[EvalItem], Any] | None = None,
    concurrency: int = 8,
    thresholds: Mapping[str, float | Threshold] | None = None,
    gates: Iterable[str | Scorer[Any, Any]] | None = None,
    store: ScoreStore | None = None,
    on_item_complete: Callable[[ItemResult], Any] | None = None,
    runtime: Runtime | None = None,
    batch_id: str | None = None,
    resume: bool = False,
    keep_results: bool = False,
    max_failures: int | None = None,
) -> EvalReport:
    """Run every scorer over every item of a dataset and report the aggregate.

    Items are pulled from ``data`` lazily (an iterable or async iterable; never turned into a
    list), at most ``concurrency`` at a time. For each item the ``target`` (if any) produces
    the output, then every scorer runs, one after the other, with the run id
    ``f"{batch_id}:{item id}"`` (or ``f"{batch_id}:#{index}"``). A bad item, a raising target,
    a raising scorer or a failing judge is recorded for that item; the batch goes on.

    Args:
        data: the items: :class:`EvalItem` values or mappings with the keys ``input``,
            ``output``, ``ground_truth`` (or ``groundTruth``), ``request_context`` (or
            ``requestContext``), ``expected_trajectory``, ``id``, ``extra``.
        scorers: the scorers to run (ids must be unique).
        target: an (async) function of the item returning the output to score; its result
            replaces the item's ``output``.
        concurrency: the most items in flight at once (>= 1).
        thresholds: scorer id → minimum mean (a number) or a :class:`Threshold`.
        gates: scorers (or their ids) that must average 1.0; scorers given here are run
            even when not in ``scorers``.
        store: where each item's rows are saved as soon as it completes.
        on_item_complete: called (sync or async) with each :class:`ItemResult` as it completes,
            in completion order, after its rows were queued for the store.
        runtime: clock, sleep and ids for scorers and the duration; the real one by default.
        batch_id: the batch's id; a fresh id from the runtime by default. With a ``store``,
            a batch id that already has rows there is refused unless ``resume`` is set, so
            two datasets never mix in one batch.
        resume: skip (run id, scorer id) pairs the store already holds as final for
            ``batch_id`` (needs ``store`` and ``batch_id``, and the batch must have rows in
            the store); failed pairs run again.
        keep_results: keep every :class:`ItemResult` in ``report.results`` (memory grows
            with the dataset; off by default).
        max_failures: the most failed scorer runs (a raising target, a bad item, a failing
            judge or step …) the verdict tolerates; ``0`` makes any failure fail the batch,
            ``None`` (the default) never fails it for failures alone.

    Returns:
        The :class:`EvalReport`: per-scorer means and counts, threshold and gate results, and
        the verdict (``"failed"`` if any threshold or gate failed, or more scorer runs failed
        than ``max_failures``).

    Raises:
        EvalConfigError: a bad argument, a ``batch_id`` already in the store without
            ``resume``, or ``resume`` of a batch the store does not hold (before any item
            runs or any row is written).
        StoreError: the store failed; rows saved so far stay, resume to finish.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> exact = create_scorer(id="exact", description="Exact match").generate_score(
    ...     lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    >>> data = [{"input": "2+2?", "output": "4", "ground_truth": "4"},
    ...         {"input": "3+3?", "output": "7", "groundTruth": "6"}]
    >>> report = anyio.run(lambda: run_evals(data, [exact], thresholds={"exact": 0.5}))
    >>> report.summary("exact").mean, report.verdict
    (0.5, 'passed')
    """
    chosen, gate_ids = _check_scorers(scorers, gates)
    ids = [s.id for s in chosen]
    checks = _check_thresholds(thresholds, ids)
    if not _is_int(concurrency) or concurrency < 1:
        raise EvalConfigError(
            f"run_evals: concurrency must be an int >= 1, got {concurrency!r}",
            field="concurrency", value=concurrency,
        )
    if isinstance(data, str | bytes | Mapping) or not isinstance(data, Iterable | AsyncIterable):
        raise EvalConfigError(
            f"run_evals: data must be an iterable or async iterable of items, "
            f"got {_short(data)}", field="data", value=data,
        )
    if target is not None and not callable(target):
        raise EvalConfigError(f"run_evals: target must be callable, got {_short(target)}",
                              field="target", value=target)
    if batch_id is not None and (not isinstance(cast(object, batch_id), str) or not batch_id):
        raise EvalConfigError(f"run_evals: batch_id must be a non-empty str, got {batch_id!r}",
                              field="batch_id", value=batch_id)
    if max_failures is not None and (not _is_int(max_failures) or max_failures < 0):
        raise EvalConfigError(
            f"run_evals: max_failures must be an int >= 0 or None, got {max_failures!r}",
            field="max_failures", value=max_failures,
        )
    if resume and (store is None or batch_id is None):
        raise EvalConfigError(
            "run_evals: resume=True needs the store and the batch_id of the batch to resume",
            field="resume", value=resume,
        )
    if store is not None and batch_id is not None:
        await _check_batch(store, batch_id, resume=resume)
    rt = runtime or DEFAULT_RUNTIME
    batch_id = batch_id or rt.new_id()
    started = rt.clock()
    done: Mapping[tuple[str, str], CompletedScore] = {}
    if resume and store is not None:
        done = await store.completed(batch_id)
    batch = _Batch(
        scorers=chosen, target=target, store=store, on_item_complete=on_item_complete,
        runtime=rt, batch_id=batch_id, done=done, keep_results=keep_results,
    )
    source = _Source(data)
    async with anyio.create_task_group() as group:
        scope = group.cancel_scope
        if store is not None:
            # A bounded queue: workers run ahead of the store by at most this many items, and
            # the writer commits whatever is queued in one transaction.
            send, receive = anyio.create_memory_object_stream[list[ScoreRow]](
                max(concurrency, _QUEUED_ITEMS)
            )
            group.start_soon(batch.writer, receive, scope)
            async with send, anyio.create_task_group() as workers:
                for _ in range(concurrency):
                    workers.start_soon(batch.worker, source, send, scope)
        else:
            for _ in range(concurrency):
                group.start_soon(batch.worker, source, None, scope)
    if batch.error is not None:
        raise batch.error
    summaries = tuple(batch.aggregates[s].summary(s) for s in ids)
    by_id = {s.scorer_id: s for s in summaries}
    threshold_results = tuple(
        ThresholdResult(scorer_id=sid, threshold=checks[sid], mean=by_id[sid].mean,
                        passed=checks[sid].check(by_id[sid].mean))
        for sid in ids if sid in checks
    )
    gate_results = tuple(
        GateResult(scorer_id=gid, mean=by_id[gid].mean, passed=_GATE.check(by_id[gid].mean))
        for gid in gate_ids
    )
    failed_runs = sum(summary.failed for summary in summaries)
    passed = (
        all(t.passed for t in threshold_results)
        and all(g.passed for g in gate_results)
        and (max_failures is None or failed_runs <= max_failures)
    )
    results = None
    if batch.results is not None:
        results = tuple(sorted(batch.results, key=lambda r: r.index))
    return EvalReport(
        batch_id=batch_id,
        verdict="passed" if passed else "failed",
        total_items=source.count,
        failed_items=batch.failed_items,
        scorers=summaries,
        thresholds=threshold_results,
        gates=gate_results,
        results=results,
        duration=rt.clock() - started,
        max_failures=max_failures,
    )
