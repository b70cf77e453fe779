"""``scorecore show BATCH``: a stored batch's rows, its failures with their full causes."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Final, TextIO, final

import anyio

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.engine import TrustFold
from scorecore_adapters.cli._common import (
    EXIT_PASSED,
    UsageError,
    clip,
    open_url,
    print_table,
)
from scorecore_adapters.cli._economics import (
    fingerprints,
    print_fingerprint_line,
)
from scorecore_adapters.cli._eval import TOP_CAUSES, group_json, print_causes
from scorecore_adapters.cli._trust import print_agreements
from scorecore_adapters.report._causes import FailureCause, FailureTally, cause_of_row
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Store

_HEADERS = ("item", "scorer", "status", "score", "reason / cause")
RICH_ROWS: Final = 5_000
"""Rows a terminal's rich table shows at most (it holds them all); more are listed as text."""


def item_of(row: ScoreRow) -> str:
    """The item a row scored: its dataset item id, else its run id."""
    return row.dataset_item_id if row.dataset_item_id is not None else row.run_id


def _detail(row: ScoreRow, cause: FailureCause | None) -> str:
    text = cause.message if cause is not None else (row.reason or "")
    return clip(" ".join(text.split()), 80)


def _cause_json(cause: FailureCause | None) -> dict[str, Any] | None:
    if cause is None:
        return None
    return {"kind": cause.kind, "step": cause.step, "message": cause.message}


def _row_json(row: ScoreRow, cause: FailureCause | None) -> dict[str, Any]:
    return {"itemId": item_of(row), "runId": row.run_id, "scorerId": row.scorer_id,
            "status": row.status, "score": row.score, "reason": row.reason,
            "cause": _cause_json(cause)}


def structured_outputs(rows: Iterable[ScoreRow]) -> dict[str, dict[str, int]]:
    """Per scorer, how its judge replies were held to their schemas: executions per mode
    (``"json_schema"``, ``"json_object"``, ``"tool"``, ``"prompt"`` …) as the rows recorded."""
    seen: dict[str, dict[str, int]] = {}
    for row in rows:
        judge = (row.metadata or {}).get("judge")
        records = judge.values() if isinstance(judge, Mapping) else ()
        for record in records:
            executions = record.get("executions") if isinstance(record, Mapping) else None
            for execution in executions if isinstance(executions, list) else ():
                mode = execution.get("structuredOutput") if isinstance(execution, Mapping) else None
                if isinstance(mode, str):
                    counts = seen.setdefault(row.scorer_id, {})
                    counts[mode] = counts.get(mode, 0) + 1
    return seen


def _print_structured_counts(found: Mapping[str, Mapping[str, int]], out: TextIO) -> None:
    for scorer_id, counts in found.items():
        shown = ", ".join(f"{mode} ({n} executions)" for mode, n in sorted(counts.items()))
        print(f"structured output {scorer_id}: {shown}", file=out)


def _print_failures(failed: Sequence[tuple[ScoreRow, FailureCause]], out: TextIO) -> None:
    for row, cause in failed:
        where = f" at {cause.step}" if cause.step else ""
        print(f"{clip(item_of(row), 120)}  {row.scorer_id}  {cause.kind}{where}", file=out)
        print(f"    {cause.message}", file=out)


def show(args: argparse.Namespace, out: TextIO) -> int:
    """List a batch's rows (or, with ``--failures``, every failed run with its full cause)."""
    # Two passes over the store, a page of rows at a time: memory flat in the batch size.
    store = open_url(args.store, must_exist=True, read_only=True)
    anyio.run(_show_paged, store, args, out)
    return EXIT_PASSED


def _cells(row: ScoreRow, cause: FailureCause | None) -> tuple[str, ...]:
    return (clip(item_of(row), 60), row.scorer_id, row.status, number(row.score),
            _detail(row, cause))


