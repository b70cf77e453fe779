"""score_dataset with a judge cache and pricing: a shared PostgreSQL cache across workers and
runs, run_evals's economics and stored cost telemetry, and the SQLite-cache rule."""

from __future__ import annotations

import functools
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore.evals import EvalConfigError, EvalReport, run_evals
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.ray import items_dataset, score_dataset
from scorecore_adapters.storage import open_store
from tests.adapters.ray import _judged
from tests.adapters.ray.conftest import RAY_WARNINGS
from tests.adapters.ray.test_score_dataset import _comparable, _rows

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]


def _factory(log: Path) -> Any:
    return functools.partial(_judged.scorers, str(log))


def test_a_shared_postgres_cache_answers_the_second_run(tmp_path: Path, pg_url: str,
                                                        batch_id: str) -> None:
    """Two workers share the PostgreSQL cache: the second run over the same items asks no
    judge, and its report counts every judge reply as a hit, with what it saved."""
    log = tmp_path / "calls.log"
    items = _judged.items(40, uuid.uuid4().hex)
    first = score_dataset(items_dataset(items), _factory(log), store_url=pg_url,
                          batch_id=batch_id, concurrency=2, batch_size=8, cache_url=pg_url,
                          pricing=_judged.PRICING)
    asked = _judged.calls(str(log))
    assert 40 <= asked <= 42  # each answer once (a repeat may race its first in another actor)
    economics = first.report.economics
    assert economics is not None
    assert (economics.cache_misses, economics.cache_hits) == (asked, 42 - asked)
    assert economics.cost_usd is not None
    assert economics.cost_usd > 0

    second = score_dataset(items_dataset(items), _factory(log), store_url=pg_url,
                           batch_id=f"{batch_id}-again", concurrency=2, batch_size=8,
                           cache_url=pg_url, pricing=_judged.PRICING)
    assert _judged.calls(str(log)) == asked  # no judge call at all
    again = second.report.economics
    assert again is not None
    assert (again.cache_hits, again.cache_misses, again.cost_usd) == (42, 0, 0.0)
    assert again.saved_usd == pytest.approx(economics.cost_usd + economics.saved_usd)
    assert [s.mean for s in second.report.scorers] == [s.mean for s in first.report.scorers]
    assert second.rows.sum("cache_hits") == 42


def _run_evals(items: list[Any], log: Path, url: str, batch_id: str,
               **options: Any) -> EvalReport:
    async def run() -> EvalReport:
        async with open_store(url) as store:
            try:
                return await run_evals(items, _judged.scorers(str(log)), store=store,
                                       batch_id=batch_id, **options)
            finally:
                close = getattr(options.get("cache"), "aclose", None)  # the caller's to close
                if close is not None:
                    await close()

    return anyio.run(run)


def test_pricing_and_a_sqlite_cache_give_run_evals_economics_and_rows(tmp_path: Path) -> None:
    """One local worker with a SQLite cache and prices: the report's economics and the stored
    rows (each judge execution's usage: nothing spent on a cache hit) are run_evals's, to the last
    digit; the result rows say which pairs the cache answered and what that saved."""
    items = _judged.items(30, "same")
    local = _run_evals(items, tmp_path / "local.log", f"sqlite:{tmp_path}/local.db", "b",
                       cache=SqliteJudgeCache(tmp_path / "local-cache.db"),
                       pricing=_judged.PRICING)
    ray = score_dataset(items_dataset(items), _factory(tmp_path / "ray.log"),
                        store_url=f"sqlite:{tmp_path}/ray.db", batch_id="b", batch_size=7,
                        cache_url=f"sqlite:{tmp_path}/ray-cache.db", pricing=_judged.PRICING)
    assert local.economics is not None
    assert local.economics.cache_hits == 2  # the two repeated answers
    assert ray.report.economics == local.economics
    assert ray.report.scorers == local.scorers
    assert _judged.calls(str(tmp_path / "ray.log")) == _judged.calls(str(tmp_path / "local.log"))
    ray_rows = [_comparable(r) for r in _rows(f"sqlite:{tmp_path}/ray.db", "b")]
    local_rows = [_comparable(r) for r in _rows(f"sqlite:{tmp_path}/local.db", "b")]
    assert ray_rows == local_rows
    hits = [r for r in ray.rows.take_all() if r["cache_hits"]]
    assert [(r["item_id"], r["cost_usd"], r["model_calls"]) for r in hits] == [
        ("again0", 0.0, 0), ("again1", 0.0, 0)]
    assert all(r["saved_usd"] > 0 for r in hits)


