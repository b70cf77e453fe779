"""Human labels from a JSONL file, for :func:`scorecore.evals.calibrate` and ``--labels``.

One label per line, keyed by the dataset item's id (the ``id`` of the eval's dataset line;
``#3`` for the fourth line of a dataset without ids)::

    {"id": "q-001", "label": true}
    {"id": "q-002", "label": 4}
    {"id": 17, "label": "good"}

``label`` is a bool, a number or a string (give strings a value with ``label_values``);
integer ids are read as their text, as the eval reads them. Other keys (an annotator, a
note) are ignored. Blank lines are skipped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, final

from scorecore.evals import LabelValue

__all__ = ["LabelFileError", "read_labels"]

_SHOWN: Final = 80


@final
class LabelFileError(ValueError):
    """A labels file that cannot be read, or holds bad lines.

    Attributes:
        path: the file, as given.
        problems: every problem found, one line each (``"labels.jsonl:3: field 'label'
            must be …"``), in file order.
    """

    def __init__(self, path: str, problems: list[str]) -> None:
        more = f" (and {len(problems) - 1} more bad line(s))" if len(problems) > 1 else ""
        super().__init__(f"{problems[0]}{more}")
        self.path = path
        self.problems = tuple(problems)


def _json_text(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):  # pragma: no cover - parsed JSON always dumps
        text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _item_id(value: object) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() <= 64:
        return str(value)
    return None


def _label(value: object) -> tuple[LabelValue | None, str | None]:
    """The label, or why ``value`` is not one."""
    if isinstance(value, bool) or (isinstance(value, str) and value):
        return value, None
    if isinstance(value, int | float):
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an int no float holds (JSON allows 10**400)
            finite = False
        if not finite:
            return None, f"field 'label' must be a finite number, got {_json_text(value)}"
        return value, None
    return None, (f"field 'label' must be true/false, a number or a non-empty string, got "
                  f"{_json_text(value)}")


def _parse(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"
    except ValueError as exc:  # an integer longer than Python's int-from-str digit limit
        return None, f"invalid JSON: {str(exc).split(';')[0]}"


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    # As the eval reads datasets: line numbers are those an editor shows, a UTF-8 BOM is
    # dropped, bytes that are not UTF-8 become U+FFFD.
    with path.open(encoding="utf-8-sig", errors="replace", newline="\n") as handle:
        for number, line in enumerate(handle, start=1):
            text = line.strip()
            if text:
                yield number, text


def read_labels(path: str | Path) -> dict[str, LabelValue]:
    """Read a JSONL labels file: ``{item id: label}``, in file order.

    Raises:
        LabelFileError: the file cannot be read, holds no label, or has bad lines: not JSON,
            not an object, a missing or bad ``id`` or ``label``, an id repeating an earlier
            line's. Every bad line is in :attr:`LabelFileError.problems`, each naming the
            file, the line and the field.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.jsonl"
    >>> _ = path.write_text('{"id": "a", "label": true}\\n{"id": 7, "label": 0.5}\\n')
    >>> read_labels(path)
    {'a': True, '7': 0.5}
    """
    file = Path(path)
    shown = os.fsencode(file).decode("utf-8", "replace")
    labels: dict[str, LabelValue] = {}
    first_line: dict[str, int] = {}
    problems: list[str] = []
    try:
        for number, text in _lines(file):
            problem = _read_line(text, number, labels, first_line)
            if problem is not None:
                problems.append(f"{shown}:{number}: {problem}")
    except OSError as exc:
        raise LabelFileError(shown, [f"cannot read labels file {shown}: "
                                     f"{exc.strerror or exc}"]) from None
    if problems:
        raise LabelFileError(shown, problems)
    if not labels:
        raise LabelFileError(shown, [f"labels file {shown} holds no labels (one JSON object "
                                     f'{{"id": …, "label": …}} per line)'])
    return labels


def _read_line(
    text: str, number: int, labels: dict[str, LabelValue], first_line: dict[str, int]
) -> str | None:
    """Add the line's label to ``labels``, or say why it holds none."""
    value, problem = _parse(text)
    if problem is not None:
        return problem
    if not isinstance(value, dict):
        return (f'expected a JSON object {{"id": …, "label": …}}, got '
                f"{type(value).__name__}")
    if "id" not in value:
        return "field 'id' is missing"
    item = _item_id(value["id"])
    if item is None:
        return (f"field 'id' must be a non-empty string or an integer, got "
                f"{_json_text(value['id'])}")
    if "label" not in value:
        return "field 'label' is missing"
    label, problem = _label(value["label"])
    if label is None:
        return problem
    if item in first_line:
        return f"field 'id': {_json_text(item)} repeats line {first_line[item]}"
    first_line[item] = number
    labels[item] = label
    return None
