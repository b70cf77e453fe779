"""Running an async entry point from synchronous code (scripts, notebooks, a REPL)."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import anyio
import anyio.lowlevel

__all__: list[str] = []  # internal: Scorer.run_sync and run_evals_sync are the entry points

T = TypeVar("T")
Params = ParamSpec("Params")


def _loop_running() -> bool:
    try:
        anyio.lowlevel.current_token()
    except anyio.NoEventLoopError:
        pass
    else:
        return True
    # anyio sees loops through their tasks; code an asyncio loop calls outside any task (a
    # callback) is only visible to asyncio itself, consulted when something imported it.
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def call_sync(fn: Callable[[], Awaitable[T]], *, what: str, instead: str) -> T:
    """Run ``fn()`` to completion in a new event loop (asyncio) and return its result.

    Raises:
        RuntimeError: an event loop is already running in this thread; the message names
            ``what`` was called and the awaitable form to use ``instead``.
    """
    if _loop_running():
        raise RuntimeError(
            f"{what} cannot be called while an event loop is running in this thread (inside "
            f"async code, a Jupyter cell or an async test); use `{instead}` instead"
        )

    async def main() -> T:
        return await fn()

    return anyio.run(main)


def synchronous(
    fn: Callable[Params, Awaitable[T]], *, name: str, module: str, doc: str
) -> Callable[Params, T]:
    """The blocking twin of the async function ``fn``, with the same parameters.

    ``name``, ``module`` and ``doc`` make it a documented (and doctested) function of
    ``module``; :func:`inspect.signature` shows ``fn``'s parameters.
    """

    @functools.wraps(fn)
    def blocking(*args: Params.args, **kwargs: Params.kwargs) -> T:
        return call_sync(
            lambda: fn(*args, **kwargs), what=f"{name}()", instead=f"await {fn.__name__}(...)"
        )

    blocking.__name__ = blocking.__qualname__ = name
    blocking.__module__ = module
    blocking.__doc__ = doc
    return blocking


async def maybe_await(value: T | Awaitable[T]) -> T:
    """``value``, awaited first when it is awaitable (user hooks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value
