"""The ``scorecore`` command: evaluate a JSONL dataset with scorers from a Python file.

::

    scorecore eval SCORERS --data FILE.jsonl [--target MODULE:FUNCTION] [--concurrency N]
                   [--store sqlite:PATH | postgresql://...] [--threshold ID=MIN[:MAX] ...]
                   [--gate ID ...] [--resume RUN | --batch-id ID] [--output report.json]
    scorecore show RUN [--store ...]

Without ``--store``, rows go to ``scorecore.db`` (SQLite) in the current directory, which
``scorecore show`` reads by default too.

``SCORERS`` is a Python file (``path/to/scorers.py``) or an importable module, optionally
followed by ``:name1,name2`` to pick scorers by id or attribute name. Without a selection the
module's ``scorers`` list is used if it has one, else every module-level ``Scorer``. A module
may also define ``skipped_scorers`` (scorer id → why), reported as skipped.

Exit codes: 0 every threshold and gate passed; 1 a threshold or gate failed; 2 a usage or
input error (missing file, unknown scorer, unreachable store or missing driver, ``--batch-id``
of a stored batch, ``--resume`` of an unknown one, malformed dataset lines: those lines are
recorded as failed items, the rest still runs, then the command exits 2). The ``--output``
report's ``verdict`` and ``exitCode`` agree with the exit code. ``show`` opens the store
read-only.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import re
import shlex
import sys
import traceback
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TextIO, final

import anyio
import attrs

from scorecore import Scorer
from scorecore.evals import (
    EvalConfigError,
    EvalReport,
    InvalidItem,
    ItemLike,
    ItemResult,
    ScoreRow,
    StoreError,
    Threshold,
    item_from_mapping,
    run_evals,
)
from scorecore_adapters.storage import Store, open_store

__all__ = ["main"]

DEFAULT_STORE = "sqlite:scorecore.db"
EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with the command line or its inputs: one line, exit code 2."""


# --------------------------------------------------------------------------- loading


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" ({last.filename}:{last.lineno})"


