"""The ``scorecore`` command: evaluate a JSONL dataset with scorers from a Python file.

::

    scorecore eval SCORERS --data FILE.jsonl [--target MODULE:FUNCTION] [--concurrency N]
                   [--store sqlite:PATH | postgresql://...] [--threshold ID=MIN[:MAX] ...]
                   [--gate ID ...] [--resume RUN | --batch-id ID] [--output report.json]
    scorecore eval-traces FILE SCORERS [--store ...] [the batch flags of eval]
    scorecore show BATCH [--store ...] [--failures] [--json]
    scorecore batches [--store ...] [--json]
    scorecore compare BASE NEW [--store ...] [--tolerance 0.02] [--threshold ID=MIN[:MAX] ...]
                      [--min-paired N] [--require-same-scorers] [--json]
    scorecore report BATCH [--store ...] [--baseline OTHER] [--require-same-scorers]
                     [-o report.html] [--labels FILE]
    scorecore calibrate BATCH --labels FILE [--store ...] [--scorer ID ...] [--kind KIND]
                        [--threshold X] [--min-kappa K] [--seed N] [--json]

Without ``--store``, rows go to ``scorecore.db`` (SQLite) in the current directory, which
``scorecore show`` reads by default too.

``SCORERS`` is a Python file (``path/to/scorers.py``) or an importable module, optionally
followed by ``:name1,name2`` to pick scorers by id or attribute name. Without a selection the
module's ``scorers`` list is used if it has one, else every module-level ``Scorer``. A module
may also define ``skipped_scorers`` (scorer id → why), reported as skipped.

Exit codes: 0 the verdict passed; 1 it failed (no items, a scorer with no scored run, a
threshold or gate, more failed runs than ``--max-failures`` / ``--max-failure-rate`` allow,
none by default); 2 a usage or
input error (missing file, unknown scorer, unreachable store or missing driver, ``--batch-id``
of a stored batch, ``--resume`` of an unknown one, malformed dataset lines: those lines are
recorded as failed items, the rest still runs, then the command exits 2). The ``--output``
report's ``verdict`` and ``exitCode`` agree with the exit code. ``show``, ``batches``,
``compare`` and ``report`` open the store read-only. ``compare`` exits 1 when a scorer's
regression beyond the tolerance is significant (a CI gate), 3 when a scorer has too few paired
items for a verdict, 0 otherwise; it compares a scorer whose definition changed and marks it
(``--require-same-scorers`` refuses instead).
``calibrate`` exits 1 with ``--min-kappa K`` when a scorer's kappa interval reaches below K
or kappa is undefined.

One module per command (``_eval``, ``_eval_traces``, ``_show``, ``_batches``, ``_compare``,
``_report``, ``_calibrate``), each subcommand's arguments in ``_parser``, and the command table
that joins them (and builds the parser) in ``_commands``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

# Importable here for tests and embedders (explicit re-exports), not the documented surface.
from scorecore_adapters._loading import LoadedScorers as LoadedScorers
from scorecore_adapters._loading import LoadError
from scorecore_adapters._loading import load_scorers as load_scorers
from scorecore_adapters._loading import load_target as load_target
from scorecore_adapters.cli._commands import COMMANDS, parser
from scorecore_adapters.cli._common import EXIT_USAGE, UsageError
from scorecore_adapters.cli._jsonl import MAX_NESTING as MAX_NESTING
from scorecore_adapters.cli._jsonl import JsonlReader as JsonlReader

__all__ = ["main"]



def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    try:
        args = parser().parse_args(argv)
        # What the experiment ledger records as the command (secrets redacted there).
        args.command_line = list(sys.argv[1:] if argv is None else argv)
        # No default: a subcommand is in the parser only through its table entry.
        return COMMANDS[args.command].run(args, stdout, stderr)
    except (UsageError, LoadError) as exc:  # a bad SCORERS or --target reference is usage too
        print(f"scorecore: error: {exc}", file=stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scorecore: interrupted (rows saved so far are kept; resume with --resume RUN)",
              file=stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`scorecore show RUN | head`): stop quietly, like other tools.
        if out is None:
            _silence_stdout()
        return 0


def _silence_stdout() -> None:
    """Point standard output's descriptor at /dev/null: Python flushes it at exit, and a flush
    into the closed pipe would print a second BrokenPipeError. The descriptor is redirected
    (not ``sys.stdout`` replaced by an opened file), so no file object is left to close."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a descriptor (an embedder's stream): nothing flushes into a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
