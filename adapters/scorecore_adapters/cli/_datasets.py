"""``scorecore datasets add|list|show|diff|from-traces``, and what ``eval`` runs on.

A dataset file is read through :mod:`scorecore.datasets` (streamed; the first bad line is one
error naming the file, the line and the field) and stored by
:class:`~scorecore_adapters.storage.DatasetStore` in one transaction. ``eval --dataset
NAME[@V]`` reads a stored version; ``eval --data FILE`` reads the file as before and records
its content as an unnamed version, so every batch says what it ran on (:class:`DataSource`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, TextIO, TypeVar, final

import anyio
import attrs
from returns.result import Failure

from scorecore.datasets import (
    DatasetError,
    DatasetItem,
    DatasetRef,
    DatasetSpec,
    DatasetVersion,
    SampleSpec,
    items_from_traces,
    read_jsonl,
    sample_ids,
    split_ids,
    stratum_of,
    version_digest,
    version_of,
)
from scorecore.evals import EvalItem, InvalidItem, ItemLike, StoreError
from scorecore.evals.engine import item_from_mapping
from scorecore.traces import Trace, TraceError
from scorecore_adapters.cli._common import (
    EXIT_PASSED,
    UsageError,
    clip,
    open_url,
    print_json,
    print_table,
    printable,
)
from scorecore_adapters.cli._trace_files import OtlpTraceReader
from scorecore_adapters.datasets import file_format, read_dataset_file, shown
from scorecore_adapters.storage import DatasetLookupError, DatasetStore
from scorecore_adapters.storage._recording import stored_cases

SHOWN_IDS: Final = 20
"""How many ids of each kind ``datasets diff`` prints (``--json`` lists them all)."""

_T = TypeVar("_T")


def _run_store(url: str, work: Callable[[DatasetStore], Any], *,
               read_only: bool = False) -> Any:
    """``work(store)`` on the store's datasets; a store, lookup or data problem is a usage
    error (one line)."""
    if read_only:
        open_url(url, must_exist=True)  # a missing SQLite file: the message every command gives
    else:
        open_url(url)

    async def go() -> Any:
        async with DatasetStore(url, read_only=read_only) as store:
            return await work(store)

    try:
        return anyio.run(go)
    except (StoreError, DatasetError, DatasetLookupError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def version_json(version: DatasetVersion) -> dict[str, Any]:
    """A stored version as JSON (``datasets list --json`` and the others)."""
    return {**version.ref.to_json(), "items": version.items,
            "createdAt": None if version.created_at is None else
            version.created_at.isoformat()}


def _named(version: DatasetVersion) -> str:
    ref = version.ref
    return f"{ref.name}@v{ref.number} ({ref.version[:12]})" if ref.name else str(ref)


def checked(items: Iterable[DatasetItem], source: str) -> Iterator[DatasetItem]:
    """``items``, each checked to be one ``eval`` can run (a field it does not know is an
    error naming the line, before anything is stored)."""
    for item in items:
        try:
            item_from_mapping({**item.fields, "id": item.id})
        except ValueError as exc:
            raise DatasetError(str(exc), source=source, line=item.line) from None
        yield item


def _add_items(args: argparse.Namespace, out: TextIO, items: Iterable[DatasetItem],
               source: str, *, source_key: str | None = None) -> int:
    name = _name(args.name)

    async def work(store: DatasetStore) -> tuple[DatasetVersion, bool]:
        held = {v.ref.version for v in await store.list(name)}
        version = await store.add(checked(items, source), name=name, source=source,
                                  source_key=source_key)
        return version, version.ref.version in held

    version, already = _run_store(args.store, work)
    if args.json:
        print_json({**version_json(version), "stored": not already}, out)
    elif already:
        print(f"already stored: {_named(version)}, {version.items} item(s); {source} holds "
              f"the same content", file=out)
    else:
        print(f"stored {_named(version)}: {version.items} item(s) from {source} in "
              f"{open_url(args.store).url}", file=out)
    return EXIT_PASSED


def _name(text: str) -> str:
    try:
        spec = DatasetSpec.parse(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if spec.number is not None or spec.prefix is not None:
        raise UsageError(f"NAME is a dataset's name, without @: got {text!r}")
    return spec.name


READING: Final = "scorecore datasets add, reading 1"
"""Part of every file's source key: change it whenever reading a file may give other items
than before, so that no key recorded earlier is found again."""


def _source_key(path: Path, kind: str) -> tuple[str, os.stat_result]:
    """A digest of the file's bytes and of how they are read (the format, ids required),
    taken in one pass before the items are read, and the file's state it was taken of."""
    state = path.stat()
    digest = hashlib.sha256(f"{READING}\0{kind}\0required\0".encode())
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest(), state


