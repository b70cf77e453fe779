"""A row as a store writes it: its record, the columns in order with the JSON ones as text.

:func:`~scorecore.evals.run_evals` hands a :class:`~scorecore.evals.store.RecordStore` its rows
as records, encoded where they are built: the JSON values the rows of an item (or of a whole
batch: the scorer JSON) share are encoded once, and no :class:`ScoreRow` is made only to be
taken apart again by the store. :func:`encode_rows` gives the same records for any rows.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Final, final

from scorecore.evals._rows._row import RECORD_ATTRS, SCORE_COLUMNS, ScoreRow, storable_row

# RecordEncoder, json_text and values_of are internal (ItemRows and the stores' tests use them)
__all__ = ["RECORD_COLUMNS", "encode_rows"]

RECORD_COLUMNS: Final = tuple(c for c in SCORE_COLUMNS if c.attr in RECORD_ATTRS)
"""The columns of a record, in order: every column of :data:`SCORE_COLUMNS` but the times the
store sets (``createdAt``, ``updatedAt``: the last ones)."""


def _json_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)``, its C encoder built once
    (``json.dumps`` with options builds a new encoder per call).

    No check for circular references: the values come from :func:`storable_row`, whose
    containers are new and nested at most ``MAX_DEPTH`` deep.
    """
    plain = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
    if c_make_encoder is None:  # an interpreter without json's C speedups
        return plain.encode
    # c_make_encoder takes its options by position only: sort_keys, skipkeys, allow_nan.
    no = False
    encode = c_make_encoder(None, plain.default, encode_basestring, None,
                            plain.key_separator, plain.item_separator, no, no, no)

    def dumps(value: Any) -> str:
        return "".join(encode(value, 0))

    return dumps


json_text: Final = _json_encoder()
"""A JSON column's text: ``json.dumps(value, ensure_ascii=False, allow_nan=False)``."""


def _json_column(seen: dict[int, tuple[object, str]]) -> Callable[[Any], str]:
    """A JSON column's text; rows share their values (an item's, a scorer's), so each container
    is encoded once while ``seen`` keeps it (by identity, holding the value: an id is never
    reused while its entry lives)."""

    def encode(value: Any) -> str:
        # Values come from storable_row: plain JSON, no NUL or lone surrogate, bounded depth;
        # never None (the record leaves it None).
        if type(value) is str:
            text: str = encode_basestring(value)
            return text
        hit = seen.get(id(value))
        if hit is None or hit[0] is not value:
            hit = seen[id(value)] = (value, json_text(value))
        return hit[1]

    return encode


def _record_maker(
    read: str,
) -> Callable[[Any, Callable[[Any], Any]], tuple[Any, ...]]:
    """``record(values, encode)``: the record of ``values`` (``read`` tells how a column is read
    from it: ``"values[{at}]"``, ``"values.{attr}"``), the JSON columns through ``encode``.

    Generated from :data:`SCORE_COLUMNS` (as attrs generates ``__init__``): one expression per
    record instead of a loop over the columns.
    """
    # The code holds indexes and field names only, never data. Most JSON columns of a row are
    # empty: None is kept inline, without a call. A row's metadata is its own (never shared
    # with another row): encoded without looking for it among the shared values.
    reads = [read.format(at=at, attr=column.attr) for at, column in enumerate(RECORD_COLUMNS)]
    fields = ", ".join(
        (f"None if {value} is None else "
         f"{'json_text' if column.attr == 'metadata' else 'encode'}({value})")
        if column.kind == "json" else value
        for value, column in zip(reads, RECORD_COLUMNS, strict=True))
    source = f"def record(values, encode):\n    return ({fields},)\n"
    namespace: dict[str, Any] = {"json_text": json_text}
    exec(compile(source, "<scorecore row record>", "exec"), namespace)  # noqa: S102 - see above
    made: Callable[[Any, Callable[[Any], Any]], tuple[Any, ...]] = namespace["record"]
    return made


_RECORD: Final = _record_maker("values[{at}]")
# A row's record read from the row itself (no tuple of its columns in between).
_ROW_RECORD: Final = _record_maker("values.{attr}")
values_of: Final[Callable[[ScoreRow], tuple[Any, ...]]] = operator.attrgetter(*RECORD_ATTRS)
"""A row's columns, in :data:`RECORD_COLUMNS` order (what ``RowBuilder.values`` gives)."""


@final
class RecordEncoder:
    """Makes records of rows' columns (``RowBuilder.values``' tuples), each shared JSON value
    encoded once: until :meth:`next_item` for an item's values, for good for :meth:`keep`-ed
    ones (the values a builder made and shares with every row, never changed)."""

    __slots__ = ("_encode", "_lasting", "_seen")

    def __init__(self) -> None:
        self._lasting: dict[int, tuple[object, str]] = {}
        self._seen: dict[int, tuple[object, str]] = {}
        self._encode = _json_column(self._seen)

    def keep(self, value: object) -> None:
        """Encode ``value`` once for every record (it must never change)."""
        if value is not None and type(value) is not str:
            self._lasting[id(value)] = (value, json_text(value))
            self._seen.update(self._lasting)

    def next_item(self) -> None:
        """Forget the values of the item done (the user's, which may change between items)."""
        self._seen.clear()
        self._seen.update(self._lasting)

    def record(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The record of a storable row's columns (``RowBuilder.values``' tuple)."""
        return _RECORD(values, self._encode)


def encode_rows(rows: Iterable[ScoreRow]) -> list[tuple[Any, ...]]:
    """Each row's record: its columns in :data:`RECORD_COLUMNS` order, JSON columns as text
    (``json.dumps(value, ensure_ascii=False, allow_nan=False)``), after :func:`storable_row`.

    What a :class:`~scorecore.evals.store.RecordStore` takes; the records of
    :func:`~scorecore.evals.run_evals` are these, made without the rows.

    Raises:
        ValueError: a key column no store can encode (see :func:`storable_row`).

    >>> from scorecore.evals import ScoreRow
    >>> row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
    ...                score=1.0, output={"text": "a\\x00b"})
    >>> [record] = encode_rows([row])
    >>> record[:6], record[9], record[23]
    (('r', 's', 'b:1', 'b', 'scored', 1.0), '{"text": "a�b"}', \
'{"sanitized": [{"path": "output.text", "what": "NUL character replaced by U+FFFD"}]}')
    """
    encode = _json_column({})
    return [_ROW_RECORD(storable_row(row), encode) for row in rows]
