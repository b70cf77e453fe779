"""What a batch's ledger record is made of, and recording a batch run from Python.

The git commit and whether the tree was dirty, the command line with its secrets redacted,
the content digests of the items (whole, and of their cases: the item without its output),
each scorer's fingerprint and judges, the target's fingerprint. ``scorecore eval --store``
builds its record from these, and so does :func:`record_experiment` for a batch that
:func:`~scorecore.evals.run_evals` ran, so both kinds of batch pair with each other.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread

from scorecore import Scorer, redact_secrets
from scorecore.datasets import DatasetRef, DatasetVersion, item_digest, version_digest
from scorecore.evals import EvalItem, EvalReport, InvalidItem, ItemLike, StoreError
from scorecore.judge.economics import function_identity
from scorecore_adapters.storage._datasets import DatasetStore
from scorecore_adapters.storage._experiments import Experiment, ExperimentScorer, ExperimentStore
from scorecore_adapters.storage._url import StoreUrl

__all__ = ["record_experiment"]


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


def scrub_command(argv: Iterable[str], *, program: str | None = "scorecore") -> tuple[str, ...]:
    """The command line with secrets redacted by the project's one rule: a value following a
    flag whose name is a credential's (``--api-key X``), and every credential shape in any
    argument (``--store postgresql://me:pw@db``, ``sk-…``); ``program`` first, if given.

    >>> scrub_command(["eval", "--api-key", "abc", "--store", "postgresql://me:pw@db/x"])
    ('scorecore', 'eval', '--api-key', '[REDACTED]', '--store', 'postgresql://me:[REDACTED]@db/x')
    """
    out = [] if program is None else [program]
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


OUTPUT_KEYS: Final = frozenset({"output"})
"""What a data line holds of the system under test, not of the case: left out of the digest
that pairs items, so two batches of a file whose answers changed are compared item by item."""


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


# -- recording a batch run from Python --------------------------------------------------------

def _item_record(item: object) -> Mapping[str, Any]:
    """An item as a data file's line would hold it (what the ledger digests): a mapping as
    it is, an :class:`~scorecore.evals.EvalItem` by its fields, unset ones left out."""
    if isinstance(item, Mapping):
        return item
    if isinstance(item, EvalItem):
        fields = {"id": item.id, "input": item.input, "output": item.output,
                  "ground_truth": item.ground_truth, "request_context": item.request_context,
                  "expected_trajectory": item.expected_trajectory,
                  "extra": dict(item.extra) or None}
        return {k: v for k, v in fields.items() if v is not None}
    raise TypeError(f"an item is an EvalItem or a mapping, got {type(item).__name__}")


def items_digests(items: Iterable[object]) -> tuple[dict[str, str], dict[str, str]]:
    """Each item by id (``#index`` without one, as ``run_evals`` names it) with its content
    digest as a stored dataset version takes it (its fields, the id aside: so the items of a
    file give the version ``datasets add`` and ``eval --data`` give it) and its case's
    digest (the item without its output: what pairs items).

    Raises:
        ValueError: an item holds something JSON cannot say (naming the item), or an id
            repeats.
    """
    whole: dict[str, str] = {}
    cases: dict[str, str] = {}
    for index, item in enumerate(items):
        if isinstance(item, InvalidItem):
            continue  # an item its source could not read: the batch ran nothing of it
        record = _item_record(item)
        raw = record.get("id")
        if isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)
        key = raw if isinstance(raw, str) and raw else f"#{index}"
        if key in whole:
            raise ValueError(f"item {key!r} (#{index}) repeats an earlier item's id")
        try:
            whole[key] = item_digest({k: v for k, v in record.items() if k != "id"})
            cases[key] = line_digests(record)[1]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"item {key!r} cannot be recorded: {exc} (the ledger keeps "
                             f"the digest of its JSON)") from None
    return whole, cases


async def stored_cases(store: DatasetStore, version: DatasetVersion | DatasetRef,
                       chosen: frozenset[str] | None = None) -> dict[str, str]:
    """A stored version's items (those in ``chosen``, if given) by id, with their case's
    digest as the ledger takes it of a data file's line."""
    cases: dict[str, str] = {}
    async for item in store.items(version):
        if chosen is None or item.id in chosen:
            cases[item.id] = line_digests(item.to_json())[1]
    return cases


async def record_experiment(
    store: str | StoreUrl | ExperimentStore,
    report: EvalReport,
    *,
    scorers: Iterable[Scorer[Any, Any]],
    items: Iterable[ItemLike] | None = None,
    dataset: DatasetVersion | None = None,
    target: object = None,
    source: str = "python",
    command: Sequence[str] | None = None,
    cwd: str | PathLike[str] | None = None,
) -> Experiment:
    """Record a batch :func:`~scorecore.evals.run_evals` ran in the store's experiment ledger,
    as ``scorecore eval --store`` records its batches: then ``scorecore experiments`` lists
    it and ``compare --baseline auto`` can pick it.

    The batch is recorded with its items' content (``items``, the ones ``run_evals`` was
    given, or the stored ``dataset`` version they came from), its scorers' fingerprints and
    judges, the target's fingerprint, the git commit of ``cwd`` (default: the working
    directory), the command line (``sys.argv``, secrets redacted) and how it ended
    (``report``). A batch recorded already keeps its first record and gets this end.

    Args:
        store: the score store's URL (``sqlite:PATH``, ``postgresql://…``), or an open
            :class:`ExperimentStore`.
        report: what ``run_evals`` returned (its batch id, verdict and means).
        scorers: the scorers it ran.
        items: the items it ran on (a list, or anything that can be read again: a used-up
            generator gives none); exclusive with ``dataset``.
        dataset: the stored version it ran on (from :class:`DatasetStore`, in this store).
        target: the target it ran, if any.
        source: what ``scorecore experiments`` shows for ``items`` (a file's name, say).
        command: the command line to record (default ``sys.argv``).
        cwd: where to read the git commit.

    Returns:
        The record as the ledger now holds it.

    Raises:
        ValueError: neither or both of ``items`` and ``dataset``; ``items`` gave none while
            the batch ran some; an item JSON cannot say; a store in memory (it keeps no
            ledger).
        StoreError: the store cannot be written.

    >>> import anyio, os, tempfile
    >>> from scorecore import create_scorer
    >>> from scorecore.evals import EvalItem, run_evals
    >>> exact = create_scorer(id="exact", description="d").generate_score(
    ...     lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    >>> items = [EvalItem(id="q1", input="2+2?", output="4", ground_truth="4")]
    >>> url = "sqlite:" + os.path.join(tempfile.mkdtemp(), "scores.db")
    >>> async def demo() -> str | None:
    ...     report = await run_evals(items, [exact], batch_id="b1")
    ...     recorded = await record_experiment(url, report, scorers=[exact], items=items)
    ...     return recorded.verdict
    >>> anyio.run(demo)
    'passed'
    """
    if (items is None) == (dataset is None):
        raise ValueError("record_experiment needs what the batch ran on: items= (the items "
                         "given to run_evals) or dataset= (their stored version), one of them")
    if isinstance(store, ExperimentStore):
        return await _record(store, report, scorers=scorers, items=items, dataset=dataset,
                             target=target, source=source, command=command, cwd=cwd)
    async with ExperimentStore(store) as ledger:
        return await _record(ledger, report, scorers=scorers, items=items, dataset=dataset,
                             target=target, source=source, command=command, cwd=cwd)


async def _record(ledger: ExperimentStore, report: EvalReport, *,
                  scorers: Iterable[Scorer[Any, Any]], items: Iterable[ItemLike] | None,
                  dataset: DatasetVersion | None, target: object, source: str,
                  command: Sequence[str] | None, cwd: str | PathLike[str] | None,
                  ) -> Experiment:
    if dataset is not None:
        # The ledger's own URL (its password too, which ``url`` masks): the versions live
        # in the same store.
        async with DatasetStore(ledger._url, read_only=True) as datasets:
            cases = await stored_cases(datasets, dataset)
        record: dict[str, Any] = {**dataset.ref.to_json(),
                                  "cases": version_digest(cases), "items": len(cases)}
    else:
        whole, cases = items_digests(items or ())
        if not whole and report.total_items:
            raise ValueError(f"items= gave no item, but batch {report.batch_id!r} ran "
                             f"{report.total_items}: pass the items again (a list, not a "
                             f"used-up generator)")
        record = dataset_of(source, whole, cases)
    commit, dirty = await anyio.to_thread.run_sync(
        git_state, Path.cwd() if cwd is None else Path(cwd))
    experiment = Experiment(
        batch_id=report.batch_id, dataset=record, scorers=scorer_records(scorers),
        target=target_fingerprint(target), git_commit=commit, git_dirty=dirty,
        command=scrub_command(sys.argv if command is None else command, program=None))
    await ledger.start(experiment, items=cases)
    await ledger.finish(report.batch_id, verdict=report.verdict,
                        means={s.scorer_id: s.mean for s in report.scorers})
    found = await ledger.experiment(report.batch_id)
    if found is None:  # pragma: no cover - just written
        raise StoreError(f"store {ledger.url}: batch {report.batch_id!r} was not recorded",
                         store=ledger.url, operation="experiments.record")
    return found
