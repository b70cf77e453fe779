"""Pairing two batches in the database (:class:`scorecore.evals.store.PairedReader`): the SQL
both stores run, and the records it returns grouped into pairs.

The database does the work that grows with the batches: it computes each row's item id and
sorts both batches' rows by scorer, item and batch, reading only the columns a comparison
needs. Python then reads that one ordered stream a page at a time, turning each (scorer, item)
group with rows on both sides into one :class:`~scorecore.evals.store.PairedScore` (a group
with one side only is skipped); nothing of a batch is held beyond a page.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import aclosing
from typing import Any, Final

from scorecore.evals import ScoreRow
from scorecore.evals.store import (
    PairedScore,
    TrialScore,
    decode_row,
    paired_score,
)
from scorecore_adapters.storage._schema import (
    BATCH_ID,
    ID,
    RUN_ID,
    SCORE,
    SCORER_ID,
    STATUS,
    Dialect,
    q,
    row_from,
)

__all__: list[str] = []  # internal: shared by the SQLite and PostgreSQL stores

PAGE: Final = 5_000
"""Records fetched at a time: a page of narrow records is well under a megabyte."""

_DATASET_ITEM_ID: Final = "datasetItemId"
_SCORER: Final = "scorer"
_STATUSES: Final = frozenset({"scored", "not_scorable", "failed"})
# The columns of a paired record, after its item id and side (0 base, 1 new).
_NARROW: Final = (ID, SCORER_ID, RUN_ID, BATCH_ID, STATUS, SCORE, _DATASET_ITEM_ID)


# What the item id's SQL needs from each dialect: a prefix of n characters, the position of a
# substring, and "all ASCII digits" (SQLite's GLOB, PostgreSQL's regular expression).
_LEFT: Final = {"sqlite": "substr({0}, 1, {1})", "postgres": "left({0}, {1})"}
_FIND: Final = {"sqlite": "instr({0}, {1})", "postgres": "strpos({0}, {1})"}
_DIGITS: Final = {"sqlite": "NOT ({0} GLOB '*[^0-9]*')", "postgres": "{0} ~ '^[0-9]+$'"}


def item_sql(dialect: Dialect) -> str:
    """A row's item id in SQL, as :func:`~scorecore.evals.store.row_item_id` computes it: its
    dataset item id, else its run id without the ``BATCH:`` or ``BATCH/trial-N:`` prefix."""
    run, batch, item = q(RUN_ID), q(BATCH_ID), q(_DATASET_ITEM_ID)
    rest = f"substr({run}, length({batch}) + 8)"
    colon = _FIND[dialect].format(rest, "':'")
    number = f"substr({rest}, 1, {colon} - 1)"
    trial = (f"{_LEFT[dialect].format(run, f'length({batch}) + 7')} = {batch} || '/trial-' "
             f"AND {colon} > 1 AND {_DIGITS[dialect].format(number)}")
    return (f"CASE WHEN {item} IS NOT NULL THEN {item} "
            f"WHEN {_LEFT[dialect].format(run, f'length({batch}) + 1')} = {batch} || ':' "
            f"THEN substr({run}, length({batch}) + 2) "
            f"WHEN {trial} THEN substr({rest}, {colon} + 1) ELSE {run} END")


def _order(dialect: Dialect) -> str:
    # Code point order, as Python sorts str: SQLite's BINARY compares UTF-8 bytes, which
    # order as code points do; PostgreSQL needs the "C" collation for the same.
    return "" if dialect == "sqlite" else ' COLLATE "C"'


def paired_sql(table: str, dialect: Dialect, mark: str) -> str:
    """Both batches' rows (base first ``mark``, new second) with their item id and side (0
    base, 1 new), ordered by scorer, item, side and run id: each (scorer, item) group is
    consecutive, its base trials first."""
    item = item_sql(dialect)
    collate = _order(dialect)
    narrow = ", ".join(q(c) for c in _NARROW)

    def side(number: int) -> str:
        return (f"SELECT {item} AS item, {number} AS side, {narrow} FROM {q(table)} "  # noqa: S608 - checked identifiers only
                f"WHERE {q(BATCH_ID)} = {mark}")

    return (f"SELECT * FROM ({side(0)} UNION ALL {side(1)}) AS paired "  # noqa: S608 - checked identifiers only
            f"ORDER BY {q(SCORER_ID)}{collate}, item{collate}, side, {q(RUN_ID)}{collate}")


def only_in_sql(table: str, dialect: Dialect, mark: str) -> str:
    """The item ids with a row in one batch (first ``mark``) and none in the other (second),
    sorted."""
    item = item_sql(dialect)
    return (
        f"SELECT item FROM (SELECT DISTINCT {item} AS item FROM {q(table)} "  # noqa: S608 - checked identifiers only
        f"WHERE {q(BATCH_ID)} = {mark} EXCEPT SELECT DISTINCT {item} FROM {q(table)} "
        f"WHERE {q(BATCH_ID)} = {mark}) AS lacking ORDER BY item{_order(dialect)}"
    )


def items_sql(table: str, dialect: Dialect, mark: str) -> str:
    """A batch's distinct item ids (``mark``), sorted in code point order."""
    # A sub-select: PostgreSQL orders by an output column's name only bare, not collated.
    return (f"SELECT item FROM (SELECT DISTINCT {item_sql(dialect)} AS item FROM {q(table)} "  # noqa: S608 - checked identifiers only
            f"WHERE {q(BATCH_ID)} = {mark}) AS items ORDER BY item{_order(dialect)}")


