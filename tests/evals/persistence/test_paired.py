"""The stores pair two batches themselves: the comparison they stream is compare()'s of the rows."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore.evals import Comparison, ScoreRow, compare
from scorecore.evals.store import PairedComparison, StoredRowError, row_id
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.storage import _postgres as postgres_store
from scorecore_adapters.storage import _sqlite as sqlite_store
from tests.evals.persistence.test_storage import KINDS, make_store

pytestmark = pytest.mark.anyio

# Ids whose code point order differs from other orders (case, accents, astral characters).
ITEMS = ["a", "B", "b", "é", "z", "😀", "#1", "a:b", "10", "9"]
SCORERS = ["s", "t", "ü"]


def _row(batch: str, scorer: str, item: str, *, trial: int | None, status: str,
         score: float | None, with_item_id: bool, fingerprint: str | None) -> ScoreRow:
    run_id = f"{batch}:{item}" if trial is None else f"{batch}/trial-{trial}:{item}"
    return ScoreRow(
        id=row_id(run_id, scorer), scorer_id=scorer, run_id=run_id, batch_id=batch,
        status=status,  # type: ignore[arg-type]
        score=score if status == "scored" else None,
        dataset_item_id=item if with_item_id else None,
        scorer={"id": scorer} if fingerprint is None else {"id": scorer,
                                                          "fingerprint": fingerprint},
    )


@st.composite
def batches(draw: st.DrawFn, batch: str) -> list[ScoreRow]:
    """A batch's rows: some scorers, some items, one to three trials, every status."""
    rows: list[ScoreRow] = []
    with_ids = draw(st.booleans())
    for scorer in draw(st.lists(st.sampled_from(SCORERS), min_size=1, unique=True)):
        fingerprint = draw(st.sampled_from([None, "f1", "f2"]))
        for item in draw(st.lists(st.sampled_from(ITEMS), unique=True, min_size=1, max_size=8)):
            trials = draw(st.integers(1, 3))
            rows.extend(_row(
                batch, scorer, item, trial=None if trials == 1 else trial + 1,
                status=draw(st.sampled_from(["scored", "scored", "not_scorable", "failed"])),
                score=draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.3, 1e308, -1e300])),
                with_item_id=with_ids, fingerprint=fingerprint) for trial in range(trials))
    return rows


async def stored_comparison(store: Any, base: str, new: str, **options: Any) -> Comparison:
    """The comparison built from what the store pairs (as ``scorecore compare`` builds it)."""
    building = PairedComparison(
        base_batch=base, new_batch=new, base_scorers=await store.batch_scorers(base),
        new_scorers=await store.batch_scorers(new),
        only_in_base=await store.items_only_in(base, new),
        only_in_new=await store.items_only_in(new, base), **options)
    async with aclosing(store.paired_scores(base, new)) as pages:
        async for pairs in pages:
            building.add(pairs)
    return building.result()


def _expected(base: list[ScoreRow], new: list[ScoreRow], **options: Any) -> Comparison | str:
    try:
        return compare(base, new, resamples=50, **options)
    except ValueError as exc:  # a change beyond the largest float
        return str(exc)


async def _paired(store: Any, base: str, new: str, **options: Any) -> Comparison | str:
    try:
        return await stored_comparison(store, base, new, resamples=50, **options)
    except ValueError as exc:
        return str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=batches("A"), new=batches("B"), min_paired=st.integers(1, 3))
def test_sqlite_pairs_as_compare_does(
    base: list[ScoreRow], new: list[ScoreRow], min_paired: int
) -> None:
    """Any two batches (trials, rows without item ids, statuses, scorers and items in one
    batch only, changed fingerprints, ids in code point order): the comparison the store pairs
    is compare()'s of the rows, down to the interval and the most regressed items."""

    async def run() -> Comparison | str:
        async with SqliteScoreStore(":memory:") as store:
            await store.save([*base, *new])
            return await _paired(store, "A", "B", min_paired=min_paired)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite_store, "PAGE", 3)  # an item's rows across pages
        assert anyio.run(run) == _expected(base, new, min_paired=min_paired)


