"""Admission of live calls: a scorer's slots, its queue of waiting calls and its counts.

Plain bookkeeping done synchronously in the caller's call (no lock, no await): a sampled call
takes a free slot, else a queue place, else is dropped. :class:`LiveStats` is a snapshot.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import final

import anyio
import attrs

from scorecore.validators import check_count

__all__ = ["LiveStats"]

# Enough to keep a judge busy without flooding it or the event loop (3,000 judge calls
# started at once sent no request in 180 s); a queue that absorbs a burst.
_DEFAULT_MAX_CONCURRENCY = 16
_DEFAULT_MAX_QUEUE = 1000


def _checked_concurrency(owner: str, value: object) -> int:
    return check_count(f"{owner}.max_concurrency", value, minimum=1)


def _checked_queue(owner: str, value: object) -> int:
    return check_count(f"{owner}.max_queue", value, minimum=0)


@final
@attrs.frozen(kw_only=True)
class LiveStats:
    """Counts of one :class:`LiveScorer`'s calls, taken at one moment (see ``stats``).

    Every call offered (a wrapped call that returned, or :meth:`LiveScorer.submit`) is counted
    in ``submitted`` and is, at any moment, in exactly one of the other states, so
    ``submitted == sampled_out + dropped + queued + in_flight + completed + failed +
    cancelled``; once nothing is pending and nothing was cancelled, ``sampled_out + completed
    + failed + dropped == submitted``.

    Attributes:
        submitted: calls offered for scoring.
        started: calls that got a slot (those running, and those finished or cancelled after).
        completed: calls scored with nothing to report (filtered calls too).
        failed: calls whose scoring reported a :class:`LiveScoringError` (a scorer failed or
            raised, the sink, filter or an extractor raised).
        dropped: sampled calls never scored because every slot was busy and the queue was
            full, or there was no usable task group (``submit`` returned ``False``).
        cancelled: calls whose task group was cancelled while they were queued or running.
        in_flight: calls being scored now (at most ``max_concurrency``).
        queued: calls waiting for a slot now (at most ``max_queue``).
        sampled_out: calls the sampling skipped, decided when they were offered: they never
            take a slot or a queue place.

    >>> LiveStats(submitted=4, completed=1, dropped=1, queued=1, sampled_out=1)
    LiveStats(submitted=4, started=0, completed=1, failed=0, dropped=1, cancelled=0, \
in_flight=0, queued=1, sampled_out=1)
    """

    submitted: int = 0
    started: int = 0
    completed: int = 0
    failed: int = 0
    dropped: int = 0
    cancelled: int = 0
    in_flight: int = 0
    queued: int = 0
    sampled_out: int = 0


@final
class _Ticket:
    """One accepted call's place: running (``admitted``) or waiting for a slot."""

    __slots__ = ("admitted", "event", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.admitted = False
        # Created by the waiting task itself, so it belongs to that task's event loop.
        self.event: anyio.Event | None = None


@final
class _Lane:
    """A LiveScorer's slots, its queue of waiting calls and its counts.

    Plain bookkeeping, changed only synchronously from the event loop's thread, so it needs
    no lock and works on any backend (and across successive ``anyio.run`` calls).
    """

    __slots__ = ("cancelled", "completed", "dropped", "failed", "in_flight", "overflowing",
                 "sampled_out", "started", "submitted", "waiting")

    def __init__(self) -> None:
        self.submitted = self.started = self.completed = self.failed = 0
        self.dropped = self.cancelled = self.in_flight = self.sampled_out = 0
        # True from a drop until a call is accepted again: one queue_full report per episode.
        self.overflowing = False
        self.waiting: OrderedDict[_Ticket, None] = OrderedDict()

    def stats(self) -> LiveStats:
        return LiveStats(
            submitted=self.submitted, started=self.started, completed=self.completed,
            failed=self.failed, dropped=self.dropped, cancelled=self.cancelled,
            in_flight=self.in_flight, queued=len(self.waiting), sampled_out=self.sampled_out,
        )

    def admit(self, ticket: _Ticket) -> None:
        ticket.admitted = True
        self.in_flight += 1
        self.started += 1

    def accept(self, limit: int, max_queue: int) -> _Ticket | None:
        """A running or queued ticket, or ``None`` when the call must be dropped."""
        ticket = _Ticket(limit)
        if self.in_flight < limit and not self.waiting:
            self.admit(ticket)
        elif len(self.waiting) < max_queue:
            self.waiting[ticket] = None
        else:
            return None
        return ticket

    def withdraw(self, ticket: _Ticket) -> None:
        """Undo :meth:`accept` when the task could not be started (nothing ran in between)."""
        if ticket.admitted:
            self.in_flight -= 1
            self.started -= 1
        else:
            self.waiting.pop(ticket, None)

    def leave(self, ticket: _Ticket) -> None:
        """The ticket's task ended: free its slot or its queue place; admit who is next."""
        if not ticket.admitted:
            self.waiting.pop(ticket, None)
            return
        self.in_flight -= 1
        while self.waiting:
            head = next(iter(self.waiting))
            if self.in_flight >= head.limit:
                break
            self.waiting.popitem(last=False)
            self.admit(head)
            if head.event is not None:
                head.event.set()
