"""``scorecore eval``: run scorers over a JSONL dataset, store the rows, print a summary."""

from __future__ import annotations

import argparse
import json
import shlex
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO, final

import anyio
import anyio.to_thread
import attrs

from scorecore.datasets import DatasetRef
from scorecore.evals import (
    EvalConfigError,
    EvalReport,
    ItemLike,
    ItemResult,
    LabelValue,
    StoreError,
    Threshold,
    run_evals,
)
from scorecore_adapters._loading import LoadedScorers, load_scorers, load_target
from scorecore_adapters.cli._batch_api import batch_api_scope
from scorecore_adapters.cli._calibrate import (
    calibration_of,
    json_with_unlabelled,
    labelled_cascades,
    labels_of,
    print_agreement,
    report_thresholds,
    scan_labelled,
)
from scorecore_adapters.cli._common import (
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_USAGE,
    UsageError,
    clip,
    console,
    open_url,
    print_table,
)
from scorecore_adapters.cli._datasets import data_source, ledger_dataset_record
from scorecore_adapters.cli._economics import (
    closing_cache,
    economics_options,
    print_economics,
)
from scorecore_adapters.cli._experiments import record_end, record_start
from scorecore_adapters.cli._jsonl import JsonlReader
from scorecore_adapters.cli._judges import JudgeTally
from scorecore_adapters.cli._otel import DEFAULT_TIMEOUT as DEFAULT_OTEL_TIMEOUT
from scorecore_adapters.cli._otel import OtelReporter
from scorecore_adapters.cli._ray import run_on_ray, start_ray
from scorecore_adapters.cli._trust import print_agreements, print_cascades
from scorecore_adapters.report._causes import FailureGroup, FailureTally, cause_of_outcome
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Store


def parse_threshold(text: str) -> tuple[str, Threshold]:
    """``ID=MIN`` or ``ID=MIN:MAX`` (either bound may be empty) as a scorer id and threshold."""
    name, sep, bounds = text.partition("=")
    if not sep or not name:
        raise UsageError(f"--threshold must look like SCORER_ID=0.7 or ID=MIN:MAX, got {text!r}")
    low, colon, high = bounds.partition(":")
    try:
        lo = float(low) if low.strip() else None
        hi = float(high) if colon and high.strip() else None
        return name.strip(), Threshold(min=lo, max=hi)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--threshold {text!r}: {exc}") from None


def _summary_rows(
    report: EvalReport, skipped: Mapping[str, str]
) -> list[tuple[str, str, str, str, str, str, str]]:
    checks: dict[str, tuple[str, bool]] = {}
    for res in report.thresholds:
        checks[res.scorer_id] = (res.threshold.describe(), res.passed)
    for gate in report.gates:
        checks[gate.scorer_id] = ("gate = 1.0", gate.passed)
    rows = []
    for s in report.scorers:
        check, ok = checks.get(s.scorer_id, ("", True))
        result = ("pass" if ok else "FAIL") if check else ""
        # Runs the judge could not decide are among the not scorable: said apart, as the
        # failure budget counts them.
        unscorable = str(s.not_scorable) + (f" ({s.undecided} undecided)" if s.undecided
                                            else "")
        rows.append((s.scorer_id, number(s.mean), str(s.scored), unscorable,
                     str(s.failed), check, result))
    rows.extend((sid, "-", "-", "-", "-", "", "skipped") for sid in skipped)
    return rows


_HEADERS = ("scorer", "mean", "scored", "not scorable", "failed", "threshold", "result")


def _print_summary(
    report: EvalReport, skipped: Mapping[str, str], *, rich_output: bool, out: TextIO
) -> None:
    rows = _summary_rows(report, skipped)
    styles = ["red" if r[6] == "FAIL" else ("dim" if r[6] == "skipped" else None) for r in rows]
    print_table(_HEADERS, rows, rich_output=rich_output, out=out, styles=styles,
                title=f"batch {report.batch_id}")


