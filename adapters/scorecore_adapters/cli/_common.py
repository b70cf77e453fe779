"""What every command shares: the usage error, exit codes, opening a store, printing tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from scorecore.evals import StoreError
from scorecore_adapters.storage import Store, StoreUrl, open_store

DEFAULT_STORE: Final = "sqlite:scorecore.db"
EXIT_PASSED: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_NO_VERDICT: Final = 3
"""``compare``: too few paired items for a verdict (neither a pass nor a regression)."""


class UsageError(Exception):
    """A problem with the command line or its inputs: one line, exit code 2."""


def printable(text: str) -> str:
    """``text`` safe for a terminal: characters that are not printable (ESC, CR, other
    controls) as their Python escapes (``\\x1b``, ``\\r``), so data cannot move the cursor,
    clear the screen or rewrite a line.

    >>> print(printable("x\\x1b[2Jy\\rz"))
    x\\x1b[2Jy\\rz
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def open_url(url: str, *, must_exist: bool = False, read_only: bool = False) -> Store:
    """The store ``url`` names; a bad URL, a missing driver or SQLite file: a usage error."""
    try:
        parsed = StoreUrl.for_store(url)
        store = open_store(parsed, read_only=read_only)
    except (ValueError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    if must_exist and parsed.path is not None and not Path(parsed.path).is_file():
        raise UsageError(f"store {store.url} does not exist")
    return store


def console(out: TextIO) -> Any:
    """A rich console writing to ``out`` (imported only for terminals)."""
    from rich.console import Console  # noqa: PLC0415 - only for terminals

    return Console(file=out)


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    rich_output: bool,
    out: TextIO,
    title: str | None = None,
    styles: Sequence[str | None] | None = None,
) -> None:
    """``rows`` under ``headers``: a rich table on a terminal, aligned plain text otherwise."""
    if rich_output:
        from rich.markup import escape  # noqa: PLC0415 - only for terminals
        from rich.table import Table  # noqa: PLC0415 - only for terminals

        # Cells are data (a reason may hold "[/INST]"), never rich markup.
        table = Table(title=None if title is None else escape(title))
        for index, header in enumerate(headers):
            table.add_column(escape(header), justify="left" if index == 0 else "right")
        for index, row in enumerate(rows):
            table.add_row(*map(escape, row), style=styles[index] if styles else None)
        console(out).print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), file=out)


def print_json(document: Any, out: TextIO) -> None:
    """``document`` as indented JSON (dates and other values as strings)."""
    print(json.dumps(document, indent=2, ensure_ascii=False, default=str), file=out)
