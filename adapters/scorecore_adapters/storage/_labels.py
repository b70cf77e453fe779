"""Human labels in the score store: one append-only table next to the scores.

A label names a batch, a dataset item and (optionally) a scorer; a new label for the same
triple supersedes the earlier one, which stays in the table (nothing is overwritten, so a
reviewer's history can be audited). Both backends share the SQL below; only the column types
and the placeholder differ.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, final

import anyio
import anyio.to_thread
import attrs

from scorecore.evals import LabelValue, StoreError
from scorecore_adapters.storage._common import Now, describe, import_psycopg, utc_now
from scorecore_adapters.storage._schema import check_table, q
from scorecore_adapters.storage._url import StoreUrl

__all__ = ["DEFAULT_LABELS_TABLE", "Label", "LabelConflictError", "LabelStore",
           "labels_for_calibration"]

DEFAULT_LABELS_TABLE: Final = "scorecore_labels"
"""The table labels live in unless told otherwise."""

_Dialect: TypeAlias = Literal["sqlite", "postgres"]
_COLUMNS: Final = ("id", "batchId", "itemId", "scorerId", "value", "note", "reviewer", "queued",
                   "createdAt")
_TYPES: Final[Mapping[_Dialect, tuple[str, str]]] = {
    # (the id column, the time column)
    "sqlite": ("INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT NOT NULL"),
    "postgres": ("BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ NOT NULL"),
}


def _unstorable(text: str) -> str | None:
    """Why neither store can keep ``text`` (PostgreSQL refuses NUL and lone surrogates)."""
    if "\x00" in text:
        return "holds a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not UTF-8)"
    return None


def _check_text(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    problem = _unstorable(value)
    if problem is not None:
        raise ValueError(f"{name} {problem}: {value!r}")


def _check_value(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    del instance
    if isinstance(value, str):
        _check_text(attribute.name, value, optional=False)
        return
    if isinstance(value, bool):
        return
    if isinstance(value, int | float) and math.isfinite(value):
        return
    raise ValueError(f"{attribute.name} must be true/false, a finite number or a non-empty "
                     f"string, got {value!r}")


def _non_empty(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    del instance
    _check_text(attribute.name, value, optional=False)


def _optional(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    del instance
    _check_text(attribute.name, value, optional=True)


def _reasons(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    del instance
    for reason in value if isinstance(value, tuple) else ():
        _check_text(attribute.name, reason, optional=False)
        if "," in reason:  # the column joins them with commas
            raise ValueError(f"{attribute.name}: a reason holds no comma, got {reason!r}")


@final
@attrs.frozen(kw_only=True)
class Label:
    """One human judgement of a stored run.

    Attributes:
        batch_id: the batch the run belongs to.
        item_id: the dataset item (what ``calibrate --labels`` keys labels by).
        scorer_id: the scorer whose score is judged; ``None`` for a label of the whole item.
        value: ``True``/``False`` (pass/fail), a number on the scorer's scale, or a string.
        note: the reviewer's note.
        reviewer: who labelled it.
        queued: why the review queue offered the run (``("random",)``, ``("near_threshold",
            "regression")`` …); empty when it was labelled outside the queue.
        created_at: when it was stored (set by the store).
        id: its row id (set by the store; a later label of the same run has a larger one).

    >>> Label(batch_id="b", item_id="q-1", scorer_id="exact", value=True).value
    True
    """

    batch_id: str = attrs.field(validator=_non_empty)
    item_id: str = attrs.field(validator=_non_empty)
    scorer_id: str | None = attrs.field(default=None, validator=_optional)
    value: LabelValue = attrs.field(validator=_check_value)
    note: str | None = attrs.field(default=None, validator=_optional)
    reviewer: str | None = attrs.field(default=None, validator=_optional)
    queued: tuple[str, ...] = attrs.field(default=(), validator=_reasons)
    created_at: datetime | None = None
    id: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The label as a line of the file ``calibrate --labels`` reads: ``id``, ``label``, then
        ``scorer`` and ``note`` when set.

        >>> Label(batch_id="b", item_id="q-1", scorer_id="s", value=0.5, note="meh").to_json()
        {'id': 'q-1', 'label': 0.5, 'scorer': 's', 'note': 'meh'}
        """
        line: dict[str, Any] = {"id": self.item_id, "label": self.value}
        if self.scorer_id is not None:
            line["scorer"] = self.scorer_id
        if self.note is not None:
            line["note"] = self.note
        return line


