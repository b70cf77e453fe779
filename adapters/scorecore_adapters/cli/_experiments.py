"""The experiment ledger on the command line: what ``eval`` records, ``scorecore experiments``,
and ``--baseline auto``.

``eval --store URL`` records each batch before it runs (its data's content digests, scorers,
judges, target, git commit, command line) and its verdict and means when it ends; a store in
memory keeps no ledger (nothing would outlive the process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import anyio

from scorecore import redact_secrets
from scorecore.datasets import item_digest, version_digest
from scorecore.evals import EvalReport, StoreError
from scorecore.judge.economics import function_identity
from scorecore_adapters.cli._common import (
    DEFAULT_STORE,
    EXIT_PASSED,
    UsageError,
    clip,
    print_json,
    print_table,
)
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Experiment, ExperimentScorer, ExperimentStore, StoreUrl

GIT_TIMEOUT: Final = 5.0
"""Seconds a ``git`` call may take before the commit is left unknown."""

REDACTED: Final = "[REDACTED]"

_SETTINGS: Final = ("temperature", "top_p", "max_output_tokens", "seed", "timeout",
                    "max_retries")


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,  # noqa: S603, S607 - git from PATH, fixed arguments
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(cwd: Path) -> tuple[str | None, bool | None]:
    """The commit checked out at ``cwd`` and whether the tree has uncommitted changes;
    ``(None, None)`` outside a git checkout or without git."""
    commit = _git(["rev-parse", "HEAD"], cwd)
    if commit is None:
        return None, None
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return commit.strip(), None if status is None else bool(status.strip())


def scrub_command(argv: Iterable[str]) -> tuple[str, ...]:
    """The command line with secrets redacted by the project's one rule: a value following a
    flag whose name is a credential's (``--api-key X``), and every credential shape in any
    argument (``--store postgresql://me:pw@db``, ``sk-…``).

    >>> scrub_command(["eval", "--api-key", "abc", "--store", "postgresql://me:pw@db/x"])
    ('scorecore', 'eval', '--api-key', '[REDACTED]', '--store', 'postgresql://me:[REDACTED]@db/x')
    """
    out = ["scorecore"]
    secret_next = False
    for arg in argv:
        flag, equals, _value = arg.partition("=")
        named = arg.startswith("--") and _secret_flag(flag)
        if secret_next or (named and equals):
            out.append(f"{flag}={REDACTED}" if named and equals else REDACTED)
        else:
            out.append(redact_secrets(arg))
        secret_next = named and not equals
    return tuple(out)


def _secret_flag(flag: str) -> bool:
    """Whether ``--flag`` names a credential, by the key rule of ``redact_secrets``."""
    name = flag.lstrip("-")
    return redact_secrets({name: "x"})[name] != "x"


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


OUTPUT_KEYS: Final = frozenset({"output"})
"""What a data line holds of the system under test, not of the case: left out of the digest
that pairs items, so two batches of a file whose answers changed are compared item by item."""


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


def line_digests(record: Mapping[str, Any]) -> tuple[str, str]:
    """``item_digest`` of the whole line and of its case (the line without its output)."""
    whole = item_digest(record)
    if OUTPUT_KEYS.isdisjoint(record):  # a line without an output is its own case
        return whole, whole
    case = dict(record)  # a C-level copy: cheaper than filtering key by key
    for key in OUTPUT_KEYS:
        case.pop(key, None)
    return whole, item_digest(case)


def dataset_of(shown: str, whole: Mapping[str, str],
               cases: Mapping[str, str]) -> dict[str, Any]:
    """The ledger's dataset record of a ``--data`` file: no name, the content version of its
    lines, and that of its cases (``--baseline auto`` and ``plan`` match batches on it)."""
    return {"name": None, "version": version_digest(whole), "cases": version_digest(cases),
            "number": None, "sample": None, "file": shown, "items": len(whole)}


def _judges(scorer: object) -> tuple[dict[str, Any], ...]:
    found = []
    for step in getattr(scorer, "steps", ()):
        judge = getattr(step, "judge", None)
        if judge is None:
            continue
        settings = judge.model_settings
        chosen = {name: getattr(settings, name, None) for name in _SETTINGS}
        extra = dict(getattr(settings, "extra", {}) or {})
        found.append({"step": step.name, "model": judge.model.model_id,
                      "provider": judge.model.provider,
                      "settings": {**chosen, **({"extra": redact_secrets(extra)} if extra
                                                else {})}})
    return tuple(found)


def scorer_records(scorers: Iterable[object]) -> tuple[ExperimentScorer, ...]:
    """Each scorer's id, fingerprint and judges (model, provider, settings per prompt step)."""
    return tuple(ExperimentScorer(id=str(getattr(s, "id", "?")),
                                  fingerprint=getattr(s, "fingerprint", None),
                                  judges=_judges(s))
                 for s in scorers)


def target_fingerprint(target: object) -> str | None:
    """The target's own ``fingerprint`` when it has one, else its code's digest."""
    if target is None:
        return None
    own = getattr(target, "fingerprint", None)
    return own if isinstance(own, str) else function_identity(target)


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