class _Progress:
    """Counts completed items and keeps their failures' causes; draws a rich bar on a terminal,
    plain lines otherwise."""

    def __init__(
        self, total: int, *, rich_output: bool, out: TextIO, unit: str = "items",
        also: Callable[[ItemResult], None] | None = None,
    ) -> None:
        self.total = total
        self.also = also
        self.unit = unit
        self.done = 0
        self.failed = 0
        self.out = out
        self.step = max(1, -(-total // 10))  # about ten lines
        self.failures = FailureTally()
        self.judges = JudgeTally()
        self._bar: Any = None
        self._task: Any = None
        if rich_output:
            from rich.progress import Progress  # noqa: PLC0415 - only for terminals

            self._bar = Progress(console=console(out), transient=True)
            self._task = self._bar.add_task("scoring", total=total)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, result: ItemResult) -> None:
        if self.also is not None:
            self.also(result)
        self.done += 1
        if result.error is not None or any(o.status == "failed" for o in result.outcomes):
            self.failed += 1
        self.judges.add(result)
        item = result.item_id if result.item_id is not None else f"#{result.index}"
        for o in result.outcomes:
            if o.status == "failed" and not o.resumed:
                self.failures.add(o.scorer_id, item, cause_of_outcome(
                    o, item_error=result.error, item_error_kind=result.error_kind))
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self.done % self.step == 0 or self.done == self.total:
            print(f"progress: {self.done}/{self.total} {self.unit} ({self.failed} with "
                  f"failures)", file=self.out, flush=True)


TOP_CAUSES = 5
"""How many failure groups ``eval`` prints (``show BATCH --failures`` lists every failure)."""


def group_json(group: FailureGroup) -> dict[str, Any]:
    """One failure group as JSON (``--output`` and ``show --json``)."""
    return {"kind": group.cause.kind, "step": group.cause.step,
            "message": group.cause.message, "count": group.count,
            "scorerIds": list(group.scorer_ids), "itemIds": list(group.item_ids)}


def print_causes(
    groups: list[FailureGroup], *, out: TextIO, limit: int | None, batch_id: str
) -> None:
    """The failure groups, largest first: count, kind, step and scorers, then the full cause."""
    if not groups:
        return
    total = sum(g.count for g in groups)
    shown = groups if limit is None else groups[:limit]
    print(f"top failure causes ({total} failed scorer run(s) in {len(groups)} group(s)):",
          file=out)
    for group in shown:
        cause = group.cause
        where = f" at {cause.step}" if cause.step else ""
        ids = ", ".join(clip(i, 60) for i in group.item_ids)
        more = ", …" if group.more_items else ""
        scorers = ", ".join(group.scorer_ids)
        print(f"  {group.count:>5} x {cause.kind}{where} in {scorers} (items {ids}{more})",
              file=out)
        # The cause itself is never cut (the core bounds it to ~1,000 characters).
        print(f"          {cause.message}", file=out)
    if len(shown) < len(groups):
        print(f"  … {len(groups) - len(shown)} more group(s); every failure: "
              f"scorecore show {shlex.quote(batch_id)} --failures", file=out)


def _counted(report: EvalReport, trials: int) -> str:
    """``"20 items, 0 failed as a whole"``; with trials, items and trials apart (the report
    counts each trial of an item)."""
    if trials == 1:
        return f"{report.total_items} items, {report.failed_items} failed as a whole"
    return (f"{report.total_items // trials} items x {trials} trials, "
            f"{report.failed_items} item trial(s) failed as a whole")


def _malformed(invalid: int, data: str) -> str:
    return f"{invalid} malformed line(s) in {data}"


def verdict_line(
    verdict: str, report: EvalReport, *, invalid: int, data: str, skipped: Mapping[str, str]
) -> str:
    """The command's last line: the verdict and, when it did not pass, why (one line);
    a pass names the scorers that were skipped (they were not checked)."""
    if invalid:
        return f"verdict: {verdict} — {_malformed(invalid, data)}"
    reason = report.verdict_reason
    if reason is not None:
        return f"verdict: {verdict} — {reason}"
    if skipped:
        return f"verdict: {verdict} (skipped, not checked: {', '.join(skipped)})"
    return f"verdict: {verdict}"


def _new_batch_id(data: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in data.stem)
    return f"{stem}-{stamp}-{uuid.uuid4().hex[:6]}"



class DatasetReader(Protocol):
    """What ``eval`` reads items from: a JSONL dataset, or (``eval-traces``) a trace file."""

    invalid: int
    """Unreadable lines or records so far (they make the exit code 2)."""
    shown: str
    """The file's path as printed."""

    def count(self) -> int:
        """How many items iterating will yield (for the progress bar)."""
        ...

    def __iter__(self) -> Iterator[ItemLike]:
        """The items, streamed; an unreadable one as an ``InvalidItem``."""
        ...


MakeReader = Callable[[Path, TextIO], DatasetReader]
"""Opens the data file given on the command line (already checked to exist)."""


@final
@attrs.frozen(kw_only=True)
class _EvalPlan:
    loaded: LoadedScorers
    data_path: Path
    target: Any
    thresholds: dict[str, Threshold]
    gates: list[str]
    batch_id: str
    reader: DatasetReader
    total: int
    store: Store
    labels: dict[str, LabelValue] | None = None
    dataset: DatasetRef | None = None
    """The dataset version (and sample) the batch runs on: what its record keeps."""
    data_shown: str = ""
    record_dataset: Callable[[], Awaitable[object]] | None = None
    unrecorded: str | None = None


def _plan_eval(
    args: argparse.Namespace, err: TextIO, reader_of: MakeReader | None = None
) -> _EvalPlan:
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1, got {args.concurrency}")
    if args.otel_evaluation_spans and not args.otel_endpoint:
        raise UsageError("--otel-evaluation-spans needs --otel-endpoint URL (the OTLP/HTTP "
                         "traces endpoint the spans are sent to)")
    if args.otel_timeout is not None and not args.otel_endpoint:
        raise UsageError("--otel-timeout needs --otel-endpoint URL (the OTLP/HTTP traces "
                         "endpoint the events are sent to)")
    loaded = load_scorers(args.scorers)
    data_path = Path(args.data if args.data is not None else args.dataset)
    if args.data is not None and not data_path.is_file():
        raise UsageError(f"data file not found: {args.data}")
    target = load_target(args.target) if args.target else None
    thresholds = dict(parse_threshold(t) for t in args.threshold)
    ids = {s.id for s in loaded.scorers}
    for name in list(thresholds):
        if name in loaded.skipped:
            print(f"scorecore: warning: threshold on skipped scorer {name!r} ignored", file=err)
            del thresholds[name]
        elif name not in ids:
            raise UsageError(
                f"--threshold for unknown scorer {name!r}; scorers: {', '.join(sorted(ids))}"
            )
    gates = [g for g in args.gate if g not in loaded.skipped]
    for gate in gates:
        if gate not in ids:
            raise UsageError(f"--gate for unknown scorer {gate!r}; scorers: "
                             f"{', '.join(sorted(ids))}")
    if args.resume and args.batch_id and args.resume != args.batch_id:
        raise UsageError("--resume RUN already names the batch; drop --batch-id")
    given = args.resume or args.batch_id
    if given is not None:
        _check_batch_id(given, "--resume" if args.resume else "--batch-id")
    labels = _labels(args)
    store = open_url(args.store, must_exist=bool(args.resume))

    def jsonl(path: Path, warn: TextIO) -> DatasetReader:
        return JsonlReader(path, needs_output=target is None, warn=warn)

    # a trace file (eval-traces: reader_of) is not a dataset file: not recorded as a version
    source = data_source(args, err, reader_of or jsonl, needs_output=target is None,
                         record=reader_of is None)
    return _EvalPlan(
        loaded=loaded, data_path=data_path, target=target, thresholds=thresholds, gates=gates,
        batch_id=given or _new_batch_id(Path(source.stem)), reader=source.reader,
        total=source.reader.count(), store=store, labels=labels, dataset=source.dataset,
        data_shown=source.shown, record_dataset=source.record, unrecorded=source.unrecorded,
    )


def _labels(args: argparse.Namespace) -> dict[str, LabelValue] | None:
    """``--labels``, read and checked before anything runs (``eval-traces`` has none)."""
    if getattr(args, "labels", None) is None:
        if getattr(args, "kind", "binary") != "binary" or getattr(args, "scale", None) or \
                getattr(args, "label_value", None):
            raise UsageError("--kind, --scale and --label-value describe --labels: give "
                             "--labels FILE")
        return None
    return labels_of(args)


def _print_labels_agreement(
    plan: _EvalPlan, args: argparse.Namespace, out: TextIO
) -> dict[str, Any] | None:
    """With ``--labels``: the LLM-judged scorers against the labels, over the batch's stored
    rows; their JSON for ``--output``. A function scorer is not a judge to trust or not."""
    if plan.labels is None:
        return None
    chosen = [s.id for s in plan.loaded.scorers if getattr(s, "has_judge", False)]
    if not chosen:
        skipped = f" ({', '.join(plan.loaded.skipped)} skipped)" if plan.loaded.skipped else ""
        print(f"agreement with the labels in {args.labels}: no LLM-judged scorer ran"
              f"{skipped}", file=out)
        return None
    # The stored batch read back a page at a time: only its labelled items' rows are kept
    # (and its cascades' runs), never the batch.
    labels = plan.labels
    scan = scan_labelled(args.store, plan.batch_id, labels, lambda _row: True)
    rows = scan.labelled.rows()
    thresholds = {sid: t for sid, t in report_thresholds(plan.thresholds, rows).items()
                  if sid in chosen}
    result = calibration_of(args, rows, threshold=thresholds, scorer_ids=chosen,
                            labels=labels)
    print_agreement(result, args.labels, out)
    cascades = labelled_cascades(scan.trust, sorted({r.scorer_id for r in rows}), labels,
                                 thresholds)
    print_cascades(cascades, out=out)
    # Its rowsWithoutLabels are listed by the store as --output is written (never all held).
    return {**result.to_json(), "labelsFile": args.labels,
            **({"cascades": [c.to_json() for c in cascades]} if cascades else {})}


def _write_output(path: str, chunks: Iterable[str]) -> None:
    try:
        with Path(path).open("w", encoding="utf-8") as f:
            f.writelines(chunks)
    except OSError as exc:
        raise UsageError(f"cannot write report {path}: {exc.strerror}") from None


def _check_batch_id(batch_id: str, flag: str) -> None:
    # Undecodable command-line bytes arrive as lone surrogates, which no store can encode.
    if not batch_id or any(not c.isprintable() for c in batch_id):
        raise UsageError(f"{flag} must be a non-empty printable id, got {clip(repr(batch_id))}")
    if ":" in batch_id or "/" in batch_id:
        raise UsageError(
            f"{flag} must not contain ':' or '/' (run ids are BATCH:ITEM), "
            f"got {clip(repr(batch_id))}"
        )


async def _check_batch(store: Store, batch_id: str, *, resume: bool) -> None:
    """Refuse, before anything is written, to mix datasets or to resume a missing batch."""
    exists = await store.has_batch(batch_id)
    quoted = shlex.quote(batch_id)
    if exists and not resume:
        raise UsageError(
            f"batch {batch_id!r} already has rows in {store.url}; continue it with "
            f"--resume {quoted}, or choose another --batch-id"
        )
    if resume and not exists:
        raise UsageError(
            f"cannot resume batch {batch_id!r}: {store.url} holds no rows for it "
            f"(start it with --batch-id {quoted})"
        )


async def _run_plan(
    plan: _EvalPlan, args: argparse.Namespace, out: TextIO, progress: _Progress,
    ray_cache: str | None = None,
) -> EvalReport:
    economics = economics_options(args)  # a bad --pricing fails before anything runs
    try:
        # On Ray the actors open the cache themselves (cache_url); the local one is unused.
        local = economics if args.engine != "ray" else {}
        async with plan.store, closing_cache(local, strict=args.strict_cache, out=out), \
                batch_api_scope(args, economics, out):
            await _check_batch(plan.store, plan.batch_id, resume=bool(args.resume))
            if plan.record_dataset is not None:
                await plan.record_dataset()
            await record_start(args, scorers=plan.loaded.scorers, target=plan.target,
                               batch_id=plan.batch_id, data=plan.data_path,
                               shown=plan.reader.shown,
                               stored=await ledger_dataset_record(plan.dataset, plan.reader,
                                                                  args.store))
            verb = "resuming" if args.resume else "batch"
            print(f"{verb} {plan.batch_id}: {len(plan.loaded.scorers)} scorer(s) over "
                  f"{plan.data_shown}, store {plan.store.url}", file=out, flush=True)
            if plan.dataset is not None:
                print(f"dataset: {plan.dataset}", file=out, flush=True)
            elif plan.unrecorded is not None:
                print(f"dataset: not recorded as a version ({plan.unrecorded})", file=out)
            with progress:
                if args.engine == "ray":
                    return await anyio.to_thread.run_sync(lambda: run_on_ray(
                        plan.reader, scorers=args.scorers, target=args.target,
                        loaded_target=plan.target, store_url=args.store,
                        batch_id=plan.batch_id, resume=bool(args.resume), workers=args.workers,
                        concurrency=args.concurrency, thresholds=plan.thresholds,
                        gates=plan.gates, max_failures=args.max_failures,
                        max_failure_rate=args.max_failure_rate,
                        on_item_complete=progress, cache_url=ray_cache,
                        pricing=economics.get("pricing"),
                    ))
                return await run_evals(
                    plan.reader, plan.loaded.scorers, target=plan.target,
                    concurrency=args.concurrency, thresholds=plan.thresholds, gates=plan.gates,
                    store=plan.store, on_item_complete=progress, batch_id=plan.batch_id,
                    resume=bool(args.resume), max_failures=args.max_failures,
                    max_failure_rate=args.max_failure_rate, **economics,
                )
    except StoreError as exc:
        hint = f" (resume with --resume {plan.batch_id})" if exc.operation == "save" else ""
        raise UsageError(f"{exc}{hint}") from None
    except EvalConfigError as exc:
        raise UsageError(str(exc)) from None


def run_eval(
    args: argparse.Namespace, out: TextIO, err: TextIO, *, reader: MakeReader | None = None,
    unit: str = "items",
) -> int:
    """Run ``scorecore eval`` (or, with another ``reader``, ``eval-traces``); returns the exit
    code."""
    plan = _plan_eval(args, err, reader)
    rich_output = out.isatty()
    for sid, why in plan.loaded.skipped.items():
        print(f"skipped: {sid} ({why})", file=out)
    if not plan.loaded.scorers:
        raise UsageError("every selected scorer was skipped; nothing to run")
    # With --trials N every item completes N times (once per trial).
    reporter = (OtelReporter(args.otel_endpoint, thresholds=plan.thresholds, gates=plan.gates,
                             evaluation_spans=args.otel_evaluation_spans,
                             timeout=args.otel_timeout or DEFAULT_OTEL_TIMEOUT)
                if args.otel_endpoint else None)
    progress = _Progress(plan.total * args.trials, rich_output=rich_output, out=out,
                         unit=f"{unit[:-1]} trials" if args.trials > 1 else unit, also=reporter)
    ray_cache = start_ray(args, out) if args.engine == "ray" else None
    try:
        report = anyio.run(lambda: _run_plan(plan, args, out, progress, ray_cache))
    finally:
        if reporter is not None:
            reporter.close()
    record_end(args, plan.batch_id, report)
    _print_summary(report, plan.loaded.skipped, rich_output=rich_output, out=out)
    print_economics(report, out=out)
    progress.judges.print(report.duration, out=out)
    print_agreements(report.panels, report.pairwise, cascades=report.cascades, out=out)
    agreement = _print_labels_agreement(plan, args, out)
    causes = progress.failures.groups()
    print_causes(causes, out=out, limit=TOP_CAUSES, batch_id=plan.batch_id)
    print(f"{_counted(report, args.trials)}, {report.duration:.2f}s; stored in "
          f"{plan.store.url} as batch {plan.batch_id}", file=out)
    for line in report.failed_checks:
        print(f"failed: {line}", file=out)
    if reporter is not None:
        reporter.print(out)
    invalid = plan.reader.invalid
    code = EXIT_USAGE if invalid else (EXIT_PASSED if report.passed else EXIT_FAILED)
    # The command's verdict: malformed lines make it "error" (exit 2) whatever the checks said.
    verdict = "error" if invalid else report.verdict
    if args.output:
        document = {
            **report.to_json(),
            "verdict": verdict,
            "verdictReason": _malformed(invalid, plan.reader.shown) if invalid
            else report.verdict_reason,
            "checksVerdict": report.verdict,
            "exitCode": code,
            "skipped": dict(plan.loaded.skipped),
            "invalidItems": invalid,
            "store": plan.store.url,
            "dataset": None if plan.dataset is None else plan.dataset.to_json(),
            "failureCauses": [group_json(g) for g in causes],
        }
        if agreement is not None:
            document["calibration"] = agreement
        if reporter is not None:
            document["otel"] = reporter.to_json()
        if agreement is None or plan.labels is None:
            _write_output(args.output, [json.dumps(document, indent=2, default=str) + "\n"])
        else:
            json_with_unlabelled(args.store, document, ("calibration", "rowsWithoutLabels"),
                                 batch_id=plan.batch_id, labels=plan.labels,
                                 write=lambda chunks: _write_output(args.output, chunks),
                                 ensure_ascii=True)
        print(f"report written to {args.output}", file=out)
    print(verdict_line(verdict, report, invalid=invalid, data=plan.reader.shown,
                       skipped=plan.loaded.skipped), file=out)
    if invalid:
        print(f"scorecore: error: {invalid} malformed line(s) in {plan.reader.shown} "
              f"(recorded as failed items)", file=err)
    return code
