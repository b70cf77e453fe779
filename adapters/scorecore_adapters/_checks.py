"""The adapters' small shared checks: numbers that are not bools, awaiting what may be awaited,
and the misuse error naming a field and its value.

The kernel has its own (``scorecore._core._checks``): the layers contract keeps adapters from
importing a private core module, and these few lines are not worth a public name.

>>> is_int(3), is_int(True), is_number(0.5), is_number(None)
(True, False, True, False)
>>> misuse("RetryPolicy.max_retries", -1, "must be an int >= 0")
ScorerDefinitionError('RetryPolicy.max_retries must be an int >= 0, got -1')
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Awaitable
from typing import Any, TypeGuard, TypeVar

from scorecore import ScorerDefinitionError

__all__: list[str] = []  # internal: used by the adapters

T = TypeVar("T")

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 200


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An ``int`` or ``float`` that is not a ``bool`` (finite or not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def misuse(field: str, value: object, problem: str) -> ScorerDefinitionError:
    """The error for a wrong option: ``"<field> <problem>, got <value, cut short>"``."""
    try:
        shown = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a value's repr is user code; the message must not fail
        shown = f"<{type(value).__name__} object>"
    return ScorerDefinitionError(f"{field} {problem}, got {shown}", field=field, value=value)


def optional_callable(owner: str, name: str) -> Any:
    """An attrs validator: ``<owner>.<name>`` holds a function (or ``None``)."""

    def check(_instance: object, _attribute: object, value: object) -> None:
        if value is not None and not callable(value):
            raise misuse(f"{owner}.{name}", value, "must be callable or None")

    return check


async def maybe_await(value: T | Awaitable[T]) -> T:
    """``value``, awaited first when it is awaitable (delay functions and hooks may be async)."""
    if inspect.isawaitable(value):
        return await value
    return value
