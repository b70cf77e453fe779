"""The experiment ledger in the store: one record per batch, its items' digests, its end."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from scorecore import create_scorer
from scorecore.datasets import version_digest
from scorecore.evals import EvalItem, StoreError, run_evals
from scorecore_adapters.storage import (
    Experiment,
    ExperimentScorer,
    ExperimentStore,
    record_experiment,
)
from scorecore_adapters.storage._recording import items_digests
from tests.evals.persistence.test_storage import StepClock

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")


@pytest.fixture(params=["sqlite", "postgres"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A store URL and a ledger table of its own, in SQLite and in PostgreSQL (when
    SCORECORE_TEST_POSTGRES_DSN names a database: .ci/postgres.sh starts one)."""
    table = f"ledger_{uuid.uuid4().hex[:8]}"
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 's.db'}", table
        return
    if DSN is None:
        pytest.skip("SCORECORE_TEST_POSTGRES_DSN unset (start one with .ci/postgres.sh)")
    psycopg = pytest.importorskip("psycopg")
    yield DSN, table
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}", "{table}_items"')


def record(batch: str, version: str = "v1", **kw: object) -> Experiment:
    return Experiment(
        batch_id=batch, dataset={"name": "qa", "version": version, "number": 3},
        scorers=(ExperimentScorer(id="exact", fingerprint="f1",
                                  judges=({"step": "judge", "model": "m", "settings": {}},)),),
        git_commit="abc", git_dirty=True, command=("scorecore", "eval"), **kw)  # type: ignore[arg-type]


def test_a_batch_is_recorded_once_with_its_items_and_its_end(ledger: tuple[str, str]) -> None:
    """start stores everything said; a second start (a resume) changes nothing; finish sets
    the verdict and means; the items read back as id -> digest."""
    url, table = ledger

    async def go() -> tuple[bool, bool, list[Experiment], dict[str, str], Experiment | None]:
        async with ExperimentStore(url, table=table, now=StepClock()) as store:
            first = await store.start(record("b1"), items={"q1": "d1", "q2": "d2"})
            again = await store.start(record("b1", version="other"), items={"q9": "d9"})
            await store.finish("b1", verdict="passed", means={"exact": 0.75})
            return (first, again, await store.experiments(), await store.item_digests("b1"),
                    await store.experiment("nope"))

    first, again, found, items, missing = anyio.run(go)
    assert (first, again) == (True, False)
    (exp,) = found
    assert exp.dataset == {"name": "qa", "version": "v1", "number": 3}
    assert exp.scorers[0].fingerprint == "f1"
    assert exp.scorers[0].judges[0]["model"] == "m"
    assert (exp.git_commit, exp.git_dirty, exp.command) == ("abc", True, ("scorecore", "eval"))
    assert (exp.verdict, dict(exp.means)) == ("passed", {"exact": 0.75})
    assert exp.started_at is not None
    assert exp.finished_at is not None
    assert exp.finished_at > exp.started_at
    assert items == {"q1": "d1", "q2": "d2"}
    assert missing is None


def test_batches_list_oldest_first_and_filter_by_dataset(ledger: tuple[str, str]) -> None:
    """--dataset keeps a name, or a file's path for batches run on a file."""
    url, table = ledger

    async def go() -> tuple[list[str], list[str], list[str]]:
        async with ExperimentStore(url, table=table, now=StepClock()) as store:
            await store.start(record("b1"), items={})
            await store.start(Experiment(batch_id="f1", dataset={
                "name": None, "version": "x", "file": "data/items.jsonl"}), items={})
            await store.start(record("b2"), items={})
            every = [e.batch_id for e in await store.experiments()]
            named = [e.batch_id for e in await store.experiments(dataset="qa")]
            filed = [e.batch_id for e in await store.experiments(dataset="data/items.jsonl")]
            return every, named, filed

    assert anyio.run(go) == (["b1", "f1", "b2"], ["b1", "b2"], ["f1"])


def test_read_only_without_a_ledger_reads_empty_and_refuses_writes(tmp_path: Path) -> None:
    """An old store has no ledger: nothing listed; writing read-only is refused."""
    url = f"sqlite:{tmp_path / 's.db'}"

    async def make() -> None:
        async with ExperimentStore(url, table="other"):
            pass

    anyio.run(make)

    async def go() -> list[Experiment]:
        async with ExperimentStore(url, read_only=True) as store:
            found = await store.experiments()
            with pytest.raises(StoreError, match="read-only"):
                await store.start(record("b1"), items={})
            return found

    assert anyio.run(go) == []


def test_a_memory_store_has_no_ledger() -> None:
    """Nothing would outlive the process: refused by name."""
    with pytest.raises(ValueError, match="the ledger needs a score store's URL"):
        ExperimentStore("sqlite::memory:")


def test_an_unreachable_store_is_a_store_error(tmp_path: Path) -> None:
    """A missing directory: a StoreError naming the operation, never a traceback."""
    async def go() -> None:
        async with ExperimentStore(f"sqlite:{tmp_path / 'no' / 's.db'}"):
            pass

    with pytest.raises(StoreError, match="experiments open failed"):
        anyio.run(go)


def test_record_experiment_takes_eval_items_and_an_open_ledger(ledger: tuple[str, str],
                                                               tmp_path: Path) -> None:
    """EvalItem values are recorded as the same items in a data file would be (id-less ones
    by position); an open ExperimentStore is written in place; secrets leave the command."""
    url, table = ledger
    scorer = create_scorer(id="exact", description="d").generate_score(
        lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    items = [EvalItem(id="q1", input="a", output="b", ground_truth="b",
                      extra={"topic": "t"}), EvalItem(input="c", output="d")]
    as_lines = [{"id": "q1", "input": "a", "output": "b", "ground_truth": "b",
                 "extra": {"topic": "t"}}, {"input": "c", "output": "d"}]

    async def go() -> tuple[Experiment, dict[str, str]]:
        report = await run_evals(items, [scorer], batch_id="py")
        async with ExperimentStore(url, table=table) as store:
            recorded = await record_experiment(
                store, report, scorers=[scorer], items=items, cwd=tmp_path,
                command=["run.py", "--store", "postgresql://me:hunter2@db/x"])
            return recorded, await store.item_digests("py")

    recorded, digests = anyio.run(go)
    whole, cases = items_digests(as_lines)
    assert digests == cases
    assert set(cases) == {"q1", "#1"}
    assert recorded.dataset_version == version_digest(whole)
    assert recorded.command == ("run.py", "--store", "postgresql://me:[REDACTED]@db/x")
    assert (recorded.git_commit, recorded.verdict) == (None, "passed")
    assert recorded.fingerprints == {"exact": scorer.fingerprint}
