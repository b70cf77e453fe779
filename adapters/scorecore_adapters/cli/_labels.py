"""``scorecore labels export|import``: human labels between the store and a JSONL file.

The file is the one ``calibrate --labels`` reads (``{"id": …, "label": …}`` per line, with
``scorer`` and ``note`` when set), so a reviewer's labels from ``scorecore view`` reach any
tool that reads labels, and labels written by hand reach the store.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import anyio

from scorecore.evals import LabelValue, StoreError
from scorecore_adapters.cli._common import DEFAULT_STORE, EXIT_PASSED, UsageError, open_url
from scorecore_adapters.labels import LabelFileError, read_labels
from scorecore_adapters.storage import Store
from scorecore_adapters.storage._labels import (
    Label,
    LabelConflictError,
    LabelStore,
    labels_for_calibration,
)

STORE: Final = "store"
"""``--labels store``: read the labels from the store instead of a file."""


def labels_arguments(command: argparse.ArgumentParser) -> None:
    """``labels export -o FILE`` and ``labels import FILE --batch ID`` (one flat parser, so
    ``scorecore labels --help`` shows every flag)."""
    # ACTION is checked by the handler (one message naming both actions), not by choices.
    command.add_argument("action", metavar="ACTION",
                         help="export: write the store's labels as a --labels file; "
                              "import: load such a file into the store")
    command.add_argument("file", metavar="FILE", nargs="?",
                         help='import: the JSONL file, {"id": item id, "label": ...} per line')
    command.add_argument("--store", default=DEFAULT_STORE, help="sqlite:PATH or postgresql://...")
    command.add_argument("--batch", metavar="ID",
                         help="export: this batch's labels only; import: the batch labelled")
    command.add_argument("--scorer", metavar="ID",
                         help="export: the labels of this scorer (and those of whole items)")
    command.add_argument("--stratum", metavar="WHY",
                         help="export: only labels the review queue offered for this reason "
                              "(random: the unbiased sample)")
    command.add_argument("--reviewer", metavar="NAME", help="import: who labelled them")
    command.add_argument("-o", "--output", metavar="FILE", help="export: the file to write")


async def _current(url: str, batch_id: str | None) -> list[Label]:
    async with LabelStore(url, read_only=True) as store:
        return await store.current(batch_id=batch_id)


def stored_labels(url: str, batch_id: str | None, scorer_id: str | None,
                  stratum: str | None = None) -> dict[str, Label]:
    """The store's current labels, one per item, as one calibration reads them; a conflict
    or an unreadable store is a usage error."""
    open_url(url, must_exist=True)  # the same checks and messages as every command
    try:
        labels = anyio.run(_current, url, batch_id)
    except (StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if batch_id is None and len({lb.batch_id for lb in labels}) > 1:
        # One file keys labels by item only: the same item in two batches would collide.
        by_item: dict[str, set[str]] = {}
        for lb in labels:
            by_item.setdefault(lb.item_id, set()).add(lb.batch_id)
        clashing = sorted(item for item, batches in by_item.items() if len(batches) > 1)
        if clashing:
            raise UsageError(f"items labelled in several batches ({', '.join(clashing[:5])}): "
                             f"name one with --batch ID")
    if stratum is not None:
        labels = [lb for lb in labels if stratum in lb.queued]
    try:
        return labels_for_calibration(labels, scorer_id)
    except LabelConflictError as exc:
        raise UsageError(str(exc)) from None


def store_label_values(url: str, batch_id: str, scorer_ids: Sequence[str]) -> dict[str,
                                                                                 LabelValue]:
    """``--labels store`` of ``calibrate`` and ``report``: item id → label."""
    if len(scorer_ids) > 1:
        raise UsageError("--labels store reads one scorer's labels: give one --scorer ID "
                         "(or none, when the items' labels agree across scorers)")
    chosen = stored_labels(url, batch_id, scorer_ids[0] if scorer_ids else None)
    if not chosen:
        raise UsageError(f"no labels for batch {batch_id!r} in the store")
    return {item: label.value for item, label in chosen.items()}


def _export(args: argparse.Namespace, out: TextIO) -> int:
    if args.output is None or args.file is not None or args.reviewer is not None:
        raise UsageError("labels export takes -o FILE (and no FILE argument or --reviewer)")
    chosen = stored_labels(args.store, args.batch, args.scorer, args.stratum)
    text = "".join(json.dumps(label.to_json(), ensure_ascii=False) + "\n"
                   for label in chosen.values())
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write labels file {args.output}: {exc.strerror}") from None
    print(f"{len(chosen)} label(s) written to {args.output}", file=out)
    return EXIT_PASSED


def _extras(path: str) -> dict[str, dict[str, Any]]:
    """Each line's ``scorer`` and ``note`` (``read_labels`` checked the lines already)."""
    extras: dict[str, dict[str, Any]] = {}
    with Path(path).open(encoding="utf-8-sig", errors="replace") as handle:
        for line in handle:
            if line.strip():
                value = json.loads(line)
                extras[str(value["id"])] = value
    return extras


def _text_field(value: dict[str, Any], name: str, where: str) -> str | None:
    found = value.get(name)
    if found is None or (isinstance(found, str) and found):
        return found
    raise UsageError(f"{where}: field {name!r} must be a non-empty string, got {found!r}")


async def _has_batch(store: Store, batch_id: str) -> bool:
    try:
        async with store:
            return await store.has_batch(batch_id)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


async def _add(url: str, labels: list[Label]) -> None:
    async with LabelStore(url) as store:
        await store.add(labels)


def _import(args: argparse.Namespace, out: TextIO) -> int:
    if args.file is None or args.batch is None:
        raise UsageError("labels import takes FILE and --batch ID")
    if args.output is not None or args.scorer is not None or args.stratum is not None:
        raise UsageError("labels import takes no -o, --scorer or --stratum (the file's lines "
                         "name their scorer)")
    try:
        values = read_labels(args.file)
    except LabelFileError as exc:
        raise UsageError("\n".join(exc.problems)) from None
    store = open_url(args.store, must_exist=True, read_only=True)
    if not anyio.run(_has_batch, store, args.batch):
        raise UsageError(f"no rows for batch {args.batch!r} in {store.url}: labels name a "
                         f"stored batch's items")
    extras = _extras(args.file)
    try:
        labels = [
            Label(batch_id=args.batch, item_id=item, value=value, reviewer=args.reviewer,
                  scorer_id=_text_field(extras[item], "scorer", f"{args.file}: id {item!r}"),
                  note=_text_field(extras[item], "note", f"{args.file}: id {item!r}"))
            for item, value in values.items()
        ]
    except ValueError as exc:  # text no store keeps (a NUL in a note): nothing is stored
        raise UsageError(f"{args.file}: {exc}") from None
    try:
        anyio.run(_add, args.store, labels)
    except (StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{len(labels)} label(s) of batch {args.batch} stored in {args.store}", file=out)
    return EXIT_PASSED


def labels_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``labels export`` or ``labels import``."""
    commands = {"export": _export, "import": _import}
    if args.action not in commands:
        raise UsageError(f"labels ACTION must be export or import, got {args.action!r}")
    return commands[args.action](args, out)
