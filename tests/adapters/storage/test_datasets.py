"""The dataset store: versions by content, names and numbers, whole-or-nothing adds, diffs.

Checked against SQLite, and PostgreSQL when SCORECORE_TEST_POSTGRES_DSN is set (tables with a
prefix of their own per test, dropped after).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore.datasets import DatasetError, DatasetItem, DatasetVersion, version_digest
from scorecore.evals import StoreError
from scorecore_adapters.storage import DatasetLookupError, DatasetStore
from scorecore_adapters.storage import _datasets as datasets_store

pytestmark = pytest.mark.anyio

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(
        DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")),
]


def _drop(prefix: str) -> None:
    import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as conn:
        for table in ("datasets", "dataset_versions", "dataset_items", "dataset_sources"):
            conn.execute(f'DROP TABLE IF EXISTS "{prefix}_{table}"')  # type: ignore[arg-type]


@asynccontextmanager
async def make_store(kind: str, tmp_path: Path, *, read_only: bool = False,
                     prefix: str | None = None) -> AsyncIterator[DatasetStore]:
    if kind == "sqlite":
        async with DatasetStore(f"sqlite:{tmp_path / 'scores.db'}",
                                read_only=read_only) as store:
            yield store
        return
    assert DSN is not None
    own = prefix is None
    prefix = prefix or f"t{uuid.uuid4().hex[:10]}"
    try:
        async with DatasetStore(DSN, prefix=prefix, read_only=read_only) as store:
            yield store
    finally:
        if own:
            _drop(prefix)


def items(*pairs: tuple[str, str]) -> list[DatasetItem]:
    return [DatasetItem(id=i, fields={"input": v}, line=n) for n, (i, v) in
            enumerate(pairs, start=1)]


@pytest.mark.parametrize("kind", KINDS)
async def test_the_same_content_is_the_same_version(kind: str, tmp_path: Path,
                                                    anyio_backend: str) -> None:
    """Adding the same items again (in another order) returns the version already stored,
    under its number; other content is the next number; the digest is the content's."""
    async with make_store(kind, tmp_path) as store:
        first = await store.add(items(("a", "1"), ("b", "2")), name="qa")
        again = await store.add(list(reversed(items(("a", "1"), ("b", "2")))), name="qa")
        second = await store.add(items(("a", "1"), ("b", "3")), name="qa")
        assert again == first
        assert (first.ref.number, second.ref.number) == (1, 2)
        assert first.items == 2
        expected = version_digest({i.id: i.digest for i in items(("a", "1"), ("b", "2"))})
        assert first.ref.version == expected
        assert [v.ref.number for v in await store.list("qa")] == [1, 2]


@pytest.mark.parametrize("kind", KINDS)
async def test_versions_are_found_by_name_number_and_prefix(kind: str, tmp_path: Path,
                                                            anyio_backend: str) -> None:
    """``NAME`` is the last added, ``NAME@v1`` the first, ``NAME@<prefix>`` by hash; re-adding
    old content makes it the latest again; unknown names and numbers are lookup errors."""
    async with make_store(kind, tmp_path) as store:
        one = await store.add(items(("a", "1")), name="qa")
        two = await store.add(items(("a", "2")), name="qa")
        assert await store.get("qa") == two
        assert await store.get("qa@v1") == one
        assert await store.get(f"qa@{one.ref.version[:8]}") == one
        assert (await store.add(items(("a", "1")), name="qa")).ref.number == 1
        assert (await store.get("qa")).ref.number == 1
        with pytest.raises(DatasetLookupError, match=r"qa has v1, v2"):
            await store.get("qa@v9")
        with pytest.raises(DatasetLookupError, match="no dataset named 'other'"):
            await store.get("other")