@final
class LabelConflictError(ValueError):
    """Items labelled differently for several scorers, read without naming one.

    Attributes:
        items: the item ids, each with the scorers whose labels differ.
    """

    def __init__(self, items: Mapping[str, Sequence[str]]) -> None:
        shown = "; ".join(f"{item!r} ({', '.join(s)})" for item, s in list(items.items())[:5])
        more = f" and {len(items) - 5} more" if len(items) > 5 else ""
        super().__init__(f"items labelled differently for several scorers: {shown}{more}; "
                         f"name one scorer (--scorer ID)")
        self.items = dict(items)


def labels_for_calibration(
    labels: Iterable[Label], scorer_id: str | None = None
) -> dict[str, Label]:
    """The current labels one calibration reads, one per item: for ``scorer_id``, its own
    label of an item, else the item's label for no scorer; without it, the item's labels must
    agree whatever scorer they name.

    Raises:
        LabelConflictError: without ``scorer_id``, an item holds different values.

    >>> a = Label(batch_id="b", item_id="1", scorer_id="x", value=True)
    >>> b = Label(batch_id="b", item_id="1", scorer_id="y", value=False)
    >>> {i: l.value for i, l in labels_for_calibration([a, b], "y").items()}
    {'1': False}
    >>> try:
    ...     labels_for_calibration([a, b])
    ... except LabelConflictError as exc:
    ...     print(exc.items)
    {'1': ['x', 'y']}
    """
    chosen: dict[str, Label] = {}
    if scorer_id is not None:
        for label in labels:
            if label.scorer_id == scorer_id or (
                label.scorer_id is None and label.item_id not in chosen
            ):
                chosen[label.item_id] = label
        return chosen
    differing: dict[str, list[str]] = {}
    for label in labels:
        held = chosen.setdefault(label.item_id, label)
        if held.value != label.value or type(held.value) is not type(label.value):
            names = differing.setdefault(label.item_id, [held.scorer_id or "-"])
            names.append(label.scorer_id or "-")
    if differing:
        raise LabelConflictError(differing)
    return chosen


def _schema(table: str, dialect: _Dialect) -> list[str]:
    key, time = _TYPES[dialect]
    t = q(table)
    return [
        f"CREATE TABLE IF NOT EXISTS {t} ({q('id')} {key}, {q('batchId')} TEXT NOT NULL, "
        f"{q('itemId')} TEXT NOT NULL, {q('scorerId')} TEXT NOT NULL DEFAULT '', "
        f"{q('value')} TEXT NOT NULL, {q('note')} TEXT, {q('reviewer')} TEXT, "
        f"{q('queued')} TEXT NOT NULL DEFAULT '', {q('createdAt')} {time})",
        f"CREATE INDEX IF NOT EXISTS {q(table + '_run')} ON {t} "
        f"({q('batchId')}, {q('itemId')}, {q('scorerId')}, {q('id')})",
    ]


def _insert_sql(table: str, mark: str) -> str:
    names = ", ".join(q(c) for c in _COLUMNS[1:])
    return (f"INSERT INTO {q(table)} ({names}) "  # noqa: S608 - checked identifiers only
            f"VALUES ({', '.join([mark] * (len(_COLUMNS) - 1))})")


def _select_sql(table: str, mark: str, *, batch: bool, scorer: bool, item: bool,
                current: bool) -> tuple[str, list[str]]:
    """The SELECT of labels, and which filters its marks bind, in order."""
    where: list[str] = []
    binds: list[str] = []
    for flag, column in ((batch, "batchId"), (item, "itemId"), (scorer, "scorerId")):
        if flag:
            where.append(f"{q(column)} = {mark}")
            binds.append(column)
    if current:
        # the latest label of each (batch, item, scorer): later rows supersede earlier ones
        where.append(f"{q('id')} IN (SELECT MAX({q('id')}) FROM {q(table)} "  # noqa: S608
                     f"GROUP BY {q('batchId')}, {q('itemId')}, {q('scorerId')})")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    names = ", ".join(q(c) for c in _COLUMNS)
    return (f"SELECT {names} FROM {q(table)}{clause} ORDER BY {q('id')}",  # noqa: S608
            binds)


def _params(label: Label, now: datetime, dialect: _Dialect) -> tuple[Any, ...]:
    stamp: Any = now.isoformat() if dialect == "sqlite" else now
    return (label.batch_id, label.item_id, label.scorer_id or "",
            json.dumps(label.value, ensure_ascii=False, allow_nan=False), label.note,
            label.reviewer, ",".join(label.queued), stamp)


