"""A dataset item (an id and its JSON fields) and the one error every bad input becomes."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, final

import attrs

from scorecore._core._reprs import short_repr
from scorecore.datasets._digest import canonical_json, text_digest
from scorecore.validators import is_int

__all__ = ["DatasetError", "DatasetItem", "IdRule"]

IdRule: TypeAlias = Literal["required", "position"]
"""What an item without an ``id`` gets: ``"required"`` refuses it (the line is named);
``"position"`` gives it ``#N``, its 0-based position among the file's items (the id
``scorecore eval`` gives such an item's rows)."""

MAX_NESTING: Final = 128
"""The deepest an item may nest arrays and objects (the item's object is level 1)."""

_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _suspect(text: str) -> bool:
    """Whether canonical JSON text may hold what no store keeps: a NUL (as its escape), a lone
    surrogate (as is), nesting past the limit. Substring checks first: a regex over every
    item's text is the reader's largest cost otherwise."""
    return ("\\u0000" in text or (not text.isascii() and _SURROGATE.search(text) is not None)
            or text.count("[") + text.count("{") > MAX_NESTING)


@final
class DatasetError(ValueError):
    """A dataset file (or its items) that cannot be read or stored as it is.

    The message names the file, the line (or row) and the field; nothing of the file was
    stored.

    Attributes:
        source: the file (as shown) or what the items came from.
        line: the 1-based line of a text file, or row of a Parquet file; ``None`` when the
            problem is not one line's.
        field: the field at fault (``"id"``, a CSV column), when there is one.
        problem: what is wrong, without the place.

    >>> str(DatasetError("must be a string, got 1.5", source="qa.jsonl", line=3, field="id"))
    "qa.jsonl:3: field 'id': must be a string, got 1.5"
    """

    def __init__(self, problem: str, *, source: str, line: int | None = None,
                 field: str | None = None, unit: str = "line") -> None:
        where = source if line is None else (
            f"{source}:{line}" if unit == "line" else f"{source}: {unit} {line}")
        what = "" if field is None else f"field {short_repr(field, 60)}: "
        super().__init__(f"{where}: {what}{problem}")
        self.source = source
        self.line = line
        self.field = field
        self.problem = problem