@pytest.mark.parametrize("kind", KINDS)
async def test_items_stream_back_in_id_order_with_their_digests(kind: str, tmp_path: Path,
                                                                anyio_backend: str) -> None:
    """A version's items come back whole (fields, line) and its digests by id, past one
    page."""
    stored = [DatasetItem(id=f"q{i:05d}", fields={"input": i, "extra": {"k": [i]}}, line=i + 1)
              for i in range(2500)]
    async with make_store(kind, tmp_path) as store:
        version = await store.add(reversed(stored), name="big")
        back = [item async for item in store.items(version)]
        assert back == stored
        assert [i.line for i in back] == [i.line for i in stored]
        assert await store.item_digests(version.ref) == {i.id: i.digest for i in stored}


@pytest.mark.parametrize("kind", KINDS)
async def test_diff_names_added_removed_and_changed_ids(kind: str, tmp_path: Path,
                                                        anyio_backend: str) -> None:
    """An item whose content changed under the same id is a change, not the same item."""
    async with make_store(kind, tmp_path) as store:
        old = await store.add(items(("a", "1"), ("b", "2"), ("c", "3")), name="qa")
        new = await store.add(items(("b", "2"), ("c", "x"), ("d", "4")), name="qa")
        diff = await store.diff(old, new)
        assert (diff.added, diff.removed, diff.changed, diff.same) == (("d",), ("a",), ("c",), 1)


