"""Reading a JSONL dataset: one item per line, a malformed line becomes a failed item."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final, TextIO, final

from scorecore.evals import InvalidItem, ItemLike
from scorecore.evals.engine import item_from_mapping
from scorecore_adapters.cli._common import clip as _clip

MAX_NESTING: Final = 128
"""The deepest a dataset line may nest arrays and objects (the line's object is level 1)."""

_UNSTORABLE_CHAR = re.compile("[\x00\ud800-\udfff]")



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
        # inside its line); bytes that are not UTF-8 become U+FFFD; a leading UTF-8 BOM
        # (Windows editors write one) is dropped.
        with self.path.open(encoding="utf-8-sig", errors="replace", newline="\n") as handle:
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