def _unchanged(items: Iterable[DatasetItem], path: Path, state: os.stat_result,
               source: str) -> Iterator[DatasetItem]:
    """``items``, refused at their end if the file changed since its key was taken (its key
    would then name other items than the ones stored)."""
    yield from items
    now = path.stat()
    if (now.st_size, now.st_mtime_ns) != (state.st_size, state.st_mtime_ns):
        raise DatasetError("the file changed while it was being added; add it again",
                           source=source)


def _add(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err
    path = Path(args.file)
    source = shown(args.file)
    try:
        kind = file_format(path, args.format)
        items = read_dataset_file(path, format=kind)
        # hashed first: a file added before is found by its bytes, not read item by item
        key, state = _source_key(path, kind)
    except (ValueError, DatasetError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(str(DatasetError(exc.strerror or str(exc), source=source))) from None
    return _add_items(args, out, _unchanged(items, path, state, source), source,
                      source_key=key)


def _list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err
    name = None if args.name is None else _name(args.name)
    versions: list[DatasetVersion] = _run_store(args.store, lambda s: s.list(name),
                                                read_only=True)
    if args.json:
        print_json([version_json(v) for v in versions], out)
        return EXIT_PASSED
    if not versions:
        print("no datasets stored" + ("" if name is None else f" under {name!r}"), file=out)
        return EXIT_PASSED
    rows = [(printable(v.ref.name or ""), f"v{v.ref.number}", v.ref.version[:12],
             str(v.items), "" if v.created_at is None else v.created_at.isoformat())
            for v in versions]
    print_table(("name", "version", "hash", "items", "created"), rows,
                rich_output=out.isatty(), out=out)
    return EXIT_PASSED


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err
    if args.items:
        async def dump(store: DatasetStore) -> None:
            version = await store.get(args.spec)
            async for item in store.items(version):
                print(json.dumps(item.to_json(), ensure_ascii=False), file=out)

        _run_store(args.store, dump, read_only=True)
        return EXIT_PASSED
    version: DatasetVersion = _run_store(args.store, lambda s: s.get(args.spec), read_only=True)
    if args.json:
        print_json(version_json(version), out)
        return EXIT_PASSED
    print(_named(version), file=out)
    print(f"  version: {version.ref.version}", file=out)
    print(f"  {version.items} item(s), stored {version.created_at}", file=out)
    return EXIT_PASSED


def _ids(label: str, ids: tuple[str, ...]) -> str:
    more = f", … {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return f"{label} ({len(ids)}): " + ", ".join(
        printable(clip(i, 60)) for i in ids[:SHOWN_IDS]) + more


def _diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err

    async def work(store: DatasetStore) -> Any:
        old, new = await store.get(args.old), await store.get(args.new)
        return old, new, await store.diff(old, new)

    old, new, diff = _run_store(args.store, work, read_only=True)
    if args.json:
        print_json({"old": version_json(old), "new": version_json(new),
                    "added": list(diff.added), "removed": list(diff.removed),
                    "changed": list(diff.changed), "same": diff.same}, out)
        return EXIT_PASSED
    print(f"{_named(old)} -> {_named(new)}: {len(diff.added)} added, {len(diff.removed)} "
          f"removed, {len(diff.changed)} changed, {diff.same} the same", file=out)
    for label, ids in (("added", diff.added), ("removed", diff.removed),
                       ("changed", diff.changed)):
        if ids:
            print(_ids(label, ids), file=out)
    return EXIT_PASSED


def _mastra_traces(path: Path) -> Iterator[Any] | None:
    """The Mastra JSON traces of a file (one trace, a list of them, or one per line), or
    ``None`` when it holds OTLP instead."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = next((line for line in handle if line.strip()), "")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{shown(path)}: cannot read: {exc}") from None
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if isinstance(head, dict):
        if "spans" not in head:
            return None
        with path.open(encoding="utf-8-sig") as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
        return iter(lines)
    try:
        whole = json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError:
        return None
    if isinstance(whole, dict) and "spans" in whole:
        return iter([whole])
    if isinstance(whole, list):
        return iter(whole)
    return None


def _from_traces(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"trace file not found: {shown(path)}")
    mastra = _mastra_traces(path) if args.format in (None, "json") else None
    traces: Iterable[Any]
    if mastra is not None:
        traces = (Trace.from_mastra_json(t) for t in mastra)
    else:
        traces = OtlpTraceReader(path, warn=err, given_format=args.format)._traces()
    skipped = [0]

    def items() -> Iterator[DatasetItem]:
        for outcome in items_from_traces(traces):
            if isinstance(outcome, Failure):
                error: TraceError = outcome.failure()
                if error.kind != "duplicate_trace":
                    skipped[0] += 1
                    print(f"scorecore: warning: {shown(path)}: skipped: {error.message}",
                          file=err)
                continue
            yield outcome.unwrap()

    code = _add_items(args, out, items(), shown(path))
    if skipped[0]:
        print(f"note: {skipped[0]} trace(s) or agent run(s) of {shown(path)} could not become "
              f"items and were left out", file=err)
    return code


def _fractions(parts: list[str]) -> dict[str, float]:
    fractions: dict[str, float] = {}
    for text in parts:
        part, sep, value = text.partition("=")
        try:
            fraction = float(value)
        except ValueError:
            fraction = float("nan")
        if not sep or not part or part in fractions or math.isnan(fraction):
            raise UsageError(f"a part is NAME=FRACTION (train=0.8), each name once; got "
                             f"{text!r}")
        fractions[_name(part)] = fraction
    return fractions


def _split(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    del err
    fractions = _fractions(args.parts)
    field = args.stratify

    async def work(store: DatasetStore) -> list[tuple[str, DatasetVersion]]:
        version = await store.get(args.spec)
        keys = [(i.id, "" if field is None else stratum_of(i.fields, field))
                async for i in store.items(version)]
        parts = split_ids(keys, fractions, seed=args.seed)
        stored = []
        for part, ids in parts.items():
            chosen = [i async for i in store.items(version) if i.id in ids]
            name = f"{version.ref.name}-{part}"
            stored.append((part, await store.add(chosen, name=name)))
        return stored

    stored = _run_store(args.store, work)
    if args.json:
        print_json({part: version_json(v) for part, v in stored}, out)
        return EXIT_PASSED
    for part, version in stored:
        print(f"{part}: stored {_named(version)}, {version.items} item(s)", file=out)
    return EXIT_PASSED


ACTIONS: Final[dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]] = {
    "add": _add, "list": _list, "show": _show, "diff": _diff, "from-traces": _from_traces,
    "split": _split,
}
"""Each ``datasets`` action's handler (the parser's sub-commands are made from the same
names)."""


def datasets_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``scorecore datasets ACTION``."""
    return ACTIONS[args.action](args, out, err)


