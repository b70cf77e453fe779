"""The SQLite cache's gets of one turn of the event loop share a read snapshot: what they see."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scorecore.judge import JudgeResponse
from scorecore_adapters.cache import SqliteJudgeCache

pytestmark = pytest.mark.anyio

_TABLE = "scorecore_judge_cache"


def _write_elsewhere(path: Path, key: str, text: str) -> None:
    """What another process writing the file does (its own connection, committed)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute(f"INSERT OR REPLACE INTO {_TABLE} (key, response, created_at) "  # noqa: S608
                      "VALUES (?, ?, 0)", (key, f'{{"text": "{text}", "usage": {{}}}}'))


_ops = st.lists(st.one_of(
    st.tuples(st.just("get"), st.integers(0, 2)),
    st.tuples(st.just("get"), st.integers(0, 2)),  # gets twice as often as each write
    st.tuples(st.sampled_from(["put", "put_other_cache", "elsewhere"]), st.integers(0, 2)),
    st.tuples(st.just("turn"), st.just(0)),
), max_size=40)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
# Runs of one turn: a snapshot begun by the second get, then another cache's write the next
# get must see (and another process's, which it may not).
@example(ops=[("get", 0), ("get", 1), ("get", 0), ("put_other_cache", 1), ("get", 1)])
@example(ops=[("get", 0), ("get", 1), ("elsewhere", 2), ("get", 2), ("turn", 0), ("get", 2)])
async def test_a_get_answers_as_a_fresh_read_but_for_another_process_s_latest_writes(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[str, int]],
) -> None:
    """Whatever the gets and puts (of this cache, of another cache of the file in this
    process, of another process), made by concurrent runs in one turn of the event loop or
    in several: a get answers what a fresh read of the file answers, except that it may not
    yet see a write another process made since a cache of this process last wrote; and a
    key's answers never go back to an older reply."""
    path = tmp_path_factory.mktemp("snap") / "c.db"
    versions: dict[int, list[str | None]] = {k: [None] for k in range(3)}
    # Per key, the oldest version a get may still answer, and the newest one answered.
    oldest = dict.fromkeys(range(3), 0)
    seen = dict.fromkeys(range(3), 0)
    async with SqliteJudgeCache(path) as cache, SqliteJudgeCache(path) as other_cache:
        await cache.open()

        async def run(n: int, op: str, k: int) -> None:
            nonlocal oldest
            text = f"v{n}"
            if op == "get":
                got = await cache.get(f"k{k}")  # read at once: no other run in between
                answer = None if got is None else got.text
                allowed = versions[k][max(oldest[k], seen[k]):]
                assert answer in allowed, (answer, allowed)
                seen[k] = versions[k].index(answer, max(oldest[k], seen[k]))
                return
            # Noted before the put: it writes before it first yields to the event loop.
            versions[k].append(text)
            if op != "elsewhere":  # this process wrote: every key is read fresh again
                oldest = {key: len(v) - 1 for key, v in versions.items()}
            if op == "put":
                await cache.put(f"k{k}", JudgeResponse(text=text))
            elif op == "put_other_cache":
                await other_cache.put(f"k{k}", JudgeResponse(text=text))
            else:
                _write_elsewhere(path, f"k{k}", text)

        turns: list[list[tuple[int, str, int]]] = [[]]
        for n, (op, k) in enumerate(ops):
            if op == "turn":
                turns.append([])
            else:
                turns[-1].append((n, op, k))
        for runs in turns:  # the runs of one turn start together
            async with anyio.create_task_group() as group:
                for n, op, k in runs:
                    group.start_soon(run, n, op, k)
        assert cache.errors == other_cache.errors == 0


async def test_the_snapshot_ends_when_the_event_loop_turns(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Once the event loop has turned, a get sees what another process wrote, and no read
    transaction is left open: another process's checkpoint can empty the WAL."""
    path = tmp_path / "c.db"
    async with SqliteJudgeCache(path) as cache:
        for i in range(3):
            await cache.put(f"k{i}", JudgeResponse(text=f"reply {i}"))
        await anyio.wait_all_tasks_blocked()
        for i in range(3):  # one turn: the second get on share a snapshot
            assert await cache.get(f"k{i}") is not None
        _write_elsewhere(path, "new", "written elsewhere")
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert busy == 1  # a reader still reads the file as it was
            await anyio.wait_all_tasks_blocked()  # the event loop turns
            got = await cache.get("new")
            assert got is not None
            assert got.text == "written elsewhere"
            await anyio.wait_all_tasks_blocked()
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert busy == 0


async def test_the_gets_of_one_turn_share_one_read_transaction(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A warm re-run's gets, many in one turn of the event loop, begin one read transaction
    per few hundred gets (each query is not a transaction of its own); a lone get begins
    none, and every get is still one query."""
    async with SqliteJudgeCache(tmp_path / "c.db") as cache:
        for i in range(600):
            await cache.put(f"k{i}", JudgeResponse(text=f"reply {i}"))
        await anyio.wait_all_tasks_blocked()
        statements: list[str] = []
        cache._inline().set_trace_callback(statements.append)
        assert await cache.get("k0") is not None
        assert statements == ["SELECT response FROM scorecore_judge_cache WHERE key = 'k0'"]
        for i in range(1, 600):
            got = await cache.get(f"k{i}")
            assert got is not None
            assert got.text == f"reply {i}"
        assert sum(s.startswith("SELECT") for s in statements) == 600
        assert 1 <= statements.count("BEGIN") <= 3
