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
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, final

import anyio
import anyio.to_thread
import attrs

from scorecore import Scorer, redact_secrets
from scorecore.datasets import DatasetRef, DatasetVersion, item_digest, version_digest
from scorecore.evals import EvalItem, EvalReport, InvalidItem, ItemLike, StoreError
from scorecore.judge.economics import function_identity
from scorecore_adapters.storage._common import Now, describe, import_psycopg, utc_now
from scorecore_adapters.storage._datasets import DatasetStore
from scorecore_adapters.storage._schema import check_table, q
from scorecore_adapters.storage._url import StoreUrl

__all__ = ["DEFAULT_EXPERIMENTS_TABLE", "Experiment", "ExperimentScorer", "ExperimentStore",
           "record_experiment"]

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


# -- what a batch's record is made of (the command line records it too) ----------------

GIT_TIMEOUT: Final = 5.0
"""Seconds a ``git`` call may take before the commit is left unknown."""

REDACTED: Final = "[REDACTED]"

_SETTINGS: Final = ("temperature", "top_p", "max_output_tokens", "seed", "timeout",
                    "max_retries")


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,  # noqa: S603, S607 - git from PATH, fixed arguments
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(cwd: Path) -> tuple[str | None, bool | None]:
    """The commit checked out at ``cwd`` and whether the tree has uncommitted changes;
    ``(None, None)`` outside a git checkout or without git."""
    commit = _git(["rev-parse", "HEAD"], cwd)
    if commit is None:
        return None, None
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return commit.strip(), None if status is None else bool(status.strip())


def scrub_command(argv: Iterable[str], *, program: str | None = "scorecore") -> tuple[str, ...]:
    """The command line with secrets redacted by the project's one rule: a value following a
    flag whose name is a credential's (``--api-key X``), and every credential shape in any
    argument (``--store postgresql://me:pw@db``, ``sk-…``); ``program`` first, if given.

    >>> scrub_command(["eval", "--api-key", "abc", "--store", "postgresql://me:pw@db/x"])
    ('scorecore', 'eval', '--api-key', '[REDACTED]', '--store', 'postgresql://me:[REDACTED]@db/x')
    """
    out = [] if program is None else [program]
    secret_next = False
    for arg in argv:
        flag, equals, _value = arg.partition("=")
        named = arg.startswith("--") and _secret_flag(flag)
        if secret_next or (named and equals):
            out.append(f"{flag}={REDACTED}" if named and equals else REDACTED)
        else:
            out.append(redact_secrets(arg))
        secret_next = named and not equals
    return tuple(out)


def _secret_flag(flag: str) -> bool:
    """Whether ``--flag`` names a credential, by the key rule of ``redact_secrets``."""
    name = flag.lstrip("-")
    return redact_secrets({name: "x"})[name] != "x"


OUTPUT_KEYS: Final = frozenset({"output"})
"""What a data line holds of the system under test, not of the case: left out of the digest
that pairs items, so two batches of a file whose answers changed are compared item by item."""


def line_digests(record: Mapping[str, Any]) -> tuple[str, str]:
    """``item_digest`` of the whole line and of its case (the line without its output)."""
    whole = item_digest(record)
    if OUTPUT_KEYS.isdisjoint(record):  # a line without an output is its own case
        return whole, whole
    case = dict(record)  # a C-level copy: cheaper than filtering key by key
    for key in OUTPUT_KEYS:
        case.pop(key, None)
    return whole, item_digest(case)


def dataset_of(shown: str, whole: Mapping[str, str],
               cases: Mapping[str, str]) -> dict[str, Any]:
    """The ledger's dataset record of a ``--data`` file: no name, the content version of its
    lines, and that of its cases (``--baseline auto`` and ``plan`` match batches on it)."""
    return {"name": None, "version": version_digest(whole), "cases": version_digest(cases),
            "number": None, "sample": None, "file": shown, "items": len(whole)}


