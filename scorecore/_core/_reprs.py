"""Bounded, never-raising reprs of arbitrary values, for error messages.

An error message names the offending value, but a value can be anything a user or a judge sent:
a 2 MB string, an integer too long for ``repr`` (more than 4,300 digits raises ``ValueError``),
a list nested 100,000 deep (``RecursionError``), an object whose ``__repr__`` raises. A message
built from such a value must stay short and must never itself raise.

>>> short_repr("urgent")
"'urgent'"
>>> short_repr("x" * 1_000, limit=10)
"'xxxxxxxxx… (1,000 chars)"
>>> short_repr(10**5000)
'<int of 5,001 digits>'
"""

from __future__ import annotations

import math
import reprlib

__all__: list[str] = []  # internal: used to build error messages

REPR_LIMIT = 200
"""The default number of characters of a value shown in a message."""

# Above this many bits an int's decimal text may exceed Python's 4,300-digit limit for str().
_INT_BITS = 4_000
_LOG10_2 = math.log10(2)


def _int_digits(value: int) -> int:
    # Exact for the sizes we describe: the bit-length estimate is within one digit, and one
    # comparison with a power of ten (cheap integer arithmetic, no str()) settles it.
    estimate = max(1, math.floor((abs(value).bit_length() - 1) * _LOG10_2) + 1)
    return estimate + 1 if abs(value) >= 10**estimate else estimate


class _Repr(reprlib.Repr):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxstring = max(limit, 8)
        self.maxother = max(limit, 8)
        self.maxlong = max(limit, 8)

    def repr_int(self, x: int, level: int) -> str:
        if abs(x).bit_length() > _INT_BITS:
            return f"<int of {_int_digits(x):,} digits>"
        return super().repr_int(x, level)


def _size_note(value: object) -> str:
    if isinstance(value, str):
        return f" ({len(value):,} chars)"
    if isinstance(value, bytes | bytearray):
        return f" ({len(value):,} bytes)"
    try:
        size = len(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - len() of an arbitrary object may raise anything
        return ""
    return f" ({type(value).__name__} of {size:,} item{'' if size == 1 else 's'})"


def _bounded(value: object, limit: int) -> str:
    if isinstance(value, str | bytes | bytearray):
        # Slice first: repr of a 2 MB string is never built.
        head = repr(value[: limit + 1])
        return head if len(value) <= limit and len(head) <= limit else head[:limit] + "…"
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value).bit_length() > _INT_BITS:
            return f"<int of {_int_digits(value):,} digits>"
        text = repr(value)
    else:
        text = _Repr(limit).repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def short_repr(value: object, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` cut to about ``limit`` characters; never raises.

    A cut value ends with ``…`` and, when it has a length, says how long it was. Nested
    containers are shown to a depth of 4 and a few items per level (:mod:`reprlib`).

    Args:
        value: anything.
        limit: the number of characters of the value's repr to keep.

    Returns:
        The bounded repr.

    >>> short_repr([[[[[[1]]]]]])
    '[[[[[...]]]]] (list of 1 item)'
    >>> short_repr(list(range(10_000)))
    '[0, 1, 2, 3, 4, 5, ...] (list of 10,000 items)'
    """
    try:
        text = _bounded(value, limit)
    except Exception:  # noqa: BLE001 - a value's repr is user code; a message must not fail
        return f"<{type(value).__name__} object (repr failed)>"
    # reprlib marks what it left out with "..."; say how big the value really was.
    if text.endswith("…") or "..." in text:
        return text + _size_note(value)
    return text
