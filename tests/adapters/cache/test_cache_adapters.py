"""The cache adapters: SQLite, PostgreSQL (when SCORECORE_TEST_POSTGRES_DSN is set), memory."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore.judge import JudgeResponse, JudgeUsage
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters import testing
from scorecore_adapters.cache import (
    MemoryJudgeCache,
    PostgresJudgeCache,
    SqliteJudgeCache,
    open_cache,
)
from tests.core.test_cache_run import _runtime
from tests.judged_scorers import StepJudge, judged_scorer

pytestmark = pytest.mark.anyio
DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")

_responses = st.builds(
    JudgeResponse,
    text=st.text(),
    usage=st.builds(JudgeUsage, **{
        name: st.none() | st.integers(0, 2**62)
        for name in ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens",
                     "cached_input_tokens")
    }),
    finish_reason=st.none() | st.text(max_size=10),
    model_id=st.none() | st.text(max_size=10),
    structured_output=st.none() | st.sampled_from(
        ("json_schema", "json_object", "tool", "grammar", "prompt", "native")
    ),
)


@pytest.fixture(params=["sqlite", "postgres", "memory"])
async def cache(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryJudgeCache()
    elif request.param == "sqlite":
        async with SqliteJudgeCache(tmp_path / "sub" / "cache.db") as c:
            yield c
    else:
        if DSN is None:
            pytest.skip("SCORECORE_TEST_POSTGRES_DSN unset (start one with .ci/postgres.sh)")
        async with PostgresJudgeCache(DSN) as c:
            yield c


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(response=_responses)
async def test_a_reply_reads_back_equal(cache: Any, response: JudgeResponse) -> None:
    """Any reply (odd Unicode text, huge counts, missing fields) reads back as it was put."""
    key = uuid.uuid4().hex
    assert await cache.get(key) is None
    await cache.put(key, response)
    assert await cache.get(key) == response
    await cache.put(key, JudgeResponse(text="newer"))
    got = await cache.get(key)
    assert got is not None
    assert got.text == "newer"


async def test_a_reply_holding_nul_characters_reads_back_equal(cache: Any) -> None:
    """U+0000 in a reply's text and model id (which PostgreSQL's jsonb refuses) is kept too,
    next to a text that spells the escape out, in one group commit."""
    nul = JudgeResponse(text='{"a": "x\x00y"}', model_id="m\x00", finish_reason="stop")
    spelled = JudgeResponse(text="a backslash: \\u0000")
    keys = uuid.uuid4().hex, uuid.uuid4().hex  # fresh keys: a PostgreSQL table outlives a run
    await cache.put(keys[0], nul)
    await cache.put(keys[1], spelled)
    assert await cache.get(keys[0]) == nul
    assert await cache.get(keys[1]) == spelled


async def test_a_batch_reuses_a_file_cache_across_processes_lifetimes(tmp_path: Path) -> None:
    """A cache file closed and opened again still answers: the second run makes no call."""
    path = tmp_path / "c.db"
    judge = StepJudge()
    for _ in range(2):
        async with SqliteJudgeCache(path) as cache:
            result = await judged_scorer(judge).run(
                input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))
            assert result.unwrap().score == 0.75
    assert sum(judge.calls.values()) == 3


async def test_an_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    """A row someone else wrote (not our JSON) is a miss, not an exception."""
    path = tmp_path / "c.db"
    cache = SqliteJudgeCache(path)
    await cache.put("k", JudgeResponse(text="ok"))
    await cache.aclose()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE scorecore_judge_cache SET response = '{\"text\": 3}'")
    assert await cache.get("k") is None
    await cache.aclose()


async def test_a_broken_file_costs_calls_not_the_run(tmp_path: Path) -> None:
    """A cache path that cannot be opened: every get misses, errors are counted, runs go on."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = SqliteJudgeCache(blocker / "cache.db")
    judge = StepJudge()
    result = await judged_scorer(judge).run(input="q", output="a",
                                            runtime=_runtime(JudgeMeter(cache=cache)))
    assert result.unwrap().score == 0.75
    assert cache.errors >= 3
    assert cache.last_error is not None
    assert str(blocker) in cache.last_error
    with pytest.raises(OSError, match="exists"):
        await cache.open()


