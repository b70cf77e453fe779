"""Killed actors, killed drivers and crashing items: exactly one row per (item, scorer)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from scorecore.evals import EvalReport, ScoreRow, run_evals
from scorecore_adapters.ray import items_dataset, score_dataset
from scorecore_adapters.storage import open_store
from tests.adapters.ray import _scorers
from tests.adapters.ray.conftest import RAY_WARNINGS, ROOT

SCORERS = "tests.adapters.ray._scorers:make"

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]


def _expected(items: list[Any], batch_id: str) -> EvalReport:
    return anyio.run(lambda: run_evals(items, _scorers.make(), batch_id=batch_id))


def _rows(url: str, batch_id: str) -> list[ScoreRow]:
    async def read() -> list[ScoreRow]:
        async with open_store(url) as store:
            return list(await store.list_run(batch_id))

    return anyio.run(read)


def _same(report: EvalReport, expected: EvalReport) -> None:
    assert attrs.evolve(report, duration=0.0) == attrs.evolve(expected, duration=0.0)


def _one_row_per_pair(rows: list[ScoreRow], items: list[Any]) -> None:
    pairs = [(r.run_id, r.scorer_id) for r in rows]
    assert len(pairs) == len(set(pairs))
    # every item but the repeated id has its three rows
    assert len(pairs) == (len(items) - 1) * 3


def test_a_killed_actor_is_replaced_and_nothing_is_lost_or_doubled(
    tmp_path: Path, batch_id: str
) -> None:
    """ray.kill on the scoring actor mid-batch: Ray restarts it, the batch runs again."""
    items = _scorers.items(200)
    items[150] = {"input": _scorers.KILL_ONCE, "output": "z", "id": "kill",
                  "extra": {"marker": str(tmp_path / "killed")}}
    url = f"sqlite:{tmp_path}/s.db"
    result = score_dataset(items_dataset(items), SCORERS, store_url=url, batch_id=batch_id,
                           batch_size=50)
    assert (tmp_path / "killed").exists()  # the actor did kill itself
    _same(result.report, _expected(items, batch_id))
    _one_row_per_pair(_rows(url, batch_id), items)


def test_an_item_that_crashes_its_worker_is_a_failed_row(tmp_path: Path, batch_id: str) -> None:
    """An item ending its actor's process every time fails alone; the job completes."""
    items = _scorers.items(60)
    items[10] = {"input": _scorers.CRASH, "output": "z", "id": "crash"}
    url = f"sqlite:{tmp_path}/s.db"
    result = score_dataset(items_dataset(items), SCORERS, store_url=url, batch_id=batch_id,
                           batch_size=8)
    by_item = {(r["item_id"], r["scorer_id"]): r for r in result.rows.take_all()}
    crashed = by_item[("crash", "length")]
    assert crashed["status"] == "failed"
    assert "its worker died while scoring it" in crashed["item_error"]
    rows = _rows(url, batch_id)
    _one_row_per_pair(rows, items)
    # every other item is scored exactly as in-process
    expected = _expected([i for i in items if i.get("id") != "crash"], batch_id)
    others = result.report.summary("exact")
    assert (others.scored, others.mean) == (expected.summary("exact").scored,
                                            expected.summary("exact").mean)
    assert [r.status for r in rows if r.dataset_item_id == "crash"] == ["failed"] * 3


_DRIVER = """
import os, sys
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
import ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
from scorecore_adapters.ray import items_dataset, score_dataset
from tests.adapters.ray import _scorers
score_dataset(items_dataset(_scorers.items(int(sys.argv[4]))), "tests.adapters.ray._scorers:slow",
              store_url=sys.argv[2], batch_id=sys.argv[3], concurrency=2, batch_size=16)
"""


def test_a_killed_driver_resumes_to_exactly_one_row_per_pair(
    ray_cluster: str, pg_url: str, batch_id: str
) -> None:
    """SIGKILL the driver mid-run, resume from another: one row per pair, run_evals's report."""
    items = _scorers.items(400)
    driver = subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", _DRIVER, ray_cluster, pg_url, batch_id, "400"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_rows(pg_url, batch_id)) < 100:
            assert driver.poll() is None, "the driver ended before it could be killed"
            assert time.monotonic() < deadline, "no rows stored in 120 s"
            time.sleep(0.05)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    stored = len(_rows(pg_url, batch_id))
    assert 100 <= stored < (len(items) - 1) * 3  # killed mid-run
    result = score_dataset(items_dataset(items), "tests.adapters.ray._scorers:slow",
                           store_url=pg_url, batch_id=batch_id, resume=True, concurrency=2,
                           batch_size=16)
    _same(result.report, _expected(items, batch_id))
    assert sum(r["resumed"] for r in result.rows.take_all()) >= 100
    _one_row_per_pair(_rows(pg_url, batch_id), items)
