"""Stored score rows: :class:`ScoreRow`, its columns, and the one place rows are built.

Rows follow Mastra's ``mastra_scorers`` columns. A row's result columns are read field by field
from the result through the kernel's table of result fields (``RESULT_FIELDS``), whose Mastra
JSON keys are also the column names (:data:`SCORE_COLUMNS`), so no row goes through Mastra's JSON
and back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, Literal, cast, final

import attrs
import cattrs

from scorecore._core._causes import RunFailureCause, failure_kind
from scorecore._core._convert import converter
from scorecore._core._keys import camel
from scorecore._core._mastra_json import RESULT_FIELD
from scorecore._core._redact import redact_secrets, redact_strings, redact_text
from scorecore._core._reprs import short_repr
from scorecore._core._slot_init import fast_init
from scorecore._core._values import ScoreResult, ScorerRunError, details_kinds
from scorecore.evals._persistence._sanitize import (
    Sanitizer,
    is_clean_text,
    is_encodable_text,
    is_plain_leaf,
    known_storable,
    mark_storable,
)
from scorecore.evals._report._values import OutcomeStatus
from scorecore.evals._rows._memo import RowMemo
from scorecore.evals._rows._result_json import (
    FROM_RESULT,
    SAME,
    TO_METADATA,
    context_of,
    given_input,
    result_json,
)
from scorecore.traces._sinks import ScoreRecord

__all__ = ["SCORE_COLUMNS", "ScoreColumn", "ScoreRow", "row_id", "row_item_id", "storable_row"]

_KEY: Final = {"kind": "key"}
_TEXT: Final = {"kind": "text"}
_NUMBER: Final = {"kind": "number"}
_JSON: Final = {"kind": "json"}
_TIME: Final = {"kind": "time"}


@final
@attrs.frozen(kw_only=True)
class ScoreRow:
    """One stored score: a row of Mastra's ``mastra_scorers`` table (snake_case here).

    Stores write the columns in camelCase (``scorerId``, ``runId`` …, see
    :data:`SCORE_COLUMNS`); ``status`` is scorecore's own column (``"scored"``,
    ``"not_scorable"`` or ``"failed"``), and a row that is not scored has ``score = None`` with
    the details in ``metadata``. ``created_at`` and ``updated_at`` are set by the store
    (``None`` on rows not yet saved).

    Rows hold only what every store keeps (see :func:`storable_row`): data that cannot be
    kept as it is (a NUL character, a lone surrogate, nesting deeper than 200 levels, an int
    of more than 4,300 digits, an object whose ``str()`` raises) is replaced, and
    ``metadata["sanitized"]`` lists each replacement as ``{"path": …, "what": …}``.
    """

    id: str = attrs.field(metadata=_KEY)
    scorer_id: str = attrs.field(metadata=_KEY)
    run_id: str = attrs.field(metadata=_KEY)
    batch_id: str = attrs.field(metadata=_KEY)
    status: OutcomeStatus = attrs.field(metadata=_TEXT)
    score: float | None = attrs.field(default=None, metadata=_NUMBER)
    reason: str | None = attrs.field(default=None, metadata=_TEXT)
    scorer: Mapping[str, Any] = attrs.field(factory=dict, metadata=_JSON)
    input: Any = attrs.field(default=None, metadata=_JSON)
    output: Any = attrs.field(default=None, metadata=_JSON)
    preprocess_step_result: Any = attrs.field(default=None, metadata=_JSON)
    analyze_step_result: Any = attrs.field(default=None, metadata=_JSON)
    preprocess_prompt: str | None = attrs.field(default=None, metadata=_TEXT)
    analyze_prompt: str | None = attrs.field(default=None, metadata=_TEXT)
    generate_score_prompt: str | None = attrs.field(default=None, metadata=_TEXT)
    generate_reason_prompt: str | None = attrs.field(default=None, metadata=_TEXT)
    additional_context: Mapping[str, Any] | None = attrs.field(default=None, metadata=_JSON)
    request_context: Mapping[str, Any] | None = attrs.field(default=None, metadata=_JSON)
    entity_type: str | None = attrs.field(default=None, metadata=_TEXT)
    entity: Mapping[str, Any] | None = attrs.field(default=None, metadata=_JSON)
    entity_id: str | None = attrs.field(default=None, metadata=_TEXT)
    source: Literal["LIVE", "TEST"] = attrs.field(default="TEST", metadata=_TEXT)
    dataset_item_id: str | None = attrs.field(default=None, metadata=_TEXT)
    metadata: Mapping[str, Any] | None = attrs.field(default=None, metadata=_JSON)
    trace_id: str | None = attrs.field(default=None, metadata=_TEXT)
    span_id: str | None = attrs.field(default=None, metadata=_TEXT)
    created_at: datetime | None = attrs.field(default=None, metadata=_TIME)
    updated_at: datetime | None = attrs.field(default=None, metadata=_TIME)

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
        :func:`~.store.row_id` of (run id, scorer id), so saving the record again replaces its row;
        ``request_context`` and ``additional_context`` pass through :func:`redact_secrets`.

        >>> from scorecore._core._values import ScorerRun
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
        builder = RowBuilder(
            batch_id=batch_id or record.trace_id or record.run_id,
            entity_type=record.entity_type, entity=entity, entity_id=record.entity_id,
            source=source or ("LIVE" if record.source == "live" else "TEST"),
            trace_id=record.trace_id, span_id=record.span_id,
        )
        return row_of(builder.values(
            run_id=record.run_id, scorer_id=record.scorer_id,
            status="scored" if not_scorable is None else "not_scorable",
            score=result.score,
            reason=result.reason if not_scorable is None else not_scorable.reason,
            scorer={"id": record.scorer_id, "name": record.scorer_name,
                    "description": record.scorer_description, "hasJudge": record.has_judge},
            result=result, input=run.input, output=run.output,
            context=context_of(run, {}),
            request_context=run.request_context,
            dataset_item_id=None, metadata={"scoreSource": record.source},
        ))

    def not_scorable_kind(self) -> str | None:
        """A not-scorable row's ``kind`` (:class:`~scorecore.NotScorable`)
        (``metadata["notScorable"]["kind"]``): ``"position_bias"`` and the other kinds of a
        judge that could not decide; ``None`` for other rows and a step's own not_scorable.

        >>> row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b",
        ...                status="not_scorable", metadata={"notScorable": {
        ...                    "reason": "the verdict followed the position",
        ...                    "kind": "position_bias"}})
        >>> row.not_scorable_kind()
        'position_bias'
        """
        stored = (self.metadata or {}).get("notScorable")
        if self.status != "not_scorable" or not isinstance(stored, Mapping):
            return None
        kind = stored.get("kind")
        return kind if isinstance(kind, str) else None

    def failure_cause(self) -> RunFailureCause | None:
        """The structured cause of a failed run, read back from the row.

        A failed run's row stores its cause as ``metadata["cause"]["value"]``, tagged with
        the cause's ``kind``; this reads it back to the same value (a step's ``Failure`` value
        as JSON, an exception as its ``"Type: message"`` text). ``None`` for a row that did
        not fail, a row stored before rows kept the value, and a value this version cannot
        read (a kind added later).

        >>> from scorecore import InvalidScore
        >>> row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
        ...                metadata={"cause": stored_cause(
        ...                    InvalidScore(value_repr="'high'", type_name="str"), "analyze")})
        >>> row.failure_cause()
        InvalidScore(value_repr="'high'", type_name='str')
        """
        stored = (self.metadata or {}).get("cause")
        if self.status != "failed" or not isinstance(stored, Mapping):
            return None
        value = stored.get("value")
        if not isinstance(value, Mapping):
            return None
        try:
            return cast(RunFailureCause, converter.structure(value, RunFailureCause))  # type: ignore[arg-type]
        except (cattrs.BaseValidationError, KeyError, TypeError, ValueError):
            return None


@final
@attrs.frozen(kw_only=True)
class ScoreColumn:
    """One stored column of :class:`ScoreRow`.

    Attributes:
        attr: the row's attribute (``"scorer_id"``).
        name: the column's name, Mastra's (``"scorerId"``): for a result field, its key in
            Mastra's JSON (:func:`~scorecore.to_mastra_json`).
        kind: what it holds; ``"key"`` columns identify the row and are never altered,
            ``"time"`` columns are set by the store.
    """

    attr: str
    name: str
    kind: Literal["key", "text", "number", "json", "time"]


def _column(field: attrs.Attribute[Any]) -> ScoreColumn:
    result_field = RESULT_FIELD.get(field.name)
    name = result_field.key if result_field is not None else camel(field.name)
    return ScoreColumn(attr=field.name, name=name, kind=field.metadata["kind"])


SCORE_COLUMNS: tuple[ScoreColumn, ...] = tuple(_column(f) for f in attrs.fields(ScoreRow))
"""Every column of a stored :class:`ScoreRow`, in the row's order.

