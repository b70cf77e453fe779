"""PostgreSQL saves of many rows (copied into a staging table, upserted from it in one
statement) leave exactly what an upsert per row leaves (runs when SCORECORE_TEST_POSTGRES_DSN
is set)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, StoreError
from scorecore_adapters.storage import PostgresScoreStore
from scorecore_adapters.storage._postgres import COPY_FROM
from tests.strategies import copy_json, copy_texts

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
pytestmark = pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
MANY = COPY_FROM + 16  # a save this large is copied; one row alone is upserted
BACKENDS = ["asyncio", "trio"]


def _admin(sql: str) -> None:
    import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(sql)


@contextmanager
def _tables(count: int = 1, names: tuple[str, ...] = ()) -> Iterator[list[str]]:
    """Fresh table names, dropped afterwards."""
    tables = list(names) or [f"t_{uuid.uuid4().hex[:12]}" for _ in range(count)]
    try:
        yield tables
    finally:
        for table in tables:
            _admin(f'DROP TABLE IF EXISTS "{table}"')


@asynccontextmanager
async def _store(table: str) -> AsyncIterator[PostgresScoreStore]:
    assert DSN is not None
    # Commits that do not wait for the disk: the oracles below save hundreds of single rows.
    fast = f"{DSN}{'&' if '?' in DSN else '?'}options=-csynchronous_commit%3Doff"
    async with PostgresScoreStore(fast, table=table, now=lambda: NOW) as store:
        yield store


def _row(run_id: str, scorer_id: str = "s", *, score: float = 0.5, reason: str = "r",
         row_id: str | None = None, index: int = 0) -> ScoreRow:
    return ScoreRow(
        id=row_id or f"{run_id}/{scorer_id}", scorer_id=scorer_id, run_id=run_id, batch_id="b",
        status="scored", score=score, reason=reason, scorer={"id": scorer_id},
        input={"q": "question"}, output="answer", metadata={"itemIndex": index},
    )


async def _saved_whole_and_row_by_row(
    *pages: list[ScoreRow],
) -> tuple[list[ScoreRow], list[ScoreRow]]:
    """Batch b of a store saving each page whole, and of one saving one row at a time."""
    with _tables(2) as (copied, upserted):
        async with _store(copied) as store, _store(upserted) as oracle:
            for page in pages:
                await store.save(page)
                for row in page:
                    await oracle.save([row])
            return await store.list_run("b"), await oracle.list_run("b")


# A save: (pair number, score, whether the row's id is another one than its pair's usual id).
_saves = st.lists(st.tuples(st.integers(0, 5), st.floats(0, 1), st.booleans()), max_size=12)


@settings(max_examples=12)
@given(stored=_saves, page=_saves)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copied_page_leaves_what_one_upsert_after_another_leaves(
    backend: str, stored: list[tuple[int, float, bool]], page: list[tuple[int, float, bool]]
) -> None:
    """Rows already stored, then a page holding pairs twice or more (with other ids): the store
    copying the page holds what a store upserting its rows one save at a time holds."""

    def rows(saves: list[tuple[int, float, bool]], tag: str) -> list[ScoreRow]:
        return [_row(f"b:{pair}", score=score, reason=f"{tag}{at}",
                     row_id=f"{tag}{at}" if other else None, index=pair)
                for at, (pair, score, other) in enumerate(saves)]

    # Pairs of their own bring the page to the size that is copied.
    filler = [_row(f"b:filler{i}", index=100 + i) for i in range(MANY)]
    before, saved = rows(stored, "old"), [*rows(page, "new"), *filler]

    async def check() -> None:
        copied, upserted = await _saved_whole_and_row_by_row(before, saved)
        assert copied == upserted

    anyio.run(check, backend=backend)


_TEXT_FIELDS = ("reason", "preprocess_prompt", "analyze_prompt", "generate_score_prompt",
                "generate_reason_prompt", "entity_type", "entity_id", "dataset_item_id",
                "trace_id", "span_id")
_JSON_FIELDS = ("input", "output", "preprocess_step_result", "analyze_step_result")
_OBJECT_FIELDS = ("additional_context", "request_context", "entity", "metadata")


@settings(max_examples=12)
@given(key=copy_texts, texts=st.lists(copy_texts, min_size=len(_TEXT_FIELDS),
                                      max_size=len(_TEXT_FIELDS)),
       values=st.lists(copy_json, min_size=len(_JSON_FIELDS), max_size=len(_JSON_FIELDS)),
       objects=st.lists(st.dictionaries(copy_texts, copy_json, max_size=3),
                        min_size=len(_OBJECT_FIELDS), max_size=len(_OBJECT_FIELDS)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_copied_text_and_json_read_back_as_upserted(
    backend: str, key: str, texts: list[str], values: list[Any],
    objects: list[dict[str, Any]],
) -> None:
    """Tabs, newlines, backslashes, ``\\N``, any unicode, in keys, text and JSON columns: a
    copied page reads back what an upsert per row stores, and text columns exactly as given."""
    fields: dict[str, Any] = dict(zip(_TEXT_FIELDS, texts, strict=True))
    fields |= dict(zip(_JSON_FIELDS, values, strict=True))
    fields |= dict(zip(_OBJECT_FIELDS, objects, strict=True))  # columns of JSON objects only
    fields["scorer"] = {"id": key, "name": texts[0]}
    odd = attrs.evolve(_row(f"b:{key}", scorer_id=key, row_id=key), **fields)
    page = [attrs.evolve(odd, id=f"{key}#{i}", run_id=f"b:{key}#{i}") for i in range(MANY)]

    async def check() -> None:
        got, upserted = await _saved_whole_and_row_by_row(page)
        assert got == upserted
        assert sorted(r.id for r in got) == sorted(r.id for r in page)
        for row in got:
            assert (row.scorer_id, *(getattr(row, f) for f in _TEXT_FIELDS)) == (key, *texts)
            assert (row.created_at, row.updated_at) == (NOW, NOW)

    anyio.run(check, backend=backend)


@pytest.mark.anyio
@pytest.mark.parametrize("size", [1, MANY])
async def test_a_page_failing_midway_stores_none_of_its_rows(anyio_backend: str,
                                                              size: int) -> None:
    """A row the table refuses in the middle of a page: a StoreError, nothing of the page
    stored (neither new pairs nor changes to stored ones), and the next save works."""
    with _tables() as (table,):
        async with _store(table) as store:
            first = [_row(f"b:{i}", index=i) for i in range(size)]
            await store.save(first)
            _admin(f'ALTER TABLE "{table}" ADD CHECK ("score" <> 0.25)')
            page = [_row(f"b:{i}", score=0.75, index=i) for i in range(2 * size)]
            page[size] = _row(f"b:{size}", score=0.25, index=size)
            with pytest.raises(StoreError, match=r"save failed: .*check constraint"):
                await store.save(page)
            assert [(r.run_id, r.score) for r in await store.list_run("b")] == [
                (r.run_id, r.score) for r in first]
            again = [_row(f"b:{i}", score=0.125, index=i) for i in range(2 * size)]
            await store.save(again)
            assert [(r.run_id, r.score) for r in await store.list_run("b")] == [
                (f"b:{i}", 0.125) for i in range(2 * size)]


@pytest.mark.anyio
async def test_two_stores_saving_the_same_pairs_at_once_both_succeed(anyio_backend: str) -> None:
    """Two stores (two connections) save overlapping pages of the same pairs at once, in
    opposite orders: neither fails (no deadlock, no shared staging table) and each pair holds
    one writer's whole row, under the id it was first stored with."""
    pairs = 4 * MANY
    with _tables() as (table,):
        async with _store(table) as one, _store(table) as two:

            async def write(store: PostgresScoreStore, tag: str, order: list[int]) -> None:
                await store.save([_row(f"b:{i}", reason=tag, score=0.25 if tag == "one" else 0.75,
                                       row_id=f"{tag}{i}", index=i) for i in order])

            for _ in range(3):
                async with anyio.create_task_group() as group:
                    group.start_soon(write, one, "one", list(range(pairs)))
                    group.start_soon(write, two, "two", list(reversed(range(pairs))))
            rows = await one.list_run("b")
    assert [r.run_id for r in rows] == [f"b:{i}" for i in range(pairs)]
    for r in rows:
        assert (r.reason, r.score) in {("one", 0.25), ("two", 0.75)}
        assert r.id in {f"one{r.run_id[2:]}", f"two{r.run_id[2:]}"}


