"""The batch journal: every request given to a provider's batch API, kept in a SQLite file
(the judge cache's, by default) so that a process killed at any point and started again
submits nothing twice and loses nothing.

The order of writes is the guarantee:

1. ``prepare``: before anything is sent, the batch (``state="prepared"``) and each request's
   ``custom_id``, cache key and body are written in one transaction.
2. ``record``: once the provider has accepted the batch, its batch id is written
   (``state="submitted"``).
3. ``finish``: once the batch has ended, every request's outcome is written in one
   transaction (``answered``, ``errored``, or ``unanswered`` for an expired or cancelled
   request, which a later attempt submits again, naming the one it replaces in
   ``resubmit_of``).

A process that finds a ``prepared`` batch asks the provider whether it exists (it may have
died between the provider accepting it and step 2) before it submits it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, final

import attrs

__all__ = ["BatchJournal", "JournalBatch", "JournalRequest", "RequestState"]

BatchState: TypeAlias = Literal["prepared", "submitted", "ended", "refused"]
RequestState: TypeAlias = Literal["pending", "answered", "errored", "unanswered", "refused"]

_BATCHES: Final = "scorecore_batch_jobs"
_REQUESTS: Final = "scorecore_batch_requests"
_SCHEMA: Final = (
    f"CREATE TABLE IF NOT EXISTS {_BATCHES} ("
    "job TEXT PRIMARY KEY, provider TEXT NOT NULL, base_url TEXT NOT NULL, model TEXT NOT NULL,"
    " provider_batch_id TEXT, state TEXT NOT NULL, status TEXT, note TEXT,"
    " created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {_REQUESTS} ("
    "custom_id TEXT PRIMARY KEY, job TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL,"
    " state TEXT NOT NULL, outcome TEXT, resubmit_of TEXT, seq INTEGER NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {_REQUESTS}_key ON {_REQUESTS} (key, seq)",
    f"CREATE INDEX IF NOT EXISTS {_REQUESTS}_job ON {_REQUESTS} (job)",
)


@final
@attrs.frozen(kw_only=True)
class JournalRequest:
    """One journalled request: its ``custom_id``, batch, cache key, body, state and outcome."""

    custom_id: str
    job: str
    key: str
    body: Mapping[str, Any]
    state: RequestState
    outcome: Mapping[str, Any] | None = None
    resubmit_of: str | None = None


@final
@attrs.frozen(kw_only=True)
class JournalBatch:
    """One journalled batch and its request counts by state."""

    job: str
    provider: str
    base_url: str
    model: str
    provider_batch_id: str | None
    state: BatchState
    status: str | None
    note: str | None
    created_at: float
    updated_at: float
    counts: Mapping[str, int] = attrs.field(factory=dict)

    @property
    def requests(self) -> int:
        """How many requests the batch holds."""
        return sum(self.counts.values())


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@final
class BatchJournal:
    """The journal in a SQLite file (created with its tables on first use; WAL mode, so the
    judge cache and several processes can share the file).

    >>> import tempfile, pathlib
    >>> journal = BatchJournal(pathlib.Path(tempfile.mkdtemp()) / "cache.db")
    >>> journal.prepare("job1", provider="openai", base_url="http://x", model="m",
    ...                 requests=[("job1-0", "k", {"model": "m"}, None)])
    >>> journal.record("job1", "batch_1")
    >>> [(b.job, b.state, b.provider_batch_id, b.requests) for b in journal.batches()]
    [('job1', 'submitted', 'batch_1', 1)]
    >>> journal.close()

    It holds one SQLite connection, opened on first use: call :meth:`close` when done, or use
    it as a context manager (``with BatchJournal(path) as journal:``), which closes it on the
    way out.
    """

    __slots__ = ("_conn", "path")

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"BatchJournal({str(self.path)!r})"

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            if str(self.path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), isolation_level=None,
                                   check_same_thread=False, timeout=30.0)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")  # a recorded step survives a power cut
                for statement in _SCHEMA:
                    conn.execute(statement)
            except BaseException:
                conn.close()  # not a scorecore file, or locked: nothing is left open
                raise
            self._conn = conn
        return self._conn

    def close(self) -> None:
        """Close the connection (idempotent); a later call opens it again."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def prepare(
        self, job: str, *, provider: str, base_url: str, model: str,
        requests: Sequence[tuple[str, str, Mapping[str, Any], str | None]],
    ) -> None:
        """Write a batch about to be submitted: ``requests`` are ``(custom_id, key, body,
        resubmit_of)``; one transaction."""
        now = time.time()
        db = self._db()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                f"INSERT INTO {_BATCHES} (job, provider, base_url, model, state, created_at,"  # noqa: S608
                " updated_at) VALUES (?, ?, ?, ?, 'prepared', ?, ?)",
                (job, provider, base_url, model, now, now),
            )
            seq = db.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {_REQUESTS}").fetchone()[0]  # noqa: S608
            db.executemany(
                f"INSERT INTO {_REQUESTS} (custom_id, job, key, body, state, resubmit_of, seq)"  # noqa: S608
                " VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                [(cid, job, key, _dumps(body), prior, seq + i + 1)
                 for i, (cid, key, body, prior) in enumerate(requests)],
            )

    def record(self, job: str, provider_batch_id: str, *, status: str | None = None) -> None:
        """The provider accepted ``job`` as ``provider_batch_id``."""
        db = self._db()
        with db:
            db.execute(
                f"UPDATE {_BATCHES} SET provider_batch_id = ?, state = 'submitted', status = ?,"  # noqa: S608
                " updated_at = ? WHERE job = ?", (provider_batch_id, status, time.time(), job),
            )

    def note(self, job: str, *, status: str | None = None, note: str | None = None) -> None:
        """The provider's latest status of ``job`` (and a note, e.g. a resubmission)."""
        db = self._db()
        with db:
            db.execute(
                f"UPDATE {_BATCHES} SET status = COALESCE(?, status), note = COALESCE(?, note),"  # noqa: S608
                " updated_at = ? WHERE job = ?", (status, note, time.time(), job),
            )

    def refuse(self, job: str, error: Mapping[str, Any]) -> None:
        """The provider refused ``job`` (nothing was created): its requests are ``refused``."""
        db = self._db()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"UPDATE {_BATCHES} SET state = 'refused', note = ?, updated_at = ?"  # noqa: S608
                       " WHERE job = ?", (_dumps(error), time.time(), job))
            db.execute(f"UPDATE {_REQUESTS} SET state = 'refused', outcome = ? WHERE job = ?",  # noqa: S608
                       (_dumps(error), job))

    def finish(
        self, job: str, *, status: str,
        outcomes: Mapping[str, tuple[RequestState, Mapping[str, Any]]],
    ) -> None:
        """``job`` ended with ``status``: every request's outcome, one transaction. A request
        of the batch missing from ``outcomes`` is ``unanswered``."""
        db = self._db()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"UPDATE {_BATCHES} SET state = 'ended', status = ?, updated_at = ?"  # noqa: S608
                       " WHERE job = ?", (status, time.time(), job))
            db.execute(
                f"UPDATE {_REQUESTS} SET state = 'unanswered', outcome = ?"  # noqa: S608
                " WHERE job = ? AND state = 'pending'",
                (_dumps({"reason": f"missing from the results of a {status} batch"}), job),
            )
            db.executemany(
                f"UPDATE {_REQUESTS} SET state = ?, outcome = ? WHERE custom_id = ? AND job = ?",  # noqa: S608
                [(state, _dumps(value), cid, job) for cid, (state, value) in outcomes.items()],
            )

    def latest(self, key: str) -> JournalRequest | None:
        """The last request journalled under ``key``, or ``None``."""
        row = self._db().execute(
            f"SELECT custom_id, job, key, body, state, outcome, resubmit_of FROM {_REQUESTS}"  # noqa: S608
            " WHERE key = ? ORDER BY seq DESC LIMIT 1", (key,),
        ).fetchone()
        return None if row is None else _request(row)

    def requests_of(self, job: str) -> list[JournalRequest]:
        """The requests of ``job``, in the order they were journalled."""
        rows = self._db().execute(
            f"SELECT custom_id, job, key, body, state, outcome, resubmit_of FROM {_REQUESTS}"  # noqa: S608
            " WHERE job = ? ORDER BY seq", (job,),
        )
        return [_request(row) for row in rows]

    def batch(self, job: str) -> JournalBatch | None:
        """One batch, or ``None``."""
        found = self.batches(jobs=(job,))
        return found[0] if found else None

    def batches(
        self, *, states: Iterable[BatchState] | None = None, jobs: Iterable[str] | None = None,
        provider: str | None = None, base_url: str | None = None, model: str | None = None,
    ) -> list[JournalBatch]:
        """The journalled batches (oldest first), filtered by state, job or scope."""
        where, args = ["1 = 1"], []
        for column, values in (("state", states), ("job", jobs)):
            if values is not None:
                listed = list(values)
                where.append(f"{column} IN ({', '.join('?' * len(listed)) or 'NULL'})")
                args.extend(listed)
        for column, value in (("provider", provider), ("base_url", base_url), ("model", model)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        db = self._db()
        rows = db.execute(
            f"SELECT job, provider, base_url, model, provider_batch_id, state, status, note,"  # noqa: S608
            f" created_at, updated_at FROM {_BATCHES} WHERE {' AND '.join(where)}"
            " ORDER BY created_at, job", args,
        ).fetchall()
        out = []
        for row in rows:
            counts = dict(db.execute(
                f"SELECT state, COUNT(*) FROM {_REQUESTS} WHERE job = ? GROUP BY state",  # noqa: S608
                (row[0],),
            ).fetchall())
            out.append(JournalBatch(
                job=row[0], provider=row[1], base_url=row[2], model=row[3],
                provider_batch_id=row[4], state=row[5], status=row[6], note=row[7],
                created_at=row[8], updated_at=row[9], counts=counts,
            ))
        return out

    def provider_batch_ids(self, *, provider: str, base_url: str) -> set[str]:
        """Every provider batch id recorded for this provider and endpoint."""
        rows = self._db().execute(
            f"SELECT provider_batch_id FROM {_BATCHES} WHERE provider = ? AND base_url = ?"  # noqa: S608
            " AND provider_batch_id IS NOT NULL", (provider, base_url),
        )
        return {row[0] for row in rows}


def _request(row: Sequence[Any]) -> JournalRequest:
    return JournalRequest(
        custom_id=row[0], job=row[1], key=row[2], body=json.loads(row[3]), state=row[4],
        outcome=None if row[5] is None else json.loads(row[5]), resubmit_of=row[6],
    )