def _failing(after: int) -> Iterator[DatasetItem]:
    for i in range(after):
        yield DatasetItem(id=f"i{i}", fields={"input": i}, line=i + 1)
    raise DatasetError("not JSON", source="f.jsonl", line=after + 1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("after", [3, 2500])
async def test_an_error_mid_way_stores_nothing(kind: str, tmp_path: Path, after: int,
                                               anyio_backend: str) -> None:
    """A file failing at line N (within the first chunk, or after chunks were written) leaves
    no version, no item and no name behind."""
    async with make_store(kind, tmp_path) as store:
        with pytest.raises(DatasetError, match=rf"f.jsonl:{after + 1}: not JSON"):
            await store.add(_failing(after), name="qa")
        assert await store.list() == []
        version = await store.add(items(("a", "1")), name="qa")
        assert version.ref.number == 1
        conn = store._conn  # what is left in the tables, read directly
        count = conn.execute(f'SELECT COUNT(*) FROM "{store._items}"').fetchone()[0]  # noqa: S608
        versions = conn.execute(
            f'SELECT COUNT(*) FROM "{store._versions}"').fetchone()[0]  # noqa: S608
        assert (count, versions) == (1, 1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("first", [1, 1500])
async def test_a_repeated_id_is_refused_naming_both_lines(kind: str, tmp_path: Path,
                                                          first: int,
                                                          anyio_backend: str) -> None:
    """A duplicate id in the same chunk or in a later one: both lines named, nothing stored."""
    stored = [DatasetItem(id=f"i{i}", fields={"input": i}, line=i) for i in range(1, 2000)]
    stored.append(DatasetItem(id=f"i{first}", fields={"input": "again"}, line=2000))
    async with make_store(kind, tmp_path) as store:
        with pytest.raises(DatasetError) as raised:
            await store.add(stored, name="qa", source="d.jsonl")
        assert str(raised.value) == f"d.jsonl:2000: field 'id': duplicate id 'i{first}', " \
                                    f"first at line {first}"
        assert await store.list() == []


@pytest.mark.parametrize("kind", KINDS)
async def test_unnamed_versions_are_found_by_digest_only(kind: str, tmp_path: Path,
                                                         anyio_backend: str) -> None:
    """A version added without a name is listed under no name, found by its digest, and
    naming it later gives it v1."""
    async with make_store(kind, tmp_path) as store:
        unnamed = await store.add(items(("a", "1")))
        assert unnamed.ref.name is None
        assert unnamed.ref.number is None
        assert await store.list() == []
        assert await store.find(unnamed.ref.version) == unnamed
        named = await store.add(items(("a", "1")), name="qa")
        assert (named.ref.version, named.ref.number) == (unnamed.ref.version, 1)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_read_only_store_without_tables_holds_no_dataset(
        kind: str, tmp_path: Path, anyio_backend: str) -> None:
    """Read-only, nothing is created: no datasets, a clear lookup error, adding refused."""
    if kind == "sqlite":
        (tmp_path / "scores.db").touch()
    async with make_store(kind, tmp_path, read_only=True,
                          prefix=None if kind == "sqlite" else "absent_datasets") as store:
        assert await store.list() == []
        with pytest.raises(DatasetLookupError):
            await store.get("qa")
        with pytest.raises(StoreError, match="read-only"):
            await store.add(items(("a", "1")), name="qa")


# -- concurrent adds: two stores (two connections), each add in its own worker thread ----------

WAIT = 10.0
"""Seconds a gate waits for the other add before giving up (only reached when the adds do not
run side by side)."""


def _gated(stored: list[DatasetItem], gate: threading.Barrier, *,
           fail: bool = False) -> Iterator[DatasetItem]:
    """``stored``, meeting the other add at ``gate`` after the last item: both adds have read
    their whole file before either may finish, so their transactions overlap whatever the
    thread scheduling. With ``fail``, a bad line follows the gate."""
    yield from stored
    with contextlib.suppress(threading.BrokenBarrierError):
        gate.wait(WAIT)
    if fail:
        raise DatasetError("not JSON", source="late.jsonl", line=len(stored) + 1)


def _many(tag: str, count: int = 2500) -> list[DatasetItem]:
    return [DatasetItem(id=f"i{i:05d}", fields={"input": f"{tag}{i}"}, line=i + 1)
            for i in range(count)]


def _counts(store: DatasetStore) -> tuple[int, int, int]:
    """Items, versions and names in the tables, read directly."""
    conn = store._conn
    one, two, three = (conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]  # noqa: S608
                       for table in (store._items, store._versions, store._names))
    return one, two, three


@asynccontextmanager
async def two_stores(kind: str, tmp_path: Path) -> AsyncIterator[tuple[DatasetStore,
                                                                         DatasetStore]]:
    async with make_store(kind, tmp_path) as one:
        prefix = None if kind == "sqlite" else one._names.removesuffix("_datasets")
        async with make_store(kind, tmp_path, prefix=prefix) as two:
            yield one, two


@pytest.mark.parametrize("kind", KINDS)
async def test_concurrent_adds_of_the_same_content_store_it_once(kind: str, tmp_path: Path,
                                                                 anyio_backend: str) -> None:
    """Two connections adding the same items under one name at once both get the same
    version, v1, stored once; neither waits for the other to read its file."""
    gate = threading.Barrier(2)
    found: dict[int, DatasetVersion] = {}
    async with two_stores(kind, tmp_path) as (one, two):

        async def add(index: int, store: DatasetStore) -> None:
            found[index] = await store.add(_gated(_many("a"), gate), name="qa")

        async with anyio.create_task_group() as group:
            group.start_soon(add, 0, one)
            group.start_soon(add, 1, two)
        assert not gate.broken  # both files were read side by side
        assert found[0] == found[1]
        assert (found[0].ref.number, found[0].items) == (1, 2500)
        assert _counts(one) == (2500, 1, 1)


@pytest.mark.parametrize("kind", KINDS)
async def test_concurrent_adds_of_different_content_get_the_next_numbers(
        kind: str, tmp_path: Path, anyio_backend: str) -> None:
    """Two connections adding different items under one name at once: two whole versions,
    v1 and v2 (one each), every item of each stored."""
    gate = threading.Barrier(2)
    contents = {0: _many("a"), 1: _many("b")}
    found: dict[int, DatasetVersion] = {}
    async with two_stores(kind, tmp_path) as (one, two):

        async def add(index: int, store: DatasetStore) -> None:
            found[index] = await store.add(_gated(contents[index], gate), name="qa")

        async with anyio.create_task_group() as group:
            group.start_soon(add, 0, one)
            group.start_soon(add, 1, two)
        assert not gate.broken
        assert sorted(v.ref.number or 0 for v in found.values()) == [1, 2]
        assert [v.ref.number for v in await one.list("qa")] == [1, 2]
        for index, version in found.items():
            assert [item async for item in two.items(version)] == contents[index]
        assert _counts(one) == (5000, 2, 2)


@pytest.mark.parametrize("kind", KINDS)
async def test_an_add_failing_late_leaves_nothing_while_another_succeeds(
        kind: str, tmp_path: Path, anyio_backend: str) -> None:
    """An add whose last line is bad, running beside a good add under the same name, stores
    nothing; the good add is stored whole, as v1."""
    gate = threading.Barrier(2)
    async with two_stores(kind, tmp_path) as (one, two):
        good: list[DatasetVersion] = []

        async def add_good() -> None:
            good.append(await one.add(_gated(_many("a"), gate), name="qa"))

        async def add_bad() -> None:
            with pytest.raises(DatasetError, match=r"late\.jsonl:2501: not JSON"):
                await two.add(_gated(_many("b"), gate, fail=True), name="qa")

        async with anyio.create_task_group() as group:
            group.start_soon(add_good)
            group.start_soon(add_bad)
        assert not gate.broken
        assert [v.ref.number for v in await two.list()] == [1]
        assert good[0].items == 2500
        assert _counts(two) == (2500, 1, 1)


def _unread() -> Iterator[DatasetItem]:
    raise AssertionError("items read although their source is known")
    yield  # pragma: no cover - a generator


@pytest.mark.parametrize("kind", KINDS)
async def test_a_known_source_key_returns_its_version_without_reading(
        kind: str, tmp_path: Path, anyio_backend: str) -> None:
    """An add under a source key an earlier add recorded returns that version (named, the
    name's latest again) without reading the items; an unknown key reads them."""
    async with make_store(kind, tmp_path) as store:
        first = await store.add(items(("a", "1")), name="qa", source_key="k1")
        other = await store.add(items(("a", "2")), name="qa", source_key="k2")
        assert await store.add(_unread(), name="qa", source_key="k1") == first
        assert await store.get("qa") == first
        assert (await store.add(_unread(), name="copy", source_key="k2")).ref == \
            attrs.evolve(other.ref, name="copy", number=1)
        assert await store.add(items(("a", "1")), source_key="k3") == attrs.evolve(
            first, ref=attrs.evolve(first.ref, name=None, number=None))
        assert await store.add(_unread(), source_key="k3") == attrs.evolve(
            first, ref=attrs.evolve(first.ref, name=None, number=None))


_IDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1, max_size=6)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(_IDS, min_size=1, max_size=40, unique=True), data=st.data())
def test_a_version_is_its_content_in_any_order(
    kind: str, monkeypatch: pytest.MonkeyPatch, ids: list[str], data: st.DataObject,
) -> None:
    """Items in id order, in another order, or in order but for one: the same version, its
    digest the content's, over chunks of 3 items (ids of any code points)."""
    monkeypatch.setattr(datasets_store, "CHUNK", 3)
    stored = [DatasetItem(id=i, fields={"input": n}, line=n + 1) for n, i in enumerate(ids)]
    in_order = sorted(stored, key=lambda item: item.id)
    orders = [in_order, data.draw(st.permutations(stored)), in_order[1:] + in_order[:1]]
    expected = version_digest({i.id: i.digest for i in stored})

    async def add_all(folder: Path) -> list[DatasetVersion]:
        async with make_store(kind, folder) as store:
            return [await store.add(order) for order in orders]

    with tempfile.TemporaryDirectory() as tmp:
        found = anyio.run(add_all, Path(tmp))
    assert [v.ref.version for v in found] == [expected] * 3
    assert found[0].items == len(ids)
