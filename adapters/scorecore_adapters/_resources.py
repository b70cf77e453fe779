"""``async with`` for what the adapters hold open (stores, judge caches, HTTP judges): one
definition of entering and leaving, so each resource says only how it opens and closes."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncResource"]


class AsyncResource:
    """Entering ``async with`` runs :meth:`open` (nothing, unless a resource says otherwise)
    and returns the resource; leaving runs :meth:`aclose`, whatever ended the block."""

    __slots__ = ()

    async def open(self) -> None:
        """Make the resource ready now rather than on first use (nothing to do here)."""
        return

    async def aclose(self) -> None:
        """Release what the resource holds (nothing here); it may be used again after."""
        return

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