def scorers_sql(table: str, dialect: Dialect, mark: str) -> str:
    """Each scorer of a batch with each fingerprint its rows record (text, else NULL), and
    the id of a row whose ``scorer`` column is not a JSON object (else NULL)."""
    scorer = q(_SCORER)
    if dialect == "sqlite":
        fingerprint = (f"CASE WHEN json_valid({scorer}) AND json_type({scorer}, "
                       f"'$.fingerprint') = 'text' THEN json_extract({scorer}, "
                       f"'$.fingerprint') END")
        unreadable = f"NOT (json_valid({scorer}) AND json_type({scorer}) = 'object')"
    else:
        fingerprint = (f"CASE WHEN jsonb_typeof({scorer}->'fingerprint') = 'string' "
                       f"THEN {scorer}->>'fingerprint' END")
        unreadable = f"jsonb_typeof({scorer}) <> 'object'"
    bad = f"MIN(CASE WHEN {scorer} IS NOT NULL AND {unreadable} THEN {q(ID)} END)"
    return (f"SELECT {q(SCORER_ID)}, {fingerprint}, {bad} FROM {q(table)} "  # noqa: S608 - checked identifiers only
            f"WHERE {q(BATCH_ID)} = {mark} GROUP BY {q(SCORER_ID)}, {fingerprint}")


def scorers_from(
    records: Iterable[Sequence[Any]]
) -> tuple[dict[str, frozenset[str | None]], str | None]:
    """The records of :func:`scorers_sql` as scorer id → fingerprints, and the id of a row
    whose ``scorer`` column cannot be read (the store then decodes it, naming it)."""
    found: dict[str, set[str | None]] = {}
    unreadable = None
    for scorer_id, fingerprint, bad in records:
        found.setdefault(str(scorer_id), set()).add(fingerprint)
        unreadable = unreadable or bad
    return {sid: frozenset(prints) for sid, prints in found.items()}, unreadable


def _trial(record: Sequence[Any], *, store: str) -> TrialScore:
    row_id, _scorer, run_id, batch_id, status, score, _item = record
    if not (status in _STATUSES and isinstance(run_id, str) and isinstance(row_id, str)
            and (score is None or (type(score) in (float, int) and math.isfinite(score)))):
        # Not what scorecore writes: the decoder names the row, the column and the value.
        decode_row(dict(zip(_NARROW, record, strict=True)), json_text=False, store=store,
                   operation="compare")
    return TrialScore(row_id=row_id, run_id=run_id, batch_id=batch_id, status=status,
                      score=None if score is None else float(score))