# -- what eval runs on ---------------------------------------------------------------------


@final
@attrs.frozen(kw_only=True)
class DataSource:
    """What a batch reads its items from, and the version it records.

    Attributes:
        reader: the items, streamed (``eval``'s reader protocol).
        shown: the file or ``NAME@vN`` as printed.
        stem: what a generated batch id starts with.
        dataset: the version (and sample) the batch ran on; ``None`` when it could not be
            told (a file with malformed lines, or a trace file).
        record: stores the version the batch runs on, unless stored already; ``eval`` awaits
            it once the batch is checked, so nothing is written before that.
    """

    reader: Any
    shown: str
    stem: str
    dataset: DatasetRef | None
    record: Callable[[], Awaitable[object]] | None = None
    unrecorded: str | None = None
    """Why the file is not recorded as a version (it is run as before)."""


def sample_of(args: argparse.Namespace) -> SampleSpec | None:
    """``--sample N [--stratify FIELD] [--seed S]`` as a spec (``None`` without ``--sample``)."""
    size = getattr(args, "sample", None)
    if size is None:
        if getattr(args, "stratify", None) is not None or \
                getattr(args, "sample_seed", None) is not None:
            raise UsageError("--stratify and --seed describe a sample: give --sample N")
        return None
    try:
        return SampleSpec(size=size, stratify=args.stratify, seed=args.sample_seed or 0)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _chosen(items: Iterable[DatasetItem], spec: SampleSpec) -> frozenset[str]:
    field = spec.stratify
    return sample_ids(((i.id, "" if field is None else stratum_of(i.fields, field))
                       for i in items), spec)


