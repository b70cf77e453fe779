"""Batch safety: a stored batch id is never reused by accident, an unknown batch never resumed.

Checked at both levels: ``run_evals(store=..., batch_id=..., resume=...)`` raises
``EvalConfigError`` and the ``scorecore eval`` command exits 2 with one line, both before any
item runs or any row is written. ``ScoreStore.has_batch`` is the port query behind it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import Scorer, create_scorer
from scorecore.evals import EvalConfigError, ScoreRow, run_evals
from scorecore.evals.store import CompletedScore, ScoreStore
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import InMemoryScoreStore
from tests.cli_runs import run, stored_columns
from tests.evals.persistence.test_storage import KINDS, make_store, row

pytestmark = pytest.mark.anyio


def counting_scorer(calls: list[object]) -> Scorer[Any, Any]:
    def step(ctx: Any) -> float:
        calls.append(ctx.run.input)
        return 1.0

    return create_scorer(id="s", description="d").generate_score(step)


async def stored(store: ScoreStore, batch_id: str) -> list[tuple[str, str, Any]]:
    return sorted((r.run_id, r.status, r.input) for r in await store.list_run(batch_id))


@pytest.mark.parametrize("kind", [*KINDS, "memory"])
async def test_reusing_a_stored_batch_id_is_refused_before_writing(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """A second dataset under a stored batch id raises EvalConfigError; nothing runs or changes."""
    calls: list[object] = []
    async with _store(kind, tmp_path) as store:
        await run_evals([{"input": "a", "output": "a", "id": "1"}], [counting_scorer(calls)],
                        store=store, batch_id="b")
        assert calls == ["a"]
        before = await stored(store, "b")
        calls.clear()
        with pytest.raises(EvalConfigError, match="batch 'b' already has rows") as info:
            await run_evals([{"input": "other", "output": "o", "id": "1"},
                             {"input": "x", "output": "x", "id": "2"}],
                            [counting_scorer(calls)], store=store, batch_id="b")
        assert info.value.field == "batch_id"
        assert calls == []
        assert await stored(store, "b") == before


@pytest.mark.parametrize("kind", [*KINDS, "memory"])
async def test_resuming_an_unknown_batch_is_refused_before_writing(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """resume=True for a batch the store does not hold raises; no item runs, no row is saved."""
    calls: list[object] = []
    async with _store(kind, tmp_path) as store:
        await store.save([row("other:1", batch_id="other")])
        with pytest.raises(EvalConfigError, match="cannot resume batch 'nope'") as info:
            await run_evals([{"input": "a", "output": "a"}], [counting_scorer(calls)],
                            store=store, batch_id="nope", resume=True)
        assert info.value.field == "resume"
        assert calls == []
        assert await store.list_run("nope") == []


@pytest.mark.parametrize("kind", [*KINDS, "memory"])
async def test_has_batch_sees_rows_of_any_status(
    anyio_backend: str, kind: str, tmp_path: Path
) -> None:
    """has_batch is true for a batch holding only failed rows, false for an absent one."""
    async with _store(kind, tmp_path) as store:
        await store.save([row("f:1", status="failed", score=None, batch_id="f")])
        assert await store.has_batch("f") is True
        assert await store.has_batch("g") is False
        assert await store.has_batch("") is False


@given(saved=st.sets(st.text(min_size=1, max_size=20), max_size=4),
       probe=st.text(min_size=1, max_size=20))
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_has_batch_law_sqlite(backend: str, saved: set[str], probe: str) -> None:
    """has_batch(b) is exactly "some row was saved with batch id b", for any Unicode id."""

    async def check() -> None:
        async with SqliteScoreStore(":memory:") as store:
            await store.save([row(f"{b}:1", batch_id=b) for b in saved])
            for batch_id in (*saved, probe):
                assert await store.has_batch(batch_id) is (batch_id in saved)

    anyio.run(check, backend=backend)


async def test_resume_of_a_stored_batch_still_works(anyio_backend: str) -> None:
    """The guard lets resume=True continue a stored batch (a batch with only failures too)."""
    store = InMemoryScoreStore()
    broken = True

    def step(ctx: Any) -> float:
        if broken:
            raise RuntimeError("down")
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(step)
    first = await run_evals([{"input": 1, "output": 1}], [scorer], store=store, batch_id="b")
    assert first.summary("s").failed == 1
    broken = False
    second = await run_evals([{"input": 1, "output": 1}], [scorer], store=store, batch_id="b",
                             resume=True)
    assert second.summary("s").scored == 1


async def test_a_generated_batch_id_needs_no_check(anyio_backend: str) -> None:
    """Without batch_id the fresh id is used as before (the store is asked nothing)."""
    class NoQuery:
        """The memory store, except that has_batch must not be asked."""

        def __init__(self) -> None:
            self.inner = InMemoryScoreStore()

        async def save(self, rows: Sequence[ScoreRow], /) -> None:
            await self.inner.save(rows)

        async def completed(self, batch_id: str, /) -> Mapping[tuple[str, str], CompletedScore]:
            return await self.inner.completed(batch_id)

        async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
            return await self.inner.list_run(batch_id)

        async def has_batch(self, batch_id: str, /) -> bool:
            raise AssertionError("has_batch must not be asked for a generated id")

    store = NoQuery()
    report = await run_evals([{"input": 1, "output": 1}], [counting_scorer([])], store=store)
    assert len(await store.list_run(report.batch_id)) == 1


# --------------------------------------------------------------------------- command line

SCORERS = '''
from scorecore import create_scorer

one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
'''


def table(db: Path) -> list[tuple[Any, ...]]:
    return stored_columns(db, "batchId", "runId", "status", "input", "updatedAt")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    first = tmp_path / "first.jsonl"
    first.write_text('{"input": "a", "output": "a", "id": "1"}\n')
    second = tmp_path / "second.jsonl"
    second.write_text('{"input": "b", "output": "b", "id": "1"}\n'
                      '{"input": "c", "output": "c", "id": "2"}\n')
    return scorers, first, second


def refused_after_batch_b(files: tuple[Path, Path, Path], db: Path, data: Path, *flags: str) -> str:
    """The error ``scorecore eval --data data *flags`` prints once batch ``b`` is stored in
    ``db``, having checked that it exits 2, prints nothing else and leaves every row as it was."""
    scorers, first, _ = files
    assert run("eval", str(scorers), "--data", str(first), "--store", f"sqlite:{db}",
               "--batch-id", "b")[0] == 0
    before = table(db)
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store", f"sqlite:{db}",
                         *flags)
    assert (code, out) == (2, "")
    assert table(db) == before
    return err


def test_cli_batch_id_of_a_stored_batch_exits_two_and_writes_nothing(
    tmp_path: Path, files: tuple[Path, Path, Path]
) -> None:
    """--batch-id of a stored batch without --resume: one line naming --resume, exit 2."""
    db = tmp_path / "x.db"
    assert refused_after_batch_b(files, db, files[2], "--batch-id", "b") == (
        f"scorecore: error: batch 'b' already has rows in sqlite:{db}; continue it "
        f"with --resume b, or choose another --batch-id\n")


def test_cli_resume_of_an_unknown_batch_exits_two_and_writes_nothing(
    tmp_path: Path, files: tuple[Path, Path, Path]
) -> None:
    """--resume of a batch the store lacks: one line, exit 2, rows of other batches untouched."""
    db = tmp_path / "x.db"
    assert refused_after_batch_b(files, db, files[1], "--resume", "my batch") == (
        f"scorecore: error: cannot resume batch 'my batch': sqlite:{db} holds no "
        f"rows for it (start it with --batch-id 'my batch')\n")


def test_cli_resume_does_not_create_a_missing_store(
    tmp_path: Path, files: tuple[Path, Path, Path]
) -> None:
    """--resume against a SQLite file that does not exist says so and creates no file."""
    scorers, first, _ = files
    db = tmp_path / "absent.db"
    code, _, err = run("eval", str(scorers), "--data", str(first), "--store", f"sqlite:{db}",
                       "--resume", "b")
    assert code == 2
    assert err == f"scorecore: error: store sqlite:{db} does not exist\n"
    assert not db.exists()


@pytest.mark.parametrize(("bad", "says"), [
    *[(bad, "must be a non-empty printable id") for bad in ["", "a\nb", "tab\there", "\udcff"]],
    *[(bad, "must not contain ':' or '/'") for bad in ["nightly:v2", "b/trial-1"]],
])
def test_cli_batch_id_is_printable_and_has_no_run_id_separators(
    tmp_path: Path, files: tuple[Path, Path, Path], bad: str, says: str
) -> None:
    """An empty, control-character or undecodable (surrogate) --batch-id, or one with ':' or
    '/' (it could take another batch's run ids), is a usage error of one line."""
    scorers, first, _ = files
    code, _, err = run("eval", str(scorers), "--data", str(first), "--store",
                       f"sqlite:{tmp_path / 'x.db'}", "--batch-id", bad)
    assert code == 2
    assert err.startswith(f"scorecore: error: --batch-id {says}")
    assert err.count("\n") == 1


def _store(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemoryScoreStore()
    return make_store(kind, tmp_path)
