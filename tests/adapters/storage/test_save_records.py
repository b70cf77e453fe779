"""The records run_evals hands a store store exactly what its rows stored.

``run_evals`` gives a store that takes records (SQLite, PostgreSQL, in memory) each row's
columns already encoded, never building the :class:`ScoreRow`. For any item and outcome —
scored, not scorable, failed (with its cause), an item's own failure, trials, secrets in the
metadata and contexts, non-ASCII and odd text — what ``save_records`` leaves in the table must
be what ``save`` of the rows leaves, byte for byte (PostgreSQL: when
SCORECORE_TEST_POSTGRES_DSN is set).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore import ScoreResult, ScorerRun, ScorerRunError
from scorecore.evals import EvalItem, ItemResult, ScoreRow
from scorecore.evals.engine import ItemRows
from scorecore.evals.results import ScorerOutcome
from scorecore.evals.store import RECORD_COLUMNS, SCORE_COLUMNS, RecordStore, encode_rows
from scorecore_adapters.storage import PostgresScoreStore, SqliteScoreStore
from scorecore_adapters.storage._postgres import COPY_FROM
from scorecore_adapters.storage._schema import WRITTEN, q
from scorecore_adapters.testing import InMemoryScoreStore
from tests.strategies import STEPS, json_values, run_failure_causes, score_results

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
_SECRET = "sk-proj-abc123def456ghi789jkl0"
# Text a store must keep as it is (non-ASCII, JSON's escapes) or replace and note (NUL, a lone
# surrogate), and text holding a secret, which the explaining columns must never keep.
_TEXT = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["é字\U0001f600", "a\x00b", "x\ud800", '"\\\n\t', _SECRET,
                     f"Bearer {_SECRET}", "password=hunter2", "\u2028"]),
)
_JSON = st.one_of(json_values, _TEXT, st.dictionaries(_TEXT, _TEXT, max_size=2))
_SCORERS = ("a", "b", "c")


class _Scorer:
    """What ItemRows reads of a scorer: its id, name, description and fingerprint."""

    def __init__(self, scorer_id: str, description: str) -> None:
        self.id = scorer_id
        self.name = scorer_id.upper()
        self.description = description
        self.has_judge = scorer_id == "b"
        self.fingerprint = f"{scorer_id}-print"


@st.composite
def _outcomes(draw: st.DrawFn, scorer_id: str, run_id: str) -> ScorerOutcome:
    status = draw(st.sampled_from(["scored", "not_scorable", "failed"]))
    if status == "failed":
        partial = draw(score_results(_JSON, _JSON))
        return ScorerOutcome(
            scorer_id=scorer_id, status="failed", error=draw(_TEXT),
            run_error=draw(st.none() | st.builds(
                ScorerRunError, scorer_id=st.just(scorer_id),
                failed_step=st.sampled_from(STEPS),
                completed_steps=st.lists(st.sampled_from(STEPS), max_size=2).map(tuple),
                cause=run_failure_causes, partial=st.just(partial))),
        )
    result = draw(score_results(_JSON, _JSON).filter(
        lambda r: (r.not_scorable is None) == (status == "scored")))
    return ScorerOutcome(
        scorer_id=scorer_id, status="scored" if status == "scored" else "not_scorable",
        score=result.score, result=result,
        reason=result.reason if result.not_scorable is None else result.not_scorable.reason,
    )


@st.composite
def _items(draw: st.DrawFn) -> tuple[list[ItemResult], list[_Scorer], bool]:
    """A few items of one batch (trials among them), each with one outcome per scorer."""
    results = []
    for index in range(draw(st.integers(1, 3))):
        trial = draw(st.integers(0, 2))
        item_id = draw(st.none() | st.sampled_from(["q1", "é字", "#x"]))
        run_id = f"b{'' if trial == 0 else f'/trial-{trial}'}:{item_id or f'#{index}'}"
        item = EvalItem(
            input=draw(_JSON), output=draw(_JSON), ground_truth=draw(_JSON),
            request_context=draw(st.none() | st.dictionaries(
                st.sampled_from(["apiKey", "user", "token", "é"]), _TEXT, max_size=3)),
            id=item_id,
            extra=draw(st.dictionaries(st.sampled_from(["note", "password", "字"]), _JSON,
                                       max_size=2)),
        )
        error = draw(st.none() | _TEXT)
        results.append(ItemResult(
            index=index, item_id=item_id, run_id=run_id, item=item, output=draw(_JSON),
            error=error, error_kind="target_raised" if error else None, trial=trial,
            outcomes=tuple(draw(_outcomes(s, run_id)) for s in _SCORERS),
        ))
    scorers = [_Scorer(s, draw(_TEXT)) for s in _SCORERS]
    return results, scorers, draw(st.booleans())


def _target() -> None: ...


def _built(
    results: list[ItemResult], scorers: list[_Scorer], with_target: bool
) -> tuple[list[ScoreRow], list[tuple[Any, ...]]]:
    """The rows and the records run_evals makes of ``results`` (each builder of its own)."""
    target = _target if with_target else None
    by_rows = ItemRows(batch_id="b", scorers=scorers, target=target)
    by_records = ItemRows(batch_id="b", scorers=scorers, target=target)
    rows: list[ScoreRow] = []
    records: list[tuple[Any, ...]] = []
    for result in results:
        rows.extend(by_rows.rows(result)[1])
        records.extend(by_records.records(result)[1])
    return rows, records


def _stored_alike(
    save_both: Callable[[list[ScoreRow], list[tuple[Any, ...]]], Awaitable[tuple[Any, Any]]],
) -> Callable[..., None]:
    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_items())
    def check(items: tuple[list[ItemResult], list[_Scorer], bool]) -> None:
        rows, records = _built(*items)
        assert records == encode_rows(rows)
        by_rows, by_records = anyio.run(save_both, rows, records)
        assert by_records == by_rows
        assert len(by_rows) == len({(r.run_id, r.scorer_id) for r in rows})
        # The reasons and the contexts never keep a secret (records as rows).
        kept = [str(v) for r in by_records for c, v in zip(WRITTEN, r, strict=True)
                if c in ("reason", "additionalContext", "requestContext")]
        assert not any(_SECRET in text for text in kept)

    return check


_WAYS = ("rows", "records")


async def _save_by(
    store: Any, way: str, rows: list[ScoreRow], records: list[tuple[Any, ...]]
) -> None:
    """Save the rows themselves (``"rows"``) or their records (``"records"``)."""
    if way == "rows":
        await store.save(rows)
    else:
        await store.save_records(records)


def _sqlite_table(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        sql = (f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM scorecore_scores "  # noqa: S608 - fixed names
               f'ORDER BY "runId", "scorerId"')
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def _in_sqlite(
    rows: list[ScoreRow], records: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with tempfile.TemporaryDirectory() as tmp:
        tables = []
        for way in _WAYS:
            path = Path(tmp) / f"{way}.db"
            async with SqliteScoreStore(path, now=lambda: NOW) as store:
                await _save_by(store, way, rows, records)
            tables.append(_sqlite_table(path))
        return tables[0], tables[1]


def test_sqlite_stores_the_same_text_from_records_as_from_rows() -> None:
    """Every column of every row, as SQLite holds it (the JSON text itself)."""
    _stored_alike(_in_sqlite)()


async def _in_memory(
    rows: list[ScoreRow], records: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    stores = {way: InMemoryScoreStore(now=lambda: NOW) for way in _WAYS}
    for way, store in stores.items():
        await _save_by(store, way, rows, records)
    by_rows, by_records = (
        [tuple(getattr(row, c.attr) for c in SCORE_COLUMNS)
         for row in sorted(store.rows.values(), key=lambda r: (r.run_id, r.scorer_id))]
        for store in stores.values())
    return by_rows, by_records


def test_the_memory_store_keeps_the_same_rows_from_records_as_from_rows() -> None:
    """The in-memory store (the tests' store) reads records back into the same rows."""
    _stored_alike(_in_memory)()


async def _in_postgres(
    rows: list[ScoreRow], records: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

    assert DSN is not None
    tables = []
    for way in _WAYS:
        table = f"t_{uuid.uuid4().hex[:12]}"
        try:
            async with PostgresScoreStore(DSN, table=table, now=lambda: NOW) as store:
                await _save_by(store, way, rows, records)
            with psycopg.connect(DSN, autocommit=True) as conn:
                sql = (f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(table)} "  # noqa: S608 - fixed names
                       f'ORDER BY "runId", "scorerId"')
                tables.append(conn.execute(sql).fetchall())
        finally:
            with psycopg.connect(DSN, autocommit=True) as conn:
                conn.execute(f"DROP TABLE IF EXISTS {q(table)}")
    return tables[0], tables[1]


@pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")
def test_postgres_stores_the_same_rows_from_records_as_from_rows() -> None:
    """Every column of every row, as PostgreSQL holds it (jsonb, timestamptz)."""
    _stored_alike(_in_postgres)()


@pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")
async def test_postgres_copies_many_records_as_it_copies_many_rows(anyio_backend: str) -> None:
    """A save large enough to be copied (COPY into the staging table) stores the same rows
    from records as from rows, on both backends."""
    run = ScorerRun(input="é字 question", output={"text": f"said {_SECRET}"}, run_id="x")

    results = [ItemResult(
        index=i, item_id=f"q{i}", run_id=f"b:q{i}",
        item=EvalItem(input="é字 question", request_context={"apiKey": _SECRET}, id=f"q{i}"),
        outcomes=tuple(ScorerOutcome(scorer_id=s, status="scored", score=i / 100,
                                     reason=f"because {_SECRET}", result=ScoreResult(
                                         run=run, score=i / 100, reason="r"))
                       for s in _SCORERS),
    ) for i in range(40)]
    rows, records = _built(results, [_Scorer(s, "d") for s in _SCORERS], False)
    assert len(records) >= COPY_FROM  # copied, not upserted row by row
    by_rows, by_records = await _in_postgres(rows, records)
    assert by_records == by_rows
    assert len(by_rows) == len(records)


@pytest.mark.parametrize("store", [InMemoryScoreStore(), SqliteScoreStore(":memory:"),
                                   PostgresScoreStore("postgresql://unused")])
def test_every_shipped_store_takes_records(store: object) -> None:
    """run_evals hands records only to a store that takes them: the shipped ones all do."""
    assert isinstance(store, RecordStore)
    assert [c.name for c in RECORD_COLUMNS] == list(WRITTEN[:len(RECORD_COLUMNS)])
    assert {c.kind for c in SCORE_COLUMNS[len(RECORD_COLUMNS):]} == {"time"}


async def test_sqlite_keeps_a_pairs_last_row_whatever_its_empty_columns(
    anyio_backend: str, tmp_path: Path
) -> None:
    """SQLite writes empty columns as NULL in the statement, grouping a save's rows by them:
    a pair saved twice in one save keeps its last row (under its first id) as before."""
    first = ScoreRow(id="first", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
                     score=0.5, output={"a": 1})
    last = ScoreRow(id="last", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
                    reason="é", metadata={"error": "x"})
    other = ScoreRow(id="other", scorer_id="t", run_id="b:1", batch_id="b", status="scored",
                     score=1.0, output={"a": 1})
    async with SqliteScoreStore(tmp_path / "s.db", now=lambda: NOW) as store:
        await store.save_records(encode_rows([first, other, last]))
        [kept, untouched] = await store.list_run("b")
    assert (kept.id, kept.status, kept.score, kept.reason, kept.output) == (
        "first", "failed", None, "é", None)
    assert kept.metadata == {"error": "x"}
    assert (untouched.id, untouched.score, untouched.output) == ("other", 1.0, {"a": 1})


def test_a_record_is_the_stored_columns_without_the_trailing_times() -> None:
    """The stores stamp a record by appending the two times (``stamped``): that holds only
    while the time columns are the last of the table's columns, in this order."""
    from scorecore.evals.store import RECORD_COLUMNS, SCORE_COLUMNS  # noqa: PLC0415

    times = SCORE_COLUMNS[len(RECORD_COLUMNS):]
    assert SCORE_COLUMNS[:len(RECORD_COLUMNS)] == RECORD_COLUMNS
    assert [c.kind for c in times] == ["time", "time"]
    assert all(c.kind != "time" for c in RECORD_COLUMNS)


async def test_sqlite_stamps_each_save_with_its_clocks_time(
    anyio_backend: str, tmp_path: Path
) -> None:
    """SQLite writes a save's time into its statement: both times are the clock's, as text; a
    later save of the pair moves updatedAt only, whichever way the rows are given."""
    later = datetime(2026, 3, 4, 5, 6, 7, 8, tzinfo=UTC)
    clock = [NOW]
    row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
                   score=0.5)
    path = tmp_path / "s.db"
    async with SqliteScoreStore(path, now=lambda: clock[0]) as store:
        await store.save_records(encode_rows([row]))
        await store.save([attrs.evolve(row, run_id="b:2", id="r2")])
        clock[0] = later
        await store.save_records(encode_rows([attrs.evolve(row, score=1.0)]))
        first, second = await store.list_run("b")
    assert [record[-2:] for record in _sqlite_table(path)] == [
        (NOW.isoformat(), later.isoformat()), (NOW.isoformat(), NOW.isoformat())]
    assert (first.score, first.created_at, first.updated_at) == (1.0, NOW, later)
    assert (second.created_at, second.updated_at) == (NOW, NOW)
