"""Running the ``scorecore`` command in-process, as the CLI tests do."""

from __future__ import annotations

import io

from scorecore_adapters.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """``scorecore *argv``: its exit code, what it printed and what it wrote to stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def run_eval(*argv: str) -> tuple[int, str, str]:
    """``scorecore eval scorers.py --data data.jsonl --store sqlite:s.db *argv``, run in the
    current directory (a test's work folder holding those files)."""
    return run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db", *argv)
