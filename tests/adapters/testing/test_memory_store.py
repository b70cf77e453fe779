"""InMemoryScoreStore is interchangeable with the SQLite store, operation for operation.

The shared contract tests (tests/evals/persistence/test_storage.py, parametrised over every
store) pin each rule on an example; the law here checks the whole class: after any sequence
of saves, every query of the memory store (list_batches included) answers exactly what
SQLite's answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import ScorerDefinitionError, create_scorer
from scorecore.evals import ScoreRow, StoreError, compare, run_evals
from scorecore.evals.store import BatchSummary, row_id
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.strategies import json_values
from scorecore_adapters.testing import InMemoryScoreStore
from tests.evals.persistence.test_storage import StepClock


@st.composite
def rows(draw: st.DrawFn) -> ScoreRow:
    # Batches "b" and "c" are queried one by one; "Z", "é" and "" also test list_batches'
    # order (by first write, then batch id in code point order).
    run_id = draw(st.sampled_from(["b:1", "b:2", "b:3", "c:1", "Z:1", "é:1", ":1"]))
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
    """Same saves, same clock: list_run, completed and has_batch agree for every batch, and
    list_batches lists the same batches, in the same order, with the same counts and times."""
    async def answers(store: Any) -> tuple[list[Any], list[BatchSummary]]:
        async with store:
            for batch in saves:
                await store.save(batch)
            return [(await store.list_run(b), await store.completed(b), await store.has_batch(b))
                    for b in ("b", "c", "d")], await store.list_batches()

    memory, m_batches = anyio.run(answers, InMemoryScoreStore(now=StepClock()))
    sqlite, s_batches = anyio.run(answers, SqliteScoreStore(":memory:", now=StepClock()))
    assert m_batches == s_batches
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


def test_compare_reads_the_memory_stores_rows_as_sqlites() -> None:
    """Two batches run into the memory store compare exactly as the same batches in SQLite."""
    def judged(threshold: float) -> Any:
        return create_scorer(id="len", description="d").generate_score(
            lambda c: 1.0 if len(str(c.run.output)) > threshold else 0.0)

    async def comparison(store: Any) -> Any:
        data = [{"id": str(i), "input": "q", "output": "a" * i} for i in range(12)]
        async with store:
            await run_evals(data, [judged(2)], store=store, batch_id="base")
            await run_evals(data, [judged(8)], store=store, batch_id="new")
            batches = [b.batch_id for b in await store.list_batches()]
            return batches, compare(await store.list_run("base"), await store.list_run("new"))

    memory = anyio.run(comparison, InMemoryScoreStore(now=StepClock()))
    sqlite = anyio.run(comparison, SqliteScoreStore(":memory:", now=StepClock()))
    assert memory == sqlite
    batches, result = memory
    assert batches == ["base", "new"]
    (scorer,) = result.scorers
    assert (scorer.scorer_id, scorer.paired) == ("len", 12)
    assert scorer.mean_delta == pytest.approx(-6 / 12)
    assert result.regressed