def _judges(scorer: object) -> tuple[dict[str, Any], ...]:
    found = []
    for step in getattr(scorer, "steps", ()):
        judge = getattr(step, "judge", None)
        if judge is None:
            continue
        settings = judge.model_settings
        chosen = {name: getattr(settings, name, None) for name in _SETTINGS}
        extra = dict(getattr(settings, "extra", {}) or {})
        found.append({"step": step.name, "model": judge.model.model_id,
                      "provider": judge.model.provider,
                      "settings": {**chosen, **({"extra": redact_secrets(extra)} if extra
                                                else {})}})
    return tuple(found)


def scorer_records(scorers: Iterable[object]) -> tuple[ExperimentScorer, ...]:
    """Each scorer's id, fingerprint and judges (model, provider, settings per prompt step)."""
    return tuple(ExperimentScorer(id=str(getattr(s, "id", "?")),
                                  fingerprint=getattr(s, "fingerprint", None),
                                  judges=_judges(s))
                 for s in scorers)


def target_fingerprint(target: object) -> str | None:
    """The target's own ``fingerprint`` when it has one, else its code's digest."""
    if target is None:
        return None
    own = getattr(target, "fingerprint", None)
    return own if isinstance(own, str) else function_identity(target)


# -- recording a batch run from Python --------------------------------------------------------

def _item_record(item: object) -> Mapping[str, Any]:
    """An item as a data file's line would hold it (what the ledger digests): a mapping as
    it is, an :class:`~scorecore.evals.EvalItem` by its fields, unset ones left out."""
    if isinstance(item, Mapping):
        return item
    if isinstance(item, EvalItem):
        fields = {"id": item.id, "input": item.input, "output": item.output,
                  "ground_truth": item.ground_truth, "request_context": item.request_context,
                  "expected_trajectory": item.expected_trajectory,
                  "extra": dict(item.extra) or None}
        return {k: v for k, v in fields.items() if v is not None}
    raise TypeError(f"an item is an EvalItem or a mapping, got {type(item).__name__}")


def items_digests(items: Iterable[object]) -> tuple[dict[str, str], dict[str, str]]:
    """Each item by id (``#index`` without one, as ``run_evals`` names it) with its content
    digest as a stored dataset version takes it (its fields, the id aside: so the items of a
    file give the version ``datasets add`` and ``eval --data`` give it) and its case's
    digest (the item without its output: what pairs items).

    Raises:
        ValueError: an item holds something JSON cannot say (naming the item), or an id
            repeats.
    """
    whole: dict[str, str] = {}
    cases: dict[str, str] = {}
    for index, item in enumerate(items):
        if isinstance(item, InvalidItem):
            continue  # an item its source could not read: the batch ran nothing of it
        record = _item_record(item)
        raw = record.get("id")
        if isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)
        key = raw if isinstance(raw, str) and raw else f"#{index}"
        if key in whole:
            raise ValueError(f"item {key!r} (#{index}) repeats an earlier item's id")
        try:
            whole[key] = item_digest({k: v for k, v in record.items() if k != "id"})
            cases[key] = line_digests(record)[1]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"item {key!r} cannot be recorded: {exc} (the ledger keeps "
                             f"the digest of its JSON)") from None
    return whole, cases


async def stored_cases(store: DatasetStore, version: DatasetVersion | DatasetRef,
                       chosen: frozenset[str] | None = None) -> dict[str, str]:
    """A stored version's items (those in ``chosen``, if given) by id, with their case's
    digest as the ledger takes it of a data file's line."""
    cases: dict[str, str] = {}
    async for item in store.items(version):
        if chosen is None or item.id in chosen:
            cases[item.id] = line_digests(item.to_json())[1]
    return cases


