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

One process writes a journal at a time: a writer first :meth:`BatchJournal.claim` s the file,
an exclusive ``flock`` on a lock file beside it (``cache.db.batch-lock``) that the operating
system releases when the process ends, killed or not. Two processes resuming one journal would
both submit its ``prepared`` batches; the second is refused instead, with the holder's pid.
Readers need no claim.

A journal cannot see that it was deleted, replaced, or lost the writes its ``-wal`` file held:
it would just submit those requests again. So the database holds a random journal id, and a
file beside it (``cache.db.batch-id``) remembers that id and the number of requests last
journalled; a writer that finds another id, or fewer requests, warns
(:class:`BatchJournalWarning`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, final

import attrs

__all__ = [
    "BatchJournal",
    "BatchJournalWarning",
    "JournalBatch",
    "JournalRequest",
    "RequestState",
    "warn_journal",
]

BatchState: TypeAlias = Literal["prepared", "submitted", "ended", "refused"]
RequestState: TypeAlias = Literal["pending", "answered", "errored", "unanswered", "refused"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, so no claim (documented)
    fcntl = None  # type: ignore[assignment]

_BATCHES: Final = "scorecore_batch_jobs"
_REQUESTS: Final = "scorecore_batch_requests"
_META: Final = "scorecore_batch_meta"
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
    f"CREATE TABLE IF NOT EXISTS {_META} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


class BatchJournalWarning(UserWarning):
    """What a batch judge did about a journal that does not match the provider or its file:
    a journalled batch the provider does not know (its requests are submitted again), or a
    journal file that was replaced or lost its write-ahead log (what it forgot may be
    submitted again)."""


def warn_journal(line: str) -> None:
    """Warn with a :class:`BatchJournalWarning`; warnings turned into errors (``-W error``)
    never make a batch judge raise: what the warning says was already done."""
    with contextlib.suppress(BatchJournalWarning):
        warnings.warn(line, BatchJournalWarning, stacklevel=3)


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


# The lock files this process holds: path -> [descriptor, journals claiming it]. A flock
# belongs to an open file, so two journals of one process on one file share one descriptor
# (the process is the writer), and the lock goes when the last of them is closed.
_CLAIMS: dict[str, list[int]] = {}
# Re-entrant: a journal's __del__ may run (garbage collection) while this thread holds it.
_CLAIMS_GUARD = threading.RLock()


def _lock_file(path: Path) -> str:
    real = path.resolve()  # one lock whatever path (link, relative) names the file
    return str(real.with_name(real.name + ".batch-lock"))


def _take(lock: str) -> str | None:
    """Claim ``lock`` for this process: ``None`` when held, else who holds it."""
    with _CLAIMS_GUARD:
        held = _CLAIMS.get(lock)
        if held is not None:
            held[1] += 1
            return None
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # BlockingIOError: another process holds it
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            return holder
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _CLAIMS[lock] = [fd, 1]
        return None


def _give_back(lock: str) -> None:
    with _CLAIMS_GUARD:
        held = _CLAIMS.get(lock)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del _CLAIMS[lock]
            os.close(held[0])  # closing the descriptor releases the flock


def _mark_file(path: Path) -> Path:
    return path.with_name(path.name + ".batch-id")


def _read_mark(path: Path) -> tuple[str, int] | None:
    """The journal id and request count a writer last left beside the file, if any."""
    try:
        mark = json.loads(_mark_file(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    journal, requests = (mark.get("journal"), mark.get("requests")) if isinstance(
        mark, dict) else (None, None)
    if not isinstance(journal, str) or not isinstance(requests, int):
        return None
    return journal, requests


def _write_mark(path: Path, journal: str, requests: int) -> None:
    target = _mark_file(path)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(json.dumps({"journal": journal, "requests": requests}) + "\n",
                         encoding="utf-8")
    os.replace(temporary, target)  # whole or not at all


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@final
class BatchJournal:
    """The journal in a SQLite file (created with its tables on first use; WAL mode, so the
    judge cache and several processes can share the file).

    >>> import tempfile, pathlib
    >>> journal = BatchJournal(pathlib.Path(tempfile.mkdtemp()) / "cache.db")
    >>> journal.claim() is None  # this process writes it
    True
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

    __slots__ = ("_claimed", "_conn", "_id", "path")

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._claimed: str | None = None
        self._id: str | None = None

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
        """Close the connection and give back the claim (idempotent); a later call opens it
        again."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        claimed, self._claimed = self._claimed, None
        if claimed is not None:
            _give_back(claimed)

    def __del__(self) -> None:
        # A journal dropped without close() (a test's abandoned "process") gives back its share
        # of the claim, so this process's lock files do not pile up.
        claimed = getattr(self, "_claimed", None)
        if claimed is not None:
            _give_back(claimed)

    def claim(self) -> str | None:
        """Make this process the journal's one writer, until :meth:`close`: ``None`` when it
        is (or already was), else why not — another process holds the file, named by its pid.
        A process that ends, even killed, lets go of the file. (Without ``flock``, on
        Windows, every claim succeeds.)"""
        if self._claimed is not None or str(self.path) == ":memory:" or fcntl is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock_file(self.path)
        holder = _take(lock)
        if holder is None:
            self._claimed = lock
            self._check_identity()
            return None
        return (f"batch journal {self.path} is in use by process {holder} (another batch "
                "run on the same file): wait for it to end, or give this run another journal "
                "file")

    def _check_identity(self) -> None:
        """Warn when the file is not the journal last written here, or lost requests it
        had; then remember the file as it is."""
        db = self._db()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"INSERT OR IGNORE INTO {_META} (key, value) VALUES ('journal', ?)",  # noqa: S608
                       (uuid.uuid4().hex,))
            journal = db.execute(f"SELECT value FROM {_META} WHERE key = 'journal'").fetchone()[0]  # noqa: S608
            requests = db.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {_REQUESTS}").fetchone()[0]  # noqa: S608
        mark = _read_mark(self.path)
        self._id = journal
        _write_mark(self.path, journal, requests)  # said once, below
        if mark is not None and mark[0] != journal:
            warn_journal(
                f"batch journal {self.path} is not the journal last written there (which held "
                f"{mark[1]} request(s)): the file was deleted or replaced, so requests it "
                "held that were already submitted may be submitted again (and paid twice)")
        elif mark is not None and requests < mark[1]:
            warn_journal(
                f"batch journal {self.path} holds {requests} of the {mark[1]} request(s) last "
                "journalled there: it lost its latest writes (was its -wal file deleted?), so "
                "those requests, if they were submitted, may be submitted again (and paid "
                "twice)")

    def _writer(self) -> sqlite3.Connection:
        """The connection, for a write: only the process that claimed the file writes."""
        busy = self.claim()
        if busy is not None:
            raise RuntimeError(busy)
        return self._db()

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
        db = self._writer()
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
        if self._id is not None:
            # After the commit: the mark never claims more than the file holds.
            _write_mark(self.path, self._id, seq + len(requests))

    def record(self, job: str, provider_batch_id: str, *, status: str | None = None) -> None:
        """The provider accepted ``job`` as ``provider_batch_id``."""
        db = self._writer()
        with db:
            db.execute(
                f"UPDATE {_BATCHES} SET provider_batch_id = ?, state = 'submitted', status = ?,"  # noqa: S608
                " updated_at = ? WHERE job = ?", (provider_batch_id, status, time.time(), job),
            )

    def note(self, job: str, *, status: str | None = None, note: str | None = None) -> None:
        """The provider's latest status of ``job`` (and a note, e.g. a resubmission)."""
        db = self._writer()
        with db:
            db.execute(
                f"UPDATE {_BATCHES} SET status = COALESCE(?, status), note = COALESCE(?, note),"  # noqa: S608
                " updated_at = ? WHERE job = ?", (status, note, time.time(), job),
            )

    def refuse(self, job: str, error: Mapping[str, Any]) -> None:
        """The provider refused ``job`` (nothing was created): its requests are ``refused``."""
        db = self._writer()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"UPDATE {_BATCHES} SET state = 'refused', note = ?, updated_at = ?"  # noqa: S608
                       " WHERE job = ?", (_dumps(error), time.time(), job))
            db.execute(f"UPDATE {_REQUESTS} SET state = 'refused', outcome = ? WHERE job = ?",  # noqa: S608
                       (_dumps(error), job))

    def finish(
        self, job: str, *, status: str,
        outcomes: Mapping[str, tuple[RequestState, Mapping[str, Any]]],
        unanswered: str | None = None,
    ) -> None:
        """``job`` ended with ``status``: every request's outcome, one transaction. A request
        of the batch missing from ``outcomes`` is ``unanswered`` (for the reason given)."""
        db = self._writer()
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"UPDATE {_BATCHES} SET state = 'ended', status = ?, updated_at = ?"  # noqa: S608
                       " WHERE job = ?", (status, time.time(), job))
            db.execute(
                f"UPDATE {_REQUESTS} SET state = 'unanswered', outcome = ?"  # noqa: S608
                " WHERE job = ? AND state = 'pending'",
                (_dumps({"reason": unanswered
                         or f"missing from the results of a {status} batch"}), job),
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