def test_pricing_without_a_cache_gives_run_evals_economics(tmp_path: Path) -> None:
    """Prices alone: every call is charged, and the per-scorer and total costs are
    run_evals's; the result rows carry each pair's cost."""
    items = _judged.items(25, "priced")
    local = _run_evals(items, tmp_path / "local.log", f"sqlite:{tmp_path}/local.db", "p",
                       pricing=_judged.PRICING)
    ray = score_dataset(items_dataset(items), _factory(tmp_path / "ray.log"),
                        store_url=f"sqlite:{tmp_path}/ray.db", batch_id="p", batch_size=6,
                        pricing=_judged.PRICING)
    assert ray.report.economics == local.economics
    assert local.economics is not None
    assert local.economics.cache_misses == 0
    graded = local.economics.scorers[0]
    assert graded.model_calls == 27
    assert ray.rows.sum("cost_usd") == pytest.approx(graded.cost_usd)


def test_no_cache_nor_pricing_gives_no_economics(tmp_path: Path) -> None:
    """Without a cache or prices the report has no economics part, as run_evals's."""
    items = _judged.items(3, "plain")
    ray = score_dataset(items_dataset(items), _factory(tmp_path / "ray.log"),
                        store_url=f"sqlite:{tmp_path}/ray.db", batch_id="n")
    assert ray.report.economics is None


@pytest.mark.parametrize("cache", ["sqlite:{tmp}/cache.db", "memory:"])
def test_a_local_cache_with_several_workers_is_refused(tmp_path: Path, pg_url: str,
                                                       batch_id: str, cache: str) -> None:
    """A SQLite (or in-memory) cache is not shared by two actors: refused before any item is
    scored, naming cache_url and the fix."""
    url = cache.format(tmp=tmp_path)
    with pytest.raises(EvalConfigError, match="cache_url") as caught:
        score_dataset(items_dataset(_judged.items(3, "x")), _factory(tmp_path / "log"),
                      store_url=pg_url, batch_id=batch_id, concurrency=2, cache_url=url)
    assert caught.value.field == "cache_url"
    assert url in str(caught.value)
    assert "postgresql://" in str(caught.value)
    assert not (tmp_path / "log").exists()


@pytest.mark.parametrize(
    ("cache_url", "message"),
    [("mysql://db", "unknown cache URL"), (42, "cache_url must be a str"),
     ("postgresql://nobody@127.0.0.1:1/none", "cannot be opened")],
)
def test_a_bad_cache_url_is_refused_before_scoring(tmp_path: Path, cache_url: Any,
                                                   message: str) -> None:
    """A cache URL of no known kind, not a str, or one that cannot be reached: refused."""
    with pytest.raises(EvalConfigError, match=message):
        score_dataset(items_dataset(_judged.items(2, "x")), _factory(tmp_path / "log"),
                      store_url=f"sqlite:{tmp_path}/s.db", batch_id="b", cache_url=cache_url)
    assert not (tmp_path / "log").exists()


def test_an_empty_dataset_with_pricing_gives_run_evals_economics(tmp_path: Path) -> None:
    """No items, prices given: the economics part is there, all zero, as run_evals's."""
    local = _run_evals([], tmp_path / "log", f"sqlite:{tmp_path}/local.db", "e",
                       pricing=_judged.PRICING)
    ray = score_dataset(items_dataset([]), _factory(tmp_path / "log"),
                        store_url=f"sqlite:{tmp_path}/ray.db", batch_id="e",
                        pricing=_judged.PRICING)
    assert local.economics is not None
    assert ray.report.economics == local.economics
