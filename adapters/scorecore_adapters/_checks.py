"""The adapters' small shared helpers: awaiting what may be awaited, an attrs validator for
optional callables.

The validators themselves (``is_int``, ``is_number``, ``misuse``, ``check_count``) are the
kernel's public :mod:`scorecore.validators`; the adapters import them from there.

>>> import anyio
>>> async def three() -> int:
...     return 3
>>> anyio.run(maybe_await, three()), anyio.run(maybe_await, 3)
(3, 3)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, TypeVar

from scorecore.validators import misuse

__all__: list[str] = []  # internal: used by the adapters

T = TypeVar("T")


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
