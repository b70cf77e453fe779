"""The experiment ledger on the command line: what ``eval`` records, ``scorecore experiments``,
and ``--baseline auto``.

``eval --store URL`` records each batch before it runs (its data's content digests, scorers,
judges, target, git commit, command line) and its verdict and means when it ends; a store in
memory keeps no ledger (nothing would outlive the process).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio

from scorecore.evals import EvalReport, StoreError
from scorecore_adapters.cli._common import (
    DEFAULT_STORE,
    EXIT_PASSED,
    UsageError,
    clip,
    print_json,
    print_table,
)
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Experiment, ExperimentStore, StoreUrl
from scorecore_adapters.storage._recording import (
    dataset_of,
    git_state,
    line_digests,
    scorer_records,
    scrub_command,
    target_fingerprint,
)


def _records(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The dataset's JSON objects with their index among its non-blank lines (an id-less
    item's id is ``#index``, as the eval names it); unreadable lines are skipped (the eval
    reports them)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="\n") as handle:
        index = 0
        for line in handle:
            text = line.strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict):
                yield index, value
            index += 1


def file_items(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Each item of a JSONL dataset file by id, with the content digest of the whole line (the
    data's version) and of its case (the line without its output: what pairs items)."""
    whole: dict[str, str] = {}
    cases: dict[str, str] = {}
    for index, record in _records(path):
        raw = record.get("id")
        if isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)
        key = raw if isinstance(raw, str) and raw else f"#{index}"
        if key in whole:  # a repeated id: the eval refuses the later line
            continue
        try:
            whole[key], cases[key] = line_digests(record)
        except (TypeError, ValueError):  # not JSON-expressible: the eval refuses it too
            continue
    return whole, cases


def keeps_ledger(url: str) -> bool:
    """Whether a store URL can hold the ledger (a file or a server, not memory)."""
    parsed = StoreUrl.for_store(url)
    return parsed.kind == "postgres" or (parsed.path is not None and parsed.path != ":memory:")


async def record_start(
    args: argparse.Namespace, *, scorers: Iterable[object], target: object, batch_id: str,
    data: Path, shown: str, stored: tuple[Mapping[str, Any], Mapping[str, str]] | None = None,
) -> None:
    """Record a batch about to run in the ledger of ``--store`` (a resumed batch keeps its
    first record; a store in memory keeps none). ``eval`` records its data file's items by
    content; ``eval-traces`` the trace file it read; a batch run on a stored dataset version
    passes ``stored``: the version's record (name, version, number, sample), recorded as it
    is, and its items' digests, recorded unless a ``--data`` file gives its cases' digests."""
    if not keeps_ledger(args.store):
        return
    items: dict[str, str] = {}
    dataset: dict[str, Any] = {"name": None, "version": None, "file": shown}
    if getattr(args, "data", None) is not None:  # eval-traces reads a trace file instead
        # A file's items pair by their case (outputs aside) even when its version is stored.
        whole, items = file_items(data)
        dataset = dataset_of(shown, whole, items)
        if stored is not None:
            dataset |= dict(stored[0])
    elif stored is not None:
        dataset, items = dict(stored[0]), dict(stored[1])
    commit, dirty = git_state(Path.cwd())
    experiment = Experiment(
        batch_id=batch_id, dataset=dataset, scorers=scorer_records(scorers),
        target=target_fingerprint(target), git_commit=commit, git_dirty=dirty,
        command=scrub_command(getattr(args, "command_line", ())))
    async with ExperimentStore(args.store) as ledger:
        await ledger.start(experiment, items=items)


def record_end(args: argparse.Namespace, batch_id: str, report: EvalReport) -> None:
    """Record a batch's verdict and per-scorer means (when its store keeps a ledger)."""
    if not keeps_ledger(args.store):
        return

    async def go() -> None:
        async with ExperimentStore(args.store) as ledger:
            await ledger.finish(batch_id, verdict=report.verdict,
                                means={s.scorer_id: s.mean for s in report.scorers})

    try:
        anyio.run(go)
    except StoreError as exc:
        raise UsageError(f"{exc} (the batch's rows are stored)") from None


