"""``read_dataset_file``: the format from the suffix, Parquet in batches, bad files named."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from scorecore.datasets import DatasetError
from scorecore_adapters.datasets import file_format, read_dataset_file


def test_the_format_comes_from_the_suffix_or_is_given(tmp_path: Path) -> None:
    assert [file_format(f"x{s}") for s in (".jsonl", ".NDJSON", ".csv", ".pq")] == [
        "jsonl", "jsonl", "csv", "parquet"]
    with pytest.raises(ValueError, match=r"x.txt: cannot tell the format from the suffix"):
        file_format("x.txt")
    with pytest.raises(ValueError, match="unknown dataset format 'xml'"):
        file_format("x.jsonl", "xml")
    path = tmp_path / "items.txt"
    path.write_text('{"id": "a", "input": 1}\n')
    assert [i.id for i in read_dataset_file(path, format="jsonl")] == ["a"]


def test_parquet_rows_are_items_read_in_batches(tmp_path: Path) -> None:
    """Nested columns stay nested, nulls are absent, and rows past one batch keep their
    numbers."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"id": f"r{i}", "input": {"q": i}, "output": None if i % 2 else "x",
             "extra.topic": "t"} for i in range(3000)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet", row_group_size=700)
    items = list(read_dataset_file(tmp_path / "d.parquet"))
    assert len(items) == 3000
    assert items[2999].line == 3000
    assert dict(items[1].fields) == {"input": {"q": 1}, "extra": {"topic": "t"}}
    assert dict(items[2].fields) == {"input": {"q": 2}, "output": "x", "extra": {"topic": "t"}}


def test_files_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"missing.jsonl: no such file"):
        list(read_dataset_file(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    pytest.importorskip("pyarrow")
    with pytest.raises(DatasetError, match=r"bad.parquet: not a Parquet file"):
        list(read_dataset_file(tmp_path / "bad.parquet"))


def test_a_file_is_streamed_not_held(tmp_path: Path) -> None:
    """Reading a 12 MB file allocates (at its peak) a small fraction of its size."""
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(12_000):
            handle.write(json.dumps({"id": f"i{i}", "input": "x" * 1000}) + "\n")
    tracemalloc.start()
    try:
        assert sum(1 for _ in read_dataset_file(path)) == 12_000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < path.stat().st_size / 20, (peak, path.stat().st_size)