@pytest.mark.anyio
async def test_two_stores_on_two_tables_keep_their_own_rows(anyio_backend: str) -> None:
    """Copied pages of two stores on two tables, saved at once, each land in its own table."""
    with _tables(2) as (left, right):
        async with _store(left) as a, _store(right) as b:
            async with anyio.create_task_group() as group:
                for store, tag in ((a, "a"), (b, "b")):
                    for start in range(0, 4 * MANY, MANY):
                        group.start_soon(store.save, [_row(f"b:{tag}{i}", index=i)
                                                      for i in range(start, start + MANY)])
            assert {r.run_id[2] for r in await a.list_run("b")} == {"a"}
            assert {r.run_id[2] for r in await b.list_run("b")} == {"b"}
            assert len(await a.list_run("b")) == len(await b.list_run("b")) == 4 * MANY


@pytest.mark.anyio
@pytest.mark.parametrize("size", [1, MANY])
async def test_a_table_of_any_plain_name_stores_a_copied_page(anyio_backend: str,
                                                               size: int) -> None:
    """Whatever the table's name, even one a staging table might take, a save stores its
    rows in that table."""
    with _tables(names=("scorecore_incoming",)) as (table,):
        async with _store(table) as store:
            await store.save([_row(f"b:{i}", index=i) for i in range(size)])
            assert len(await store.list_run("b")) == size
        async with _store(table) as reopened:
            assert len(await reopened.list_run("b")) == size


@pytest.mark.anyio
async def test_a_copied_page_leaves_no_rows_staged(anyio_backend: str) -> None:
    """After a copied save, stored or failed, the session's staging table holds no row: the
    rows are in the store's table only."""
    with _tables() as (table,):
        async with _store(table) as store:
            await store.save([_row(f"b:{i}", index=i) for i in range(MANY)])
            staged = 'SELECT count(*) FROM pg_temp."scorecore staging"'
            assert await store._run("check", staged, ()) == [(0,)]
            _admin(f'ALTER TABLE "{table}" ADD CHECK ("score" <> 0.25)')
            with pytest.raises(StoreError):
                await store.save([_row(f"c:{i}", score=0.25) for i in range(MANY)])
            await store.save([_row(f"d:{i}") for i in range(MANY)])
            assert await store._run("check", staged, ()) == [(0,)]


@pytest.mark.anyio
async def test_a_read_only_store_refuses_a_copied_page(anyio_backend: str) -> None:
    """A read-only store refuses a page large enough to be copied as it refuses one row."""
    assert DSN is not None
    with _tables() as (table,):
        async with _store(table) as writer:
            await writer.save([_row("b:0")])
            async with PostgresScoreStore(DSN, table=table, read_only=True) as store:
                with pytest.raises(StoreError, match="read-only transaction"):
                    await store.save([_row(f"b:{i}", score=0.75) for i in range(MANY)])
            assert [(r.run_id, r.score) for r in await writer.list_run("b")] == [("b:0", 0.5)]