def _check_id(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    problem = id_problem(value)
    if problem is not None:
        raise ValueError(f"DatasetItem.id {problem}")


def _check_fields(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, Mapping) or "id" in value:
        raise ValueError(f"DatasetItem.fields must be a mapping without 'id', got "
                         f"{short_repr(value)}")


@final
@attrs.frozen(kw_only=True)
class DatasetItem:
    """One item of a dataset: its id and its fields (JSON), as a file gave them.

    Two items are the same exactly when their ids and their :attr:`digest` are equal; the
    line it was read from is not part of it.

    Attributes:
        id: the item's id, unique in its version.
        fields: the item's other fields: what ``scorecore eval`` reads (``input``,
            ``output``, ``ground_truth``, ``extra`` …) or anything JSON.
        line: where it was read (a line of a text file, a row of a Parquet file), if known.

    >>> item = DatasetItem(id="q1", fields={"input": "2+2?", "output": "4"})
    >>> item.to_json()
    {'id': 'q1', 'input': '2+2?', 'output': '4'}
    >>> item.digest == DatasetItem(id="q1", fields={"output": "4", "input": "2+2?"}).digest
    True
    """

    id: str = attrs.field(validator=_check_id)
    fields: Mapping[str, Any] = attrs.field(validator=_check_fields)
    line: int | None = attrs.field(default=None, eq=False)
    canonical: str = attrs.field(init=False, eq=False, repr=False)
    """The fields' canonical JSON (what a store keeps), made once."""
    digest: str = attrs.field(init=False, eq=False, repr=False)
    """The SHA-256 (hex) of :attr:`canonical` (the id is the key the item is kept under)."""

    def __attrs_post_init__(self) -> None:
        # computed once: a store writes both, and a file's reader checks the text
        text = canonical_json(self.fields)
        object.__setattr__(self, "canonical", text)
        object.__setattr__(self, "digest", text_digest(text))

    def to_json(self) -> dict[str, Any]:
        """The item as one JSON object: ``id`` first, then its fields."""
        return {"id": self.id, **self.fields}


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be an item's id, or ``None``."""
    if not isinstance(value, str) or not value:
        return f"must be a non-empty string, got {short_repr(value)}"
    if _BAD_CHAR.search(value) is not None:
        return f"holds a NUL character or a lone surrogate (no store keeps it): {short_repr(value)}"
    return None


def item_id(value: object) -> str:
    """An id as read from a file: a string, or a whole number taken as its decimal text
    (``scorecore eval`` has always read ``"id": 7`` as ``"7"``).

    Raises:
        ValueError: anything else (a float, true/false, null, an object, a list, "").
    """
    if is_int(value) and value.bit_length() <= 64:
        return str(value)
    problem = id_problem(value)
    if problem is not None:
        raise ValueError(problem.replace("a non-empty string", "a non-empty string (or a "
                                                               "whole number)"))
    return str(value)


def unstorable(value: object) -> tuple[str, str] | None:
    """The first field of ``value`` no store keeps as it is, and why, or ``None``.

    A NUL character or a lone surrogate (a JSON ``"\\ud800"``) in a string or key, nesting
    deeper than :data:`MAX_NESTING`, a NaN or an infinity. Iterative, so a deep value cannot
    exhaust the stack while being checked.
    """
    stack: list[tuple[object, int, str]] = [(value, 1, "")]
    while stack:
        item, level, path = stack.pop()
        if isinstance(item, str):
            found = _BAD_CHAR.search(item)
            if found is not None:
                what = "a NUL character" if found.group() == "\x00" else (
                    f"a lone surrogate {found.group()!r} (not Unicode text)")
                return path or "(key)", f"holds {what}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path, f"{item!r} is not JSON"
        elif isinstance(item, Mapping | list | tuple):
            if level > MAX_NESTING:
                return path, f"nested deeper than {MAX_NESTING} levels"
            entries = item.items() if isinstance(item, Mapping) else enumerate(item)
            for key, child in entries:
                if not isinstance(key, str | int):
                    return path, f"a key {short_repr(key)} is not a string"
                here = (f"{path}.{key}" if path else key) if isinstance(key, str) else (
                    f"{path}[{key}]")
                if isinstance(key, str):
                    stack.append((key, level + 1, here))
                stack.append((child, level + 1, here))
        elif item is not None and not isinstance(item, bool | int):
            return path, f"a {type(item).__name__} is not JSON (store it as a string)"
    return None


def make_item(raw: Mapping[str, Any], *, index: int, line: int | None, source: str,
              ids: IdRule, unit: str = "line") -> DatasetItem:
    """The item one line or row holds (``index``: its 0-based position among the items).

    Raises:
        DatasetError: naming the line and the field.
    """
    # the common case costs one canonical JSON text; the walk naming the field only runs
    # when the text shows a problem (or may: an escaped NUL, deep nesting)
    def fail(problem: str, field: str | None) -> DatasetError:
        return DatasetError(problem, source=source, line=line, field=field, unit=unit)

    if "id" in raw:
        try:
            identity = item_id(raw["id"])
        except ValueError as exc:
            raise fail(str(exc), "id") from None
    elif ids == "position":
        identity = f"#{index}"
    else:
        raise fail("no 'id': every item of a stored dataset needs one (versions are compared "
                   "item by item, by id)", "id")
    fields = {k: v for k, v in raw.items() if k != "id"}
    try:
        item = DatasetItem(id=identity, fields=fields, line=line)
    except (TypeError, ValueError):
        item = None
    if item is None or _suspect(item.canonical):
        bad = unstorable(fields)
        if bad is not None:
            raise fail(bad[1], bad[0])
    if item is None:
        raise fail("not JSON", None)
    return item
