"""The command table: each subcommand's help line, arguments and handler, in one place.

The parser is built from the table and ``main`` runs ``COMMANDS[args.command]``: there is no
default arm, so a subcommand cannot exist without its handler (nor a handler without its
subcommand). A new command is one module with its handler and one entry here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Final, TextIO, final

import attrs

from scorecore_adapters.cli._batches import batches
from scorecore_adapters.cli._calibrate import calibrate_command
from scorecore_adapters.cli._compare import compare
from scorecore_adapters.cli._eval import run_eval
from scorecore_adapters.cli._experiments import experiments_arguments, experiments_command
from scorecore_adapters.cli._labels import labels_arguments, labels_command
from scorecore_adapters.cli._parser import (
    _batches_command,
    _calibrate_command,
    _compare_command,
    _eval_command,
    _eval_traces_command,
    _Parser,
    _report_command,
    _show_command,
)
from scorecore_adapters.cli._plan import plan_arguments, plan_command
from scorecore_adapters.cli._report import report
from scorecore_adapters.cli._show import show
from scorecore_adapters.cli._traces import run_eval_traces
from scorecore_adapters.cli._view import view_arguments, view_command

Handler = Callable[[argparse.Namespace, TextIO, TextIO], int]
"""Runs a parsed command: ``handler(args, out, err)`` returns the exit code."""


@final
@attrs.frozen(kw_only=True)
class Command:
    """One subcommand: its help line, the function adding its arguments, and its handler."""

    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Handler


COMMANDS: Final[dict[str, Command]] = {
    "eval": Command(help="evaluate a JSONL dataset with scorers", arguments=_eval_command,
                    run=run_eval),
    "eval-traces": Command(
        help="score every agent run of an OTLP trace file with scorers",
        arguments=_eval_traces_command, run=run_eval_traces,
    ),
    "show": Command(help="list a stored batch's rows and failure causes",
                    arguments=_show_command, run=lambda args, out, err: show(args, out)),
    "batches": Command(help="list the stored batches", arguments=_batches_command,
                       run=lambda args, out, err: batches(args, out)),
    "compare": Command(help="compare two batches; exit 1 on a significant regression",
                       arguments=_compare_command, run=compare),
    "experiments": Command(
        help="list the recorded batches per dataset version: scorer means and verdicts",
        arguments=experiments_arguments,
        run=lambda args, out, err: experiments_command(args, out),
    ),
    "plan": Command(help="how many items a comparison needs to catch a drop of --effect",
                    arguments=plan_arguments, run=lambda args, out, err: plan_command(args, out)),
    "report": Command(help="write a self-contained HTML report of a batch",
                      arguments=_report_command, run=lambda args, out, err: report(args, out)),
    "calibrate": Command(
        help="measure scorers against human labels; exit 1 below --min-kappa",
        arguments=_calibrate_command,
        run=lambda args, out, err: calibrate_command(args, out),
    ),
    "labels": Command(help="export or import human labels (the store's labels table)",
                      arguments=labels_arguments,
                      run=lambda args, out, err: labels_command(args, out)),
    "view": Command(help="browse and label the store's batches in a local web page",
                    arguments=view_arguments, run=view_command),
}
"""Every subcommand by name, in the order ``scorecore --help`` lists them."""


def parser() -> argparse.ArgumentParser:
    """The ``scorecore`` argument parser, one subcommand per :data:`COMMANDS` entry (its errors
    raise :class:`~scorecore_adapters.cli._common.UsageError`)."""
    root = _Parser(prog="scorecore", description="Run scorecore scorers over datasets.")
    sub = root.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, command in COMMANDS.items():
        command.arguments(sub.add_parser(name, help=command.help))
    return root
