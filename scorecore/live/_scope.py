"""The live-scoring scope: :func:`live_scoring`'s task group, defaults and reported problems.

Nothing that goes wrong in the background reaches the caller: it is a :class:`LiveScoringError`
handed to ``on_error`` and recorded on the innermost active scope.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Literal, TypeAlias, final

import anyio
import anyio.abc
import attrs

from scorecore._core._redact import redact_text
from scorecore._core._values import ScorerRunError
from scorecore.live._admission import (
    _DEFAULT_MAX_CONCURRENCY,
    _DEFAULT_MAX_QUEUE,
    _checked_concurrency,
    _checked_queue,
)

__all__ = [
    "LiveScoringError",
    "LiveScoringErrorKind",
    "LiveScoringScope",
    "OnError",
    "live_scoring",
]


LiveScoringErrorKind: TypeAlias = Literal[
    "not_scheduled", "queue_full", "extract_raised", "filter_raised", "scorer_failed",
    "scorer_raised", "sink_raised",
]
"""What went wrong in the background (see :class:`LiveScoringError`)."""


@final
@attrs.frozen(kw_only=True)
class LiveScoringError:
    """A problem in background scoring, reported instead of raised.

    Attributes:
        kind: ``not_scheduled`` (no task group, or it was closed) · ``queue_full`` (every
            slot busy and the queue full: the call was dropped; reported for the first drop
            after the queue last had room, later ones are only counted in
            :attr:`LiveStats.dropped`) · ``extract_raised``
            (``input_from``/``output_from``/``trace_id_from`` raised; the call was skipped) ·
            ``filter_raised`` (skipped, fail closed) · ``scorer_failed`` (the run returned
            ``Failure``; see ``run_error``) · ``scorer_raised`` (a scorer broke its contract
            and raised) · ``sink_raised`` (the score was computed but not delivered).
        message: a readable description, secrets redacted (it may quote a failed run's
            cause, which may quote a reply; see :func:`~scorecore.redact_secrets`).
        entity: the function or step scored.
        scorer_id: the scorer concerned, when there is one.
        run_id: the run id, once assigned.
        trace_id: the call's trace id, when known.
        run_error: the failed run, for ``scorer_failed``.
        exception: the exception raised, for the ``*_raised`` and ``not_scheduled`` kinds.
    """

    kind: LiveScoringErrorKind
    message: str = attrs.field(converter=redact_text)
    entity: str
    scorer_id: str | None = None
    run_id: str | None = None
    trace_id: str | None = None
    run_error: ScorerRunError | None = attrs.field(default=None, eq=False, repr=False)
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)


OnError: TypeAlias = Callable[[LiveScoringError], None]
"""Receives background-scoring problems; synchronous. What it raises is logged and dropped."""


@final
class LiveScoringScope:
    """An active :func:`live_scoring` block: its task group, its defaults and its problems.

    ``max_concurrency`` and ``max_queue`` are the limits for the scorers that set none.
    """

    __slots__ = ("_errors", "max_concurrency", "max_queue", "on_error", "task_group")

    def __init__(self, task_group: anyio.abc.TaskGroup, on_error: OnError | None, *,
                 max_concurrency: int = _DEFAULT_MAX_CONCURRENCY,
                 max_queue: int = _DEFAULT_MAX_QUEUE) -> None:
        self.task_group = task_group
        self.on_error = on_error
        self.max_concurrency = _checked_concurrency("live_scoring", max_concurrency)
        self.max_queue = _checked_queue("live_scoring", max_queue)
        self._errors: list[LiveScoringError] = []

    @property
    def errors(self) -> tuple[LiveScoringError, ...]:
        """Every problem reported while this scope was active, in order."""
        return tuple(self._errors)

    def _record(self, error: LiveScoringError) -> None:
        self._errors.append(error)


_SCOPE: contextvars.ContextVar[LiveScoringScope | None] = contextvars.ContextVar(
    "scorecore_live_scoring_scope", default=None
)


@contextlib.asynccontextmanager
async def live_scoring(
    *,
    task_group: anyio.abc.TaskGroup | None = None,
    on_error: OnError | None = None,
    max_concurrency: int | None = None,
    max_queue: int | None = None,
) -> AsyncIterator[LiveScoringScope]:
    """Run the enclosed code with a task group for background scoring.

    Without ``task_group``, a new task group is created and leaving the block normally waits
    for every accepted call, running or queued, to be scored (at most ``max_concurrency +
    max_queue`` per scorer, so the wait is bounded by the queue, not by the traffic). Leaving
    it by an exception or a cancellation cancels the group: queued calls are dropped at once
    and running ones are cancelled at their next checkpoint (counted as ``cancelled``). With
    ``task_group`` (one you own, e.g. your server's), that group is used and leaving the
    block does not wait; cancel your group to stop the scoring. Scopes nest; the innermost
    wins.

    Args:
        task_group: an existing anyio task group to schedule scoring in.
        on_error: receives problems of scorers that have no ``on_error`` of their own.
        max_concurrency: calls each scorer without its own ``max_concurrency`` scores at
            once (default 16).
        max_queue: calls each scorer without its own ``max_queue`` keeps waiting (default
            1,000).

    Raises:
        ValueError: ``max_concurrency`` is not an int >= 1 or ``max_queue`` not an int >= 0.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> from scorecore.live import scored
    >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    >>> records = []
    >>> @scored(one, sink=records.append)
    ... async def shout(text: str) -> str:
    ...     return text.upper()
    >>> async def main() -> str:
    ...     async with live_scoring():
    ...         return await shout("hi")
    >>> anyio.run(main), [(r.scorer_id, r.score, r.result.run.input) for r in records]
    ('HI', [('one', 1.0, 'hi')])
    """
    # Checked here so that misuse raises before a task group is started.
    limits = {
        "max_concurrency": _checked_concurrency(
            "live_scoring", _DEFAULT_MAX_CONCURRENCY if max_concurrency is None
            else max_concurrency),
        "max_queue": _checked_queue(
            "live_scoring", _DEFAULT_MAX_QUEUE if max_queue is None else max_queue),
    }
    if task_group is not None:
        with _current(LiveScoringScope(task_group, on_error, **limits)) as scope:
            yield scope
        return
    async with anyio.create_task_group() as group:
        with _current(LiveScoringScope(group, on_error, **limits)) as scope:
            yield scope


@contextlib.contextmanager
def _current(scope: LiveScoringScope) -> Iterator[LiveScoringScope]:
    # The innermost scope wins while its block runs; the enclosing one is back after it.
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)
