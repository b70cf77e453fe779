"""Versioned datasets in the score store: four tables next to the scores, one short
transaction per version.

``scorecore_dataset_versions`` holds one row per content (its digest, unique), its items live
in ``scorecore_dataset_items`` (one row per item: id, digest, line, canonical JSON),
``scorecore_datasets`` names versions (``NAME@v3``) and ``scorecore_dataset_sources`` maps a
file's key (a digest of its bytes and of how it is read) to the version it gave. Adding streams
the items in chunks into a temporary staging table of the connection's own, refusing a repeated
id as it goes, and computes the version digest from the ids in order: as they pass when they
come in order (a file sorted by id), else by reading the staged ids back. So a file of any
size is added in flat memory and without a lock another writer waits on. Only then
does one transaction store the version (copying the staged items over) and name it; the
version digest's unique key decides between connections adding the same content at once, so
it is stored once whatever names it is added under. Both backends share the SQL below; only
the column types, the placeholder and how a chunk is staged differ.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeAlias, final

from scorecore.datasets import (
    DatasetDiff,
    DatasetError,
    DatasetItem,
    DatasetRef,
    DatasetSpec,
    DatasetVersion,
    sorted_version_digest,
)
from scorecore.evals import StoreError
from scorecore_adapters.storage._common import Now, utc_now
from scorecore_adapters.storage._connect import OwnConnection, connect
from scorecore_adapters.storage._dataset_tables import staging_table
from scorecore_adapters.storage._dataset_tables import tables as _schema
from scorecore_adapters.storage._schema import check_table, q
from scorecore_adapters.storage._url import StoreUrl

__all__ = ["DatasetLookupError", "DatasetStore"]

_Dialect: TypeAlias = Literal["sqlite", "postgres"]
DEFAULT_PREFIX: Final = "scorecore"
"""The tables are ``{prefix}_datasets``, ``{prefix}_dataset_versions`` and
``{prefix}_dataset_items``."""
CHUNK: Final = 1000
"""Items written (and read) per statement: memory holds one chunk."""
BUSY_MS: Final = 300_000
"""How long (ms) an SQLite add waits for another writer's transaction before failing."""


@final
class DatasetLookupError(LookupError):
    """No stored version matches what was asked for (or a hash prefix matches several).

    Attributes:
        spec: what was asked for (``qa@v3``, or a version digest).
    """

    def __init__(self, message: str, *, spec: str) -> None:
        super().__init__(message)
        self.spec = spec

    def __str__(self) -> str:
        return str(self.args[0])


_VERSION_COLUMNS: Final = (f"n.{q('name')}, n.{q('number')}, v.{q('digest')}, "
                           f"v.{q('items')}, COALESCE(n.{q('createdAt')}, v.{q('createdAt')})")


def _time(value: object) -> datetime:
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _version_of(record: Sequence[Any]) -> DatasetVersion:
    name, number, digest, items, created = record
    return DatasetVersion(ref=DatasetRef(name=name, version=digest, number=number),
                          items=int(items), created_at=_time(created))