>>> [c.name for c in SCORE_COLUMNS[:4]]
['id', 'scorerId', 'runId', 'batchId']
"""


def row_id(run_id: str, scorer_id: str) -> str:
    """The stored row's id: a UUID-shaped digest of (run id, scorer id), stable across runs.

    >>> row_id("b1:#0", "exact") == row_id("b1:#0", "exact") != row_id("b1:#0", "other")
    True
    """
    # surrogatepass: defined for any str (UTF-8 otherwise, so ids of valid text are unchanged).
    key = f"{run_id}\x00{scorer_id}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def row_item_id(row: ScoreRow) -> str:
    """The dataset item a stored row scored, the same in every trial of its batch.

    Its ``dataset_item_id``, else its run id without the ``{batch}:`` or
    ``{batch}/trial-N:`` prefix (``#3`` for the fourth entry of an id-less dataset).

    >>> row = ScoreRow(id="r", scorer_id="s", run_id="b/trial-2:#3", batch_id="b",
    ...                status="scored", score=1.0)
    >>> row_item_id(row), row_item_id(attrs.evolve(row, run_id="b:#3"))
    ('#3', '#3')
    """
    if row.dataset_item_id is not None:
        return row.dataset_item_id
    run_id = row.run_id
    first = f"{row.batch_id}:"
    if run_id.startswith(first):
        return run_id[len(first):]
    trial = f"{row.batch_id}/trial-"
    if run_id.startswith(trial):
        number, colon, rest = run_id[len(trial):].partition(":")
        if colon and number.isdigit():
            return rest
    return run_id


# The metadata keys whose texts explain a run (redacted as the reason is); a composite's
# details (a panel's members, a pairwise verdict …) too, under their kind.
_EXPLAINING = ("error", "cause", "notScorable", "judge")


def stored_cause(cause: RunFailureCause, step: str) -> dict[str, Any]:
    """A failed run's cause as its row stores it (``metadata["cause"]``): ``kind``
    (:func:`~scorecore.evals.failure_kind`), ``step``, ``message`` (``cause.describe()``) and
    ``value``, the cause through the converter's tagged union (``{"cause": kind, ...}``).

    >>> from scorecore import InvalidScore
    >>> stored_cause(InvalidScore(value_repr="nan", type_name="float"), "generate_score")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'kind': 'invalid score', 'step': 'generate_score',
     'message': 'generate_score must return a finite real number, got nan of type float',
     'value': {'valueRepr': 'nan', 'typeName': 'float', 'cause': 'invalid_score'}}
    """
    return {"kind": failure_kind(cause), "step": step, "message": cause.describe(),
            "value": converter.unstructure(cause, RunFailureCause)}


@final
class RowBuilder:
    """The one place a stored row is built (``run_evals`` and :meth:`ScoreRow.from_record`):
    :meth:`values` gives its columns, in :data:`RECORD_ATTRS` order (:func:`row_of` makes them
    a :class:`ScoreRow`). What the rows of a builder share (a batch, an entity, a source, a
    trace) is given once; each row's own columns to :meth:`values`, by position in
    ``run_evals``: a stored row's cost was mostly its building, and a fifth of that was a
    keyword call and a dict of the columns per row.

    ``result`` (or the failed run's partial result) gives the run's input and output, the
    prompts and step results; ``metadata`` gets the status, the error, not-scorable details
    and judge executions after ``metadata``'s own keys (a failed run's cause as
    :func:`stored_cause` under ``"cause"``); the contexts are
    redacted. The row is :func:`storable_row`: what no store can keep is replaced and listed in
    ``metadata["sanitized"]``.

    The ``input`` column is the scorer run's input (Mastra's): converted to the scorer's input
    type (an agent run's ``AgentInput``) and changed by ``prepare_run``. When that differs from
    the ``input`` given (the dataset item's), the given one is kept too, as
    ``metadata["itemInput"]``, so readers can show the input as it was written.

    ``memo`` holds what the rows of one item share (see :class:`RowMemo`): each shared value
    is converted, cleaned and redacted once, and every row still gets its notes.
    ``shared_storable``: the columns every row of a builder shares (:data:`_SHARED`) are
    what the sanitizer makes of them already, without a note: they are not walked again.
    """

    __slots__ = ("_batch_id", "_cleaned_at", "_entity", "_entity_id", "_entity_type", "_memo",
                 "_source", "_span_id", "_trace_id")

    def __init__(
        self,
        *,
        batch_id: str,
        entity_type: str | None,
        entity: Mapping[str, Any] | None,
        entity_id: str | None,
        source: Literal["LIVE", "TEST"],
        trace_id: str | None = None,
        span_id: str | None = None,
        memo: RowMemo | None = None,
        shared_storable: bool = False,
    ) -> None:
        self._batch_id = batch_id
        self._entity_type, self._entity, self._entity_id = entity_type, entity, entity_id
        self._source, self._trace_id, self._span_id = source, trace_id, span_id
        self._memo = RowMemo() if memo is None else memo
        self._cleaned_at = _PER_ROW_AT if shared_storable else _CLEANED_AT

    def values(  # noqa: PLR0917 - a row's own columns, by position (see the class)
        self,
        run_id: str,
        scorer_id: str,
        status: OutcomeStatus,
        score: float | None,
        reason: str | None,
        scorer: Mapping[str, Any],
        result: ScoreResult[Any, Any] | None,
        input: Any,
        output: Any,
        context: Mapping[str, Any],
        request_context: Mapping[str, Any] | None,
        dataset_item_id: str | None,
        metadata: Mapping[str, Any],
        error: str | None = None,
        run_error: ScorerRunError | None = None,
    ) -> tuple[Any, ...]:
        """The row's columns (see the class)."""
        memo = self._memo
        if result is None and run_error is not None:
            result = run_error.partial
        clean = Sanitizer()
        meta: dict[str, Any] = {"status": status, **metadata}
        data = {"input": input, "output": output} if result is None else result_json(
            result, clean, memo)
        # In RECORD_ATTRS order (checked where _ROW_LAYOUT is defined); id and metadata last.
        row: list[Any] = [
            None, scorer_id, run_id, self._batch_id, status, score, reason, scorer,
            *map(data.get, _RESULT_IN_ROW), context, request_context, self._entity_type,
            self._entity, self._entity_id, self._source, dataset_item_id, None, self._trace_id,
            self._span_id,
        ]
        if result is not None:
            given = given_input(input, row[_INPUT_AT], memo)
            if given is not SAME:
                meta["itemInput"] = given
        if error is not None:
            meta["error"] = error
        if run_error is not None:
            meta["failedStep"] = run_error.failed_step
            meta["completedSteps"] = list(run_error.completed_steps)
            meta["cause"] = stored_cause(run_error.cause, run_error.failed_step)
        if not _TO_METADATA_NAMES.isdisjoint(data):
            _add_result_metadata(meta, data)
        # The texts that explain a run (reason, error, cause, judge executions, panel members'
        # reasons) may quote a reply holding a secret; the run's own input and output, and what
        # the steps made of them, are the evaluated data and are stored as given. The metadata
        # is redacted once it is storable (below): cleaned first, so redact_strings never meets
        # a 10,000-deep value, and cleaned after the columns, so the first loss a failure names
        # is where the data came from (a step result), not a copy of it in the judge's
        # executions.
        if reason is not None:
            row[_REASON_AT] = redact_text(reason)
        # The contexts are cleaned first (their notes come first), then redacted:
        # redact_secrets recurses and must not meet a 10,000-deep value.
        if context:
            context = memo.clean(context, _ADDITIONAL_CONTEXT, clean, redact=redact_secrets)
        row[_CONTEXT_AT] = context or None
        if request_context is not None:
            row[_REQUEST_CONTEXT_AT] = memo.clean(request_context, _REQUEST_CONTEXT, clean,
                                                  redact=redact_secrets)
        for at, name in self._cleaned_at:  # in the columns' order: the order of the notes
            value = row[at]
            # None and ASCII text without NUL (most values) inline: is_plain_leaf's first test.
            if value is None or (type(value) is str and value.isascii() and "\x00" not in value):
                continue
            if not is_plain_leaf(value):
                row[at] = memo.clean(value, name, clean)
        meta = _clean_metadata(meta, clean, memo)
        if not _REDACTED_KEYS.isdisjoint(meta):
            for key in _EXPLAINING:
                if key in meta:
                    meta[key] = redact_strings(meta[key])
        kinds = details_kinds()
        if not kinds.keys().isdisjoint(meta):
            for key in kinds:
                if key in meta:
                    meta[key] = redact_strings(meta[key])
        if clean.changed:
            earlier = meta.get("sanitized")
            meta["sanitized"] = [*(earlier if isinstance(earlier, list) else ()), *clean.report()]
        if not (type(scorer_id) is str and scorer_id.isascii() and type(run_id) is str
                and run_id.isascii() and type(self._batch_id) is str
                and self._batch_id.isascii()):
            _check_keys(scorer_id=scorer_id, run_id=run_id, batch_id=self._batch_id)
        row[_ID_AT] = row_id(run_id, scorer_id)
        row[_METADATA_AT] = meta
        # Every column is what the sanitizer makes: no second walk in the store.
        return tuple(row)


def row_of(values: tuple[Any, ...]) -> ScoreRow:
    """The row of :meth:`RowBuilder.values`' columns, marked storable (no store walks it again)."""
    # ScoreRow's __init__ checks and converts nothing: setting its slots builds the same row.
    row = _NEW_ROW(*values, None, None)
    mark_storable(row)
    return row


def _add_result_metadata(meta: dict[str, Any], data: Mapping[str, Any]) -> None:
    """The result fields a row keeps in its metadata (not-scorable details, judge calls,
    confidence, a composite's details), into ``meta``."""
    for name, key, spread in _TO_METADATA_AT:
        if name not in data:
            continue
        if spread and isinstance(data[name], Mapping):
            meta.update(data[name])  # a composite's details, under their kind
        else:
            meta[key] = data[name]


# The metadata keys rows are built with (any other key is tested as it comes).
_OWN_KEYS: Final = frozenset({
    "status", "itemIndex", "fingerprint", "error", "failedStep", "completedSteps", "cause",
    "itemInput", "scoreSource", *(f.key for f in TO_METADATA),
})


def _clean_metadata(meta: dict[str, Any], clean: Sanitizer, memo: RowMemo) -> dict[str, Any]:
    """``meta`` as :meth:`Sanitizer.value` makes it: in place when its keys are clean text
    (``meta`` is the row's own dict), else a new dict; the item's input it keeps (the same for
    every scorer's row) cleaned once per item."""
    if not _OWN_KEYS.issuperset(meta):  # the keys rows set themselves are clean text
        for key in meta:
            if type(key) is not str or not is_clean_text(key):
                kept: dict[str, Any] = clean.value(meta, "metadata")
                return kept
    for key, value in meta.items():
        # ASCII text without NUL inline: is_plain_leaf's first test.
        if (type(value) is str and value.isascii() and "\x00" not in value) or is_plain_leaf(
                value):
            continue
        # Replacing a key's value while iterating is allowed: the keys stay the same.
        if key == "itemInput":
            meta[key] = memo.clean(value, ("metadata", key), clean, depth=1)
        else:
            meta[key] = clean.value(value, ("metadata", key), 1)
    return meta


def _check_keys(**keys: object) -> None:
    """Raise when a key column's value is not a str every store can encode."""
    for attr, value in keys.items():
        if value is not None and (not isinstance(value, str) or not is_encodable_text(value)):
            raise ValueError(
                f"ScoreRow.{attr} must be a str without lone surrogates, "
                f"got {short_repr(value)}"
            )


_COLUMN_NAME: Final[Mapping[str, str]] = {c.attr: c.name for c in SCORE_COLUMNS}
_SANITIZED = tuple(c for c in SCORE_COLUMNS if c.kind in ("text", "json") and c.attr != "metadata")
# The columns score_row cleans after the contexts (cleaned and redacted first).
_CLEANED = tuple(c for c in _SANITIZED if c.attr not in ("additional_context", "request_context"))
_KEYS = tuple(c for c in SCORE_COLUMNS if c.kind == "key")
_SHARED: Final = ("scorer", "entity_type", "entity", "entity_id", "source", "trace_id", "span_id")
_FROM_RESULT_NAMES = tuple(f.name for f in FROM_RESULT)
_TO_METADATA_AT = tuple((f.name, f.key, f.spread) for f in TO_METADATA)
_TO_METADATA_NAMES = frozenset(f.name for f in TO_METADATA)
_ADDITIONAL_CONTEXT: Final = _COLUMN_NAME["additional_context"]
_REQUEST_CONTEXT: Final = _COLUMN_NAME["request_context"]
_REDACTED_KEYS = frozenset(_EXPLAINING)
_NEW_ROW: Final = fast_init(ScoreRow)
RECORD_ATTRS: Final = tuple(c.attr for c in SCORE_COLUMNS if c.kind != "time")
"""The columns :meth:`RowBuilder.values` gives, in order: every column but the times a store sets
(the last two, which :func:`row_of` leaves ``None``)."""
# The result's columns in the row's order, and where each column is in a row's values.
_RESULT_IN_ROW: Final = tuple(a for a in RECORD_ATTRS if a in _FROM_RESULT_NAMES)
_ROW_LAYOUT: Final = (
    "id", "scorer_id", "run_id", "batch_id", "status", "score", "reason", "scorer",
    *_RESULT_IN_ROW, "additional_context", "request_context", "entity_type", "entity",
    "entity_id", "source", "dataset_item_id", "metadata", "trace_id", "span_id",
)
if _ROW_LAYOUT != RECORD_ATTRS:  # RowBuilder.values lists the columns in this order
    raise RuntimeError(f"RowBuilder.values lists {_ROW_LAYOUT}, rows have {RECORD_ATTRS}")
_ID_AT, _INPUT_AT, _REASON_AT, _CONTEXT_AT, _REQUEST_CONTEXT_AT, _METADATA_AT = map(
    RECORD_ATTRS.index,
    ("id", "input", "reason", "additional_context", "request_context", "metadata"))
_CLEANED_AT = tuple((RECORD_ATTRS.index(c.attr), c.name) for c in _CLEANED)
# The columns left when the shared ones give no note: the others' notes keep their order.
_PER_ROW_AT = tuple((at, name) for at, name in _CLEANED_AT if RECORD_ATTRS[at] not in _SHARED)


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
    if sanitizer is None and known_storable(row):
        return row  # built by storable_row (run_evals' rows): walking it again changes nothing
    clean = sanitizer if sanitizer is not None else Sanitizer()
    _check_keys(**{column.attr: getattr(row, column.attr) for column in _KEYS})
    changes: dict[str, Any] = {}
    for column in _SANITIZED:
        value = getattr(row, column.attr)
        if value is not None:
            changes[column.attr] = clean.value(value, column.name)
    metadata = row.metadata
    if metadata is not None:
        metadata = clean.value(metadata, "metadata")
    if clean.changed:
        kept = dict(metadata) if isinstance(metadata, Mapping) else {}
        earlier = kept.get("sanitized")
        kept["sanitized"] = [*(earlier if isinstance(earlier, list) else ()), *clean.report()]
        metadata = kept
    kept_row = attrs.evolve(row, **changes, metadata=metadata)
    mark_storable(kept_row)
    return kept_row