def _eval_item(item: DatasetItem, *, needs_output: bool, where: str) -> ItemLike:
    try:
        return item_from_mapping({**item.fields, "id": item.id}, needs_output=needs_output)
    except ValueError as exc:
        return InvalidItem(reason=f"{where}: item {item.id!r}: {clip(str(exc), 500)}",
                           id=item.id)


@final
class StoredReader:
    """A stored version's items (id order), as ``eval`` reads them: an item ``eval`` cannot
    run is a failed item (counted in :attr:`invalid`), as a malformed line of a file is."""

    def __init__(self, url: str, version: DatasetVersion, *, needs_output: bool,
                 chosen: frozenset[str] | None, warn: TextIO) -> None:
        self.url = url
        self.version = version
        self.needs_output = needs_output
        self.chosen = chosen
        self.warn = warn
        self.invalid = 0
        self.shown = _named(version)

    def count(self) -> int:
        """How many items the batch runs."""
        return self.version.items if self.chosen is None else len(self.chosen)

    def __iter__(self) -> Iterator[ItemLike]:
        raise TypeError("a stored version is read asynchronously (async for)")

    async def __aiter__(self) -> AsyncIterator[ItemLike]:
        async with DatasetStore(self.url, read_only=True) as store:
            async for item in store.items(self.version):
                if self.chosen is not None and item.id not in self.chosen:
                    continue
                made = _eval_item(item, needs_output=self.needs_output, where=self.shown)
                if isinstance(made, InvalidItem):
                    self.invalid += 1
                    print(f"scorecore: warning: {made.reason}", file=self.warn)
                yield made


@final
class _SampledFile:
    """A file reader's items, only those a sample chose; an item without an id keeps the
    position id it has in the whole file (``#N``), so its rows are named as in a full run."""

    def __init__(self, inner: Any, chosen: frozenset[str]) -> None:
        self.inner = inner
        self.chosen = chosen
        self.shown = inner.shown

    @property
    def invalid(self) -> int:
        return int(self.inner.invalid)

    def count(self) -> int:
        return len(self.chosen)

    def __iter__(self) -> Iterator[ItemLike]:
        for index, item in enumerate(self.inner):
            item_id = item.id if isinstance(item, EvalItem | InvalidItem) else None
            item_id = item_id or f"#{index}"
            if item_id not in self.chosen:
                continue
            yield attrs.evolve(item, id=item_id) if isinstance(item, EvalItem) and \
                item.id is None else item