@final
class DatasetStore(OwnConnection):
    """The versioned datasets of a score store (SQLite or PostgreSQL), in their own tables.

    Open it with ``async with``; it keeps its own connection next to the score store's.
    :meth:`add` stores a version whole or not at all; the same content (same ids, same
    items) is the same version.

    Args:
        url: the score store's URL (``sqlite:PATH`` or ``postgresql://…``).
        now: the wall clock stamping versions.
        prefix: the tables' prefix (default ``scorecore``).
        read_only: read only; a store without the tables then holds no dataset.

    >>> import anyio, tempfile, os
    >>> from scorecore.datasets import DatasetItem
    >>> url = "sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")
    >>> async def demo() -> list[str]:
    ...     async with DatasetStore(url) as store:
    ...         first = await store.add([DatasetItem(id="a", fields={"input": "q"})], name="qa")
    ...         again = await store.add([DatasetItem(id="a", fields={"input": "q"})], name="qa")
    ...         assert again == first  # same content: the same version, v1
    ...         await store.add([DatasetItem(id="a", fields={"input": "Q"})], name="qa")
    ...         return [str(v.ref.number) for v in await store.list()]
    >>> anyio.run(demo)
    ['1', '2']
    """

    __slots__ = ("_items", "_names", "_now", "_sources", "_staging", "_versions")
    _TABLES = "datasets"

    def __init__(self, url: str | StoreUrl, *, now: Now = utc_now, prefix: str = DEFAULT_PREFIX,
                 read_only: bool = False) -> None:
        check_table(prefix)
        super().__init__(url, read_only=read_only)
        self._names = f"{prefix}_datasets"
        self._versions = f"{prefix}_dataset_versions"
        self._items = f"{prefix}_dataset_items"
        self._sources = f"{prefix}_dataset_sources"
        # a temporary table, this connection's own (it shadows no table of the store)
        self._staging = f"{prefix}_dataset_staging"
        self._now = now

    def __repr__(self) -> str:
        return f"DatasetStore({self._url.shown!r})"

    def _mark(self) -> str:
        return "?" if self._dialect == "sqlite" else "%s"

    async def _run(self, operation: str, fn: Callable[[], Any]) -> Any:
        # each call holds the lock: a version's pages are read between other calls
        async with self._lock:
            return await super()._run(operation, fn)

    async def open(self) -> None:
        """Connect, and create the tables unless read-only.

        Raises:
            StoreError: the store cannot be opened.
        """
        if self._conn is None:
            self._conn = await self._run("open", self._connect)

    def _connect(self) -> Any:
        schema = _schema(self._dialect, self._names, self._versions, self._items,
                         self._sources)
        conn, self._exists = connect(self._url, schema, read_only=self._read_only,
                                     probe=self._names)
        if self._dialect == "sqlite" and not self._read_only and self._url.path != ":memory:":
            # as the score store sets it: a version rolled back (its content was stored
            # already, or a line was bad) discards its log instead of copying pages back
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            # another add holds the write lock while it copies its staged items over (a 2 GB
            # file's take tens of seconds): wait for it rather than fail after the default
            conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        return conn

    # -- adding -------------------------------------------------------------------------

    async def add(self, items: Iterable[DatasetItem], /, *, name: str | None = None,
                  source: str = "items", source_key: str | None = None) -> DatasetVersion:
        """Store ``items`` as a version (under ``name``, if given), whole or not at all.

        ``items`` is read once, in chunks, into a staging table of this connection's own (a
        file's reader streams through it), and the version's digest is taken from there.
        Content already stored is not stored again: the existing version is returned, and
        under ``name`` it keeps its number and becomes the name's latest again. Other
        connections may add at the same time: the same content is still stored once, and
        versions of one name are numbered one after another.

        ``source_key`` names where ``items`` come from, exactly (a digest of a file's bytes
        and of how it is read): a key an earlier add recorded returns its version without
        reading ``items`` at all, and this add records it. The caller vouches that the same
        key always gives the same items.

        Raises:
            DatasetError: an item ``items`` could not read, or an id repeated (naming both
                lines); nothing was stored.
            StoreError: the store is read-only or the write failed; nothing was stored.
        """
        if self._read_only:
            raise StoreError(f"store {self.url} is open read-only: datasets cannot be added",
                             store=self.url, operation="datasets.add")
        conn = self._connection("add")
        now = self._now()
        stamp: Any = now.isoformat() if self._dialect == "sqlite" else now

        def write() -> int:
            if source_key is not None:
                known = self._known_source(conn, source_key)
                if known is not None:  # read before: its items are not read again
                    return (known if name is None else
                            self._commit(conn, None, name, stamp, None, known=known))
            self._unstage(conn, create=True)
            try:
                count, digest = self._stage(conn, items, source)
                if digest is None:  # not read in id order: the staged ids are, read back
                    digest = sorted_digest(self._staged(conn))
                found = self._find_id(conn, digest)
                if found is not None and name is None and source_key is None:
                    return found  # content already stored: nothing to write
                return self._commit(conn, (digest, count), name, stamp, source_key,
                                    known=found)
            finally:
                self._unstage(conn)

        version_id: int = await self._run("add", write)
        return await self._by_id(version_id, name)

    def _stage(self, conn: Any, items: Iterable[DatasetItem],
               source: str) -> tuple[int, str | None]:
        """Read ``items`` into the staging table, refusing a repeated id; the count read, and
        the version digest when the ids came in increasing order (a file sorted by id).

        The staging table is this connection's own (a temporary table: no other connection
        sees it, nothing in it is logged), so reading a file takes no lock another writer
        waits on, and content found already stored costs this one pass and nothing more.
        Ids in order are hashed as they pass, sparing the read of the staged ids back.
        """
        chunk: dict[str, DatasetItem] = {}
        count = 0
        in_order = True

        def flush() -> None:
            if not chunk:
                return
            rows = [(i.id, i.digest, i.line, i.canonical) for i in chunk.values()]
            try:
                self._insert_staged(conn, rows)
            except self._errors():
                # an id of this chunk staged already (this chunk was put back): name both
                # lines; any other failure is the store's
                self._refuse_staged(conn, chunk, source)
                raise
            chunk.clear()

        def pairs() -> Iterator[tuple[str, str]]:
            """Stage every item; yield each ``(id, digest)`` while the ids increase."""
            nonlocal count, in_order
            last: str | None = None
            for item in items:
                held = chunk.get(item.id)
                if held is not None:
                    raise _duplicate(item, held.line, source)
                chunk[item.id] = item
                count += 1
                if len(chunk) >= CHUNK:
                    flush()
                if in_order:
                    if last is not None and item.id <= last:
                        in_order = False  # the rest is staged only
                        continue
                    last = item.id
                    yield item.id, item.digest
            flush()

        if self._dialect == "sqlite":
            # one transaction for the whole staging (on the temporary table only: it holds
            # no lock on the store), instead of one per statement
            conn.execute("BEGIN")
        try:
            digest = sorted_version_digest(pairs())
        finally:
            if self._dialect == "sqlite":
                conn.execute("COMMIT")
        return count, digest if in_order else None

    def _insert_staged(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        """Stage a chunk whole or not at all (its ids must be new to the staging table)."""
        columns = f"{q('itemId')}, {q('digest')}, {q('line')}, {q('body')}"
        if self._dialect == "postgres":
            # COPY: a statement per chunk rather than per row; a repeated id fails it whole
            with conn.cursor() as cursor, cursor.copy(
                    f"COPY {q(self._staging)} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        conn.execute("SAVEPOINT chunk")
        try:
            conn.executemany(f"INSERT INTO {q(self._staging)} ({columns}) "  # noqa: S608
                             f"VALUES (?, ?, ?, ?)", rows)
        except BaseException:
            conn.execute("ROLLBACK TO chunk")
            raise
        finally:
            conn.execute("RELEASE chunk")

    def _refuse_staged(self, conn: Any, chunk: Mapping[str, DatasetItem], source: str) -> None:
        """A chunk's id already staged by an earlier chunk is a duplicate, named with both
        lines."""
        if not chunk:
            return
        m = self._mark()
        marks = ", ".join([m] * len(chunk))
        found = conn.execute(
            f"SELECT {q('itemId')}, {q('line')} FROM {q(self._staging)} "  # noqa: S608
            f"WHERE {q('itemId')} IN ({marks}) LIMIT 1", tuple(chunk)).fetchone()
        if found is not None:
            raise _duplicate(chunk[found[0]], found[1], source)

    def _unstage(self, conn: Any, *, create: bool = False) -> None:
        """Empty the staging table (making it first, with ``create``)."""
        if create:
            conn.execute(staging_table(self._dialect, self._staging))
        # DELETE, not DROP: the table stays for this connection's next add
        conn.execute(f"DELETE FROM {q(self._staging)}")  # noqa: S608

    def _staged(self, conn: Any) -> Iterator[tuple[Any, ...]]:
        """The staged ``(id, digest)`` pairs in id order, a chunk at a time."""
        after = ""
        m = self._mark()
        while True:
            rows = conn.execute(
                f"SELECT {q('itemId')}, {q('digest')} FROM {q(self._staging)} "  # noqa: S608
                f"WHERE {q('itemId')} > {m} ORDER BY {q('itemId')} LIMIT {CHUNK}",
                (after,)).fetchall()
            yield from (tuple(r) for r in rows)
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]

    def _find_id(self, conn: Any, digest: str) -> int | None:
        found = conn.execute(f"SELECT {q('id')} FROM {q(self._versions)} "  # noqa: S608
                             f"WHERE {q('digest')} = {self._mark()}", (digest,)).fetchone()
        return None if found is None else int(found[0])

    def _known_source(self, conn: Any, key: str) -> int | None:
        found = conn.execute(f"SELECT {q('versionId')} FROM {q(self._sources)} "  # noqa: S608
                             f"WHERE {q('key')} = {self._mark()}", (key,)).fetchone()
        return None if found is None else int(found[0])

    def _commit(self, conn: Any, staged: tuple[str, int] | None, name: str | None,
                stamp: Any, source_key: str | None, *, known: int | None) -> int:
        """Store the ``staged`` items (their digest and count) as a version (unless a
        version ``known`` already holds them, or another connection stored them first),
        name it and record ``source_key``, in one transaction; the version's id.

        The version's unique digest is the arbiter between connections adding the same
        content: ``ON CONFLICT DO NOTHING`` waits for the other transaction holding that
        digest and yields to it when it commits (PostgreSQL; on SQLite ``BEGIN IMMEDIATE``
        lets one writer in at a time), so the content is stored once and both adds get it.
        """
        m = self._mark()
        conn.execute("BEGIN IMMEDIATE" if self._dialect == "sqlite" else "BEGIN")
        try:
            version_id = (known if known is not None else
                          self._insert_version(conn, staged, stamp))
            if name is not None:
                self._name(conn, name, version_id, stamp)
            if source_key is not None:
                conn.execute(f"INSERT INTO {q(self._sources)} ({q('key')}, {q('versionId')}) "  # noqa: S608
                             f"VALUES ({m}, {m}) ON CONFLICT ({q('key')}) DO NOTHING",
                             (source_key, version_id))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return version_id

    def _insert_version(self, conn: Any, staged: tuple[str, int] | None, stamp: Any) -> int:
        """The staged items' version, inserted with its items unless another connection
        committed the same content meanwhile (then that version)."""
        if staged is None:  # pragma: no cover - only a known version comes without items
            raise AssertionError("no version and no staged items")
        digest, count = staged
        m = self._mark()
        inserted = conn.execute(
            f"INSERT INTO {q(self._versions)} ({q('digest')}, {q('items')}, "  # noqa: S608
            f"{q('createdAt')}) VALUES ({m}, {m}, {m}) ON CONFLICT ({q('digest')}) "
            f"DO NOTHING RETURNING {q('id')}", (digest, count, stamp)).fetchone()
        if inserted is None:
            # read committed: this statement sees the other connection's committed row
            found = self._find_id(conn, digest)
            if found is None:  # pragma: no cover - a conflict means the row exists
                raise StoreError(f"store {self.url}: dataset version {digest[:12]} vanished "
                                 f"while being added", store=self.url, operation="datasets.add")
            return found
        version_id = int(inserted[0])
        conn.execute(
            f"INSERT INTO {q(self._items)} ({q('versionId')}, {q('itemId')}, "  # noqa: S608
            f"{q('digest')}, {q('line')}, {q('body')}) SELECT {m}, {q('itemId')}, "
            f"{q('digest')}, {q('line')}, {q('body')} FROM {q(self._staging)} "
            f"ORDER BY {q('itemId')}", (version_id,))
        return version_id

    def _name(self, conn: Any, name: str, version_id: int, stamp: Any) -> None:
        m, names = self._mark(), q(self._names)
        if self._dialect == "postgres":
            # numbers per name are max + 1: one writer at a time
            conn.execute(f"LOCK TABLE {names} IN SHARE ROW EXCLUSIVE MODE")
        touched = int(conn.execute(
            f"SELECT COALESCE(MAX({q('touched')}), 0) + 1 FROM {names}").fetchone()[0])  # noqa: S608
        held = conn.execute(f"SELECT {q('number')} FROM {names} WHERE {q('name')} = {m} "  # noqa: S608
                            f"AND {q('versionId')} = {m}", (name, version_id)).fetchone()
        if held is not None:
            conn.execute(f"UPDATE {names} SET {q('touched')} = {m} WHERE {q('name')} = {m} "  # noqa: S608
                         f"AND {q('number')} = {m}", (touched, name, held[0]))
            return
        number = int(conn.execute(f"SELECT COALESCE(MAX({q('number')}), 0) + 1 FROM "  # noqa: S608
                                  f"{names} WHERE {q('name')} = {m}", (name,)).fetchone()[0])
        conn.execute(f"INSERT INTO {names} ({q('name')}, {q('number')}, {q('versionId')}, "  # noqa: S608
                     f"{q('touched')}, {q('createdAt')}) VALUES ({m}, {m}, {m}, {m}, {m})",
                     (name, number, version_id, touched, stamp))

    # -- reading ------------------------------------------------------------------------

    def _pages(self, conn: Any, version_id: int, what: Literal["digest", "item"],
               ) -> Iterator[tuple[Any, ...]]:
        """A version's items in id order, read a chunk at a time (keyset pages)."""
        m = self._mark()
        columns = (f"{q('itemId')}, {q('digest')}" if what == "digest" else
                   f"{q('itemId')}, {q('line')}, {q('body')}")
        after = ""
        while True:
            rows = conn.execute(
                f"SELECT {columns} FROM {q(self._items)} WHERE {q('versionId')} = {m} "  # noqa: S608
                f"AND {q('itemId')} > {m} ORDER BY {q('itemId')} LIMIT {CHUNK}",
                (version_id, after)).fetchall()
            yield from (tuple(r) for r in rows)
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]

    async def _by_id(self, version_id: int, name: str | None) -> DatasetVersion:
        conn = self._connection("get")
        m = self._mark()

        def read() -> Any:
            return conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM {q(self._versions)} v "  # noqa: S608
                f"LEFT JOIN {q(self._names)} n ON n.{q('versionId')} = v.{q('id')} "
                f"AND n.{q('name')} = {m} "
                f"WHERE v.{q('id')} = {m}", (name, version_id)).fetchone()

        return _version_of(await self._run("get", read))

    async def list(self, name: str | None = None) -> list[DatasetVersion]:
        """Every named version (of ``name`` only, if given), by name then number."""
        conn = self._connection("list")
        if not self._exists:
            return []
        m = self._mark()
        where = "" if name is None else f" WHERE n.{q('name')} = {m}"

        def read() -> list[Any]:
            return list(conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM {q(self._names)} n JOIN {q(self._versions)} v ON "  # noqa: S608
                f"v.{q('id')} = n.{q('versionId')}{where} ORDER BY n.{q('name')}, "
                f"n.{q('number')}", () if name is None else (name,)).fetchall())

        return [_version_of(r) for r in await self._run("list", read)]

    async def get(self, spec: str | DatasetSpec) -> DatasetVersion:
        """The version ``spec`` names: ``NAME`` (its latest: the last added), ``NAME@v3``, or
        ``NAME@<hash prefix>``.

        Raises:
            ValueError: ``spec`` is not such a name.
            DatasetLookupError: no such version, or a prefix naming several.
        """
        parsed = spec if isinstance(spec, DatasetSpec) else DatasetSpec.parse(spec)
        conn = self._connection("get")
        m = self._mark()
        base = (f"SELECT {_VERSION_COLUMNS} FROM {q(self._names)} n JOIN {q(self._versions)} v ON "  # noqa: S608
                f"v.{q('id')} = n.{q('versionId')} WHERE n.{q('name')} = {m}")
        params: tuple[object, ...]
        if parsed.number is not None:
            sql, params = f"{base} AND n.{q('number')} = {m}", (parsed.name, parsed.number)
        elif parsed.prefix is not None:
            sql, params = (f"{base} AND v.{q('digest')} LIKE {m} ORDER BY n.{q('number')} "
                           f"LIMIT 2", (parsed.name, parsed.prefix + "%"))
        else:
            sql, params = f"{base} ORDER BY n.{q('touched')} DESC LIMIT 1", (parsed.name,)

        def read() -> list[Any]:
            return list(conn.execute(sql, params).fetchall()) if self._exists else []

        found = [_version_of(r) for r in await self._run("get", read)]
        if len(found) > 1:
            shown = ", ".join(f"v{v.ref.number} ({v.ref.version[:12]})" for v in found)
            raise DatasetLookupError(f"{str(parsed)!r} names several versions ({shown}); give "
                                     f"more of the hash", spec=str(parsed))
        if not found:
            held = await self.list(parsed.name)
            hint = (f"; {parsed.name} has " + ", ".join(f"v{v.ref.number}" for v in held)
                    if held else f"; no dataset named {parsed.name!r} (scorecore datasets list)")
            raise DatasetLookupError(f"no dataset version {str(parsed)!r} in {self.url}{hint}",
                                     spec=str(parsed))
        return found[0]

    async def find(self, version: str) -> DatasetVersion | None:
        """The version with this digest (named or not), or ``None``."""
        conn = self._connection("find")
        m = self._mark()

        def read() -> Any:
            if not self._exists:
                return None
            return conn.execute(
                f"SELECT NULL, NULL, {q('digest')}, {q('items')}, {q('createdAt')} FROM "  # noqa: S608
                f"{q(self._versions)} WHERE {q('digest')} = {m}", (version,)).fetchone()

        found = await self._run("find", read)
        return None if found is None else _version_of(found)

    async def _version_id(self, version: DatasetVersion | DatasetRef | str) -> int:
        digest = (version.ref.version if isinstance(version, DatasetVersion) else
                  version.version if isinstance(version, DatasetRef) else version)
        conn = self._connection("get")
        m = self._mark()

        def read() -> Any:
            if not self._exists:
                return None
            return conn.execute(f"SELECT {q('id')} FROM {q(self._versions)} WHERE "  # noqa: S608
                                f"{q('digest')} = {m}", (digest,)).fetchone()

        found = await self._run("get", read)
        if found is None:
            raise DatasetLookupError(f"no dataset version {digest[:12]} in {self.url}",
                                     spec=digest)
        return int(found[0])

    async def item_digests(self, version: DatasetVersion | DatasetRef | str) -> Mapping[str, str]:
        """Each item's digest by id, for a version (or its digest).

        Raises:
            DatasetLookupError: no such version.
        """
        version_id = await self._version_id(version)
        conn = self._connection("item_digests")

        def read() -> dict[str, str]:
            return dict(self._pages(conn, version_id, "digest"))

        digests: dict[str, str] = await self._run("item_digests", read)
        return digests

    async def items(self, version: DatasetVersion | DatasetRef | str,
                    ) -> AsyncIterator[DatasetItem]:
        """A version's items in id order, streamed (a chunk in memory at a time).

        Raises:
            DatasetLookupError: no such version.
        """
        version_id = await self._version_id(version)
        conn = self._connection("items")
        pages = self._pages(conn, version_id, "item")
        while True:
            chunk: list[tuple[Any, ...]] = await self._run(
                "items", lambda: [r for _, r in zip(range(CHUNK), pages, strict=False)])
            for item_id, line, body in chunk:
                yield DatasetItem(id=item_id, fields=json.loads(body), line=line)
            if len(chunk) < CHUNK:
                return

    async def diff(self, old: DatasetVersion | DatasetRef | str,
                   new: DatasetVersion | DatasetRef | str) -> DatasetDiff:
        """Items added, removed and changed from ``old`` to ``new``, by id (both streamed in
        id order, side by side).

        Raises:
            DatasetLookupError: no such version.
        """
        old_id, new_id = await self._version_id(old), await self._version_id(new)
        conn = self._connection("diff")

        def compare() -> DatasetDiff:
            return DatasetDiff.of(self._pages(conn, old_id, "digest"),
                                  self._pages(conn, new_id, "digest"))

        diff: DatasetDiff = await self._run("diff", compare)
        return diff


def _duplicate(item: DatasetItem, first: int | None, source: str) -> DatasetError:
    return DatasetError(f"duplicate id {item.id!r}" + (
        "" if first is None else f", first at line {first}"), source=source, line=item.line,
        field="id")


def sorted_digest(pairs: Iterable[tuple[Any, ...]]) -> str:
    """The version digest of ``(id, digest)`` rows read in id order."""
    return sorted_version_digest((str(a), str(b)) for a, b in pairs)
