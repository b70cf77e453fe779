"""The runtime ports: the only way time, sleeping and fresh ids reach the core.

This module is the single place in :mod:`scorecore` allowed to import :mod:`time` and
:mod:`uuid` (enforced by import-linter and ruff's banned-api); everything else receives a
:class:`Runtime` and stays deterministic when fakes are injected.
"""

from __future__ import annotations

import time
import uuid
from typing import Protocol, final

import anyio
import attrs

from scorecore._core._meter import JudgeMeter

__all__ = ["Clock", "NewId", "Runtime", "Sleep", "WallClock"]


class Clock(Protocol):
    """A monotonic clock.

    Contract: returns the current time in seconds as a float that never decreases between
    calls. Must not raise.
    """

    def __call__(self) -> float: ...


class WallClock(Protocol):
    """The calendar time, for reading dates such as an HTTP ``Retry-After``.

    Contract: returns the current time in seconds since the Unix epoch (UTC) as a float; it
    may jump (unlike a :class:`Clock`). Must not raise.
    """

    def __call__(self) -> float: ...


class Sleep(Protocol):
    """Waits for a number of seconds.

    Contract: returns after (virtually or really) ``seconds`` have passed; ``seconds`` is
    finite and ``>= 0``. Cancellation propagates as the running event loop's cancellation
    exception; nothing else is raised.
    """

    async def __call__(self, seconds: float, /) -> None: ...


class NewId(Protocol):
    """Produces a fresh run id.

    Contract: returns a non-empty string; must not raise.
    """

    def __call__(self) -> str: ...


def _uuid4() -> str:
    return str(uuid.uuid4())


async def _anyio_sleep(seconds: float, /) -> None:
    await anyio.sleep(seconds)


def _epoch() -> float:
    return time.time()


@final
@attrs.frozen(kw_only=True)
class Runtime:
    """The effects a scorer run needs: a clock, a way to sleep, an id source, and a meter.

    Attributes:
        clock: monotonic seconds, for durations and retry waits (``time.monotonic``).
        sleep: waits that many seconds (``anyio.sleep``).
        new_id: a fresh run id (``uuid4``).
        wall_clock: seconds since the epoch (``time.time``); only read to turn an HTTP-date
            ``Retry-After`` into a wait.
        meter: what the judge calls go through — cache, prices, budget, trial index
            (:class:`~scorecore.judge.economics.JudgeMeter`); ``None`` for none.

    Every field defaults to the real one. Inject fakes to make runs deterministic, e.g. a
    virtual clock so retries never wait:

    >>> rt = Runtime(new_id=lambda: "run-1")
    >>> rt.new_id()
    'run-1'
    """

    clock: Clock = attrs.field(default=time.monotonic)
    sleep: Sleep = attrs.field(default=_anyio_sleep)
    new_id: NewId = attrs.field(default=_uuid4)
    wall_clock: WallClock = attrs.field(default=_epoch)
    meter: JudgeMeter | None = None


DEFAULT_RUNTIME = Runtime()
