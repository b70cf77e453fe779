"""Reading items, streamed: JSON lines, CSV lines, and rows (what a Parquet reader yields).

Each reader takes what was read from a file (lines as bytes or text, or rows as mappings) and
yields one :class:`DatasetItem` at a time, so a file of any size is read in flat memory. The
first line that cannot be an item stops the read with a :class:`DatasetError` naming the file,
the line and the field. Ids are not checked for repeats here (that needs every id): a store
refuses a repeated id when it adds the version, and :func:`version_of` does in memory.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scorecore.datasets._items import DatasetError, DatasetItem, IdRule, make_item

__all__ = ["read_csv", "read_jsonl", "read_rows"]

_BOM = "\ufeff"


def _decoded(lines: Iterable[str | bytes], source: str) -> Iterator[tuple[int, str]]:
    """Each line as text, numbered from 1; a line that is not UTF-8 is an error naming it."""
    for number, line in enumerate(lines, start=1):
        if isinstance(line, str):
            text = line
        else:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(
                    f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})",
                    source=source, line=number) from None
        if number == 1:
            text = text.removeprefix(_BOM)  # Windows editors start a UTF-8 file with one
        yield number, text


def read_jsonl(lines: Iterable[str | bytes], *, source: str,
               ids: IdRule = "required") -> Iterator[DatasetItem]:
    """The items of a JSON-lines file: one JSON object per line; blank lines are skipped.

    Args:
        lines: the file's lines (a file opened in binary mode, so a line that is not UTF-8 is
            named instead of replaced).
        source: the file as messages name it.
        ids: what an item without an ``id`` gets (:data:`IdRule`).

    Raises:
        DatasetError: a line that is not UTF-8, not JSON, not an object, or whose ``id`` is
            missing or not a string (a whole number is read as its decimal text).

    >>> [i.id for i in read_jsonl(['{"id": "a", "input": 1}', "", '{"id": 2, "input": 2}'],
    ...                           source="d.jsonl")]
    ['a', '2']
    >>> list(read_jsonl(['{"id": "a"}', '[1, 2]'], source="d.jsonl"))
    Traceback (most recent call last):
    ...
    scorecore.datasets._items.DatasetError: d.jsonl:2: expected a JSON object, got list
    """
    index = 0
    for number, text in _decoded(lines, source):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"not JSON: {exc.msg} (column {exc.colno})", source=source,
                               line=number) from None
        except (RecursionError, ValueError) as exc:  # too deep; an integer of 4,300 digits
            problem = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            raise DatasetError(f"not JSON: {problem.split(';')[0]}", source=source,
                               line=number) from None
        if not isinstance(value, dict):
            raise DatasetError(f"expected a JSON object, got {type(value).__name__}",
                               source=source, line=number)
        yield make_item(value, index=index, line=number, source=source, ids=ids)
        index += 1


def _nested(row: Mapping[str, Any]) -> dict[str, Any]:
    """A flat row with dotted column names (``extra.category``) as nested objects."""
    out: dict[str, Any] = {}
    for column, value in row.items():
        *parents, last = column.split(".")
        here = out
        for part in parents:
            here = here.setdefault(part, {})
            if not isinstance(here, dict):
                raise ValueError(  # noqa: TRY004 - one error for every bad column
                    f"column {column!r} nests under {part!r}, which is a value")
        if last in here:
            raise ValueError(f"column {column!r} given twice")
        here[last] = value
    return out


def read_rows(rows: Iterable[Mapping[str, Any]], *, source: str, ids: IdRule = "required",
              unit: str = "row", first: int = 1) -> Iterator[DatasetItem]:
    """The items of a table's rows (a Parquet file's, a CSV file's): one item per row.

    A column's value is the field's; a null (``None``) leaves the field out; a dotted column
    name nests (``extra.category`` is the ``category`` key of the item's ``extra``).

    Args:
        rows: each row as a mapping of column name to value.
        source: the file as messages name it.
        ids: what an item without an ``id`` gets (:data:`IdRule`).
        unit: what messages call a row (``"row"``, or ``"line"`` for a text file).
        first: the number of the first row.

    Raises:
        DatasetError: naming the row and the column.

    >>> item, = read_rows([{"id": "a", "input": "q", "extra.topic": "math", "output": None}],
    ...                   source="d.parquet")
    >>> item.fields
    {'input': 'q', 'extra': {'topic': 'math'}}
    """
    for index, row in enumerate(rows):
        number = first + index
        present = {k: v for k, v in row.items() if v is not None}
        try:
            nested = _nested(present)
        except ValueError as exc:
            raise DatasetError(str(exc), source=source, line=number, unit=unit) from None
        yield make_item(nested, index=index, line=number, source=source, ids=ids, unit=unit)


def read_csv(lines: Iterable[str | bytes], *, source: str,
             ids: IdRule = "required") -> Iterator[DatasetItem]:
    """The items of a CSV file: a header line naming the columns, then one item per record.

    Every value is text; an empty cell leaves the field out; a dotted column name nests
    (``extra.category``), as :func:`read_rows` reads them. A record spanning several lines
    (a quoted newline) is named by its first line.

    Raises:
        DatasetError: a line that is not UTF-8, a header naming a column twice or not at all,
            a record with more or fewer cells than the header, or an ``id`` problem.

    >>> [i.fields for i in read_csv(["id,input,extra.topic", "a,2+2?,math"], source="d.csv")]
    [{'input': '2+2?', 'extra': {'topic': 'math'}}]
    >>> list(read_csv(["id,input", "a,q,surplus"], source="d.csv"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scorecore.datasets._items.DatasetError: d.csv:2: 3 cells, but the header (line 1) names 2 ...
    """
    numbered = _decoded(lines, source)
    current = [0]

    def texts() -> Iterator[str]:
        for number, text in numbered:
            current[0] = number
            yield text

    reader = csv.reader(texts(), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetError(f"not CSV: {exc}", source=source, line=current[0]) from None
    if header is None:
        return
    for column in header:
        if not column or header.count(column) > 1:
            raise DatasetError("the header names a column " + (
                "twice" if column else "with no name"), source=source, line=1,
                field=column or None)
    index = 0
    while True:
        start = current[0] + 1
        try:
            record = next(reader, None)
        except csv.Error as exc:
            raise DatasetError(f"not CSV: {exc}", source=source, line=start) from None
        if record is None:
            return
        if not record:  # a blank line
            continue
        if len(record) != len(header):
            raise DatasetError(f"{len(record)} cells, but the header (line 1) names "
                               f"{len(header)} columns", source=source, line=start)
        row = {column: cell for column, cell in zip(header, record, strict=True) if cell != ""}
        try:
            nested = _nested(row)
        except ValueError as exc:
            raise DatasetError(str(exc), source=source, line=start) from None
        yield make_item(nested, index=index, line=start, source=source, ids=ids)
        index += 1
