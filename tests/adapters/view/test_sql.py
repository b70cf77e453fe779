"""The batch page's SQL against the same filter, sort and paging over the rows in memory: any
batch, any filter, the same page (SQLite always, PostgreSQL when a test database is given)."""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore.evals import ScoreRow
from scorecore.evals.store import row_item_id
from scorecore_adapters.storage import open_store
from scorecore_adapters.view import (
    LabelStore,
    RunFilter,
    candidate_of,
    entries_of,
    page_of,
    scale_of,
)
from scorecore_adapters.view._runs import SORTS, row_cost
from scorecore_adapters.view._sql import BatchReader
from tests.adapters.view.stores import store_with

_BATCHES = itertools.count()
# ASCII only: SQLite's LIKE folds the case of ASCII letters only; % and _ must match as text
_TEXT = st.text(alphabet="abAB %_\\1", max_size=5)
_KINDS = st.sampled_from(["empty_output", "low_confidence", "judge network"])


@st.composite
def _rows(draw: st.DrawFn, batch_id: str) -> list[ScoreRow]:
    made = []
    for i in range(draw(st.integers(1, 14))):
        item = draw(st.sampled_from([f"it-{i}", f"It_{i}%"]))
        with_id = draw(st.booleans())
        for scorer in draw(st.lists(st.sampled_from(["judge", "exact", "Zed"]), min_size=1,
                                    max_size=3, unique=True)):
            status = draw(st.sampled_from(["scored", "scored", "not_scorable", "failed"]))
            metadata: dict[str, Any] = {"itemIndex": i}
            if status == "not_scorable":
                metadata["notScorable"] = {"kind": draw(_KINDS), "message": "m"}
            elif status == "failed":
                metadata["cause"] = {"kind": draw(_KINDS), "message": "m"}
            elif draw(st.booleans()):
                metadata["judge"] = {"analyze": {"executions": [
                    {"costUsd": draw(st.sampled_from([0.25, 0.5, 1]))}]}}
            made.append(ScoreRow(
                id=f"{batch_id}/{i}/{scorer}", scorer_id=scorer, run_id=f"{batch_id}:{item}",
                batch_id=batch_id, dataset_item_id=item if with_id else None, status=status,
                score=draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])) if status == "scored"
                else None,
                reason=draw(st.none() | _TEXT), input=draw(_TEXT),
                output={"text": draw(_TEXT)}, metadata=metadata))
    return made


_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "scorer": st.sampled_from(["judge", "exact", "Zed"]),
    "status": st.sampled_from(["scored", "not_scorable", "failed"]),
    "cause": _KINDS | st.just("error"), "min_score": st.sampled_from([0.0, 0.25, 0.6]),
    "max_score": st.sampled_from([0.25, 0.5, 1.0]),
    "text": st.text(alphabet="abA %_\\1", min_size=1, max_size=2),
}


@st.composite
def _filters(draw: st.DrawFn) -> RunFilter:
    # at most two filters at once: more would leave most pages empty
    fields = draw(st.lists(st.sampled_from(sorted(_FIELDS)), max_size=2, unique=True))
    return RunFilter(sort=draw(st.sampled_from(SORTS)), page=draw(st.integers(1, 4)),
                     **{f: draw(_FIELDS[f]) for f in fields})


def _stores() -> list[str]:
    found = ["sqlite"]
    if os.environ.get("SCORECORE_TEST_POSTGRES_DSN"):
        found.append("postgres")
    return found


@pytest.fixture(scope="module", params=_stores())
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "postgres":
        return os.environ["SCORECORE_TEST_POSTGRES_DSN"]
    return store_with(tmp_path_factory.mktemp("sql") / "s.db")


def _read(url: str, batch_id: str, chosen: RunFilter, size: int) -> tuple[Any, ...]:
    async def read() -> tuple[Any, ...]:
        async with open_store(url, read_only=True) as store:
            stored = await store.list_run(batch_id)
        async with LabelStore(url) as labels:
            reader = BatchReader(labels)
            await reader.prepare()
            page = await reader.page(batch_id, chosen, size=size)
            facets = await reader.facets(batch_id)
            cost = await reader.cost(batch_id)
            candidates = await reader.candidates(batch_id)
            items = sorted({row_item_id(r) for r in stored})
            per_item = {item: await reader.item_rows(batch_id, [item]) for item in items[:3]}
        return stored, page, facets, cost, candidates, per_item

    return anyio.run(read)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), chosen=_filters(), size=st.integers(1, 7))
def test_the_sql_page_is_the_page_over_the_rows_in_memory(
    url: str, data: st.DataObject, chosen: RunFilter, size: int
) -> None:
    """Same runs, same order, same count and pages; facets, cost, scales, the queue's
    candidates and an item's rows as the rows in memory give them."""
    batch_id = f"sql-{os.getpid()}-{next(_BATCHES)}"
    rows = data.draw(_rows(batch_id))
    if rows:
        store_with(Path(url.removeprefix("sqlite:")) if url.startswith("sqlite:") else url,
                   rows)
    stored, page, facets, cost, candidates, per_item = _read(url, batch_id, chosen, size)
    expected = page_of(entries_of(stored), chosen, size=size)
    assert [(e.item_id, e.scorer_id) for e in page.entries] == [
        (e.item_id, e.scorer_id) for e in expected.entries]
    assert (page.total, page.page, page.pages) == (expected.total, expected.page,
                                                   expected.pages)
    entries = entries_of(stored)
    assert facets.scorers == tuple(sorted({e.scorer_id for e in entries}))
    assert facets.causes == tuple(sorted({e.cause_kind for e in entries if e.cause_kind}))
    for scorer in facets.scorers:
        scores = [r.score for r in stored if r.scorer_id == scorer and r.score is not None]
        assert facets.scales[scorer] == scale_of(scores)
    assert math.isclose(cost, sum(row_cost(r) for r in stored))
    assert candidates == [candidate_of(r) for r in stored
                          if r.status in ("scored", "not_scorable")]
    for item, found in per_item.items():
        assert sorted(r.id for r in found) == sorted(
            r.id for r in stored if row_item_id(r) == item)