def read_ledger(url: str, *, dataset: str | None = None) -> list[Experiment]:
    """The ledger's batches, oldest first (a store without a ledger: none)."""
    async def go() -> list[Experiment]:
        async with ExperimentStore(url, read_only=True) as ledger:
            return await ledger.experiments(dataset=dataset)

    try:
        return anyio.run(go)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def ledger_items(url: str, batch_id: str) -> dict[str, str]:
    """The items ``batch_id`` ran on (id → content digest); empty when unrecorded."""
    async def go() -> dict[str, str]:
        async with ExperimentStore(url, read_only=True) as ledger:
            return await ledger.item_digests(batch_id)

    try:
        return anyio.run(go)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def ledger_dataset(url: str, batch_id: str) -> dict[str, Any] | None:
    """The dataset record of ``batch_id`` (``None`` when the ledger does not know it)."""
    async def go() -> Experiment | None:
        async with ExperimentStore(url, read_only=True) as ledger:
            return await ledger.experiment(batch_id)

    try:
        found = anyio.run(go)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    return None if found is None else dict(found.dataset)


def auto_baseline(url: str, batch_id: str) -> str:
    """``--baseline auto``: the latest passing batch before ``batch_id`` that ran on the same
    dataset version with the same scorer fingerprints; a usage error saying why when none."""
    every = read_ledger(url)
    mine = next((e for e in every if e.batch_id == batch_id), None)
    if mine is None:
        raise UsageError(f"--baseline auto: batch {batch_id!r} is not in the experiment "
                         f"ledger of {StoreUrl.for_store(url).shown} (batches run with "
                         f"`scorecore eval --store` are recorded); name a baseline batch")
    earlier = every[:every.index(mine)]
    same_data = [e for e in earlier if e.cases_version == mine.cases_version]
    same_scorers = [e for e in same_data if e.fingerprints == mine.fingerprints]
    passing = [e for e in same_scorers if e.verdict == "passed"]
    if passing:
        return passing[-1].batch_id
    version = (mine.cases_version or "?")[:12]
    raise UsageError(
        f"--baseline auto: no passing batch before {batch_id!r} on the same dataset version "
        f"({version}) with the same scorer fingerprints ({len(same_data)} earlier batch(es) on "
        f"that version, {len(same_scorers)} with the same scorers, none passed); name a "
        f"baseline batch")


def _shown_dataset(e: Experiment) -> str:
    name = e.dataset_name or str(e.dataset.get("file") or "?")
    number_ = e.dataset.get("number")
    version = f"v{number_}" if isinstance(number_, int) else (e.dataset_version or "?")[:12]
    sample = e.dataset.get("sample")
    return f"{name}@{version}" + (f" (sample {json.dumps(sample)})" if sample else "")


def experiments_arguments(command: argparse.ArgumentParser) -> None:
    """``experiments``' flags."""
    command.add_argument("--dataset", metavar="NAME",
                         help="only this dataset's batches (its name, or the --data file as "
                              "given to eval)")
    command.add_argument("--store", default=DEFAULT_STORE,
                         help=f"sqlite:PATH or postgresql://... (default {DEFAULT_STORE})")
    command.add_argument("--json", action="store_true", help="print JSON for machines")


def experiments_command(args: argparse.Namespace, out: TextIO) -> int:
    """``scorecore experiments``: the recorded batches per dataset version, each scorer's mean
    and the verdict over time."""
    found = read_ledger(args.store, dataset=args.dataset)
    if args.json:
        print_json({"experiments": [e.to_json() for e in found]}, out)
        return EXIT_PASSED
    if not found:
        where = f" of dataset {args.dataset!r}" if args.dataset else ""
        print(f"no recorded batches{where} in {StoreUrl.for_store(args.store).shown}", file=out)
        return EXIT_PASSED
    groups: dict[str, list[Experiment]] = {}
    for e in found:
        groups.setdefault(_shown_dataset(e), []).append(e)
    for shown, batch in groups.items():
        scorers = sorted({s for e in batch for s in e.means} | {s.id for e in batch
                                                                 for s in e.scorers})
        headers = ("batch", "started", "git", *scorers, "verdict")
        rows = []
        for e in batch:
            commit = (e.git_commit or "-")[:8] + ("+" if e.git_dirty else "")
            started = e.started_at.strftime("%Y-%m-%d %H:%M") if e.started_at else "-"
            means = [number(e.means.get(s)) if s in e.means else "-" for s in scorers]
            rows.append((clip(e.batch_id, 50), started, commit, *means,
                         e.verdict or "unfinished"))
        print(f"dataset {shown}", file=out)
        print_table(headers, rows, rich_output=out.isatty(), out=out)
    print("git: the project's commit, + when the tree had uncommitted changes", file=out)
    return EXIT_PASSED