def _stored_source(args: argparse.Namespace, err: TextIO, *, needs_output: bool,
                   sample: SampleSpec | None) -> DataSource:
    if getattr(args, "engine", "local") == "ray":
        raise UsageError("--dataset runs on --engine local; for Ray, export the version "
                         "(scorecore datasets show NAME --items > FILE.jsonl) and give --data")

    async def work(store: DatasetStore) -> tuple[DatasetVersion, frozenset[str] | None]:
        version = await store.get(args.dataset)
        if sample is None:
            return version, None
        return version, _chosen([i async for i in store.items(version)], sample)

    version, chosen = _run_store(args.store, work, read_only=True)
    ref = attrs.evolve(version.ref, sample=sample)
    return DataSource(reader=StoredReader(args.store, version, needs_output=needs_output,
                                          chosen=chosen, warn=err),
                      shown=_named(version), stem=version.ref.name or "dataset", dataset=ref)


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        yield from handle


def _file_version(args: argparse.Namespace, path: Path,
                  sample: SampleSpec | None) -> tuple[DatasetRef | None, frozenset[str] | None,
                                                      Callable[[], Awaitable[object]] | str]:
    """The file's content as an unnamed version (its reference, and what stores it), and the
    ids a sample takes; a file that is not a valid dataset is run as before, unrecorded."""
    source = shown(path)
    keys: list[tuple[str, str]] = []
    field = None if sample is None else sample.stratify

    def noted(items: Iterable[DatasetItem]) -> Iterator[DatasetItem]:
        for item in items:
            if sample is not None:
                keys.append((item.id, "" if field is None else stratum_of(item.fields, field)))
            yield item

    try:
        digest, _ = version_of(noted(read_jsonl(_lines(path), source=source, ids="position")),
                               source=source)
    except DatasetError as exc:
        if sample is not None:
            raise UsageError(f"--sample needs a readable file: {exc}") from None
        return None, None, str(exc)
    chosen = None if sample is None else sample_ids(keys, sample)

    async def record() -> DatasetVersion:
        async with DatasetStore(args.store) as store:
            # a file run again is stored once: found by its digest, not written again
            found = await store.find(digest)
            if found is not None:
                return found
            try:
                return await store.add(read_jsonl(_lines(path), source=source, ids="position"),
                                       source=source)
            except DatasetError as exc:  # the file changed since it was read
                raise UsageError(str(exc)) from None

    return DatasetRef(name=None, version=digest, sample=sample), chosen, record


def data_source(args: argparse.Namespace, err: TextIO, reader: Any, *,
                needs_output: bool, record: bool) -> DataSource:
    """Where ``eval`` reads its items: ``--dataset NAME[@V]`` (a stored version) or the
    ``--data`` file through ``reader`` (recorded as an unnamed version when ``record``)."""
    sample = sample_of(args)
    if getattr(args, "dataset", None) is not None:
        return _stored_source(args, err, needs_output=needs_output, sample=sample)
    path = Path(args.data)
    ref, chosen, store = _file_version(args, path, sample) if record else (None, None, None)
    made = reader(path, err)
    if chosen is not None:
        made = _SampledFile(made, chosen)
    return DataSource(reader=made, shown=made.shown, stem=path.stem, dataset=ref,
                      record=store if callable(store) else None,
                      unrecorded=store if isinstance(store, str) else None)


async def ledger_dataset_record(
    dataset: DatasetRef | None, reader: Any, url: str,
) -> tuple[dict[str, Any], Mapping[str, str]] | None:
    """What the experiment ledger records of the version a batch runs on: its reference
    (name, version, number, sample) and, for a stored version, the items the batch runs (a
    sample's only) by the ledger's own case digest, as it digests a ``--data`` file's lines
    (which it reads from the file itself)."""
    if dataset is None:
        return None
    if not isinstance(reader, StoredReader):
        return dataset.to_json(), {}
    async with DatasetStore(url, read_only=True) as store:
        cases = await stored_cases(store, reader.version, reader.chosen)
    return ({**dataset.to_json(), "cases": version_digest(cases), "items": len(cases)},
            cases)
