"""The experiment ledger: what each batch ran, on what data, and how it ended.

Two tables next to the scores, created if missing: one row per batch (its dataset, scorers
with their fingerprints and judges, target, git commit, command line, then its verdict and
per-scorer means when it ends), and the batch's items by id with their content digest, so a
comparison can pair only the items whose content is the same. A batch is recorded once: a
resumed batch keeps its first record and gets its new end. Both backends share the SQL; only
the placeholder and the time column's type differ.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, final

import anyio
import anyio.to_thread
import attrs

from scorecore.evals import StoreError
from scorecore_adapters.storage._common import Now, describe, import_psycopg, utc_now
from scorecore_adapters.storage._schema import check_table, q
from scorecore_adapters.storage._url import StoreUrl

__all__ = ["DEFAULT_EXPERIMENTS_TABLE", "Experiment", "ExperimentScorer", "ExperimentStore"]

DEFAULT_EXPERIMENTS_TABLE: Final = "scorecore_experiments"
"""The ledger's table (its items live in the same name plus ``_items``)."""

_Dialect: TypeAlias = Literal["sqlite", "postgres"]
# (column, JSON-encoded?) in table order: one list, read and written from it.
_COLUMNS: Final = (("batchId", False), ("datasetName", False), ("datasetVersion", False),
                   ("dataset", True), ("scorers", True), ("target", False),
                   ("gitCommit", False), ("gitDirty", False), ("command", True),
                   ("startedAt", False), ("finishedAt", False), ("verdict", False),
                   ("means", True))
_TIME: Final[Mapping[_Dialect, str]] = {"sqlite": "TEXT", "postgres": "TIMESTAMPTZ"}
_INSERT_CHUNK: Final = 5_000