def test_open_cache_reads_urls(tmp_path: Path) -> None:
    """sqlite:PATH, a bare path, sqlite:///abs, postgresql://, memory:; others are refused."""
    assert isinstance(open_cache("memory:"), MemoryJudgeCache)
    for url, path in ((f"sqlite:{tmp_path}/a.db", tmp_path / "a.db"),
                      (f"sqlite://{tmp_path}/a.db", tmp_path / "a.db"),
                      ("rel/a.db", Path("rel/a.db"))):
        opened = open_cache(url)
        assert isinstance(opened, SqliteJudgeCache)
        assert opened.path == path
    pg = open_cache("postgres://u:secret@h/db")
    assert isinstance(pg, PostgresJudgeCache)
    assert "secret" not in repr(pg)
    for bad in ("", "sqlite:", "redis://u:secret@h"):
        with pytest.raises(ValueError, match="cache URL") as info:
            open_cache(bad)
        assert "secret" not in str(info.value)


def test_the_memory_cache_is_in_the_testing_kit() -> None:
    """The kit exposes MemoryJudgeCache where tests look for fakes."""
    assert testing.MemoryJudgeCache is MemoryJudgeCache


@pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")
async def test_postgres_is_shared_by_workers() -> None:
    """Two connections (two workers) see each other's entries."""
    assert DSN is not None
    key = uuid.uuid4().hex
    async with PostgresJudgeCache(DSN) as a, PostgresJudgeCache(DSN) as b:
        await a.put(key, JudgeResponse(text="from a", usage=JudgeUsage(input_tokens=3)))
        got = await b.get(key)
    assert got == JudgeResponse(text="from a", usage=JudgeUsage(input_tokens=3))


async def test_a_wrong_postgres_password_is_a_counted_miss() -> None:
    """An unreachable server: misses, counted errors, and the password never shown."""
    cache = PostgresJudgeCache("postgresql://u:hunter2@127.0.0.1:1/db", connect_timeout=1)
    assert await cache.get("k") is None
    assert cache.errors == 1
    assert cache.last_error is not None
    assert "hunter2" not in cache.last_error
    assert "hunter2" not in repr(cache)


async def test_a_file_locked_by_another_process_is_waited_for_off_the_event_loop(
    tmp_path: Path,
) -> None:
    """A put that meets another writer's lock waits in a worker thread; the loop keeps going.

    Real time on purpose: the lock is a real SQLite file lock held by another connection.
    """
    path = tmp_path / "c.db"
    async with SqliteJudgeCache(path) as cache:
        await cache.put("first", JudgeResponse(text="x"))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        done = anyio.Event()
        ticks = 0

        async def write() -> None:
            await cache.put("k", JudgeResponse(text="y"))
            done.set()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as group:
            group.start_soon(write)
            group.start_soon(tick)
            await anyio.sleep(0.2)
            assert not done.is_set()  # still waiting for the lock
            other.execute("COMMIT")
        other.close()
        assert ticks >= 5  # the event loop ran while the put waited
        got = await cache.get("k")
        assert got is not None
        assert got.text == "y"
        assert cache.errors == 0


