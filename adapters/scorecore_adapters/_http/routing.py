"""Where ``use_batch_api`` leaves its router for the HTTP judges to find (a leaf module: the
HTTP judges import it, the batch package sets it, neither imports the other for it)."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from returns.result import Result

    from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse

__all__ = ["ROUTER", "Router"]


class Router(Protocol):
    """Sends a synchronous judge's request through a batch API instead."""

    def routes(self, model: object, /) -> bool:
        """Whether ``model`` 's requests go through the batch API."""
        ...

    async def generate(
        self, model: object, request: JudgeRequest, /
    ) -> Result[JudgeResponse, JudgeError]:
        """Answer ``request`` for ``model`` through its batch judge."""
        ...


ROUTER: contextvars.ContextVar[Router | None] = contextvars.ContextVar(
    "scorecore_batch_router", default=None
)
