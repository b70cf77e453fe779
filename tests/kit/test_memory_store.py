"""InMemoryScoreStore is interchangeable with the SQLite store, operation for operation.

The shared contract tests (tests/evals/test_storage.py, parametrised over every store) pin
each rule on an example; the law here checks the whole class: after any sequence of saves,
every query of the memory store answers exactly what SQLite's answers.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import ScorerDefinitionError
from scorecore.evals import ScoreRow, StoreError, row_id
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.strategies import json_values
from scorecore_adapters.testing import InMemoryScoreStore


class StepClock:
    """A wall clock that moves one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@st.composite
def rows(draw: st.DrawFn) -> ScoreRow:
    run_id = draw(st.sampled_from(["b:1", "b:2", "b:3", "c:1"]))
    scorer_id = draw(st.sampled_from(["s", "t"]))
    status: Any = draw(st.sampled_from(["scored", "not_scorable", "failed"]))
    index = draw(st.none() | st.integers(0, 3))
    return ScoreRow(
        id=row_id(run_id, scorer_id), scorer_id=scorer_id, run_id=run_id,
        batch_id=run_id.split(":")[0], status=status,
        score=draw(st.floats(0, 1)) if status == "scored" else None,
        reason=draw(st.none() | st.text(max_size=8)),
        input=draw(json_values(max_leaves=4)), output=draw(json_values(max_leaves=4)),
        metadata=None if index is None else {"itemIndex": index},
    )


@settings(max_examples=25, deadline=None)
@given(saves=st.lists(st.lists(rows(), max_size=4), max_size=4))
def test_memory_store_answers_as_sqlite_does(saves: list[list[ScoreRow]]) -> None:
    """Same saves, same clock: list_run, completed and has_batch agree for every batch."""
    async def answers(store: Any) -> list[Any]:
        async with store:
            for batch in saves:
                await store.save(batch)
            return [(await store.list_run(b), await store.completed(b), await store.has_batch(b))
                    for b in ("b", "c", "d")]

    memory = anyio.run(answers, InMemoryScoreStore(now=StepClock()))
    sqlite = anyio.run(answers, SqliteScoreStore(":memory:", now=StepClock()))
    for (m_rows, m_done, m_has), (s_rows, s_done, s_has) in zip(memory, sqlite, strict=True):
        assert m_has == s_has
        assert m_done == s_done
        # SQLite puts rows without a dataset position first, PostgreSQL last: only the order
        # of positioned rows is part of the contract.
        assert sorted(m_rows, key=repr) == sorted(s_rows, key=repr)
        assert _positioned(m_rows) == _positioned(s_rows)


def _positioned(rows: list[ScoreRow]) -> list[tuple[str, str]]:
    """The rows with a dataset position (metadata may hold only sanitizer notes)."""
    return [(r.run_id, r.scorer_id) for r in rows if r.metadata and "itemIndex" in r.metadata]


def test_rows_writes_and_the_snapshot() -> None:
    """rows maps (run id, scorer id) to the row and cannot be changed; writes lists every
    write; a failed save changes neither."""
    store = InMemoryScoreStore()
    row = ScoreRow(id="x", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
                   score=1.0, input={"q": [1, 2]})
    anyio.run(store.save, [row])
    anyio.run(store.save, [row])
    snapshot = store.rows
    assert snapshot[("b:1", "s")].input == {"q": [1, 2]}
    with pytest.raises(TypeError):
        snapshot[("b:2", "s")] = row  # type: ignore[index]
    assert store.writes == (("b:1", "s"), ("b:1", "s"))
    bad = ScoreRow(id="y", scorer_id="s", run_id="b:\ud800", batch_id="b", status="scored")
    with pytest.raises(StoreError, match=r"store memory: save failed: ScoreRow\.run_id"):
        anyio.run(store.save, [ScoreRow(id="z", scorer_id="s", run_id="b:2", batch_id="b",
                                        status="scored"), bad])
    assert (len(store.rows), len(store.writes), store.saves) == (1, 2, 2)


def test_stored_rows_do_not_share_the_callers_data() -> None:
    """Changing a value after saving it leaves the stored row as it was saved."""
    data: dict[str, Any] = {"q": [1]}
    store = InMemoryScoreStore()
    anyio.run(store.save, [ScoreRow(id="x", scorer_id="s", run_id="b:1", batch_id="b",
                                    status="scored", input=data)])
    data["q"].append(2)
    assert store.rows[("b:1", "s")].input == {"q": [1]}


def test_now_must_be_callable() -> None:
    """A clock that is not callable is refused when the store is built."""
    with pytest.raises(ScorerDefinitionError, match=r"InMemoryScoreStore\.now must be callable"):
        InMemoryScoreStore(now=datetime(2025, 1, 1))  # type: ignore[arg-type]