@pytest.mark.parametrize("stored", [
    {},  # written before modes were recorded
    {"structured_output": "telepathy"},  # a mode this scorecore does not know
    {"structured_output": ["json_object"]},
])
async def test_an_entry_without_a_known_mode_is_still_a_hit(
    anyio_backend: str, tmp_path: Path, stored: dict[str, Any]
) -> None:
    """A cached reply whose mode is missing or unknown is served with its mode unknown."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put("k", JudgeResponse(text="{}", structured_output="json_object"))
    with closing(sqlite3.connect(tmp_path / "c.db")) as db, db:
        (raw,) = db.execute("SELECT response FROM scorecore_judge_cache").fetchone()
        entry = {k: v for k, v in json.loads(raw).items() if k != "structured_output"}
        db.execute("UPDATE scorecore_judge_cache SET response = ?",
                   (json.dumps({**entry, **stored}),))
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        assert await cache.get("k") == JudgeResponse(text="{}")


async def test_concurrent_gets_each_get_their_own_reply_in_one_query_each(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Concurrent gets (a warm re-run asks 64 at a time) each answer their own key, a missing
    key among them is a miss and a repeated key is answered again; each get is one indexed
    query, read at once (no turn of the event loop waited for)."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        for i in range(30):
            await cache.put(f"k{i}", JudgeResponse(text=f"reply {i}"))
        queries: list[str] = []
        cache._inline().set_trace_callback(queries.append)
        got: dict[str, list[str | None]] = {}

        async def get(key: str) -> None:
            response = await cache.get(key)
            got.setdefault(key, []).append(None if response is None else response.text)

        keys = [f"k{i}" for i in range(30)] + ["missing", "k3"]
        async with anyio.create_task_group() as tg:
            for key in keys:
                tg.start_soon(get, key)
        assert got == {**{f"k{i}": [f"reply {i}"] for i in range(30)}, "missing": [None],
                       "k3": ["reply 3", "reply 3"]}
        # One query per get, in any order (trio starts tasks in any order).
        read = sorted(q.rsplit("= ", 1)[1] for q in queries if q.startswith("SELECT"))
        assert read == sorted(f"'{key}'" for key in keys)


async def test_a_get_cancelled_while_waiting_leaves_the_others_answered(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A get cancelled in its round is not read for; the gets beside it still are."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put("a", JudgeResponse(text="A"))
        await cache.put("b", JudgeResponse(text="B"))
        answers: list[str | None] = []

        async def get(key: str) -> None:
            response = await cache.get(key)
            answers.append(None if response is None else response.text)

        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as scope:
                scope.cancel()
                await cache.get("a")  # cancelled at its checkpoint: never answers
            tg.start_soon(get, "b")
            tg.start_soon(get, "a")
        assert sorted(a or "" for a in answers) == ["A", "B"]
        assert cache.errors == 0


@pytest.mark.parametrize("edit", [
    {"usage": {"input_tokens": True}},
    {"usage": {"input_tokens": 1.5}},
    {"usage": {"input_tokens": "12"}},
    {"usage": {"cached_input_tokens": False}},
    {"text": 5},
    {"usage": [1, 2]},
    {"text": None},
    {"finish_reason": 3},
    {"model_id": ["m"]},
])
async def test_an_edited_entry_of_the_wrong_types_is_a_counted_miss(
    anyio_backend: str, tmp_path: Path, edit: dict[str, Any]
) -> None:
    """An entry edited to hold a count, text, finish reason or model id of the wrong type is
    a miss counted as an error, never a reply with the wrong types."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put("k", JudgeResponse(text="{}", usage=JudgeUsage(input_tokens=3)))
    with closing(sqlite3.connect(tmp_path / "c.db")) as db, db:
        (raw,) = db.execute("SELECT response FROM scorecore_judge_cache").fetchone()
        entry = json.loads(raw)
        if "usage" in edit and isinstance(edit["usage"], dict):
            edit = {"usage": {**entry["usage"], **edit["usage"]}}
        db.execute("UPDATE scorecore_judge_cache SET response = ?",
                   (json.dumps({**entry, **edit}),))
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        assert await cache.get("k") is None
        assert cache.errors == 1


@pytest.mark.parametrize("stored", ['{"text": "cut', "not JSON", "", '{"text": "a"} {}', "[1, 2]"])
async def test_an_entry_that_is_not_a_json_object_is_a_counted_miss(
    anyio_backend: str, tmp_path: Path, stored: str
) -> None:
    """An entry cut short, or holding text that is not one JSON object, is a miss counted as
    an error (a warm re-run asks the judge again), never an exception out of ``get``."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        await cache.put("k", JudgeResponse(text="ok"))
    with closing(sqlite3.connect(tmp_path / "c.db")) as db, db:
        db.execute("UPDATE scorecore_judge_cache SET response = ?", (stored,))
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        assert await cache.get("k") is None
        assert cache.errors == 1
        assert cache.last_error is not None
        assert "cannot be read back" in cache.last_error
