"""``scorecore eval --batch-api``: judge through the providers' batch APIs (flags, scope,
progress lines), and ``scorecore batches --pending``: the provider batches still running."""

from __future__ import annotations

import argparse
import contextlib
import re
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

from scorecore_adapters.batch import (
    BatchJournal,
    BatchJournalWarning,
    BatchProgress,
    use_batch_api,
)
from scorecore_adapters.cache import DEFAULT_CACHE_PATH, SqliteJudgeCache, open_cache
from scorecore_adapters.cli._common import EXIT_PASSED, UsageError, print_json, print_table

__all__ = ["add_batch_api_flags", "add_pending_flags", "batch_api_scope", "pending_batches"]

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


def duration(text: str) -> float:
    """``90``, ``90s``, ``30m`` or ``1.5h`` as seconds (> 0)."""
    match = _DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"expected a duration > 0 such as 90s, 30m or 1h, got {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _size(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100_000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 100000, got {text!r}")
    return int(text)


def add_batch_api_flags(command: argparse.ArgumentParser) -> None:
    """Add --batch-api, --batch-max-size, --batch-max-wait, --batch-poll to ``eval``."""
    command.add_argument(
        "--batch-api", action="store_true",
        help="judge through OpenAI's Batch API / Anthropic's Message Batches (half price; "
             "journalled in the --cache SQLite file, resumable after a kill)")
    command.add_argument("--batch-max-size", type=_size, default=1000, metavar="N",
                         help="--batch-api: requests per provider batch (default 1000); also "
                              "the least --concurrency")
    command.add_argument("--batch-max-wait", type=duration, default=60.0, metavar="DURATION",
                         help="--batch-api: submit a partial batch this long after its first "
                              "request (default 60s; 30m, 1h …)")
    command.add_argument("--batch-poll", type=duration, default=30.0, metavar="DURATION",
                         help="--batch-api: how often a running batch's status is read "
                              "(default 30s)")


def _line(progress: BatchProgress) -> str:
    return (f"batch API: {progress.batches_submitted} batch(es) submitted, "
            f"{progress.batches_in_progress} in progress, {progress.batches_done} done; "
            f"{progress.requests_answered} request(s) answered of "
            f"{progress.requests_submitted} submitted"
            + (f", {progress.requests_resumed} resumed" if progress.requests_resumed else "")
            + (f", {progress.requests_resubmitted} resubmitted"
               if progress.requests_resubmitted else "")
            + (f"; {progress.duplicate_results} duplicate result line(s) ignored"
               if progress.duplicate_results else "")
            + (f"; {progress.batches_not_found} batch(es) not found at the provider "
               "(their requests resubmitted)" if progress.batches_not_found else ""))


@contextlib.contextmanager
def _journal_warnings(out: TextIO) -> Iterator[None]:
    """Within the block, a :class:`BatchJournalWarning` is a ``warning:`` line of the output
    (as a damaged cache is), every time, never an error; other warnings go as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", BatchJournalWarning)
        shown = warnings.showwarning

        def show(  # noqa: PLR0917 - warnings.showwarning's own signature
            message: Warning | str, category: type[Warning], filename: str, lineno: int,
            file: TextIO | None = None, line: str | None = None,
        ) -> None:
            if issubclass(category, BatchJournalWarning):
                print(f"warning: {message}", file=out, flush=True)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


@contextlib.asynccontextmanager
async def batch_api_scope(
    args: argparse.Namespace, economics: Mapping[str, Any], out: TextIO
) -> AsyncIterator[None]:
    """With ``--batch-api``: route the judges through the batch APIs for the block, printing a
    progress line whenever a batch is submitted or ends, and the totals at the end. Raises
    ``--concurrency`` to ``--batch-max-size`` (a batch holds at most the requests in flight)."""
    if not getattr(args, "batch_api", False):
        yield
        return
    if args.engine != "local":
        raise UsageError("--batch-api runs with --engine local only")
    cache = economics.get("cache")
    if not isinstance(cache, SqliteJudgeCache):
        raise UsageError("--batch-api journals its requests in the judge cache's SQLite file: "
                         "give --cache sqlite:PATH (not --no-cache, memory: or PostgreSQL)")
    args.concurrency = max(args.concurrency, args.batch_max_size)
    journal = BatchJournal(cache.path)
    with _journal_warnings(out):
        busy = journal.claim()
    if busy is not None:
        journal.close()
        raise UsageError(f"--batch-api: {busy} (give another --cache, or wait)")

    def show(progress: BatchProgress) -> None:
        print(_line(progress), file=out, flush=True)

    try:
        with _journal_warnings(out), use_batch_api(
                journal, max_batch_size=args.batch_max_size, max_wait=args.batch_max_wait,
                poll_interval=args.batch_poll, on_change=show) as routing:
            try:
                yield
            finally:
                print(_line(routing.progress()), file=out, flush=True)
    finally:
        journal.close()


def add_pending_flags(command: argparse.ArgumentParser) -> None:
    """Add --pending and --cache to ``scorecore batches``."""
    command.add_argument("--pending", action="store_true",
                         help="list the provider batches (--batch-api) not yet collected, "
                              "from the judge cache's journal")
    command.add_argument("--cache", default=f"sqlite:{DEFAULT_CACHE_PATH}", metavar="URL",
                         help=f"--pending: the judge cache (default sqlite:{DEFAULT_CACHE_PATH})")


_HEADERS = ("job", "provider", "model", "provider batch", "state", "status", "requests",
            "created")


def pending_batches(args: argparse.Namespace, out: TextIO) -> int:
    """``scorecore batches --pending``: journalled provider batches not yet collected."""
    try:
        cache = open_cache(args.cache)
    except ValueError as exc:
        raise UsageError(f"--cache: {exc}") from None
    if not isinstance(cache, SqliteJudgeCache):
        raise UsageError("--pending reads the batch journal of a sqlite:PATH judge cache")
    if not cache.path.exists():
        raise UsageError(f"no judge cache at {cache.path}")
    journal = BatchJournal(cache.path)
    try:
        found = journal.batches(states=("prepared", "submitted"))
    finally:
        journal.close()
    if args.json:
        print_json({"cache": str(cache.path), "pending": [{
            "job": b.job, "provider": b.provider, "baseUrl": b.base_url, "model": b.model,
            "providerBatchId": b.provider_batch_id, "state": b.state, "status": b.status,
            "requests": b.requests,
            "createdAt": datetime.fromtimestamp(b.created_at, UTC).isoformat(),
        } for b in found]}, out)
        return EXIT_PASSED
    if not found:
        print(f"no pending provider batches in {cache.path}", file=out)
        return EXIT_PASSED
    rows = [(b.job, b.provider, b.model, b.provider_batch_id or "-", b.state, b.status or "-",
             str(b.requests),
             datetime.fromtimestamp(b.created_at, UTC).strftime("%Y-%m-%d %H:%M:%S"))
            for b in found]
    print_table(_HEADERS, rows, rich_output=out.isatty(), out=out)
    print(f"{len(found)} pending provider batch(es) in {cache.path}", file=out)
    return EXIT_PASSED
