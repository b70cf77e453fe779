"""Tests of the score stores (SQLite always, PostgreSQL when SCORECORE_TEST_POSTGRES_DSN is set)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import create_scorer, not_scorable
from scorecore.evals import EvalItem, ScoreRow, StoreError, run_evals
from scorecore.evals._persistence._sanitize import MAX_DEPTH
from scorecore.evals.store import row_id, storable_row
from scorecore_adapters.cache import open_cache
from scorecore_adapters.storage import (
    PostgresScoreStore,
    SqliteScoreStore,
    open_store,
    redact_url,
)
from scorecore_adapters.testing import InMemoryScoreStore
from tests.strategies import realize, run_values

pytestmark = pytest.mark.anyio

DSN_ENV = "SCORECORE_TEST_POSTGRES_DSN"
DSN = os.environ.get(DSN_ENV)

KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(DSN is None, reason=f"{DSN_ENV} unset")),
]
# The store contract holds for the test kit's in-memory store too (scorecore_adapters.testing).
STORE_KINDS = [*KINDS, "memory"]


class StepClock:
    """A wall clock that moves one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _drop_table(table: str) -> None:
    import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}"')  # type: ignore[arg-type]


@asynccontextmanager
async def make_store(kind: str, tmp_path: Path, clock: Any = None) -> AsyncIterator[Any]:
    """Open a fresh store of the given kind (a unique table for PostgreSQL)."""
    now = clock or StepClock()
    if kind == "memory":
        async with InMemoryScoreStore(now=now) as store:
            yield store
        return
    if kind == "sqlite":
        async with SqliteScoreStore(tmp_path / "scores.db", now=now) as store:
            yield store
        return
    assert DSN is not None
    table = f"t_{uuid.uuid4().hex[:12]}"
    try:
        async with PostgresScoreStore(DSN, table=table, now=now) as store:
            yield store
    finally:
        _drop_table(table)


def row(run_id: str, scorer_id: str = "s", *, status: Any = "scored", score: float | None = 0.5,
        index: int = 0, batch_id: str = "b") -> ScoreRow:
    return ScoreRow(
        id=row_id(run_id, scorer_id), scorer_id=scorer_id, run_id=run_id, batch_id=batch_id,
        status=status, score=score, reason="r", scorer={"id": scorer_id},
        input={"q": "question", "n": [1, 2]}, output="answer", metadata={"itemIndex": index},
        request_context={"user": "u"},
    )


