"""Every SQLite connection scorecore opens is closed again: by the store, the judge cache and
the batch journal when they are closed (``aclose``, ``close``, leaving ``async with`` /
``with``), on their error paths, and by the command line before ``main`` returns.

Python 3.13 reports a connection garbage-collected while open as ``ResourceWarning: unclosed
database`` (an error in a suite run with ``-W error``); earlier versions close it silently. So
each lifecycle here runs twice over: every connection made through ``sqlite3.connect`` is kept
and must be closed at the end (on any Python), and collecting the garbage afterwards must warn
of nothing (what 3.13 and later check).
"""

from __future__ import annotations

import gc
import io
import json
import sqlite3
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore.evals import StoreError
from scorecore.judge import JudgeResponse
from scorecore_adapters.batch import BatchJournal, use_batch_api
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.cli import main
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.storage import SqliteScoreStore
from tests.adapters.cli.test_cli_budget import SCORERS
from tests.evals.persistence.test_storage import row


def _is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 - raises ProgrammingError once the connection is closed
    except sqlite3.ProgrammingError:
        return False
    return True


@contextmanager
def all_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[sqlite3.Connection]]:
    """Within the block, every connection made is recorded; at its end each must be closed,
    and collecting garbage must raise no ResourceWarning."""
    opened: list[sqlite3.Connection] = []
    real_connect = sqlite3.connect

    def spy(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        opened.append(conn)
        return conn

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with monkeypatch.context() as patch:
            patch.setattr(sqlite3, "connect", spy)
            yield opened
        left_open = [conn for conn in opened if _is_open(conn)]
        for conn in left_open:  # closed here so that the assertion below is the only report
            conn.close()
        opened.clear()
        gc.collect()
    assert left_open == []
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def test_a_store_closes_its_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Open, write, read every way, close; then read-only; then the files it refuses."""
    db = tmp_path / "scores.db"
    not_a_database = tmp_path / "garbage.db"
    not_a_database.write_bytes(b"not a database" * 100)
    other_table = tmp_path / "other.db"

    async def lifecycle() -> None:
        async with SqliteScoreStore(db) as store:
            await store.save([row("b:1"), row("b:2", index=1)])
            assert [r.run_id for r in await store.list_run("b")] == ["b:1", "b:2"]
            assert await store.has_batch("b")
            assert set(await store.completed("b")) == {("b:1", "s"), ("b:2", "s")}
            assert [b.batch_id for b in await store.list_batches()] == ["b"]
        store = SqliteScoreStore(db, read_only=True)
        await store.open()
        with pytest.raises(StoreError, match="readonly"):
            await store.save([row("b:3")])
        await store.aclose()
        await store.aclose()  # idempotent
        async with SqliteScoreStore(other_table, table="mine"):
            pass
        for path, table in ((not_a_database, "scorecore_scores"), (other_table, "theirs")):
            with pytest.raises(StoreError, match="cannot open store"):
                await SqliteScoreStore(path, table=table, read_only=True).open()
        with pytest.raises(StoreError, match="cannot open store"):
            await SqliteScoreStore(not_a_database).open()

    with all_closed(monkeypatch) as opened:
        _run(lifecycle)
        assert len(opened) >= 5  # the lifecycle did open connections (and failed on some)


def test_a_judge_cache_closes_its_connections(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Puts and gets (the event loop's reader and the worker thread's writer), a thorough
    check, close; then a file that is not a database, which every get misses."""
    path = tmp_path / "cache.db"
    not_a_database = tmp_path / "garbage.db"
    not_a_database.write_bytes(b"not a database" * 100)

    async def lifecycle() -> None:
        async with SqliteJudgeCache(path) as cache:
            await cache.put("k", JudgeResponse(text="yes"))
            got = await cache.get("k")
            assert got is not None
            assert got.text == "yes"
            assert await cache.check(thorough=True) is None
        cache = SqliteJudgeCache(path)
        assert await cache.get("k") is not None  # opened on first use
        await cache.aclose()
        broken = SqliteJudgeCache(not_a_database)
        assert await broken.get("k") is None
        await broken.put("k", JudgeResponse(text="no"))
        assert broken.errors == 2
        with pytest.raises(sqlite3.DatabaseError):
            await broken.open()
        await broken.aclose()

    with all_closed(monkeypatch) as opened:
        _run(lifecycle)
        assert len(opened) >= 4


def test_a_batch_journal_closes_its_connection(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``with BatchJournal(...)``, ``close()``, a file that is not a database, and the
    journal ``use_batch_api`` opens for a path."""
    path = tmp_path / "cache.db"
    not_a_database = tmp_path / "garbage.db"
    not_a_database.write_bytes(b"not a database" * 100)
    with all_closed(monkeypatch) as opened:
        with BatchJournal(path) as journal:
            journal.prepare("j", provider="openai", base_url="http://x", model="m",
                            requests=[("j-0", "k", {"model": "m"}, None)])
            journal.record("j", "batch_1")
        journal = BatchJournal(path)
        assert [b.state for b in journal.batches()] == ["submitted"]
        journal.close()
        journal.close()  # idempotent
        with pytest.raises(sqlite3.DatabaseError), BatchJournal(not_a_database) as broken:
            broken.batches()
        with use_batch_api(str(path)) as routing:
            assert OpenAIChatModel("m", api_key="sk-x").batch_api
            assert routing is not None
        assert len(opened) >= 3


def test_the_command_line_closes_every_connection(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``scorecore eval`` (store and judge cache), then the commands that read them back."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAP_LOG", str(tmp_path / "caps.log"))
    (tmp_path / "scorers.py").write_text(SCORERS)
    (tmp_path / "data.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "input": "q", "output": f"a{i}"}) + "\n" for i in range(3)))

    def run(*argv: str) -> int:
        return main(list(argv), out=io.StringIO(), err=io.StringIO())

    with all_closed(monkeypatch) as opened:
        assert run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                   "--batch-id", "b") == 0
        assert run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                   "--batch-id", "b2", "--strict-cache") == 0
        assert run("show", "b", "--store", "sqlite:s.db") == 0
        assert run("batches", "--store", "sqlite:s.db") == 0
        assert run("batches", "--pending") == 0
        assert run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                   "--cache", "sqlite:scorers.py/c.db") == 2  # a file stands where the folder goes
        assert len(opened) >= 6
