"""Running the ``scorecore`` command in-process, and reading the SQLite store it wrote, as the
CLI tests do."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

from scorecore_adapters.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """``scorecore *argv``: its exit code, what it printed and what it wrote to stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def eval_folder(folder: Path, scorers: str, outputs: Iterable[str]) -> Path:
    """``folder`` made ready for :func:`run_eval`: ``scorers.py`` holding ``scorers``, and
    ``data.jsonl`` holding one item per output (ids ``q0``, ``q1``, …, input ``"q"``)."""
    (folder / "scorers.py").write_text(scorers)
    (folder / "data.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "input": "q", "output": output}) + "\n"
        for i, output in enumerate(outputs)
    ))
    return folder


def run_eval(*argv: str) -> tuple[int, str, str]:
    """``scorecore eval scorers.py --data data.jsonl --store sqlite:s.db *argv``, run in the
    current directory (a test's work folder holding those files)."""
    return run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db", *argv)


def stored_columns(db: Path, *columns: str, order_by: tuple[str, ...] = ("runId",)
                   ) -> list[tuple[Any, ...]]:
    """``columns`` of every score row in the SQLite store ``db``, ordered by ``order_by``."""
    def quoted(names: tuple[str, ...]) -> str:
        return ", ".join(f'"{name}"' for name in names)

    with closing(sqlite3.connect(db)) as conn:
        select, order = quoted(columns), quoted(order_by)
        # The names are the tests' own literals, never input: nothing to inject.
        query = f"SELECT {select} FROM scorecore_scores ORDER BY {order}"  # noqa: S608
        return conn.execute(query).fetchall()
