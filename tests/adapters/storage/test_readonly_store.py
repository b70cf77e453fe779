"""``scorecore show`` reads databases it cannot write: read-only files and directories, and
another user's database, which it must leave exactly as it found it (and PostgreSQL read-only).

The tests run as root in CI, where ``chmod`` does not stop the process. So every check that
depends on permissions runs ``main`` in a forked child that has dropped root for an
unprivileged uid (``setuid``), and first proves it cannot write the file (``os.access``);
without root, ``chmod`` binds the test process itself and the same checks run in-process.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore.evals import StoreError
from scorecore_adapters.cli import main
from scorecore_adapters.storage import PostgresScoreStore, SqliteScoreStore, open_store
from tests.evals.persistence.test_storage import DSN, make_store, row

IS_ROOT = os.geteuid() == 0
READER_UID = 65534  # "nobody"
OWNER_UID = 4242  # any unprivileged uid; no passwd entry is needed to setuid to it

needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root to act as two other users")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory under /tmp that other uids can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="scorecore-ro-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for child in (path, *path.iterdir()):
            child.chmod(0o700 if child.is_dir() else 0o600)
        shutil.rmtree(path)


def make_db(path: Path, batch: str = "b", rows: int = 2) -> None:
    async def fill() -> None:
        async with SqliteScoreStore(path) as store:
            await store.save([row(f"{batch}:{i}", batch_id=batch, index=i) for i in range(rows)])

    anyio.run(fill)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def side_files(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


def as_user(uid: int | None, fn: Callable[[], Any]) -> Any:
    """``fn()`` in a child process running as ``uid`` (``None``: in this process)."""
    if uid is None:
        return fn()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, report through the pipe, exit without cleanup
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            payload = json.dumps({"value": fn()})
        except BaseException as exc:  # reported to the parent, which fails the test
            payload = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
        with os.fdopen(write_fd, "w") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        answer = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert "error" not in answer, answer["error"]
    return answer["value"]


def show(db: Path, batch: str = "b") -> Callable[[], tuple[bool, int, str, str]]:
    """``scorecore show`` as a function: (could this process write the file?, code, out, err)."""

    def run() -> tuple[bool, int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["show", batch, "--store", f"sqlite:{db}"], out=out, err=err)
        return os.access(db, os.W_OK), code, out.getvalue(), err.getvalue()

    return run


def reader() -> int | None:
    return READER_UID if IS_ROOT else None


@pytest.fixture(autouse=True)
def _warm_imports(tmp_path: Path) -> None:
    """Import everything ``show`` needs while still root (the child may not read stdlib)."""
    db = tmp_path / "warm.db"
    make_db(db)
    assert show(db)()[1] == 0


@pytest.mark.anyio
async def test_read_only_store_uses_mode_ro_and_refuses_writes(
    anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_only opens the file with a mode=ro URI; reads work, a save is a StoreError, and
    the file and its directory are left byte for byte as they were (even as root)."""
    db = tmp_path / "scores.db"
    async with SqliteScoreStore(db) as writer:
        await writer.save([row(f"b:{i}", batch_id="b", index=i) for i in range(2)])
    before = digest(db)
    opened: list[Sequence[Any]] = []
    real_connect = sqlite3.connect

    def spy(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append((args, kwargs))
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        return conn

    monkeypatch.setattr(sqlite3, "connect", spy)
    async with open_store(f"sqlite:{db}", read_only=True) as store:
        assert [r.run_id for r in await store.list_run("b")] == ["b:0", "b:1"]
        assert await store.has_batch("b")
        with pytest.raises(StoreError, match="save failed: attempt to write a readonly database"):
            await store.save([row("b:9", batch_id="b")])
    ((args, kwargs),) = opened
    assert kwargs["uri"] is True
    assert str(args[0]).startswith(db.resolve().as_uri() + "?mode=ro")
    assert digest(db) == before
    assert side_files(db) == []


@pytest.mark.anyio
async def test_read_only_store_needs_an_existing_scorecore_table(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A read-only store never creates: a missing file or table is a StoreError at open."""
    with pytest.raises(StoreError, match="does not exist"):
        await SqliteScoreStore(tmp_path / "absent.db", read_only=True).open()
    assert not (tmp_path / "absent.db").exists()
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    with pytest.raises(StoreError, match="no table 'scorecore_scores' in it"):
        await SqliteScoreStore(other, read_only=True).open()
    with pytest.raises(ValueError, match="needs a database file"):
        SqliteScoreStore(":memory:", read_only=True)


def test_show_reads_a_database_in_a_read_only_directory(shared_dir: Path) -> None:
    """A 0444 file in a 0555 directory (as on a read-only filesystem): show lists its rows,
    run by a process that cannot write the file, and nothing is created or changed."""
    db = shared_dir / "scores.db"
    make_db(db)
    db.chmod(0o444)
    shared_dir.chmod(0o555)
    before = digest(db)
    writable, code, out, err = as_user(reader(), show(db))
    assert writable is False  # the check below is meaningful: this process could not write
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "2 rows (2 scored)"
    assert digest(db) == before
    assert side_files(db) == []


@needs_root
def test_show_leaves_another_users_database_writable_by_its_owner(shared_dir: Path) -> None:
    """Another user's database in a shared (sticky, world-writable) directory: show reads it,
    creates no -wal/-shm files (which, owned by the reader, would stop the owner's next
    write), and the owner can still write afterwards."""
    shared_dir.chmod(0o1777)
    db = shared_dir / "scores.db"
    make_db(db)
    os.chown(db, OWNER_UID, OWNER_UID)
    db.chmod(0o644)
    writable, code, out, err = as_user(READER_UID, show(db))
    assert writable is False
    assert (code, err) == (0, "")
    assert "2 rows (2 scored)" in out
    assert side_files(db) == []

    def owner_writes() -> int:
        async def write() -> int:
            async with SqliteScoreStore(db) as store:
                await store.save([row("b:2", batch_id="b", index=2)])
                return len(await store.list_run("b"))

        return anyio.run(write)

    assert as_user(OWNER_UID, owner_writes) == 3


def test_show_reads_rows_still_in_a_live_wal(shared_dir: Path) -> None:
    """While a writer holds the database open (rows committed to the WAL, not yet copied into
    the main file), show run by a process that cannot write sees those rows too."""
    shared_dir.chmod(0o1777)
    db = shared_dir / "scores.db"
    make_db(db, rows=1)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")  # keep the new row in the WAL
        writer.execute(
            'INSERT INTO scorecore_scores ("id", "scorerId", "runId", "batchId", "status", '
            '"score", "createdAt", "updatedAt") VALUES '
            "('x', 's', 'b:live', 'b', 'scored', 1.0, '2025-01-01', '2025-01-01')"
        )
        assert "scores.db-wal" in side_files(db)
        db.chmod(0o644)
        for side in db.parent.iterdir():
            side.chmod(side.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))
        writable, code, out, err = as_user(reader(), show(db))
    finally:
        writer.close()
    assert (code, err) == (0, "")
    assert "b:live" in out
    assert out.splitlines()[-1] == "2 rows (2 scored)"
    if IS_ROOT:
        assert writable is False


@pytest.mark.anyio
@pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")
async def test_postgres_read_only_store_creates_nothing_and_refuses_writes(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A read-only PostgreSQL store reads rows, refuses a save (read-only transactions) and
    never creates its table."""
    assert DSN is not None
    async with make_store("postgres", tmp_path) as writer:
        await writer.save([row("b:0", batch_id="b")])
        table = writer._table  # the unique table make_store chose
        async with PostgresScoreStore(DSN, table=table, read_only=True) as store:
            assert [r.run_id for r in await store.list_run("b")] == ["b:0"]
            assert await store.has_batch("b")
            with pytest.raises(StoreError, match="read-only transaction"):
                await store.save([row("b:1", batch_id="b")])
        assert [r.run_id for r in await writer.list_run("b")] == ["b:0"]
    missing = f"t_absent_{os.getpid()}"
    async with PostgresScoreStore(DSN, table=missing, read_only=True) as store:
        with pytest.raises(StoreError, match="does not exist"):
            await store.list_run("b")
        (exists,) = (await store._run("check", "SELECT to_regclass(%s) IS NOT NULL",
                                      (missing,)))[0]
    assert exists is False
