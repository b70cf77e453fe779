"""Laws of the labels table: the latest label of each run wins, nothing is lost, any storable
text round-trips; and what neither store can keep is refused naming the field."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.evals import StoreError
from scorecore_adapters.view import DEFAULT_LABELS_TABLE, Label, LabelStore

# Text both stores keep: no NUL, no lone surrogate.
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
               min_size=1, max_size=30)
VALUES = st.one_of(st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                   st.integers(-(2**53), 2**53), TEXT)
LABELS = st.lists(st.builds(
    Label, batch_id=st.sampled_from(["b1", "b2"]), item_id=st.sampled_from(["i1", "i2", "i3"]),
    scorer_id=st.none() | st.sampled_from(["s1", "s2"]), value=VALUES, note=st.none() | TEXT,
    reviewer=st.none() | TEXT,
    queued=st.lists(TEXT.filter(lambda t: "," not in t), max_size=2).map(tuple),
), max_size=12)


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(LABELS, min_size=1, max_size=3))
def test_the_latest_label_of_each_run_wins_and_history_keeps_all(
    batches: list[list[Label]],
) -> None:
    """After saves in any grouping: current() is the last label given per (batch, item,
    scorer), in the order given; history() holds every label of an item."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:{Path(folder) / 's.db'}"

        async def run() -> tuple[list[Label], list[Label]]:
            async with LabelStore(url) as store:
                for labels in batches:
                    await store.add(labels)
                return await store.current(), await store.history("b1", "i1")

        current, history = anyio.run(run)
    given_order = [lb for labels in batches for lb in labels]
    latest: dict[tuple[str, str, str | None], Label] = {}
    for label in given_order:
        latest.pop((label.batch_id, label.item_id, label.scorer_id), None)
        latest[(label.batch_id, label.item_id, label.scorer_id)] = label

    def core(label: Label) -> tuple[object, ...]:
        return (label.batch_id, label.item_id, label.scorer_id, label.value,
                type(label.value), label.note, label.reviewer, label.queued)

    assert [core(lb) for lb in current] == [core(lb) for lb in latest.values()]
    assert [core(lb) for lb in history] == [
        core(lb) for lb in given_order if (lb.batch_id, lb.item_id) == ("b1", "i1")]


@pytest.mark.parametrize(("field", "value"), [
    ("note", "a\x00b"), ("reviewer", "\ud800"), ("item_id", ""), ("scorer_id", ""),
    ("value", "x\x00"), ("queued", ("near,threshold",)),
])
def test_text_no_store_keeps_is_refused_naming_the_field(field: str, value: object) -> None:
    """NUL, a lone surrogate, an empty id or a reason with a comma: a ValueError naming the
    field, before anything is written."""
    fields: dict[str, object] = {"batch_id": "b", "item_id": "i", "value": True, field: value}
    with pytest.raises(ValueError, match=field):
        Label(**fields)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_labels_on_both_backends(tmp_path: Path) -> None:
    """The store's calls run in worker threads: the same on asyncio and trio."""
    async with LabelStore(f"sqlite:{tmp_path / 's.db'}") as store:
        (stored,) = await store.add([Label(batch_id="b", item_id="i", value=0.25)])
        assert stored.id is not None
        assert [lb.value for lb in await store.current(batch_id="b")] == [0.25]


def test_a_read_only_store_without_a_labels_table_reads_as_empty(tmp_path: Path) -> None:
    """A score store nobody labelled yet: read-only, no labels, and adding one is refused."""
    path = tmp_path / "s.db"
    path.touch()

    async def run() -> list[Label]:
        async with LabelStore(f"sqlite:{path}", read_only=True) as store:
            with pytest.raises(StoreError, match="read-only"):
                await store.add([Label(batch_id="b", item_id="i", value=True)])
            return await store.current()

    assert anyio.run(run) == []


@pytest.mark.anyio
async def test_query_and_define_run_on_the_label_store_s_connection(tmp_path: Path) -> None:
    """define runs idempotent statements (not when read-only); query returns records, and a
    failing statement is a StoreError naming the operation."""
    url = f"sqlite:{tmp_path / 's.db'}"
    made = f"CREATE INDEX IF NOT EXISTS lb_note ON {DEFAULT_LABELS_TABLE} (note)"
    async with LabelStore(url) as store:
        assert await store.define([made, made])
        await store.add([Label(batch_id="b", item_id="i", value=True, note="n")])
        assert await store.query("count", f"SELECT COUNT(*), MIN(note) FROM "  # noqa: S608
                                          f"{DEFAULT_LABELS_TABLE} WHERE note = ?", ["n"]) == [
            (1, "n")]
        with pytest.raises(StoreError, match=r"labels view\.bad failed"):
            await store.query("view.bad", "SELECT nothing FROM nowhere")
    async with LabelStore(url, read_only=True) as store:
        assert not await store.define([made])
        found = await store.query("indexes", "SELECT name FROM sqlite_master WHERE name = ?",
                                  ["lb_note"])
        assert found == [("lb_note",)]
