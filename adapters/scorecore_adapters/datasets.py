"""Dataset files read from disk (JSON lines, CSV, Parquet), streamed, and the store of versions.

:func:`read_dataset_file` opens a file and yields its items one at a time through the readers
of :mod:`scorecore.datasets`, so a file of any size is read in flat memory; hand them to
:meth:`DatasetStore.add <scorecore_adapters.storage.DatasetStore.add>` to store a version.

>>> import anyio, os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "qa.csv")
>>> with open(path, "w") as handle:
...     _ = handle.write("id,input,ground_truth,extra.topic\\nq1,2+2?,4,math\\n")
>>> async def demo() -> str:
...     async with DatasetStore("sqlite:" + os.path.join(folder, "s.db")) as store:
...         version = await store.add(read_dataset_file(path), name="qa", source=path)
...         return f"{version.ref.name}@v{version.ref.number}: {version.items} item(s)"
>>> anyio.run(demo)
'qa@v1: 1 item(s)'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from scorecore.datasets import DatasetError, DatasetItem, IdRule, read_csv, read_jsonl, read_rows
from scorecore_adapters.storage._datasets import DatasetLookupError, DatasetStore

__all__ = ["FORMATS", "DatasetLookupError", "DatasetStore", "FileFormat", "file_format",
           "read_dataset_file"]

FileFormat: TypeAlias = Literal["jsonl", "csv", "parquet"]
"""The dataset files read: JSON lines, CSV with a header, Parquet."""

FORMATS: Final[tuple[FileFormat, ...]] = ("jsonl", "csv", "parquet")
_SUFFIXES: Final[dict[str, FileFormat]] = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
    ".parquet": "parquet", ".pq": "parquet",
}
PARQUET_BATCH: Final = 1024
"""Rows a Parquet file is read in at a time (memory holds one batch)."""


def shown(path: str | os.PathLike[str]) -> str:
    """A path as messages show it (undecodable bytes replaced)."""
    return os.fsencode(path).decode("utf-8", "replace")


def file_format(path: str | os.PathLike[str], given: str | None = None) -> FileFormat:
    """The format a file is read in: ``given``, else its suffix (``.jsonl`` / ``.ndjson`` /
    ``.json``, ``.csv``, ``.parquet`` / ``.pq``).

    Raises:
        ValueError: an unknown format or suffix, naming the file.

    >>> file_format("data/qa.csv"), file_format("x.txt", "jsonl")
    ('csv', 'jsonl')
    """
    if given is not None:
        if given not in FORMATS:
            raise ValueError(f"unknown dataset format {given!r}; use one of {', '.join(FORMATS)}")
        return given
    found = _SUFFIXES.get(Path(path).suffix.lower())
    if found is None:
        raise ValueError(f"{shown(path)}: cannot tell the format from the suffix; give "
                         f"--format {'|'.join(FORMATS)}")
    return found


def _lines(path: Path) -> Iterator[bytes]:
    # binary: a line that is not UTF-8 is named by the reader instead of replaced
    with path.open("rb") as handle:
        yield from handle


def _parquet_rows(path: Path, source: str) -> Iterator[dict[str, object]]:
    try:
        # optional (the datasets extra); pyarrow ships no type hints, so it is read as Any
        pq: Any = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise DatasetError("reading Parquet needs pyarrow: pip install 'scorecore[datasets]'",
                           source=source) from None
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DatasetError(f"not a Parquet file ({exc})", source=source) from None
    with parquet:
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH):
            yield from batch.to_pylist()


def read_dataset_file(path: str | os.PathLike[str], *, format: str | None = None,
                      ids: IdRule = "required") -> Iterator[DatasetItem]:
    """The items of a dataset file, streamed (see :func:`scorecore.datasets.read_jsonl`,
    :func:`~scorecore.datasets.read_csv` and :func:`~scorecore.datasets.read_rows`).

    Args:
        path: the file.
        format: ``"jsonl"``, ``"csv"`` or ``"parquet"``; default: from the suffix.
        ids: what an item without an ``id`` gets (``"required"``: an error naming the line).

    Raises:
        ValueError: the format cannot be told.
        DatasetError: the file cannot be read, or a line or row cannot be an item (naming
            the file, the line or row, and the field).
    """
    kind = file_format(path, format)
    source = shown(path)
    file = Path(path)
    if not file.is_file():
        raise DatasetError("no such file", source=source)
    if kind == "jsonl":
        return read_jsonl(_lines(file), source=source, ids=ids)
    if kind == "csv":
        return read_csv(_lines(file), source=source, ids=ids)
    return read_rows(_parquet_rows(file, source), source=source, ids=ids)