class Pairing:
    """Groups the records of :func:`paired_sql`, page by page, into pairs (a group may span
    two pages: it is finished when the next one starts, or at the end)."""

    __slots__ = ("_base", "_key", "_new", "_store")

    def __init__(self, store: str) -> None:
        self._store = store
        self._key: tuple[str, str] | None = None
        self._base: list[TrialScore] = []
        self._new: list[TrialScore] = []

    def page(self, records: Iterable[Sequence[Any]]) -> list[PairedScore]:
        """The pairs finished by this page of records."""
        done: list[PairedScore] = []
        for item, side, *rest in records:
            key = (rest[1], item)
            if key != self._key:
                self._close(done)
                self._key = key
            (self._new if side else self._base).append(_trial(rest, store=self._store))
        return done

    def end(self) -> list[PairedScore]:
        """The last pair."""
        done: list[PairedScore] = []
        self._close(done)
        return done

    def _close(self, done: list[PairedScore]) -> None:
        if self._key is not None and self._base and self._new:
            done.append(paired_score(self._key[0], self._key[1], self._base, self._new))
        self._key = None
        self._base, self._new = [], []


async def paired_pages(
    records: AsyncGenerator[list[tuple[Any, ...]], None], store: str
) -> AsyncGenerator[list[PairedScore], None]:
    """Pages of pairs from the pages of :func:`paired_sql`'s records (closed when done)."""
    pairing = Pairing(store)
    async with aclosing(records) as pages:
        async for page in pages:
            pairs = pairing.page(page)
            if pairs:
                yield pairs
    last = pairing.end()
    if last:
        yield last


async def row_pages(
    records: AsyncGenerator[list[tuple[Any, ...]], None], *, json_text: bool, store: str
) -> AsyncGenerator[list[ScoreRow], None]:
    """Pages of rows from pages of records of the written columns (closed when done)."""
    async with aclosing(records) as pages:
        async for page in pages:
            yield [row_from(record, json_text=json_text, store=store) for record in page]


class PagedReads:
    """What both stores read a page at a time (:class:`~scorecore.evals.store.PairedReader`'s
    ``paired_scores`` and ``pages``), over the store's own ``_records`` cursor."""

    __slots__ = ()

    _DIALECT: Dialect
    _MARK: str

    @property
    def url(self) -> str:
        raise NotImplementedError

    def _table_name(self) -> str:
        raise NotImplementedError

    def _list_sql(self) -> str:
        raise NotImplementedError

    def _records(
        self, operation: str, sql: str, params: tuple[Any, ...]
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
        raise NotImplementedError

    def paired_scores(
        self, base: str, new: str, /
    ) -> AsyncGenerator[list[PairedScore], None]:
        """The pairs of ``base`` and ``new``, by scorer then item, a page at a time."""
        sql = paired_sql(self._table_name(), self._DIALECT, self._MARK)
        return paired_pages(self._records("compare", sql, (base, new)), self.url)

    def pages(self, batch_id: str, /) -> AsyncGenerator[list[ScoreRow], None]:
        """The rows of ``batch_id`` in ``list_run``'s order, a page at a time."""
        return row_pages(self._records("list_run", self._list_sql(), (batch_id,)),
                         json_text=self._DIALECT == "sqlite", store=self.url)

    def item_ids(self, batch_id: str, /) -> AsyncGenerator[list[str], None]:
        """The distinct item ids of ``batch_id``, sorted in code point order, a page at a
        time: the database counts and sorts them, so a batch's items are never all held."""
        return _item_pages(self._records("item_ids", items_sql(
            self._table_name(), self._DIALECT, self._MARK), (batch_id,)))


async def _item_pages(
    records: AsyncGenerator[list[tuple[Any, ...]], None],
) -> AsyncGenerator[list[str], None]:
    async with aclosing(records) as pages:
        async for page in pages:
            yield [str(item) for (item,) in page]
