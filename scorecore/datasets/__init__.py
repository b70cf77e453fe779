"""Versioned datasets: items stored under a content-addressed version.

The same items (by id and content) always make the same version, so a batch that records its
dataset's version says exactly what data it ran on. This namespace is the pure part: reading
items from JSON lines, CSV and table rows (streamed, one item at a time), the version and item
digests, naming a version (``NAME@v3``), diffs, seeded stratified samples, and items made from
recorded agent traces. The store that keeps versions is
:class:`scorecore_adapters.storage.DatasetStore`; the files are opened by
:func:`scorecore_adapters.datasets.read_dataset_file`.

>>> from scorecore.datasets import DatasetDiff, read_jsonl, version_of
>>> old = list(read_jsonl(['{"id": "a", "input": 1}', '{"id": "b", "input": 2}'], source="v1"))
>>> new = list(read_jsonl(['{"id": "b", "input": 3}', '{"id": "c", "input": 4}'], source="v2"))
>>> (_, a), (_, b) = version_of(old, source="v1"), version_of(new, source="v2")
>>> DatasetDiff.of(sorted(a.items()), sorted(b.items()))
DatasetDiff(added=('c',), removed=('a',), changed=('b',), same=0)
"""

from scorecore.datasets._digest import item_digest, sorted_version_digest, version_digest
from scorecore.datasets._items import DatasetError, DatasetItem, IdRule
from scorecore.datasets._read import read_csv, read_jsonl, read_rows
from scorecore.datasets._sample import SampleSpec, sample_ids, split_ids, stratum_of
from scorecore.datasets._traces import items_from_traces
from scorecore.datasets._versions import (
    DatasetDiff,
    DatasetRef,
    DatasetSpec,
    DatasetVersion,
    version_of,
)

__all__ = [
    "DatasetDiff",
    "DatasetError",
    "DatasetItem",
    "DatasetRef",
    "DatasetSpec",
    "DatasetVersion",
    "IdRule",
    "SampleSpec",
    "item_digest",
    "items_from_traces",
    "read_csv",
    "read_jsonl",
    "read_rows",
    "sample_ids",
    "sorted_version_digest",
    "split_ids",
    "stratum_of",
    "version_digest",
    "version_of",
]