def _fixed_batches() -> tuple[list[ScoreRow], list[ScoreRow]]:
    base: list[ScoreRow] = []
    new: list[ScoreRow] = []
    for i, item in enumerate(ITEMS * 3):
        key = f"{item}-{i}"
        base.append(_row("A", "s", key, trial=None, status="scored", score=(i % 4) / 4,
                         with_item_id=True, fingerprint="f1"))
        new.extend(_row("B", "s", key, trial=trial, status="scored" if i % 5 else "failed",
                        score=((i + trial) % 3) / 3, with_item_id=False, fingerprint="f2")
                   for trial in (1, 2))
    new.append(_row("B", "t", "only-new", trial=None, status="scored", score=1.0,
                    with_item_id=True, fingerprint=None))
    return base, new


@pytest.mark.parametrize("kind", KINDS)
async def test_each_store_pairs_as_compare_does(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite and PostgreSQL: trials, run ids without item ids, a changed fingerprint, a scorer
    and an item in one batch only, pages of 4 records; the same comparison as compare() of the
    rows."""
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    monkeypatch.setattr(postgres_store, "PAGE", 4)
    base, new = _fixed_batches()
    async with make_store(kind, tmp_path) as store:
        await store.save([*base, *new])
        paired = await stored_comparison(store, "A", "B", resamples=50)
        same = await stored_comparison(store, "A", "A", resamples=50)
    assert paired == compare(base, new, resamples=50)
    assert paired.changed_scorers == ("s",)
    assert paired.only_in_new == ("only-new",)
    assert same == compare(base, base, resamples=50)


@pytest.mark.parametrize("kind", KINDS)
async def test_items_whose_content_changed_are_left_unpaired_as_compare_does(
    kind: str, tmp_path: Path
) -> None:
    """With each batch's item digests (the ledger's), an item whose content changed is not
    paired, an effect judges the power: the comparison compare() gives."""
    base, new = _fixed_batches()
    ids = sorted({r.dataset_item_id or r.run_id.split(":", 1)[1] for r in base})
    base_items = dict.fromkeys(ids, "same")
    new_items = {**base_items, ids[0]: "changed", ids[3]: "changed", "only-new": "new"}
    options: dict[str, Any] = {"resamples": 50, "effect": 0.3, "base_items": base_items,
                               "new_items": new_items}
    async with make_store(kind, tmp_path) as store:
        await store.save([*base, *new])
        paired = await stored_comparison(store, "A", "B", **options)
    expected = compare(base, new, **options)
    assert paired == expected
    assert expected.items is not None
    assert expected.items.changed == (ids[0], ids[3])


@pytest.mark.parametrize("kind", KINDS)
async def test_pages_are_list_run_in_pieces(kind: str, tmp_path: Path) -> None:
    """pages() yields list_run's rows, in its order."""
    base, new = _fixed_batches()
    async with make_store(kind, tmp_path) as store:
        await store.save([*base, *new])
        async with aclosing(store.pages("B")) as pages:
            paged = [row async for page in pages for row in page]
        assert paged == await store.list_run("B")


async def test_an_unreadable_score_is_named(tmp_path: Path) -> None:
    """A score another writer broke: the pairing names its row, as list_run does."""
    import sqlite3  # noqa: PLC0415 - only to break a row

    base, new = _fixed_batches()
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        await store.save([*base, *new])
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE scorecore_scores SET score = 'high' WHERE id = ?", (base[3].id,))
    conn.close()
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        with pytest.raises(StoredRowError) as raised:
            await stored_comparison(store, "A", "B")
    assert (raised.value.row_id, raised.value.column, raised.value.value) == (
        base[3].id, "score", "high")