async def record_experiment(
    store: str | StoreUrl | ExperimentStore,
    report: EvalReport,
    *,
    scorers: Iterable[Scorer[Any, Any]],
    items: Iterable[ItemLike] | None = None,
    dataset: DatasetVersion | None = None,
    target: object = None,
    source: str = "python",
    command: Sequence[str] | None = None,
    cwd: str | PathLike[str] | None = None,
) -> Experiment:
    """Record a batch :func:`~scorecore.evals.run_evals` ran in the store's experiment ledger,
    as ``scorecore eval --store`` records its batches: then ``scorecore experiments`` lists
    it and ``compare --baseline auto`` can pick it.

    The batch is recorded with its items' content (``items``, the ones ``run_evals`` was
    given, or the stored ``dataset`` version they came from), its scorers' fingerprints and
    judges, the target's fingerprint, the git commit of ``cwd`` (default: the working
    directory), the command line (``sys.argv``, secrets redacted) and how it ended
    (``report``). A batch recorded already keeps its first record and gets this end.

    Args:
        store: the score store's URL (``sqlite:PATH``, ``postgresql://…``), or an open
            :class:`ExperimentStore`.
        report: what ``run_evals`` returned (its batch id, verdict and means).
        scorers: the scorers it ran.
        items: the items it ran on (a list, or anything that can be read again: a used-up
            generator gives none); exclusive with ``dataset``.
        dataset: the stored version it ran on (from :class:`DatasetStore`, in this store).
        target: the target it ran, if any.
        source: what ``scorecore experiments`` shows for ``items`` (a file's name, say).
        command: the command line to record (default ``sys.argv``).
        cwd: where to read the git commit.

    Returns:
        The record as the ledger now holds it.

    Raises:
        ValueError: neither or both of ``items`` and ``dataset``; ``items`` gave none while
            the batch ran some; an item JSON cannot say; a store in memory (it keeps no
            ledger).
        StoreError: the store cannot be written.

    >>> import anyio, os, tempfile
    >>> from scorecore import create_scorer
    >>> from scorecore.evals import EvalItem, run_evals
    >>> exact = create_scorer(id="exact", description="d").generate_score(
    ...     lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    >>> items = [EvalItem(id="q1", input="2+2?", output="4", ground_truth="4")]
    >>> url = "sqlite:" + os.path.join(tempfile.mkdtemp(), "scores.db")
    >>> async def demo() -> str | None:
    ...     report = await run_evals(items, [exact], batch_id="b1")
    ...     recorded = await record_experiment(url, report, scorers=[exact], items=items)
    ...     return recorded.verdict
    >>> anyio.run(demo)
    'passed'
    """
    if (items is None) == (dataset is None):
        raise ValueError("record_experiment needs what the batch ran on: items= (the items "
                         "given to run_evals) or dataset= (their stored version), one of them")
    if isinstance(store, ExperimentStore):
        return await _record(store, report, scorers=scorers, items=items, dataset=dataset,
                             target=target, source=source, command=command, cwd=cwd)
    async with ExperimentStore(store) as ledger:
        return await _record(ledger, report, scorers=scorers, items=items, dataset=dataset,
                             target=target, source=source, command=command, cwd=cwd)


async def _record(ledger: ExperimentStore, report: EvalReport, *,
                  scorers: Iterable[Scorer[Any, Any]], items: Iterable[ItemLike] | None,
                  dataset: DatasetVersion | None, target: object, source: str,
                  command: Sequence[str] | None, cwd: str | PathLike[str] | None,
                  ) -> Experiment:
    if dataset is not None:
        async with DatasetStore(ledger._url, read_only=True) as datasets:
            cases = await stored_cases(datasets, dataset)
        record: dict[str, Any] = {**dataset.ref.to_json(),
                                  "cases": version_digest(cases), "items": len(cases)}
    else:
        whole, cases = items_digests(items or ())
        if not whole and report.total_items:
            raise ValueError(f"items= gave no item, but batch {report.batch_id!r} ran "
                             f"{report.total_items}: pass the items again (a list, not a "
                             f"used-up generator)")
        record = dataset_of(source, whole, cases)
    commit, dirty = await anyio.to_thread.run_sync(
        git_state, Path.cwd() if cwd is None else Path(cwd))
    experiment = Experiment(
        batch_id=report.batch_id, dataset=record, scorers=scorer_records(scorers),
        target=target_fingerprint(target), git_commit=commit, git_dirty=dirty,
        command=scrub_command(sys.argv if command is None else command, program=None))
    await ledger.start(experiment, items=cases)
    await ledger.finish(report.batch_id, verdict=report.verdict,
                        means={s.scorer_id: s.mean for s in report.scorers})
    found = await ledger.experiment(report.batch_id)
    if found is None:  # pragma: no cover - just written
        raise StoreError(f"store {ledger.url}: batch {report.batch_id!r} was not recorded",
                         store=ledger.url, operation="experiments.record")
    return found