def _label_of(record: Sequence[Any]) -> Label:
    row_id, batch, item, scorer, value, note, reviewer, queued, created = record
    when = created if isinstance(created, datetime) else datetime.fromisoformat(str(created))
    return Label(id=int(row_id), batch_id=batch, item_id=item, scorer_id=scorer or None,
                 value=json.loads(value), note=note, reviewer=reviewer,
                 queued=tuple(queued.split(",")) if queued else (),
                 created_at=when if when.tzinfo else when.replace(tzinfo=UTC))


@final
class LabelStore:
    """The labels of a score store (SQLite or PostgreSQL), in their own table.

    Open it with ``async with``; it keeps its own connection next to the score store's.
    Adding never updates a row: :meth:`current` reads the latest label of each run,
    :meth:`history` every one.

    Args:
        url: the score store's URL (``sqlite:PATH`` or ``postgresql://…``).
        table: the labels' table.
        now: the wall clock stamping labels.
        read_only: read only; a store without a labels table then reads as empty.

    >>> import anyio, tempfile, os
    >>> url = "sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")
    >>> async def demo() -> list[object]:
    ...     async with LabelStore(url) as labels:
    ...         await labels.add([Label(batch_id="b", item_id="1", value=True)])
    ...         await labels.add([Label(batch_id="b", item_id="1", value=False, note="no")])
    ...         return [label.value for label in await labels.current(batch_id="b")]
    >>> anyio.run(demo)
    [False]
    """

    __slots__ = ("_conn", "_dialect", "_exists", "_limiter", "_lock", "_now", "_read_only",
                 "_table", "_url")

    def __init__(self, url: str | StoreUrl, *, table: str = DEFAULT_LABELS_TABLE,
                 now: Now = utc_now, read_only: bool = False) -> None:
        self._url = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
        if self._url.kind == "memory":
            raise ValueError(f"labels need a score store's URL, got {self._url.shown!r}")
        self._dialect: _Dialect = "postgres" if self._url.kind == "postgres" else "sqlite"
        self._table = check_table(table)
        self._now = now
        self._read_only = read_only
        self._conn: Any = None
        self._exists = True
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    def __repr__(self) -> str:
        return f"LabelStore({self._url.shown!r}, table={self._table!r})"

    @property
    def url(self) -> str:
        """The store's URL, any password masked."""
        return self._url.shown

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    def _errors(self) -> tuple[type[BaseException], ...]:
        if self._dialect == "postgres":
            return (import_psycopg(self.url).Error,)
        return (sqlite3.Error,)

    async def _run(self, operation: str, fn: Callable[[], Any]) -> Any:
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        except self._errors() as exc:
            raise StoreError(f"store {self.url}: labels {operation} failed: {describe(exc)}",
                             store=self.url, operation=f"labels.{operation}") from exc

    async def open(self) -> None:
        """Connect, and create the table unless read-only.

        Raises:
            StoreError: the store cannot be opened.
        """
        async with self._lock:
            if self._conn is None:
                self._conn = await self._run("open", self._connect)

    def _connect(self) -> Any:
        statements = _schema(self._table, self._dialect)
        if self._dialect == "postgres":
            psycopg = import_psycopg(self.url)
            conn = psycopg.connect(self._url.url, autocommit=True, connect_timeout=10)
            if self._read_only:
                found = conn.execute("SELECT to_regclass(%s)", (self._table,)).fetchone()
                self._exists = found is not None and found[0] is not None
            else:
                for statement in statements:
                    conn.execute(statement)
            return conn
        path = self._url.path or ""
        if self._read_only:
            if not Path(path).is_file():
                raise sqlite3.OperationalError(f"file {path!r} does not exist")
            conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True,
                                   isolation_level=None, check_same_thread=False)
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                 "name = ?", (self._table,)).fetchone()
            self._exists = found is not None
            return conn
        if path != ":memory:" and not Path(os.path.dirname(path) or ".").is_dir():
            raise sqlite3.OperationalError(f"directory of {path!r} does not exist")
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        conn.executescript(";\n".join(statements) + ";")
        return conn

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    def _connection(self, operation: str) -> Any:
        if self._conn is None:
            raise StoreError(f"labels of {self.url} are not open (use 'async with')",
                             store=self.url, operation=f"labels.{operation}")
        return self._conn

    async def add(self, labels: Sequence[Label], /) -> list[Label]:
        """Store ``labels`` in one transaction (each superseding any earlier label of its run);
        returns them with their id and time.

        Raises:
            StoreError: the store is read-only or the write failed.
        """
        if self._read_only:
            raise StoreError(f"store {self.url} is open read-only: labels cannot be added",
                             store=self.url, operation="labels.add")
        conn = self._connection("add")
        now = self._now()
        mark = "?" if self._dialect == "sqlite" else "%s"
        sql = _insert_sql(self._table, mark) + f" RETURNING {q('id')}"

        def write() -> list[int]:
            if self._dialect == "sqlite":
                conn.execute("BEGIN IMMEDIATE")
                try:
                    ids: list[int] = [conn.execute(sql, _params(lb, now, "sqlite")).fetchone()[0]
                           for lb in labels]
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return ids
            with conn.transaction():
                return [conn.execute(sql, _params(lb, now, "postgres")).fetchone()[0]
                        for lb in labels]

        async with self._lock:
            ids = await self._run("add", write)
        return [attrs.evolve(lb, id=i, created_at=now) for lb, i in zip(labels, ids, strict=True)]

    async def _select(self, operation: str, *, current: bool, batch_id: str | None,
                      scorer_id: str | None, item_id: str | None) -> list[Label]:
        conn = self._connection(operation)
        if not self._exists:
            return []
        mark = "?" if self._dialect == "sqlite" else "%s"
        sql, binds = _select_sql(self._table, mark, batch=batch_id is not None,
                                 scorer=scorer_id is not None, item=item_id is not None,
                                 current=current)
        values = {"batchId": batch_id, "itemId": item_id, "scorerId": scorer_id}
        params = tuple(values[b] for b in binds)

        def read() -> list[Any]:
            return list(conn.execute(sql, params).fetchall())

        async with self._lock:
            records: list[Any] = await self._run(operation, read)
        return [_label_of(r) for r in records]

    async def current(self, *, batch_id: str | None = None,
                      scorer_id: str | None = None) -> list[Label]:
        """The latest label of each (batch, item, scorer), oldest first; ``scorer_id`` keeps
        the labels naming that scorer only."""
        return await self._select("current", current=True, batch_id=batch_id,
                                  scorer_id=scorer_id, item_id=None)

    async def store_version(self) -> int | None:
        """A number that changes whenever another connection commits to a SQLite store
        (``PRAGMA data_version``): a reader caching what it read compares it instead of
        re-reading; ``None`` for PostgreSQL, which has no such counter."""
        conn = self._connection("store_version")
        if self._dialect != "sqlite":
            return None

        def read() -> int:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

        async with self._lock:
            version: int = await self._run("store_version", read)
        return version

    @property
    def dialect(self) -> Literal["sqlite", "postgres"]:
        """The store's SQL dialect: which placeholder (``?`` or ``%s``) :meth:`query` takes."""
        return self._dialect

    async def query(self, operation: str, sql: str, params: Sequence[Any] = (), /
                    ) -> list[tuple[Any, ...]]:
        """The records of one SQL statement run on this connection (the workbench reads the
        scores table with it, a page at a time); ``operation`` names it in a
        :class:`StoreError`.

        Raises:
            StoreError: the statement failed (its message names ``operation``).
        """
        conn = self._connection(operation)

        def read() -> list[tuple[Any, ...]]:
            # no parameters, none passed: psycopg then reads a literal % as itself
            cursor = conn.execute(sql, tuple(params)) if params else conn.execute(sql)
            return [tuple(r) for r in cursor.fetchall()]

        async with self._lock:
            records: list[tuple[Any, ...]] = await self._run(operation, read)
        return records

    async def define(self, statements: Sequence[str], /) -> bool:
        """Run ``statements`` (``CREATE INDEX IF NOT EXISTS …``: idempotent definitions) unless
        the store is open read-only; whether they ran. A statement the database refuses (a
        role without the right) is one :class:`StoreError`."""
        if self._read_only:
            return False
        conn = self._connection("define")

        def run() -> None:
            for statement in statements:
                conn.execute(statement)

        async with self._lock:
            await self._run("define", run)
        return True

    async def history(self, batch_id: str, item_id: str) -> list[Label]:
        """Every label ever given to an item of a batch, oldest first (superseded ones too)."""
        return await self._select("history", current=False, batch_id=batch_id,
                                  scorer_id=None, item_id=item_id)
