"""Reading stored rows back: one decoder for every store, and the error naming a bad row.

A store's table may hold rows scorecore did not write: another writer's, an edit by hand, a
migration gone wrong. Every store turns what it read into a :class:`ScoreRow` through
:func:`decode_row`, which checks each column against the row's own field types (derived from
:class:`ScoreRow` and :data:`SCORE_COLUMNS`, never listed here by hand) and raises
:class:`StoredRowError` naming the row, the column and the value: every read command then
says what is wrong in one line instead of failing later on a value it cannot use.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from types import UnionType
from typing import Any, Final, Literal, Union, get_args, get_origin, get_type_hints

import attrs

from scorecore._core._reprs import short_repr
from scorecore.evals._persistence._port import StoredRowError
from scorecore.evals._rows._row import SCORE_COLUMNS, ScoreColumn, ScoreRow
from scorecore.validators import is_number

__all__ = ["decode_row"]

_HINTS: Final = get_type_hints(ScoreRow)


def _options(hint: Any) -> tuple[Any, ...]:
    return get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)


# Text columns typed by a Literal take only its values (status, source).
_CHOICES: Final[Mapping[str, tuple[str, ...]]] = {
    c.attr: tuple(a for o in _options(_HINTS[c.attr]) if get_origin(o) is Literal
                  for a in get_args(o))
    for c in SCORE_COLUMNS if any(get_origin(o) is Literal for o in _options(_HINTS[c.attr]))
}
# JSON columns typed as a mapping hold a JSON object (scorer, contexts, entity, metadata).
_OBJECTS: Final = frozenset(
    c.attr for c in SCORE_COLUMNS
    if c.kind == "json" and any(get_origin(o) is Mapping for o in _options(_HINTS[c.attr]))
)


class _Bad(Exception):  # noqa: N818 - internal signal, never escapes decode_row
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _no_constant(name: str) -> Any:
    raise _Bad(f"JSON holding {name} (not a JSON number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Bad(f"JSON holding the number {text[:40]}, beyond the largest float")
    return value


def _json(value: Any, attr: str, *, json_text: bool) -> Any:
    if json_text:
        if not isinstance(value, str):
            raise _Bad("not JSON text")
        try:
            value = json.loads(value, parse_constant=_no_constant, parse_float=_finite_float)
        except RecursionError:
            raise _Bad("JSON nested too deeply to read") from None
        except ValueError as exc:  # not JSON, or an int longer than Python reads
            raise _Bad(f"not JSON ({str(exc).split(';')[0]})") from None
    if attr in _OBJECTS and not isinstance(value, Mapping):
        raise _Bad("not a JSON object")
    return value


def _text(value: Any, attr: str) -> Any:
    if not isinstance(value, str):
        raise _Bad("not text")
    choices = _CHOICES.get(attr)
    if choices is not None and value not in choices:
        raise _Bad(f"not one of {', '.join(choices)}")
    return value


def _number(value: Any) -> float:
    if not is_number(value):
        raise _Bad("not a number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the largest float
        raise _Bad("a number beyond the largest float") from None
    if not math.isfinite(number):
        raise _Bad("not a finite number")
    return number


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise _Bad("not an ISO-8601 time")
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise _Bad("not an ISO-8601 time") from None


_DECODE: Final[Mapping[str, Callable[[Any, str, bool], Any]]] = {
    "key": lambda value, attr, _: _text(value, attr),
    "text": lambda value, attr, _: _text(value, attr),
    "number": lambda value, _attr, _j: _number(value),
    "json": lambda value, attr, json_text: _json(value, attr, json_text=json_text),
    "time": lambda value, _attr, _j: _time(value),
}
_NULLABLE: Final = frozenset(
    c.attr for c in SCORE_COLUMNS
    if _HINTS[c.attr] is Any or type(None) in _options(_HINTS[c.attr])
)


_KEY_NAMES: Final = {c.attr: c.name for c in SCORE_COLUMNS if c.kind == "key"}


_DEFAULTED: Final = frozenset(
    f.name for f in attrs.fields(ScoreRow) if f.default is not attrs.NOTHING
)


def _key(record: Mapping[str, object], attr: str) -> str | None:
    value = record.get(_KEY_NAMES[attr])
    return value if isinstance(value, str) else None


def decode_row(
    record: Mapping[str, object],
    *,
    json_text: bool,
    store: str,
    operation: str = "list_run",
) -> ScoreRow:
    """The :class:`ScoreRow` a store read back, each column checked against the row's types.

    Args:
        record: column name (:data:`SCORE_COLUMNS`' ``name``) → the value the database gave;
            columns left out take the row's defaults (a store reading only the outcome
            columns, as ``completed`` does).
        json_text: JSON columns come back as JSON text (SQLite) rather than decoded values
            (PostgreSQL ``jsonb``, a store in memory).
        store: the store's URL without password, for the error.
        operation: what was being read, for the error.

    Raises:
        StoredRowError: a column holds what scorecore never writes there: a key or text
            column that is not text (or a ``status``/``source`` outside its values), a
            score that is not a finite number, JSON that does not parse (or holds NaN or
            an infinity; the mapping columns a JSON object), a time that is not ISO-8601.
            The error names the row, the column and the value.

    >>> from scorecore.evals.store import StoredRowError
    >>> record = {"id": "r1", "scorerId": "s", "runId": "b:1", "batchId": "b",
    ...           "status": "scored", "score": 0.5, "createdAt": "2025-01-01T00:00:00+00:00"}
    >>> decode_row(record, json_text=True, store="sqlite:s.db").created_at.year
    2025
    >>> try:
    ...     decode_row({**record, "score": "high"}, json_text=True, store="sqlite:s.db")
    ... except StoredRowError as exc:
    ...     print(exc.column, exc.value)
    ...     print(exc)
    score high
    store sqlite:s.db: row 'r1' (batch 'b', run 'b:1', scorer 's') cannot be read: column \
'score' holds 'high' (str): not a number
    """
    fields: dict[str, Any] = {}
    for column in SCORE_COLUMNS:
        if column.name not in record:
            continue
        value = record[column.name]
        if value is None and column.attr in _NULLABLE:
            fields[column.attr] = None
            continue
        if value is None and column.attr in _DEFAULTED:
            continue  # NULL where the row has a default (Mastra leaves scorer, source NULL)
        try:
            fields[column.attr] = _DECODE[column.kind](value, column.attr, json_text)
        except _Bad as bad:
            raise _error(record, column, value, bad.problem, store=store,
                         operation=operation) from None
    return ScoreRow(**fields)


def _error(
    record: Mapping[str, object], column: ScoreColumn, value: object, problem: str, *,
    store: str, operation: str,
) -> StoredRowError:
    row_id = _key(record, "id")
    batch, run, scorer = (_key(record, a) for a in ("batch_id", "run_id", "scorer_id"))
    known = [f"{label} {short_repr(v, 80)}" for label, v in
             (("batch", batch), ("run", run), ("scorer", scorer)) if v is not None]
    where = f" ({', '.join(known)})" if known else ""
    return StoredRowError(
        f"store {store}: row {short_repr(row_id, 80)}{where} cannot be read: column "
        f"{column.name!r} holds {short_repr(value, 120)} ({type(value).__name__}): {problem}",
        store=store, operation=operation, row_id=row_id, column=column.name, value=value,
    )