@final
class _Digest:
    """What ``show`` prints after a batch's rows, folded as the rows come (first pass)."""

    def __init__(self) -> None:
        self.rows = 0
        self.failed = 0
        self.counts: dict[str, int] = {}
        self.tally = FailureTally()
        self.fingerprints: dict[str, dict[str, int]] = {}
        self.structured: dict[str, dict[str, int]] = {}
        self.trust = TrustFold()
        self.widths = [len(h) for h in _HEADERS]

    def add(self, page: Sequence[ScoreRow]) -> None:
        for row in page:
            self.rows += 1
            self.counts[row.status] = self.counts.get(row.status, 0) + 1
            cause = cause_of_row(row)
            if cause is not None:
                self.failed += 1
                self.tally.add(row.scorer_id, item_of(row), cause)
            self.trust.add_row(row)
            for i, cell in enumerate(_cells(row, cause)):
                self.widths[i] = max(self.widths[i], len(cell))
        _merge(self.fingerprints, fingerprints(page))
        _merge(self.structured, structured_outputs(page))

    def trust_json(self) -> dict[str, Any]:
        return {"panels": [a.to_json() for a in self.trust.panels()],
                "pairwise": [s.to_json() for s in self.trust.pairwise()],
                "cascades": [c.to_json() for c in self.trust.cascades(None, threshold=0.5)]}


def _merge(into: dict[str, dict[str, int]], page: Mapping[str, Mapping[str, int]]) -> None:
    for key, counts in page.items():
        kept = into.setdefault(key, {})
        for name, n in counts.items():
            kept[name] = kept.get(name, 0) + n


async def _rows(store: Store, batch_id: str) -> AsyncGenerator[Sequence[ScoreRow], None]:
    async with aclosing(store.pages(batch_id)) as pages:
        async for page in pages:
            yield page


async def _show_paged(store: Store, args: argparse.Namespace, out: TextIO) -> None:
    try:
        async with store:
            digest = _Digest()
            async with aclosing(_rows(store, args.run)) as pages:
                async for page in pages:
                    digest.add(page)
            if not digest.rows:
                raise UsageError(f"no rows for batch {args.run!r} in {store.url}")
            async with aclosing(_rows(store, args.run)) as pages:
                await _print_paged(pages, digest, store, args, out)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


async def _print_paged(
    pages: AsyncIterator[Sequence[ScoreRow]], digest: _Digest, store: Store,
    args: argparse.Namespace, out: TextIO,
) -> None:
    groups = digest.tally.groups()
    if args.json:
        # The document print_json writes, its rows written one by one where the list goes.
        head, tail = json.dumps({
            "batchId": args.run, "store": store.url, "counts": dict(sorted(digest.counts.items())),
            "rows": [], "failureCauses": [group_json(g) for g in groups],
            "fingerprints": digest.fingerprints, **digest.trust_json(),
            "structuredOutput": digest.structured,
        }, indent=2, ensure_ascii=False, default=str).split('\n  "rows": [],\n', 1)
        out.write(head + '\n  "rows": [')
        first = True
        async for page in pages:
            for row in page:
                cause = cause_of_row(row)
                if args.failures and cause is None:
                    continue
                text = json.dumps(_row_json(row, cause), indent=2, ensure_ascii=False,
                                  default=str)
                out.write(("\n" if first else ",\n") + textwrap.indent(text, "    "))
                first = False
        out.write(("]" if first else "\n  ]") + ",\n" + tail + "\n")
        return
    if args.failures:
        async for page in pages:
            _print_failures([(r, c) for r in page if (c := cause_of_row(r)) is not None], out)
        print(f"{digest.failed} failed of {digest.rows} rows", file=out)
        return
    if out.isatty() and digest.rows <= RICH_ROWS:
        # A terminal's rich table sizes its columns over every row: a batch of a few pages
        # at most; a larger one gets the aligned text below (its widths from the first pass).
        table = [_cells(row, cause_of_row(row)) async for page in pages for row in page]
        print_table(_HEADERS, table, rich_output=True, out=out)
    else:
        widths = digest.widths
        print("  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)).rstrip(),
              file=out)
        async for page in pages:
            for row in page:
                cells = _cells(row, cause_of_row(row))
                print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip(),
                      file=out)
    for scorer_id, counts in digest.fingerprints.items():
        print_fingerprint_line(scorer_id, counts, out=out)
    print_agreements(digest.trust.panels(), digest.trust.pairwise(),
                     cascades=digest.trust.cascades(None, threshold=0.5), out=out)
    _print_structured_counts(digest.structured, out)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(digest.counts.items()))
    print(f"{digest.rows} rows ({summary})", file=out)
    print_causes(groups, out=out, limit=TOP_CAUSES, batch_id=args.run)
