"""``scorecore show BATCH``: a stored batch's rows, its failures with their full causes."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from scorecore.evals import ScoreRow
from scorecore_adapters.cli._common import (
    EXIT_PASSED,
    clip,
    print_json,
    print_table,
    read_batch,
)
from scorecore_adapters.cli._economics import fingerprints, print_fingerprints
from scorecore_adapters.cli._eval import TOP_CAUSES, group_json, print_causes
from scorecore_adapters.cli._trust import print_trust, trust_json
from scorecore_adapters.report._causes import FailureCause, FailureTally, cause_of_row
from scorecore_adapters.report._text import number

_HEADERS = ("item", "scorer", "status", "score", "reason / cause")


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


def _counts(rows: Sequence[ScoreRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return dict(sorted(counts.items()))


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


def _print_structured_outputs(rows: Sequence[ScoreRow], out: TextIO) -> None:
    for scorer_id, counts in structured_outputs(rows).items():
        shown = ", ".join(f"{mode} ({n} executions)" for mode, n in sorted(counts.items()))
        print(f"structured output {scorer_id}: {shown}", file=out)


def _print_failures(failed: Sequence[tuple[ScoreRow, FailureCause]], out: TextIO) -> None:
    for row, cause in failed:
        where = f" at {cause.step}" if cause.step else ""
        print(f"{clip(item_of(row), 120)}  {row.scorer_id}  {cause.kind}{where}", file=out)
        print(f"    {cause.message}", file=out)


def show(args: argparse.Namespace, out: TextIO) -> int:
    """List a batch's rows (or, with ``--failures``, every failed run with its full cause)."""
    store, rows = read_batch(args.store, args.run)
    causes = [cause_of_row(row) for row in rows]
    tally = FailureTally()
    for row, cause in zip(rows, causes, strict=True):
        if cause is not None:
            tally.add(row.scorer_id, item_of(row), cause)
    groups = tally.groups()
    failed = [(r, c) for r, c in zip(rows, causes, strict=True) if c is not None]
    if args.json:
        listed = failed if args.failures else list(zip(rows, causes, strict=True))
        print_json({
            "batchId": args.run, "store": store.url, "counts": _counts(rows),
            "rows": [_row_json(r, c) for r, c in listed],
            "failureCauses": [group_json(g) for g in groups],
            "fingerprints": fingerprints(rows),
            **trust_json(rows),
            "structuredOutput": structured_outputs(rows),
        }, out)
        return EXIT_PASSED
    if args.failures:
        _print_failures(failed, out)
        print(f"{len(failed)} failed of {len(rows)} rows", file=out)
        return EXIT_PASSED
    table = [(clip(item_of(r), 60), r.scorer_id, r.status, number(r.score), _detail(r, c))
             for r, c in zip(rows, causes, strict=True)]
    print_table(_HEADERS, table, rich_output=out.isatty(), out=out)
    print_fingerprints(rows, out=out)
    print_trust(rows, out=out)
    _print_structured_outputs(rows, out)
    summary = ", ".join(f"{n} {status}" for status, n in _counts(rows).items())
    print(f"{len(rows)} rows ({summary})", file=out)
    print_causes(groups, out=out, limit=TOP_CAUSES, batch_id=args.run)
    return EXIT_PASSED