@pytest.mark.parametrize("kind", STORE_KINDS)
@pytest.mark.parametrize("size", [3, 150])
async def test_a_save_of_many_rows_upserts_as_one_row_after_another(
    anyio_backend: str, kind: str, size: int, tmp_path: Path
) -> None:
    """A save holding a pair twice, and pairs already stored: one row per pair, the last
    values saved, the first id and createdAt; few rows or many (PostgreSQL copies many)."""
    async with make_store(kind, tmp_path) as store:
        await store.save([row(f"b:{i}", index=i) for i in range(0, size, 2)])
        again = [row(f"b:{i}", score=i / size, index=i) for i in range(size)]
        twice = attrs.evolve(row("b:1", score=0.125, index=1), id="another id")
        await store.save([*again, twice])
        rows = await store.list_run("b")
    assert [(r.run_id, r.score) for r in rows] == [
        (f"b:{i}", 0.125 if i == 1 else i / size) for i in range(size)]
    assert rows[1].id == row_id("b:1", "s")
    stamps = {(r.created_at < r.updated_at) for r in rows[0::2]}
    assert stamps == {True}
    assert all(r.created_at == r.updated_at for r in rows[1::2])


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_save_is_idempotent_upsert(anyio_backend: str, kind: str, tmp_path: Path) -> None:
    """Saving a (run, scorer) pair twice leaves one row: the newer values, the first createdAt."""
    async with make_store(kind, tmp_path) as store:
        await store.save([row("b:1"), row("b:2", index=1)])
        await store.save([row("b:1", score=0.9)])
        rows = await store.list_run("b")
    assert [(r.run_id, r.score) for r in rows] == [("b:1", 0.9), ("b:2", 0.5)]
    first = rows[0]
    assert first.created_at is not None
    assert first.updated_at is not None
    assert first.updated_at > first.created_at
    assert first.input == {"q": "question", "n": [1, 2]}
    assert first.scorer == {"id": "s"}
    assert first.metadata == {"itemIndex": 0}


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_completed_lists_final_rows_only(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """completed() gives scored and not-scorable pairs of the batch, never failed ones."""
    async with make_store(kind, tmp_path) as store:
        await store.save([
            row("b:1"),
            row("b:2", status="not_scorable", score=None),
            row("b:3", status="failed", score=None),
            row("c:1", batch_id="c"),
        ])
        done = await store.completed("b")
    assert set(done) == {("b:1", "s"), ("b:2", "s")}
    assert done[("b:1", "s")].score == 0.5
    assert done[("b:2", "s")].status == "not_scorable"


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_completed_keeps_the_kind_of_a_run_the_judge_could_not_decide(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """A not-scorable row's ``metadata.notScorable.kind`` comes back with its pair, so a
    resumed batch counts a position-biased run as an uninterrupted one does."""
    biased = attrs.evolve(row("b:1", status="not_scorable", score=None), metadata={
        "itemIndex": 0, "notScorable": {"reason": "followed the position",
                                        "kind": "position_bias"}})
    plain = row("b:2", status="not_scorable", score=None, index=1)
    async with make_store(kind, tmp_path) as store:
        await store.save([biased, plain, row("b:3", index=2)])
        done = await store.completed("b")
    assert {key[0]: value.not_scorable_kind for key, value in done.items()} == {
        "b:1": "position_bias", "b:2": None, "b:3": None}


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_odd_json_values_are_stored(anyio_backend: str, kind: str, tmp_path: Path) -> None:
    """Non-finite floats and non-JSON objects are stored as strings, not rejected."""
    odd = ScoreRow(id="x", scorer_id="s", run_id="r", batch_id="b", status="scored", score=1.0,
                   input={"nan": float("nan"), "set": {1}}, output=object.__name__)
    async with make_store(kind, tmp_path) as store:
        await store.save([odd])
        (stored,) = await store.list_run("b")
    assert stored.input == {"nan": "nan", "set": [1]}


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_run_evals_resume_against_store(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """A batch resumed against a real store ends with one row per pair, secrets redacted."""
    fail_once = {3}

    def step(ctx: Any) -> Any:
        if ctx.run.input in fail_once:
            raise RuntimeError("transient")
        if ctx.run.input == 4:
            return not_scorable("skip")
        return 1.0

    scorers = [
        create_scorer(id="one", description="d").generate_score(step),
        create_scorer(id="two", description="d").generate_score(lambda _: 0.5),
    ]
    data = [
        EvalItem(input=i, output=i, id=f"item-{i}",
                 request_context={"api_key": "sk-live", "headers": {"Cookie": "c"}, "u": i})
        for i in range(6)
    ]
    async with make_store(kind, tmp_path) as store:
        first = await run_evals(data, scorers, store=store, batch_id="batch-1", concurrency=3)
        assert first.summary("one").failed == 1
        fail_once.clear()
        second = await run_evals(data, scorers, store=store, batch_id="batch-1", resume=True,
                                 keep_results=True)
        rows = await store.list_run("batch-1")
    assert len(rows) == 12
    assert len({(r.run_id, r.scorer_id) for r in rows}) == 12
    assert {r.status for r in rows if r.scorer_id == "one"} == {"scored", "not_scorable"}
    assert second.summary("one").scored == 5
    assert second.summary("one").not_scorable == 1
    assert second.results is not None
    rerun = [o for r in second.results for o in r.outcomes if not o.resumed]
    assert [(o.scorer_id, o.status) for o in rerun] == [("one", "scored")]
    assert all(
        r.request_context == {"api_key": "[REDACTED]", "headers": {"Cookie": "[REDACTED]"},
                              "u": r.metadata["itemIndex"]}  # type: ignore[index]
        for r in rows
    )
    assert [r.dataset_item_id for r in rows[:4]] == ["item-0", "item-0", "item-1", "item-1"]


async def test_sqlite_uses_wal_and_unique_pairs(anyio_backend: str, tmp_path: Path) -> None:
    """The SQLite file is in WAL mode with a unique (runId, scorerId) constraint."""
    path = tmp_path / "scores.db"
    async with SqliteScoreStore(path) as store:
        await store.save([row("b:1")])
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                'INSERT INTO scorecore_scores ("id", "scorerId", "runId", "status", "createdAt",'
                ' "updatedAt") VALUES (?, ?, ?, ?, ?, ?)', ("other", "s", "b:1", "scored", "", "")
            )
    finally:
        conn.close()


async def test_sqlite_unreachable_is_store_error(anyio_backend: str, tmp_path: Path) -> None:
    """A file in a missing directory fails to open with StoreError naming the store."""
    store = SqliteScoreStore(tmp_path / "missing" / "x.db")
    with pytest.raises(StoreError, match=r"cannot open store sqlite:.*missing.*does not exist"):
        await store.open()
    with pytest.raises(StoreError, match="is not open"):
        await store.save([row("b:1")])


async def test_postgres_unreachable_is_store_error(anyio_backend: str) -> None:
    """A refused connection is StoreError, with the password hidden."""
    store = PostgresScoreStore("postgresql://u:hunter2@127.0.0.1:1/db", connect_timeout=2)
    with pytest.raises(StoreError) as info:
        await store.open()
    assert "hunter2" not in str(info.value)
    assert info.value.operation == "open"
    assert "postgresql://u:***@127.0.0.1:1/db" in str(info.value)


@pytest.mark.parametrize("url", [
    "postgresql://u:hunter2@127.0.0.1:1/db",
    "postgresql://u@127.0.0.1:1/db?password=hunter2",
    "postgresql://127.0.0.1:1/db?sslmode=disable&PASSWORD=hunter2&application_name=x",
])
async def test_a_password_never_shows_in_either_place_libpq_reads_it(
    anyio_backend: str, url: str
) -> None:
    """Userinfo or a password query parameter: hidden in errors, store and cache reprs."""
    store = PostgresScoreStore(url, connect_timeout=2)
    with pytest.raises(StoreError) as info:
        await store.open()
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in repr(store)
    assert "hunter2" not in repr(open_cache(url))


@pytest.mark.parametrize("dsn", [
    "host=db password=hunter2",
    "host=db password = 'hunter2 x' user=me",
    "host=db password='hun\\'ter2' user=me",
    "dbname=x PASSWORD=hunter2",
])
def test_a_key_value_dsn_password_is_masked(dsn: str) -> None:
    """libpq's key=value form: the password never shows, the other settings stay readable."""
    masked = redact_url(dsn)
    assert "hunter2" not in masked
    assert masked.startswith(dsn.split(maxsplit=1)[0])
    assert "password" in masked.lower()


def test_a_percent_encoded_password_parameter_is_masked() -> None:
    """``pass%77ord=`` is the parameter ``password`` once decoded, so it is masked too."""
    masked = redact_url("postgresql://h/db?sslmode=disable&pass%77ord=hunter2")
    assert "hunter2" not in masked
    assert masked.startswith("postgresql://h/db?sslmode=disable&")


def test_open_cache_refuses_a_key_value_dsn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No SQLite file named after a DSN, and the refusal does not repeat the password."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="key=value") as info:
        open_cache("host=db password=hunter2")
    assert "hunter2" not in str(info.value)
    assert list(tmp_path.iterdir()) == []
    assert open_cache("sqlite:a=b.db").path.name == "a=b.db"  # type: ignore[union-attr]


def test_eval_with_a_key_value_dsn_store_does_not_echo_the_password(tmp_path: Path) -> None:
    """``scorecore eval --store "host=db password=…"`` is a usage error without the password."""
    import io  # noqa: PLC0415

    from scorecore_adapters.cli import main  # noqa: PLC0415

    data = tmp_path / "d.jsonl"
    data.write_text('{"input": 1, "output": 1}\n')
    scorers = tmp_path / "sc.py"
    scorers.write_text("from scorecore import create_scorer\n"
                       "s = create_scorer(id='s', description='d').generate_score(lambda c: 1.0)\n")
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--store", "host=db password=hunter2"],
                out=out, err=err)
    assert code == 2
    assert "hunter2" not in out.getvalue() + err.getvalue()
    assert "password=***" in err.getvalue()


def test_open_store_urls(tmp_path: Path) -> None:
    """open_store parses sqlite: and postgresql:// URLs and refuses others."""
    assert isinstance(open_store("sqlite:x.db"), SqliteScoreStore)
    assert open_store("sqlite:///tmp/x.db").url == "sqlite:/tmp/x.db"
    assert isinstance(open_store("postgres://h/db"), PostgresScoreStore)
    with pytest.raises(ValueError, match="unknown store URL 'mysql://u:\\*\\*\\*@h/db'"):
        open_store("mysql://u:pw@h/db")
    with pytest.raises(ValueError, match="names no file"):
        open_store("sqlite:")
    with pytest.raises(ValueError, match="plain SQL identifier"):
        SqliteScoreStore(tmp_path / "x.db", table="x; DROP TABLE y")
    assert redact_url("postgresql://h/db") == "postgresql://h/db"


def _odd_row(run_id: str = "b:odd", batch_id: str = "b") -> ScoreRow:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    return ScoreRow(
        id=row_id(run_id, "s"), scorer_id="s", run_id=run_id, batch_id=batch_id,
        status="scored", score=0.5, reason="r\x00", scorer={"id": "s", "name": "\ud83d"},
        input={"nul": "a\x00b", 7: "int key"}, output=deep,
        preprocess_step_result={"n": 10**5000}, analyze_step_result=["\udc00"],
        generate_reason_prompt="p\x00", entity_id="e\x00", trace_id="t\ud800",
        metadata={"itemIndex": 0, "k\x00": 1},
    )


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_any_row_is_saved_with_what_was_replaced_listed(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """NUL, lone surrogates, 5,000-deep nesting and a 5,000-digit int in any column are saved
    replaced (both stores alike), each listed in metadata.sanitized; the row reads back as
    storable_row made it."""
    odd = _odd_row()
    async with make_store(kind, tmp_path) as store:
        await store.save([odd, row("b:plain", index=1)])
        stored, plain = await store.list_run("b")
    kept = storable_row(odd)
    for name in ("reason", "scorer", "input", "output", "preprocess_step_result",
                 "analyze_step_result", "generate_reason_prompt", "entity_id", "trace_id",
                 "metadata"):
        assert getattr(stored, name) == getattr(kept, name), name
    assert stored.input == {"nul": "a\ufffdb", "7": "int key"}
    assert stored.preprocess_step_result == {"n": "<int of 5,001 digits>"}
    assert stored.metadata is not None
    assert [note["path"] for note in stored.metadata["sanitized"]] == [
        "reason", "scorer.name", "input.nul", "output" + "[0]" * MAX_DEPTH,
        "preprocessStepResult.n", "analyzeStepResult[0]", "generateReasonPrompt", "entityId",
        "traceId", "metadata.k\ufffd",
    ]
    assert plain.metadata == {"itemIndex": 1}


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_key_no_store_can_encode_is_a_store_error(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """A run id with a lone surrogate is refused as StoreError (not UnicodeEncodeError), and
    the save writes nothing."""
    async with make_store(kind, tmp_path) as store:
        with pytest.raises(StoreError, match=r"save failed: ScoreRow.run_id must be a str "
                                              r"without lone surrogates, got 'b:\\ud800'"):
            await store.save([row("b:ok"), row("b:\ud800")])
        assert await store.list_run("b") == []


@settings(max_examples=40)
@given(values=st.lists(run_values, min_size=3, max_size=3))
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_saving_any_values_round_trips_their_storable_form(
    backend: str, values: list[Any]
) -> None:
    """Whatever the values, save() succeeds and list_run() gives back storable_row(row)."""
    input_, output, context = (realize(v) for v in values)
    odd = ScoreRow(id="x", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
                   score=1.0, input=input_, output=output,
                   additional_context={"groundTruth": context})

    async def check() -> None:
        async with SqliteScoreStore(":memory:") as store:
            await store.save([odd])
            (stored,) = await store.list_run("b")
        kept = storable_row(odd)
        assert (stored.input, stored.output, stored.additional_context, stored.metadata) == (
            kept.input, kept.output, kept.additional_context, kept.metadata)

    anyio.run(check, backend=backend)
