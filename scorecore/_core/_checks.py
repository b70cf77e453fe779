"""The kernel's small shared checks: numbers that are not bools, awaiting what may be awaited,
and the misuse error that names a field and its value.

>>> is_int(3), is_int(True), is_number(2.5), is_number("2.5")
(True, False, True, False)
>>> misuse("Retry.after", -1, "must be a finite number >= 0")
ScorerDefinitionError('Retry.after must be a finite number >= 0, got -1')
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, TypeGuard, TypeVar

import attrs

from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._reprs import short_repr

__all__: list[str] = []  # internal: used across the kernel

T = TypeVar("T")


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool`` (``True`` is an ``int`` to Python, never a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An ``int`` or ``float`` that is not a ``bool`` (finite or not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def misuse(field: str, value: object, problem: str) -> ScorerDefinitionError:
    """The error for a wrong option: ``"<field> <problem>, got <value, cut short>"``."""
    return ScorerDefinitionError(
        f"{field} {problem}, got {short_repr(value)}", field=field, value=value
    )


def check_count(field: str, value: object, *, minimum: int) -> int:
    """``value`` when it is an int (not a bool) ``>= minimum``; else the misuse error.

    >>> check_count("LiveScorer.max_queue", 0, minimum=0)
    0
    """
    if not is_int(value) or value < minimum:
        raise misuse(field, value, f"must be an int >= {minimum}")
    return value


def optional_callable(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An attrs validator: the field holds a function (or ``None``)."""
    if value is not None and not callable(value):
        raise misuse(f"{type(instance).__name__}.{attribute.name}", value,
                     "must be callable or None")


async def maybe_await(value: T | Awaitable[T]) -> T:
    """``value``, awaited first when it is awaitable (user hooks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value
