"""The ``httpx.AsyncClient`` s a judge makes for itself: one per event loop, closed with it."""

from __future__ import annotations

import threading
import weakref
from collections.abc import AsyncGenerator
from typing import final

import anyio.lowlevel
import attrs
import httpx

__all__ = ["OwnedClients"]


def _loop_has_ended(loop: object) -> bool:
    # asyncio loops say so. A trio run closes every keeper (which forgets its client) before
    # trio.run returns, so a trio token still listed belongs to a live run.
    is_closed = getattr(loop, "is_closed", None)
    return callable(is_closed) and bool(is_closed())


async def _keeper(
    client: httpx.AsyncClient, owner: weakref.ref[OwnedClients], loop: object
) -> AsyncGenerator[None, None]:
    """Stays suspended at its ``yield`` for as long as ``client`` is in use; closing it closes
    the client.

    Both asyncio (``shutdown_asyncgens``, run by ``asyncio.run`` and ``anyio.run``) and trio
    close the async generators still alive when their event loop ends, so a client is closed
    on its own loop before that loop goes away, even if the model is never closed; the
    model's ``aclose()`` closes it earlier. A model dropped unclosed while its loop runs has
    its keeper closed by that loop's async-generator finaliser (trio adds a
    ``ResourceWarning`` saying so).
    """
    try:
        yield
    finally:
        clients = owner()
        if clients is not None:
            clients.forget(loop, client)
        await client.aclose()


@final
@attrs.frozen(kw_only=True)
class _Owned:
    client: httpx.AsyncClient
    keeper: AsyncGenerator[None, None]


@final
class OwnedClients:
    """The ``httpx.AsyncClient`` s a model created: exactly one per event loop.

    A client's connections belong to the event loop that opened them, so each loop (an
    asyncio loop, a trio run) gets its own client, reused by every call made under it and
    closed when that loop ends or the model is closed. Loops are told apart by anyio's
    event-loop token: its ``native_token`` is the asyncio loop object or the ``TrioToken``,
    one object for the whole life of a loop (``current_token()`` itself makes a new wrapper
    on every call, so it cannot be compared by identity).
    """

    __slots__ = ("__weakref__", "_by_loop", "_lock")

    def __init__(self) -> None:
        self._by_loop: dict[object, _Owned] = {}
        # A model may be shared by event loops running in several threads.
        self._lock = threading.RLock()  # re-entrant: a keeper closed inline may forget itself

    async def get(self) -> httpx.AsyncClient:
        """The client of the running event loop, created on first use."""
        loop = anyio.lowlevel.current_token().native_token
        with self._lock:
            owned = self._by_loop.get(loop)
            if owned is not None:
                return owned.client
            for ended in [key for key in self._by_loop if _loop_has_ended(key)]:
                # Closed without finalising its async generators: nothing can close its
                # client any more; at least do not keep the dead loop alive.
                del self._by_loop[ended]
            client = httpx.AsyncClient()
            keeper = _keeper(client, weakref.ref(self), loop)
            self._by_loop[loop] = _Owned(client=client, keeper=keeper)
        # The first step runs to the ``yield`` without suspending, and registers the keeper
        # with this loop's async-generator hooks; calls arriving meanwhile already see it.
        await anext(keeper)
        return client

    def forget(self, loop: object, client: httpx.AsyncClient) -> None:
        """Drop ``client`` (being closed) if it is still the one listed for ``loop``."""
        with self._lock:
            owned = self._by_loop.get(loop)
            if owned is not None and owned.client is client:
                del self._by_loop[loop]

    async def aclose(self) -> None:
        """Close the running loop's client (a later call creates a new one).

        Clients made under other event loops are not touched: their connections belong to
        those loops, which close them when they end.
        """
        loop = anyio.lowlevel.current_token().native_token
        with self._lock:
            owned = self._by_loop.pop(loop, None)
        if owned is not None:
            await owned.keeper.aclose()