def _import(spec: str, what: str) -> ModuleType:
    """Import a module by file path (``x/y.py``) or dotted name."""
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(Path(spec), what)
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            raise UsageError(f"{what} module not found: {spec}") from None
        raise UsageError(
            f"importing {what} {spec} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module is the boundary
        raise UsageError(
            f"importing {what} {spec} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None


def _import_file(path: Path, what: str) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"{what} file not found: {path}")
    name = "scorecore_user_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"cannot import {what} file {path}")
    module = importlib.util.module_from_spec(module_spec)
    # Let the file import its siblings, as `python path/to/file.py` would.
    parent = str(path.resolve().parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module is the boundary
        del sys.modules[name]
        raise UsageError(
            f"importing {what} {path} failed: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None
    return module


def _split_spec(spec: str) -> tuple[str, str | None]:
    head, sep, tail = spec.rpartition(":")
    if not sep or not head or (len(head) == 1 and head.isalpha()):  # no ':' or a drive letter
        return spec, None
    return head, tail


@final
@attrs.frozen(kw_only=True)
class LoadedScorers:
    """The scorers picked from a module, and the ones it reported as skipped."""

    scorers: tuple[Scorer[Any, Any], ...]
    skipped: Mapping[str, str]


def load_scorers(spec: str) -> LoadedScorers:
    """Load the scorers ``SCORERS`` names (see the module docstring).

    Raises:
        UsageError: the file or module is missing or fails to import, a selected name is
            unknown (the message lists the available ones), or no scorer is found.
    """
    target, selection = _split_spec(spec)
    module = _import(target, "scorers")
    namespace = vars(module)
    skipped_raw = namespace.get("skipped_scorers") or {}
    skipped = {str(k): str(v) for k, v in dict(skipped_raw).items()}
    by_name: dict[str, Scorer[Any, Any]] = {}
    for attr, value in namespace.items():
        if isinstance(value, Scorer):
            by_name.setdefault(attr, value)
            by_name.setdefault(value.id, value)
    listed = namespace.get("scorers")
    default: list[Scorer[Any, Any]]
    if isinstance(listed, list | tuple):
        default = [s for s in listed if isinstance(s, Scorer)]
        for scorer in default:
            by_name.setdefault(scorer.id, scorer)
    else:
        default = [v for v in namespace.values() if isinstance(v, Scorer)]
    if selection is None:
        chosen = list({id(s): s for s in default}.values())
        picked_skips = skipped
    else:
        chosen = []
        picked_skips = {}
        for name in (n.strip() for n in selection.split(",")):
            if not name:
                continue
            if name in skipped:
                picked_skips[name] = skipped[name]
                continue
            found = by_name.get(name)
            if found is None:
                available = sorted({s.id for s in by_name.values()} | set(skipped))
                raise UsageError(
                    f"unknown scorer {name!r} in {target}; available: "
                    f"{', '.join(available) or '(none)'}"
                )
            if all(found is not s for s in chosen):
                chosen.append(found)
    if not chosen and not picked_skips:
        raise UsageError(
            f"no scorers found in {target}: define Scorer values at module level "
            f"or a module-level 'scorers' list"
        )
    return LoadedScorers(scorers=tuple(chosen), skipped=picked_skips)


def load_target(spec: str) -> Any:
    """Load ``module:function`` (or ``path/file.py:function``).

    Raises:
        UsageError: malformed spec, missing module or attribute, or not callable.
    """
    module_spec, name = _split_spec(spec)
    if not name:
        raise UsageError(f"--target must look like module:function, got {spec!r}")
    module = _import(module_spec, "target")
    target = getattr(module, name, None)
    if target is None:
        raise UsageError(f"target {name!r} not found in {module_spec}")
    if not callable(target):
        raise UsageError(f"target {spec} is not callable")
    return target


# --------------------------------------------------------------------------- data


MAX_NESTING: Final = 128
"""The deepest a dataset line may nest arrays and objects (the line's object is level 1)."""

_UNSTORABLE_CHAR = re.compile("[\x00\ud800-\udfff]")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unstorable(value: object, depth: int) -> str | None:
    """Why a parsed JSON value cannot be scored and stored as it is, or ``None``.

    Iterative, so a deep value cannot exhaust the stack while being checked.
    """
    stack: list[tuple[object, int]] = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            found = _UNSTORABLE_CHAR.search(item)
            if found is not None and found.group() == "\x00":
                return "NUL character in a string (PostgreSQL cannot store it)"
            if found is not None:
                # Valid JSON ("\ud800"), but not Unicode text: no store can encode it.
                return f"lone surrogate {found.group()!r} in a string (not valid Unicode text)"
        elif isinstance(item, dict | list):
            if level > MAX_NESTING:
                return f"nested deeper than {MAX_NESTING} levels"
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return None


def _parse_line(text: str, *, needs_output: bool, line: int | None = None) -> ItemLike | str:
    """The item a JSONL line holds, or (one line) why it holds none."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return f"invalid JSON: nested deeper than {MAX_NESTING} levels"
    except ValueError as exc:  # an integer longer than Python's int-from-str digit limit
        return f"invalid JSON: {_clip(str(exc).split(';')[0])}"
    if not isinstance(value, dict):
        return f"expected a JSON object, got {type(value).__name__}"
    for key, field in value.items():
        problem = _unstorable(key, 2) or _unstorable(field, 2)
        if problem is not None:
            return f"field {_clip(repr(key), 60)}: {problem}"
    try:
        # line: run_evals names it when a later line repeats this item's id.
        return item_from_mapping(value, needs_output=needs_output, line=line)
    except ValueError as exc:
        return _clip(str(exc), 500)


@final
class JsonlReader:
    """Streams items from a JSONL file; a malformed line becomes an :class:`InvalidItem`.

    Blank lines are skipped. A line is malformed when it is not JSON, not an object, not a
    valid item, or holds what no store keeps as it is: a lone surrogate (``"\\ud800"``), a NUL
    character (``"\\u0000"``), nesting deeper than :data:`MAX_NESTING` levels, an integer of
    more than 4,300 digits. Each problem is also written to ``warn`` as ``FILE:LINE:
    message`` and counted in :attr:`invalid`.
    """

    def __init__(self, path: Path, *, needs_output: bool, warn: TextIO) -> None:
        self.path = path
        self.needs_output = needs_output
        self.warn = warn
        self.invalid = 0
        # A path from the command line may hold undecodable bytes: show them replaced.
        self.shown = os.fsencode(path).decode("utf-8", "replace")

    def _lines(self) -> Iterator[tuple[int, str]]:
        # newline="\n": line numbers are what editors and `wc -l` count (a stray "\r" stays
        # inside its line); bytes that are not UTF-8 become U+FFFD.
        with self.path.open(encoding="utf-8", errors="replace", newline="\n") as handle:
            for number, line in enumerate(handle, start=1):
                text = line.strip()
                if text:
                    yield number, text

    def count(self) -> int:
        """The number of non-blank lines (a quick pass, for the progress bar)."""
        return sum(1 for _ in self._lines())

    def __iter__(self) -> Iterator[ItemLike]:
        for number, text in self._lines():
            parsed = _parse_line(text, needs_output=self.needs_output, line=number)
            if not isinstance(parsed, str):
                yield parsed
                continue
            self.invalid += 1
            reason = f"{self.shown}:{number}: {parsed}"
            print(f"scorecore: warning: {reason}", file=self.warn)
            yield InvalidItem(reason=reason)


# --------------------------------------------------------------------------- output


def _threshold(text: str) -> tuple[str, Threshold]:
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


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


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
        rows.append((s.scorer_id, _mean(s.mean), str(s.scored), str(s.not_scorable),
                     str(s.failed), check, result))
    rows.extend((sid, "-", "-", "-", "-", "", "skipped") for sid in skipped)
    return rows


_HEADERS = ("scorer", "mean", "scored", "not scorable", "failed", "threshold", "result")


def _print_summary(
    report: EvalReport, skipped: Mapping[str, str], *, rich_output: bool, out: TextIO
) -> None:
    rows = _summary_rows(report, skipped)
    if rich_output:
        from rich.console import Console  # noqa: PLC0415 - only for terminals
        from rich.table import Table  # noqa: PLC0415

        table = Table(title=f"batch {report.batch_id}")
        for header in _HEADERS:
            table.add_column(header, justify="left" if header == "scorer" else "right")
        for row in rows:
            style = "red" if row[6] == "FAIL" else ("dim" if row[6] == "skipped" else None)
            table.add_row(*row, style=style)
        Console(file=out).print(table)
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
        print("  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)).rstrip(),
              file=out)
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(),
                  file=out)


class _Progress:
    """Counts completed items; draws a rich bar on a terminal, plain lines otherwise."""

    def __init__(self, total: int, *, rich_output: bool, out: TextIO) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.out = out
        self.step = max(1, -(-total // 10))  # about ten lines
        self._bar: Any = None
        self._task: Any = None
        if rich_output:
            from rich.progress import Progress  # noqa: PLC0415 - only for terminals

            self._bar = Progress(console=_console(out), transient=True)
            self._task = self._bar.add_task("scoring", total=total)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, result: ItemResult) -> None:
        self.done += 1
        if result.error is not None or any(o.status == "failed" for o in result.outcomes):
            self.failed += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self.done % self.step == 0 or self.done == self.total:
            print(f"progress: {self.done}/{self.total} items ({self.failed} with failures)",
                  file=self.out, flush=True)


def _console(out: TextIO) -> Any:
    from rich.console import Console  # noqa: PLC0415 - only for terminals

    return Console(file=out)


def _new_batch_id(data: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in data.stem)
    return f"{stem}-{stamp}-{uuid.uuid4().hex[:6]}"


# --------------------------------------------------------------------------- commands


def _open(url: str, *, must_exist: bool = False, read_only: bool = False) -> Store:
    try:
        store = open_store(url, read_only=read_only)
    except (ValueError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    if must_exist and url.startswith("sqlite:"):
        path = Path(store.url.removeprefix("sqlite:"))
        if not path.is_file():
            raise UsageError(f"store {store.url} does not exist")
    return store


@final
@attrs.frozen(kw_only=True)
class _EvalPlan:
    loaded: LoadedScorers
    data_path: Path
    target: Any
    thresholds: dict[str, Threshold]
    gates: list[str]
    batch_id: str
    reader: JsonlReader
    total: int
    store: Store


def _plan_eval(args: argparse.Namespace, err: TextIO) -> _EvalPlan:
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1, got {args.concurrency}")
    loaded = load_scorers(args.scorers)
    data_path = Path(args.data)
    if not data_path.is_file():
        raise UsageError(f"data file not found: {args.data}")
    target = load_target(args.target) if args.target else None
    thresholds = dict(_threshold(t) for t in args.threshold)
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
    reader = JsonlReader(data_path, needs_output=target is None, warn=err)
    return _EvalPlan(
        loaded=loaded, data_path=data_path, target=target, thresholds=thresholds, gates=gates,
        batch_id=given or _new_batch_id(data_path), reader=reader,
        total=reader.count(), store=_open(args.store, must_exist=bool(args.resume)),
    )


def _check_batch_id(batch_id: str, flag: str) -> None:
    # Undecodable command-line bytes arrive as lone surrogates, which no store can encode.
    if not batch_id or any(not c.isprintable() for c in batch_id):
        raise UsageError(f"{flag} must be a non-empty printable id, got {_clip(repr(batch_id))}")


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
    plan: _EvalPlan, args: argparse.Namespace, out: TextIO, *, rich_output: bool
) -> EvalReport:
    try:
        async with plan.store:
            await _check_batch(plan.store, plan.batch_id, resume=bool(args.resume))
            verb = "resuming" if args.resume else "batch"
            print(f"{verb} {plan.batch_id}: {len(plan.loaded.scorers)} scorer(s) over "
                  f"{plan.data_path}, store {plan.store.url}", file=out, flush=True)
            with _Progress(plan.total, rich_output=rich_output, out=out) as progress:
                return await run_evals(
                    plan.reader, plan.loaded.scorers, target=plan.target,
                    concurrency=args.concurrency, thresholds=plan.thresholds, gates=plan.gates,
                    store=plan.store, on_item_complete=progress, batch_id=plan.batch_id,
                    resume=bool(args.resume), max_failures=args.max_failures,
                )
    except StoreError as exc:
        hint = f" (resume with --resume {plan.batch_id})" if exc.operation == "save" else ""
        raise UsageError(f"{exc}{hint}") from None
    except EvalConfigError as exc:
        raise UsageError(str(exc)) from None


def _eval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    plan = _plan_eval(args, err)
    rich_output = out.isatty()
    for sid, why in plan.loaded.skipped.items():
        print(f"skipped: {sid} ({why})", file=out)
    if not plan.loaded.scorers:
        raise UsageError("every selected scorer was skipped; nothing to run")
    report = anyio.run(lambda: _run_plan(plan, args, out, rich_output=rich_output))
    _print_summary(report, plan.loaded.skipped, rich_output=rich_output, out=out)
    print(f"{report.total_items} items, {report.failed_items} failed as a whole, "
          f"{report.duration:.2f}s; stored in {plan.store.url} as batch {plan.batch_id}",
          file=out)
    for line in report.failed_checks:
        print(f"failed: {line}", file=out)
    invalid = plan.reader.invalid
    code = EXIT_USAGE if invalid else (EXIT_PASSED if report.passed else EXIT_FAILED)
    # The command's verdict: malformed lines make it "error" (exit 2) whatever the checks said.
    verdict = "error" if invalid else report.verdict
    if args.output:
        document = {
            **report.to_json(),
            "verdict": verdict,
            "checksVerdict": report.verdict,
            "exitCode": code,
            "skipped": dict(plan.loaded.skipped),
            "invalidItems": invalid,
            "store": plan.store.url,
        }
        try:
            Path(args.output).write_text(json.dumps(document, indent=2, default=str) + "\n",
                                         encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write report {args.output}: {exc.strerror}") from None
        print(f"report written to {args.output}", file=out)
    print(f"verdict: {verdict}", file=out)
    if invalid:
        print(f"scorecore: error: {invalid} malformed line(s) in {plan.reader.shown} "
              f"(recorded as failed items)", file=err)
    return code


def _show_rows(rows: Sequence[ScoreRow], *, rich_output: bool, out: TextIO) -> None:
    headers = ("item", "scorer", "status", "score", "reason / error")
    table_rows = []
    for row in rows:
        detail = row.reason
        if row.status == "failed" and row.metadata:
            detail = str(row.metadata.get("error") or detail)
        text = " ".join((detail or "").split())
        if len(text) > 80:
            text = text[:79] + "…"
        table_rows.append((row.dataset_item_id or row.run_id, row.scorer_id, row.status,
                           _mean(row.score), text))
    if rich_output:
        from rich.table import Table  # noqa: PLC0415 - only for terminals

        table = Table()
        for header in headers:
            table.add_column(header)
        for table_row in table_rows:
            table.add_row(*table_row)
        _console(out).print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in table_rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    for table_row in table_rows:
        print("  ".join(c.ljust(w) for c, w in zip(table_row, widths, strict=True)).rstrip(),
              file=out)


async def _list_run(store: Store, run: str) -> Sequence[ScoreRow]:
    try:
        async with store:
            return await store.list_run(run)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _show(args: argparse.Namespace, out: TextIO) -> int:
    # Read-only: shows a database on a read-only filesystem or owned by another user.
    store = _open(args.store, must_exist=True, read_only=True)
    rows = anyio.run(_list_run, store, args.run)
    if not rows:
        raise UsageError(f"no rows for run {args.run!r} in {store.url}")
    _show_rows(rows, rich_output=out.isatty(), out=out)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"{len(rows)} rows ({summary})", file=out)
    return EXIT_PASSED


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own errors: one line, exit 2
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scorecore", description="Run scorecore scorers over datasets.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    ev = sub.add_parser("eval", help="evaluate a JSONL dataset with scorers")
    ev.add_argument("scorers", metavar="SCORERS",
                    help="path/to/scorers.py or a module, optionally :id1,id2")
    ev.add_argument("--data", required=True, help="the JSONL dataset (one item per line)")
    ev.add_argument("--target", help="module:function producing each item's output")
    ev.add_argument("--concurrency", type=int, default=8, help="items in flight (default 8)")
    ev.add_argument("--store", default=DEFAULT_STORE,
                    help=f"sqlite:PATH or postgresql://... (default {DEFAULT_STORE}: "
                         f"scorecore.db in the current directory)")
    ev.add_argument("--threshold", action="append", default=[], metavar="ID=MIN[:MAX]",
                    help="fail unless the scorer's mean is within bounds (repeatable)")
    ev.add_argument("--gate", action="append", default=[], metavar="ID",
                    help="fail unless the scorer averages 1.0 (repeatable)")
    ev.add_argument("--max-failures", type=_non_negative_int, default=None, metavar="N",
                    help="fail when more than N scorer runs failed (0: any failure fails)")
    ev.add_argument("--resume", metavar="RUN", help="resume the batch RUN, skipping stored rows")
    ev.add_argument("--batch-id", help="the id of a new batch (default: generated)")
    ev.add_argument("--output", help="write the report as JSON to this file")
    show = sub.add_parser("show", help="list a stored run's rows")
    show.add_argument("run", metavar="RUN", help="the batch id")
    show.add_argument("--store", default=DEFAULT_STORE,
                      help=f"sqlite:PATH or postgresql://... (default {DEFAULT_STORE})")
    return parser


def _non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    try:
        args = _parser().parse_args(argv)
        if args.command == "eval":
            return _eval(args, stdout, stderr)
        return _show(args, stdout)
    except UsageError as exc:
        print(f"scorecore: error: {exc}", file=stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scorecore: interrupted (rows saved so far are kept; resume with --resume RUN)",
              file=stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`scorecore show RUN | head`): stop quietly, like other tools.
        if out is None:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the flush at exit
        return 0
