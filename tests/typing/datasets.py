"""Checked by ``mypy --strict``, never executed: the types of the datasets API."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import assert_type

from scorecore.datasets import (
    DatasetDiff,
    DatasetItem,
    DatasetRef,
    DatasetSpec,
    DatasetVersion,
    SampleSpec,
    read_jsonl,
    sample_ids,
    split_ids,
)
from scorecore_adapters.datasets import read_dataset_file
from scorecore_adapters.storage import DatasetStore

items = read_jsonl([b'{"id": "a", "input": 1}'], source="d.jsonl")
assert_type(items, Iterator[DatasetItem])
assert_type(read_dataset_file("d.csv", ids="position"), Iterator[DatasetItem])
read_dataset_file("d.csv", ids="line")  # type: ignore[arg-type]

assert_type(DatasetSpec.parse("qa@v3").number, int | None)
ref = DatasetRef(name="qa", version="0" * 64, number=3, sample=SampleSpec(size=10))
assert_type(ref.sample, SampleSpec | None)
assert_type(sample_ids([("a", "x")], SampleSpec(size=1)), frozenset[str])
assert_type(split_ids([("a", "x")], {"train": 1.0}), dict[str, frozenset[str]])


async def stored(store: DatasetStore) -> None:
    version = await store.add(items, name="qa")
    assert_type(version, DatasetVersion)
    assert_type(await store.get("qa@v1"), DatasetVersion)
    assert_type(await store.item_digests(version.ref), Mapping[str, str])
    assert_type(await store.diff(version, "0" * 64), DatasetDiff)
    assert_type(store.items(version), AsyncIterator[DatasetItem])
    await store.add(items, name=3)  # type: ignore[arg-type]
