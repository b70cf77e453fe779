"""Rendering user values into messages: short, and never raising.

A value shown in an error (a bad score, a step's wrong return value, an exception's message)
can be anything a user's code produced: a 5,000-digit integer (whose ``repr`` raises
``ValueError``), a list nested 100,000 deep (``RecursionError``), an object whose ``__repr__``
or ``__str__`` raises, a 2 MB string. Building the error must not fail because of it, and the
message must stay readable, so every value goes through :func:`safe_repr` (or
:func:`safe_str` for exception messages) and is cut to a bounded length.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

__all__ = ["safe_repr", "safe_str", "type_name"]

VALUE_LIMIT = 200
"""Default length of a rendered value in a message (characters)."""

MESSAGE_LIMIT = 1000
"""Default length of a rendered exception message (characters)."""

_ELLIPSIS = "…"


def type_name(value: object) -> str:
    """The qualified name of ``value``'s type (``"int"``, ``"MyClass"``)."""
    try:
        return str(type(value).__qualname__)
    except Exception:  # noqa: BLE001 - a metaclass may make even this raise
        return "object"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + _ELLIPSIS


class _Renderer(reprlib.Repr):
    """``reprlib`` with bounds fit for one line of an error message."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        # Depth and width bounds keep deep or huge containers cheap. The whole text is cut
        # to ``limit`` at the end, so the per-item bounds are generous: a long item is cut
        # once, at its end, rather than in its middle by reprlib.
        self.maxlevel = 6
        self.maxtuple = self.maxlist = self.maxarray = self.maxdeque = 30
        self.maxdict = self.maxset = self.maxfrozenset = 30
        self.maxstring = self.maxlong = self.maxother = 2 * limit + 16

    def repr_int(self, x: int, level: int) -> str:
        # Python refuses to print an int of more than 4,300 digits (ValueError); an int too
        # long to show within the limit is named by its size instead.
        if x.bit_length() > 4 * self.maxlong:
            digits = math.floor(math.log10(abs(x))) + 1
            sign = "negative " if x < 0 else ""
            return f"<{sign}int with about {digits} digits>"
        return super().repr_int(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception as exc:  # noqa: BLE001 - a user's __repr__ is a boundary
            return f"<{type_name(x)} object; repr() raised {type_name(exc)}>"
        return _cut(text, self.maxother)


def safe_repr(value: object, limit: int = VALUE_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises for any value.

    >>> safe_repr(10**5000)
    '<int with about 5001 digits>'
    >>> safe_repr("x" * 300, limit=10)
    "'xxxxxxxx…"
    """
    try:
        text = _Renderer(limit).repr(value)
    except Exception as exc:  # noqa: BLE001 - e.g. a user type that poses as a built-in
        text = f"<{type_name(value)} object; repr() raised {type_name(exc)}>"
    return _cut(text, limit)


def safe_str(value: object, limit: int = MESSAGE_LIMIT) -> str:
    """``str(value)`` (e.g. an exception's message) cut to ``limit``; never raises.

    >>> class Broken(Exception):
    ...     def __str__(self) -> str:
    ...         raise RuntimeError
    >>> safe_str(Broken())
    '<Broken object; str() raised RuntimeError>'
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return safe_repr(value, limit)
    try:
        text = str(value)
    except Exception as exc:  # noqa: BLE001 - a user's __str__ is a boundary
        text = f"<{type_name(value)} object; str() raised {type_name(exc)}>"
    return _cut(text, limit)
