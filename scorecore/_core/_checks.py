"""The kernel's small shared checks: numbers that are not bools, awaiting what may be awaited,
and the misuse error that names a field and its value.

``is_int``, ``is_number``, ``check_count`` and ``misuse`` are public as
:mod:`scorecore.validators`, the one home the kernel's layers and the adapters use.

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

__all__ = ["check_count", "is_int", "is_number", "misuse"]

T = TypeVar("T")


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool`` (``True`` is an ``int`` to Python, never a count).

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An ``int`` or ``float`` that is not a ``bool`` (finite or not).

    >>> is_number(2.5), is_number(float("nan")), is_number(False), is_number("2.5")
    (True, True, False, False)
    """
    return isinstance(value, int | float) and not isinstance(value, bool)


def misuse(
    field: str, value: object, problem: str, *, scorer_id: str | None = None
) -> ScorerDefinitionError:
    """The error for a wrong option: ``"<field> <problem>, got <value, cut short>"``.

    The value is shown with a bounded repr that never raises (a 2 MB string, an object whose
    ``__repr__`` raises); the error carries ``field`` and ``value`` as attributes. With
    ``scorer_id`` the message starts with ``"scorer '<id>': "`` and the error names the scorer.

    Args:
        field: the option, as the user spells it (``"ModelSettings.timeout"``).
        value: the value given.
        problem: what is wrong, worded to follow the field (``"must be an int >= 0"``).
        scorer_id: the scorer being built, when the option is a scorer factory's.

    Returns:
        The error, for the caller to raise.

    >>> misuse("LiveScorer.max_queue", -1, "must be an int >= 0")
    ScorerDefinitionError('LiveScorer.max_queue must be an int >= 0, got -1')
    >>> error = misuse("threshold", "x" * 500, "must be a number", scorer_id="tone")
    >>> str(error)[:48], error.scorer_id, error.field
    ("scorer 'tone': threshold must be a number, got '", 'tone', 'threshold')
    """
    prefix = "" if scorer_id is None else f"scorer {scorer_id!r}: "
    return ScorerDefinitionError(
        f"{prefix}{field} {problem}, got {short_repr(value)}",
        scorer_id=scorer_id, field=field, value=value,
    )


def check_count(field: str, value: object, *, minimum: int) -> int:
    """``value`` when it is an int (not a bool) ``>= minimum``; else the misuse error.

    >>> check_count("LiveScorer.max_queue", 0, minimum=0)
    0
    >>> check_count("LiveScorer.max_queue", True, minimum=0)
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: LiveScorer.max_queue must be an int >= 0, got True
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