@final
@attrs.frozen(kw_only=True)
class ExperimentScorer:
    """One scorer of a batch as the ledger records it.

    Attributes:
        id: the scorer's id.
        fingerprint: its definition's fingerprint (``Scorer.fingerprint``).
        judges: per prompt step, its judge: ``{"step", "model", "provider", "settings"}``.
    """

    id: str
    fingerprint: str | None = None
    judges: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The scorer as JSON-ready data."""
        return {"id": self.id, "fingerprint": self.fingerprint,
                "judges": [dict(j) for j in self.judges]}


@final
@attrs.frozen(kw_only=True)
class Experiment:
    """One batch in the ledger.

    Attributes:
        batch_id: the batch.
        dataset: what it ran on: ``name`` (``None`` for a file), ``version`` (the content
            digest of its items), and where known ``cases`` (the digest of the items without
            their outputs), ``number``, ``sample``, ``file``, ``items``.
        scorers: its scorers, by id.
        target: the target's fingerprint, when a target produced the outputs.
        git_commit: the project's commit when it ran inside a git checkout.
        git_dirty: whether that checkout had uncommitted changes (``None`` outside git).
        command: the command line, secrets redacted.
        started_at: when the batch was recorded (set by the store).
        finished_at: when it ended (``None`` while running, or if it never ended).
        verdict: ``"passed"``/``"failed"`` once it ended.
        means: each scorer's mean once it ended (``None`` for a scorer that scored nothing).

    >>> Experiment(batch_id="b1", dataset={"name": None, "version": "ab12"}).dataset_version
    'ab12'
    """

    batch_id: str
    dataset: Mapping[str, Any]
    scorers: tuple[ExperimentScorer, ...] = ()
    target: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    command: tuple[str, ...] = ()
    started_at: datetime | None = None
    finished_at: datetime | None = None
    verdict: str | None = None
    means: Mapping[str, float | None] = attrs.field(factory=dict)

    @property
    def dataset_name(self) -> str | None:
        """The dataset's name (``None`` for a file given with ``--data``)."""
        name = self.dataset.get("name")
        return name if isinstance(name, str) else None

    @property
    def dataset_version(self) -> str | None:
        """The content digest of the items it ran on."""
        version = self.dataset.get("version")
        return version if isinstance(version, str) else None

    @property
    def cases_version(self) -> str | None:
        """The content digest of the cases it ran on (its items without their outputs): the
        same for two runs of the same cases whose recorded answers differ. The dataset
        version when the record has no separate one."""
        cases = self.dataset.get("cases")
        return cases if isinstance(cases, str) else self.dataset_version

    @property
    def fingerprints(self) -> dict[str, str | None]:
        """Scorer id → fingerprint."""
        return {s.id: s.fingerprint for s in self.scorers}

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data (camelCase keys)."""
        return {
            "batchId": self.batch_id, "dataset": dict(self.dataset),
            "scorers": [s.to_json() for s in self.scorers], "target": self.target,
            "gitCommit": self.git_commit, "gitDirty": self.git_dirty,
            "command": list(self.command),
            "startedAt": self.started_at.isoformat() if self.started_at else None,
            "finishedAt": self.finished_at.isoformat() if self.finished_at else None,
            "verdict": self.verdict, "means": dict(self.means),
        }


def _statements(table: str, dialect: _Dialect) -> list[str]:
    time = _TIME[dialect]
    kinds = {"batchId": "TEXT PRIMARY KEY", "gitDirty": "INTEGER", "startedAt": f"{time} NOT NULL",
             "finishedAt": time}
    columns = ", ".join(f"{q(name)} {kinds.get(name, 'TEXT')}" for name, _ in _COLUMNS)
    items = q(table + "_items")
    return [
        f"CREATE TABLE IF NOT EXISTS {q(table)} ({columns})",
        f"CREATE INDEX IF NOT EXISTS {q(table + '_dataset')} ON {q(table)} "
        f"({q('datasetName')}, {q('datasetVersion')}, {q('startedAt')})",
        f"CREATE TABLE IF NOT EXISTS {items} ({q('batchId')} TEXT NOT NULL, "
        f"{q('itemId')} TEXT NOT NULL, {q('digest')} TEXT NOT NULL, "
        f"PRIMARY KEY ({q('batchId')}, {q('itemId')}))",
    ]


def _encode(experiment: Experiment, started: datetime, dialect: _Dialect) -> tuple[Any, ...]:
    record = {
        "batchId": experiment.batch_id, "datasetName": experiment.dataset_name,
        "datasetVersion": experiment.dataset_version, "dataset": dict(experiment.dataset),
        "scorers": [s.to_json() for s in experiment.scorers], "target": experiment.target,
        "gitCommit": experiment.git_commit,
        "gitDirty": None if experiment.git_dirty is None else int(experiment.git_dirty),
        "command": list(experiment.command),
        "startedAt": started.isoformat() if dialect == "sqlite" else started,
        "finishedAt": None, "verdict": None, "means": dict(experiment.means),
    }
    return tuple(json.dumps(record[name], ensure_ascii=False, allow_nan=False) if encoded
                 else record[name] for name, encoded in _COLUMNS)


def _when(value: object) -> datetime | None:
    if value is None:
        return None
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _decode(record: Sequence[Any]) -> Experiment:
    v = {name: json.loads(value) if encoded and value is not None else value
         for (name, encoded), value in zip(_COLUMNS, record, strict=True)}
    scorers = tuple(ExperimentScorer(id=s["id"], fingerprint=s.get("fingerprint"),
                                     judges=tuple(s.get("judges") or ()))
                    for s in v["scorers"] or ())
    return Experiment(
        batch_id=v["batchId"], dataset=v["dataset"] or {}, scorers=scorers, target=v["target"],
        git_commit=v["gitCommit"],
        git_dirty=None if v["gitDirty"] is None else bool(v["gitDirty"]),
        command=tuple(v["command"] or ()), started_at=_when(v["startedAt"]),
        finished_at=_when(v["finishedAt"]), verdict=v["verdict"], means=v["means"] or {},
    )


@final
class ExperimentStore:
    """The experiment ledger of a score store (SQLite or PostgreSQL), in its own tables.

    Open it with ``async with``; it keeps its own connection next to the score store's.

    Args:
        url: the score store's URL (``sqlite:PATH`` or ``postgresql://…``).
        table: the ledger's table (its items: the same name plus ``_items``).
        now: the wall clock stamping records.
        read_only: read only; a store without a ledger then reads as empty.

    >>> import anyio, tempfile, os
    >>> url = "sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")
    >>> async def demo() -> list[str | None]:
    ...     async with ExperimentStore(url) as ledger:
    ...         await ledger.start(Experiment(batch_id="b1", dataset={"version": "v1"}),
    ...                            items={"q-1": "d1"})
    ...         await ledger.finish("b1", verdict="passed", means={"exact": 1.0})
    ...         return [e.verdict for e in await ledger.experiments()]
    >>> anyio.run(demo)
    ['passed']
    """

    __slots__ = ("_conn", "_dialect", "_exists", "_limiter", "_now", "_read_only", "_table",
                 "_url", "url")

    def __init__(self, url: str | StoreUrl, *, table: str = DEFAULT_EXPERIMENTS_TABLE,
                 now: Now = utc_now, read_only: bool = False) -> None:
        self._url = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
        if self._url.kind == "memory" or self._url.path == ":memory:":
            raise ValueError(f"the ledger needs a score store's URL, got {self._url.shown!r}")
        self._dialect: _Dialect = "postgres" if self._url.kind == "postgres" else "sqlite"
        self._table = check_table(table)
        self.url: str = self._url.shown
        """The store's URL, any password masked."""
        self._now, self._read_only = now, read_only
        # Until opened: no connection, and a ledger presumed there (a read-only open checks).
        self._conn: Any = None
        self._exists = True
        # One thread at a time on the connection: sqlite3 and psycopg connections are not
        # shared between concurrent threads.
        self._limiter = anyio.CapacityLimiter(1)

    def __repr__(self) -> str:
        return f"ExperimentStore({self.url!r}, table={self._table!r})"

    async def __aenter__(self) -> Self:
        if self._conn is None:
            self._conn = await self._call("open", self._open)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    @property
    def _mark(self) -> str:
        return "?" if self._dialect == "sqlite" else "%s"

    async def _call(self, operation: str, fn: Callable[[], Any]) -> Any:
        errors: tuple[type[BaseException], ...] = (
            (import_psycopg(self.url).Error,) if self._dialect == "postgres"
            else (sqlite3.Error,))
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        except errors as exc:
            raise StoreError(f"store {self.url}: experiments {operation} failed: "
                             f"{describe(exc)}", store=self.url,
                             operation=f"experiments.{operation}") from exc

    def _open(self) -> Any:
        statements = _statements(self._table, self._dialect)
        if self._dialect == "postgres":
            conn = import_psycopg(self.url).connect(self._url.url, autocommit=True,
                                                   connect_timeout=10)
            if self._read_only:
                found = conn.execute("SELECT to_regclass(%s)", (self._table,)).fetchone()
                self._exists = bool(found and found[0])
            else:
                for statement in statements:
                    conn.execute(statement)
            return conn
        path = Path(self._url.path or "")
        if self._read_only and not path.is_file():
            raise sqlite3.OperationalError(f"file {str(path)!r} does not exist")
        target = path.resolve().as_uri() + "?mode=ro" if self._read_only else str(path)
        conn = sqlite3.connect(target, uri=self._read_only, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        if self._read_only:
            self._exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                (self._table,)).fetchone() is not None
        else:
            conn.executescript(";\n".join(statements) + ";")
        return conn

    def _opened(self, operation: str) -> Any:
        if self._conn is None:
            raise StoreError(f"experiments of {self.url} are not open (use 'async with')",
                             store=self.url, operation=f"experiments.{operation}")
        if self._read_only and operation in ("start", "finish"):
            raise StoreError(f"store {self.url} is open read-only: experiments cannot be "
                             f"recorded", store=self.url, operation=f"experiments.{operation}")
        return self._conn

    def _transaction(self, conn: Any, work: Callable[[], None]) -> None:
        if self._dialect == "postgres":
            with conn.transaction():
                work()
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            work()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    async def start(self, experiment: Experiment, *, items: Mapping[str, str]) -> bool:
        """Record a batch and its items (id → content digest) in one transaction; returns
        ``False`` (and changes nothing) when the batch is recorded already (a resumed batch).

        Raises:
            StoreError: the store is read-only or the write failed.
        """
        conn = self._opened("start")
        mark, t = self._mark, self._table
        names = ", ".join(q(name) for name, _ in _COLUMNS)
        insert = (f"INSERT INTO {q(t)} ({names}) VALUES "  # noqa: S608 - checked identifiers
                  f"({', '.join([mark] * len(_COLUMNS))}) ON CONFLICT DO NOTHING")
        add_item = (f"INSERT INTO {q(t + '_items')} VALUES ({mark}, {mark}, {mark}) "  # noqa: S608
                    f"ON CONFLICT DO NOTHING")
        params = _encode(experiment, self._now(), self._dialect)
        rows = [(experiment.batch_id, item, digest) for item, digest in items.items()]
        added = [False]

        def work() -> None:
            cursor = conn.execute(insert, params)
            added[0] = cursor.rowcount == 1
            if not added[0]:
                return
            for at in range(0, len(rows), _INSERT_CHUNK):
                conn.cursor().executemany(add_item, rows[at:at + _INSERT_CHUNK])

        await self._call("start", lambda: self._transaction(conn, work))
        return added[0]

    async def finish(self, batch_id: str, *, verdict: str,
                     means: Mapping[str, float | None]) -> None:
        """Record how a batch ended: its verdict and each scorer's mean (a resumed batch's
        later end replaces the earlier one).

        Raises:
            StoreError: the store is read-only or the write failed.
        """
        conn = self._opened("finish")
        mark = self._mark
        now = self._now()
        sql = (f"UPDATE {q(self._table)} SET {q('finishedAt')} = {mark}, "  # noqa: S608
               f"{q('verdict')} = {mark}, {q('means')} = {mark} WHERE {q('batchId')} = {mark}")
        params = (now.isoformat() if self._dialect == "sqlite" else now, verdict,
                  json.dumps(dict(means), allow_nan=False), batch_id)
        await self._call("finish", lambda: conn.execute(sql, params))

    async def experiments(self, *, dataset: str | None = None) -> list[Experiment]:
        """Every recorded batch, oldest first; ``dataset`` keeps those of that dataset name
        (or, for batches run on a file, that file as given)."""
        conn = self._opened("list")
        if not self._exists:
            return []
        names = ", ".join(q(name) for name, _ in _COLUMNS)
        sql = (f"SELECT {names} FROM {q(self._table)} "  # noqa: S608 - checked identifiers
               f"ORDER BY {q('startedAt')}, {q('batchId')}")
        records: list[Any] = await self._call("list", lambda: conn.execute(sql).fetchall())
        found = [_decode(r) for r in records]
        if dataset is None:
            return found
        return [e for e in found
                if dataset in (e.dataset_name, e.dataset.get("file"))]

    async def experiment(self, batch_id: str) -> Experiment | None:
        """The record of ``batch_id``, or ``None`` when the ledger has none."""
        conn = self._opened("get")
        if not self._exists:
            return None
        names = ", ".join(q(name) for name, _ in _COLUMNS)
        sql = (f"SELECT {names} FROM {q(self._table)} "  # noqa: S608 - checked identifiers
               f"WHERE {q('batchId')} = {self._mark}")
        record = await self._call("get", lambda: conn.execute(sql, (batch_id,)).fetchone())
        return None if record is None else _decode(record)

    async def item_digests(self, batch_id: str) -> dict[str, str]:
        """The items ``batch_id`` ran on: item id → content digest (empty when unrecorded)."""
        conn = self._opened("items")
        if not self._exists:
            return {}
        sql = (f"SELECT {q('itemId')}, {q('digest')} FROM {q(self._table + '_items')} "  # noqa: S608
               f"WHERE {q('batchId')} = {self._mark}")
        records: Iterable[Any] = await self._call(
            "items", lambda: conn.execute(sql, (batch_id,)).fetchall())
        return dict(records)
