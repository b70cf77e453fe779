"""The command line's grammar: each subcommand's arguments (the command table in ``_commands``
puts them together)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scorecore_adapters.cli._batch_api import add_batch_api_flags, add_pending_flags
from scorecore_adapters.cli._common import DEFAULT_STORE, UsageError
from scorecore_adapters.cli._economics import add_economics_flags, positive_int
from scorecore_adapters.cli._trace_files import FORMATS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own errors: one line, exit 2
        raise UsageError(message)


def _non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:  # NaN too
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):  # NaN too
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def _store(command: argparse.ArgumentParser) -> None:
    command.add_argument("--store", default=DEFAULT_STORE,
                         help=f"sqlite:PATH or postgresql://... (default {DEFAULT_STORE}: "
                              f"scorecore.db in the current directory)")


def _failure_budget(command: argparse.ArgumentParser) -> None:
    command.add_argument("--max-failures", type=_non_negative_int, default=0, metavar="N",
                         help="tolerate N failed scorer runs (default 0: any failed run fails)")
    command.add_argument("--max-failure-rate", type=_rate, default=None, metavar="RATE",
                         help="tolerate failed scorer runs up to this share of all runs, "
                              "e.g. 0.05")


def _comparison_rules(command: argparse.ArgumentParser) -> None:
    command.add_argument("--min-paired", type=positive_int, default=None, metavar="N",
                         help="a scorer with fewer paired items gives no verdict (default: "
                              "compare()'s, 10)")
    command.add_argument("--require-same-scorers", action="store_true",
                         help="refuse (exit 2) batches whose scorers differ, by id or "
                              "definition; by default changed scorers are compared and marked")


def _batch_flags(ev: argparse.ArgumentParser) -> None:
    """The flags ``eval`` and ``eval-traces`` share: concurrency, store, gates, resume, report,
    judge economics."""
    ev.add_argument("--concurrency", type=int, default=8, help="items in flight (default 8)")
    _store(ev)
    ev.add_argument("--threshold", action="append", default=[], metavar="ID=MIN[:MAX]",
                    help="fail unless the scorer's mean is within bounds (repeatable)")
    ev.add_argument("--gate", action="append", default=[], metavar="ID",
                    help="fail unless the scorer averages 1.0 (repeatable)")
    _failure_budget(ev)
    ev.add_argument("--resume", metavar="RUN", help="resume the batch RUN, skipping stored rows")
    ev.add_argument("--batch-id", help="the id of a new batch (default: generated)")
    ev.add_argument("--output", help="write the report as JSON to this file")
    ev.add_argument("--otel-endpoint", metavar="URL",
                    help="also report each scored run as a gen_ai.evaluation.result event to "
                         "this OTLP/HTTP traces endpoint (needs scorecore[otel])")
    ev.add_argument("--otel-evaluation-spans", action="store_true",
                    help="with --otel-endpoint: also send the evaluation itself as spans, one "
                         "per item with a child per scorer and per judge call (model, tokens, "
                         "cost)")
    ev.add_argument("--otel-timeout", type=_seconds, default=None, metavar="SECONDS",
                    help="with --otel-endpoint: how long scoring waits for room when the "
                         "export queue is full, and the end for the last events (default 30)")
    add_economics_flags(ev)


def _eval_traces_command(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("file", metavar="FILE",
                    help="OTLP traces: the Collector file exporter's JSON lines or proto "
                         "file, one OTLP/JSON request, or one protobuf request (*.pb)")
    ev.add_argument("--format", choices=FORMATS, default=None,
                    help="how FILE is encoded (default: a file starting with a zero byte is "
                         "collector-proto, *.pb / *.binpb / *.protobuf protobuf, else json)")
    ev.add_argument("--logs", metavar="LOGS", type=Path, default=None,
                    help="an OTLP logs file holding the message content as log records (JSON "
                         "lines, protobuf or Collector frames; default: NAME.logs.EXT next to "
                         "a trace file NAME.traces.EXT, when it exists)")
    ev.add_argument("--explain", action="store_true",
                    help="print, per trace, which convention read each span into which span "
                         "type and which spans stayed generic")
    ev.add_argument("scorers", metavar="SCORERS",
                    help="path/to/scorers.py or a module, optionally :id1,id2")
    _batch_flags(ev)


def _eval_command(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("scorers", metavar="SCORERS",
                    help="path/to/scorers.py or a module, optionally :id1,id2")
    data = ev.add_mutually_exclusive_group(required=True)
    data.add_argument("--data", help="the JSONL dataset (one item per line); with a store, "
                                     "its content is recorded as an unnamed dataset version")
    data.add_argument("--dataset", metavar="NAME[@V]",
                      help="a stored dataset version: NAME (the latest), NAME@v3 or "
                           "NAME@<hash prefix> (scorecore datasets add)")
    ev.add_argument("--sample", type=positive_int, default=None, metavar="N",
                    help="run a seeded sample of N items (recorded with the batch)")
    ev.add_argument("--stratify", metavar="FIELD", default=None,
                    help="with --sample: strata by this field (a name in extra, or a dotted "
                         "path), each in proportion to its size")
    # dest: --labels' calibration reads args.seed (its bootstrap's, 0 in eval)
    ev.add_argument("--seed", dest="sample_seed", type=_non_negative_int, default=None,
                    metavar="S",
                    help="with --sample: the seed (default 0; the same seed, the same items)")
    ev.add_argument("--target", help="module:function producing each item's output")
    _batch_flags(ev)
    add_batch_api_flags(ev)
    ev.add_argument("--engine", choices=("local", "ray"), default="local",
                    help="local: in this process (default); ray: a Ray Data actor pool "
                         "(RAY_ADDRESS or a local cluster; needs scorecore[ray])")
    ev.add_argument("--workers", type=int, default=1, metavar="N",
                    help="--engine ray: scoring actors (default 1; more need a PostgreSQL "
                         "--store), each with --concurrency items in flight")
    label_flags(ev, required=False,
                what="after the summary, print each LLM-judged scorer's agreement with them")


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _kappa(text: str) -> float:
    value = _number(text)
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a kappa in [-1, 1], got {text!r}")
    return value


def label_flags(command: argparse.ArgumentParser, *, required: bool, what: str = "") -> None:
    """The flags reading human labels, shared by ``calibrate``, ``report`` and ``eval``."""
    command.add_argument("--labels", required=required, metavar="FILE",
                         help='JSONL of human labels, {"id": item id, "label": ...} per line, '
                              "or 'store': the store's labels of the batch"
                              + (f"; {what}" if what else ""))
    command.add_argument("--kind", choices=("binary", "ordinal", "continuous"),
                         default="binary", help="what the labels are (default binary)")
    command.add_argument("--scale", metavar="LOW:HIGH",
                         help="the labels' scale for scores in [0, 1] (e.g. 1:5)")
    command.add_argument("--label-value", action="append", default=[], metavar="TEXT=VALUE",
                         help="the value of a string label (repeatable): good=1, bad=0")


def _calibrate_command(cal: argparse.ArgumentParser) -> None:
    cal.add_argument("batch", metavar="BATCH", help="the batch id")
    label_flags(cal, required=True)
    _store(cal)
    cal.add_argument("--scorer", action="append", default=[], metavar="ID",
                     help="calibrate this scorer only (repeatable; default every scorer)")
    cal.add_argument("--threshold", type=_number, default=None, metavar="X",
                     help="an item passes when its score is at least X (default 0.5)")
    cal.add_argument("--min-kappa", type=_kappa, default=None, metavar="K",
                     help="a gate: exit 1 unless each scorer's kappa interval is above K")
    cal.add_argument("--seed", type=_non_negative_int, default=0,
                     help="the bootstrap's seed (default 0: the same data, the same interval)")
    cal.add_argument("--json", action="store_true", help="print JSON for machines")


def _show_command(show: argparse.ArgumentParser) -> None:
    show.add_argument("run", metavar="BATCH", help="the batch id")
    _store(show)
    show.add_argument("--failures", action="store_true",
                      help="list every failed scorer run with its full cause")
    show.add_argument("--json", action="store_true", help="print JSON for machines")


def _batches_command(listing: argparse.ArgumentParser) -> None:
    _store(listing)
    add_pending_flags(listing)
    listing.add_argument("--json", action="store_true", help="print JSON for machines")


def _compare_command(cmp: argparse.ArgumentParser) -> None:
    cmp.add_argument("base", metavar="BASE", nargs="?", default=None,
                     help="the baseline batch id (or --baseline)")
    cmp.add_argument("new", metavar="NEW", help="the batch to judge against it")
    _store(cmp)
    cmp.add_argument("--baseline", metavar="BATCH",
                     help="the baseline instead of BASE; 'auto': the latest passing batch on "
                          "the same dataset version with the same scorer fingerprints")
    cmp.add_argument("--tolerance", type=_tolerance, default=0.02,
                     help="ignore regressions up to this size in score units (default 0.02)")
    cmp.add_argument("--effect", type=_tolerance, default=None, metavar="E",
                     help="the drop a 'no regression' must have been able to catch (80 %% "
                          "power) to say something (default: the tolerance)")
    cmp.add_argument("--threshold", action="append", default=[], metavar="ID=MIN[:MAX]",
                     help="an item passes when its score is within bounds (default MIN 0.5)")
    _comparison_rules(cmp)
    cmp.add_argument("--seed", type=_non_negative_int, default=0,
                     help="the bootstrap's seed (default 0: the same data, the same interval)")
    cmp.add_argument("--json", action="store_true", help="print JSON for machines")


def _view_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"expected the workbench's address, such as http://127.0.0.1:8765, got {text!r}")
    return text


def _report_command(rep: argparse.ArgumentParser) -> None:
    rep.add_argument("batch", metavar="BATCH", help="the batch id")
    _store(rep)
    rep.add_argument("--baseline", metavar="OTHER",
                     help="a batch to compare with; 'auto': the latest passing batch on the "
                          "same dataset version with the same scorer fingerprints")
    rep.add_argument("--tolerance", type=_tolerance, default=0.02,
                     help="the comparison's tolerance (default 0.02)")
    rep.add_argument("--threshold", action="append", default=[], metavar="ID=MIN[:MAX]",
                     help="an item passes when its score is within bounds (default MIN 0.5)")
    _comparison_rules(rep)
    _failure_budget(rep)
    rep.add_argument("-o", "--output", default="report.html",
                     help="the HTML file to write (default report.html)")
    links = rep.add_mutually_exclusive_group()
    links.add_argument("--view-url", metavar="URL", default=None, type=_view_url,
                       help="link each run to its page in the `scorecore view` workbench at "
                            "URL (default: a workbench running over the same store, if any)")
    links.add_argument("--no-view-links", action="store_true",
                       help="no links to a running workbench")
    label_flags(rep, required=False)
    rep.add_argument("--min-kappa", type=_kappa, default=None, metavar="K",
                     help="with --labels, a gate of the page's verdict: each scorer's kappa "
                          "interval must lie above K")


def _datasets_command(datasets: argparse.ArgumentParser) -> None:
    """``datasets ACTION``: one sub-command per action, each with its own flags."""
    actions = datasets.add_subparsers(dest="action", metavar="ACTION", required=True,
                                      parser_class=_Parser)
    add = actions.add_parser("add", help="store a JSONL, CSV or Parquet file as a version")
    add.add_argument("name", metavar="NAME", help="the dataset's name")
    add.add_argument("file", metavar="FILE", help="the dataset file")
    add.add_argument("--format", choices=("jsonl", "csv", "parquet"), default=None,
                     help="how FILE is written (default: from its suffix)")
    listing = actions.add_parser("list", help="list the stored versions")
    listing.add_argument("name", metavar="NAME", nargs="?", help="only this dataset's")
    show = actions.add_parser("show", help="describe a version (or print its items)")
    show.add_argument("spec", metavar="NAME[@V]", help="NAME, NAME@v3 or NAME@<hash prefix>")
    show.add_argument("--items", action="store_true",
                      help="print the version's items as JSON lines (in id order)")
    diff = actions.add_parser("diff", help="the items added, removed and changed between two")
    diff.add_argument("old", metavar="NAME@A", help="the older version")
    diff.add_argument("new", metavar="NAME@B", help="the newer version")
    traces = actions.add_parser("from-traces", help="store a trace file's agent runs as items")
    traces.add_argument("file", metavar="FILE",
                        help="Mastra JSON traces, or OTLP traces (as eval-traces reads them)")
    traces.add_argument("name", metavar="NAME", help="the dataset's name")
    traces.add_argument("--format", choices=FORMATS, default=None,
                        help="how an OTLP FILE is encoded (default: as eval-traces tells)")
    split = actions.add_parser("split", help="store a version's seeded, stratified parts as "
                                             "versions NAME-PART")
    split.add_argument("spec", metavar="NAME[@V]", help="the version to split")
    split.add_argument("parts", metavar="PART=FRACTION", nargs="+",
                       help="each part's share, in order: train=0.8 test=0.2 (sum 1)")
    split.add_argument("--stratify", metavar="FIELD", default=None,
                       help="split each value of this field in the same shares")
    split.add_argument("--seed", type=_non_negative_int, default=0,
                       help="the seed (default 0; the same seed, the same parts)")
    for command in (add, listing, show, diff, traces, split):
        _store(command)
        command.add_argument("--json", action="store_true", help="print JSON for machines")
