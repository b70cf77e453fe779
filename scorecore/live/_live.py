"""Live scoring: score what a function returns, in the background, without touching the caller.

Wrap an async (or sync) function with :func:`scored` — or call :meth:`LiveScorer.submit`
from a workflow step — and every call schedules a background job in an anyio task group:

1. the input and output are taken from the call (``input_from`` / ``output_from``); the
   default input (the bound arguments) and the ``request_context`` pass through
   :func:`~scorecore.redact_secrets` first, so an ``api_key=`` argument is never scored or
   recorded — give ``input_from`` to choose exactly what is scored;
2. the ``sampling`` decides as soon as the call is offered, deterministically from the trace
   id (else the run id), exactly as Mastra does:
   ``int.from_bytes(sha256(key).digest()[:6]) / 2**48 < rate``; a call it skips is counted
   (``sampled_out``) and never queued, so a burst keeps every sampled call the queue can hold;
3. the ``filter`` predicate decides, in the background; if it raises, the call is skipped
   (fail closed). Mastra asks the filter first: the same calls are scored either way (the
   sampling is a hash), but here the filter is not asked about calls the sampling skipped;
4. each scorer runs; each successful result goes to the ``sink`` as a
   :class:`~scorecore.traces.ScoreRecord`.

The caller gets its value back unchanged as soon as the job is scheduled. Each
:class:`LiveScorer` scores at most ``max_concurrency`` calls at once (default 16) and keeps
at most ``max_queue`` more waiting (default 1,000), first come first served; a call arriving
when the queue is full is dropped and counted, never waited for; :attr:`LiveScorer.stats`
gives the counts. Nothing that goes wrong in the background (a failing scorer, a raising
filter or sink) reaches the caller: it is reported as a :class:`LiveScoringError` to
``on_error``, recorded on the active :func:`live_scoring` scope, and otherwise logged to the
``scorecore.live`` logger.

The task group is the one given as ``task_group=``, else the innermost active
:func:`live_scoring` scope's. Without either, the call is not scored (reported as
``not_scheduled``); the caller is still unaffected.

Sampling and admission are plain bookkeeping done synchronously in the caller's call (no
lock, no await; with a ratio sampling ``trace_id_from`` runs there, what it raises is
reported, never raised): a sampled call takes a free slot, else a queue place, else is
dropped. Every accepted call is one
task in the task group, so a task group that is cancelled stops the queued calls at once and
a :func:`live_scoring` block that ends normally waits for them. The bookkeeping is not
thread-safe: use one ``LiveScorer`` from one event loop at a time.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import inspect
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypeVar, cast, final

import anyio
import anyio.abc
import attrs
from returns.result import Failure

from scorecore._core._checks import check_count, is_number, misuse, optional_callable
from scorecore._core._errors import ScorerRunError
from scorecore._core._redact import redact_secrets
from scorecore._core._runtime import DEFAULT_RUNTIME, Runtime
from scorecore._core._scorer import Scorer
from scorecore.traces._sinks import ScoreRecord, ScoreSink, deliver

__all__ = [
    "LiveCall",
    "LiveScorer",
    "LiveScoringError",
    "LiveScoringErrorKind",
    "LiveScoringScope",
    "LiveStats",
    "NoSampling",
    "OnError",
    "RatioSampling",
    "Sampling",
    "live_scoring",
    "sample_point",
    "scored",
]

_LOG = logging.getLogger("scorecore.live")
_F = TypeVar("_F", bound=Callable[..., Any])
AnyScorer = Scorer[Any, Any, Any, Any]

# Enough to keep a judge busy without flooding it or the event loop (issue 10: 3,000 judge
# calls started at once sent no request in 180 s); a queue that absorbs a burst.
_DEFAULT_MAX_CONCURRENCY = 16
_DEFAULT_MAX_QUEUE = 1000


def sample_point(key: str) -> float:
    """Where ``key`` falls in ``[0, 1)``: the first 6 bytes of its SHA-256, over ``2**48``.

    A ratio sampling with rate ``r`` scores a call iff ``sample_point(key) < r``; the same
    key always gets the same point, so every scorer on one trace decides alike.

    >>> sample_point("trace-1") == sample_point("trace-1")
    True
    >>> 0.0 <= sample_point("anything") < 1.0
    True
    """
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:6], "big") / 2**48


@final
@attrs.frozen(kw_only=True)
class NoSampling:
    """Score every call (Mastra's ``{type: 'none'}``, and the default)."""

    type: Literal["none"] = attrs.field(default="none", init=False)

    def decide(self, key: str) -> bool:
        """Always ``True``."""
        return True


def _check_rate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not is_number(value) or not 0.0 <= value <= 1.0:
        raise misuse("RatioSampling.rate", value, "must be a number in [0, 1]")


@final
@attrs.frozen(kw_only=True)
class RatioSampling:
    """Score a deterministic fraction ``rate`` of calls, keyed on the trace or run id.

    >>> RatioSampling(rate=1.0).decide("t"), RatioSampling(rate=0.0).decide("t")
    (True, False)
    >>> RatioSampling(rate=1.5)
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: RatioSampling.rate must be a number in [0, 1], got 1.5
    """

    rate: float = attrs.field(validator=_check_rate)
    type: Literal["ratio"] = attrs.field(default="ratio", init=False)

    def decide(self, key: str) -> bool:
        """Whether a call keyed ``key`` is scored: ``sample_point(key) < rate``."""
        return sample_point(key) < self.rate


Sampling: TypeAlias = NoSampling | RatioSampling
"""How many calls to score: all of them, or a deterministic ratio."""


def _checked_concurrency(owner: str, value: object) -> int:
    return check_count(f"{owner}.max_concurrency", value, minimum=1)


def _checked_queue(owner: str, value: object) -> int:
    return check_count(f"{owner}.max_queue", value, minimum=0)


def _check_limit(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if attribute.name == "max_concurrency":
        _checked_concurrency("LiveScorer", value)
    else:
        _checked_queue("LiveScorer", value)


def _to_sampling(value: object) -> Sampling:
    if isinstance(value, NoSampling | RatioSampling):
        return value
    if value is None or value == "none":
        return NoSampling()
    if isinstance(value, Mapping) and value.get("type") == "none":
        return NoSampling()
    if isinstance(value, Mapping) and value.get("type") == "ratio" and "rate" in value:
        return RatioSampling(rate=value["rate"])
    raise ValueError(
        "sampling must be NoSampling(), RatioSampling(rate=...), 'none', None, or Mastra's "
        f"{{'type': 'none'}} / {{'type': 'ratio', 'rate': r}}, got {value!r}"
    )


@final
@attrs.frozen(kw_only=True)
class LiveCall:
    """What a live-scoring ``filter`` sees about a call."""

    entity: str
    input: Any
    output: Any
    run_id: str
    trace_id: str | None = None
    request_context: Mapping[str, Any] | None = None


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
        message: a readable description.
        entity: the function or step scored.
        scorer_id: the scorer concerned, when there is one.
        run_id: the run id, once assigned.
        trace_id: the call's trace id, when known.
        run_error: the failed run, for ``scorer_failed``.
        exception: the exception raised, for the ``*_raised`` and ``not_scheduled`` kinds.
    """

    kind: LiveScoringErrorKind
    message: str
    entity: str
    scorer_id: str | None = None
    run_id: str | None = None
    trace_id: str | None = None
    run_error: ScorerRunError | None = attrs.field(default=None, eq=False, repr=False)
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)


OnError: TypeAlias = Callable[[LiveScoringError], None]
"""Receives background-scoring problems; synchronous. What it raises is logged and dropped."""


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
        scope = LiveScoringScope(task_group, on_error, **limits)
        token = _SCOPE.set(scope)
        try:
            yield scope
        finally:
            _SCOPE.reset(token)
        return
    async with anyio.create_task_group() as group:
        scope = LiveScoringScope(group, on_error, **limits)
        token = _SCOPE.set(scope)
        try:
            yield scope
        finally:
            _SCOPE.reset(token)


def _to_scorers(value: Sequence[AnyScorer]) -> tuple[AnyScorer, ...]:
    return tuple(value)


def _check_scorers(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    scorers = cast(tuple[object, ...], value)
    if not scorers:
        raise ValueError("LiveScorer.scorers must hold at least one Scorer, got none")
    for index, scorer in enumerate(scorers):
        if not isinstance(scorer, Scorer):
            raise TypeError(
                f"LiveScorer.scorers[{index}] must be a Scorer (with a generate_score step), "
                f"got {scorer!r:.200}"
            )


def _default_input(signature: inspect.Signature | None, args: tuple[Any, ...],
                   kwargs: Mapping[str, Any]) -> Any:
    """The call's arguments as the scorer input, secrets redacted by argument name first.

    A single argument is unwrapped only after its ``{name: value}`` mapping went through
    :func:`redact_secrets`, so ``call(api_key="…")`` is stored as ``"[REDACTED]"``.
    """
    if len(args) == 1 and not kwargs:
        name = _single_name(signature, args)
        if name is None:
            return redact_secrets(args[0])
        return redact_secrets({name: args[0]})[name]
    if not args and len(kwargs) == 1:
        name, value = next(iter(kwargs.items()))
        return redact_secrets({name: value})[name]
    if signature is None:
        return redact_secrets({"args": list(args), "kwargs": dict(kwargs)})
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return redact_secrets(dict(bound.arguments))


def _single_name(signature: inspect.Signature | None, args: tuple[Any, ...]) -> str | None:
    """The parameter name a lone positional argument binds to, when the signature says."""
    if signature is None:
        return None
    try:
        bound = signature.bind_partial(*args)
    except TypeError:
        return None
    # A ``*args`` parameter binds a tuple, not the value: no name to judge it by then.
    named = [name for name, value in bound.arguments.items() if value is args[0]]
    return named[0] if len(named) == 1 else None


@final
@attrs.frozen(kw_only=True)
class _Call:
    entity: str
    input: Any = None
    output: Any = None
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = attrs.field(factory=dict)
    signature: inspect.Signature | None = None
    from_call: bool = False
    trace_id: str | None = None
    run_id: str | None = None
    request_context: Mapping[str, Any] | None = None
    # Sampled when offered: trace_id and run_id are final, the sampling already said yes.
    sampled: bool = False


@final
@attrs.frozen(kw_only=True)
class LiveScorer:
    """Scorers attached to live calls, with sampling, a filter and a sink.

    Use it as a decorator (see :func:`scored`, which builds one) or call :meth:`submit` with
    an input and output, e.g. after a workflow step succeeds.

    Attributes:
        scorers: the scorers to run on each sampled call (at least one).
        sampling: ``NoSampling()`` (default), ``RatioSampling(rate=r)``, ``"none"``, or
            Mastra's ``{"type": "ratio", "rate": r}``.
        filter: ``filter(LiveCall) -> bool`` decides first; raising or falsy skips the call.
        sink: receives a :class:`ScoreRecord` per successful run (sync or async callable).
        on_error: receives each :class:`LiveScoringError` (default: the scope's, else a log).
        task_group: where to schedule (default: the active :func:`live_scoring` scope's).
        runtime: the runtime for the scorer runs and run ids.
        name: the entity name in records (default: the wrapped function's qualified name).
        input_from: ``input_from(*args, **kwargs)`` gives the scorer input, used as
            returned: the way to choose exactly what is scored (and so recorded). Default:
            the only argument, else a dict of the bound arguments with defaults applied,
            passed through :func:`~scorecore.redact_secrets` (``api_key=…``, ``token=…``,
            ``sk-…`` values become ``"[REDACTED]"``).
        output_from: ``output_from(result)`` gives the scorer output (default: the result).
        trace_id_from: ``trace_id_from(*args, **kwargs)`` gives the trace id used for
            sampling and records (default: none; sampling then keys on the run id). With a
            ratio sampling it is asked when the wrapped function returns, in the caller's
            call (a raise is reported as ``extract_raised``, never raised to the caller).
        max_concurrency: calls scored at once, each running its scorers concurrently
            (default: the scope's ``max_concurrency``, else 16). The limit is this scorer's
            own: ``attrs.evolve`` gives a copy with fresh slots and counts.
        max_queue: calls kept waiting for a slot, first come first served (default: the
            scope's ``max_queue``, else 1,000). When every slot is busy and the queue is
            full, a call is dropped: counted in ``stats.dropped``, the first drop after the
            queue last had room reported as ``queue_full``; the caller never waits.
    """

    scorers: tuple[AnyScorer, ...] = attrs.field(converter=_to_scorers,
                                                  validator=_check_scorers)
    sampling: Sampling = attrs.field(default=NoSampling(), converter=_to_sampling)
    filter: Callable[[LiveCall], bool] | None = attrs.field(default=None,
                                                             validator=optional_callable)
    sink: ScoreSink | None = attrs.field(default=None, validator=optional_callable)
    on_error: OnError | None = attrs.field(default=None, validator=optional_callable)
    task_group: anyio.abc.TaskGroup | None = None
    runtime: Runtime | None = None
    name: str | None = None
    input_from: Callable[..., Any] | None = attrs.field(default=None,
                                                        validator=optional_callable)
    output_from: Callable[[Any], Any] | None = attrs.field(default=None,
                                                           validator=optional_callable)
    trace_id_from: Callable[..., str | None] | None = attrs.field(
        default=None, validator=optional_callable
    )
    max_concurrency: int | None = attrs.field(default=None, validator=_check_limit)
    max_queue: int | None = attrs.field(default=None, validator=_check_limit)
    _lane: _Lane = attrs.field(init=False, factory=_Lane, eq=False, repr=False)

    @property
    def stats(self) -> LiveStats:
        """The counts of this scorer's calls now: offered, running, queued, done, dropped.

        >>> from scorecore import create_scorer
        >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
        >>> live = LiveScorer(scorers=[one])
        >>> live.submit(input="i", output="o")  # no task group: dropped, reported
        False
        >>> live.stats.submitted, live.stats.dropped
        (1, 1)
        """
        return self._lane.stats()

    def __call__(self, fn: _F) -> _F:
        """Wrap ``fn`` (async or sync) so each successful call is scored in the background.

        The wrapper returns (or raises) exactly what ``fn`` does; a call that raises is not
        scored. Sync functions must be called from the event loop's thread.
        """
        entity = self.name or getattr(fn, "__qualname__", None) or repr(fn)
        try:
            signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None

        def call_of(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> _Call:
            return _Call(entity=entity, output=result, args=args, kwargs=kwargs,
                         signature=signature, from_call=True)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                result = await fn(*args, **kwargs)
                self._schedule(call_of(args, kwargs, result))
                return result

            return cast(_F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            self._schedule(call_of(args, kwargs, result))
            return result

        return cast(_F, wrapper)

    def submit(
        self,
        *,
        input: Any,
        output: Any,
        trace_id: str | None = None,
        run_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
        entity: str | None = None,
    ) -> bool:
        """Schedule scoring of one input and output; never raises, never waits.

        ``input_from``/``output_from``/``trace_id_from`` are not applied here: the values are
        used as given (choose them so they hold no secret); ``request_context`` passes
        through :func:`~scorecore.redact_secrets`.

        Returns:
            ``True`` if the call was accepted (running or queued; it may still be
            filtered) or the sampling skipped it; ``False`` if it was dropped: every slot
            busy and the queue full (``queue_full``), or no usable task group
            (``not_scheduled``).
        """
        return self._schedule(_Call(
            entity=entity or self.name or "submit", input=input, output=output,
            trace_id=trace_id, run_id=run_id, request_context=request_context,
        ))

    def _schedule(self, call: _Call) -> bool:
        scope = _SCOPE.get()
        lane = self._lane
        lane.submitted += 1
        group = self.task_group or (scope.task_group if scope is not None else None)
        if group is None:
            lane.dropped += 1
            self._report(scope, LiveScoringError(
                kind="not_scheduled", entity=call.entity,
                message=f"{call.entity}: no task group for live scoring; pass task_group= "
                        f"or call it inside `async with live_scoring():`",
            ))
            return False
        if not isinstance(self.sampling, NoSampling):
            # Decided now (a hash of the trace or run id): a call sampling skips never takes
            # a slot or a queue place that a sampled call arriving after it would need.
            sampled = self._sample(call, scope)
            if sampled is None:
                return True
            call = sampled
        limit = self.max_concurrency if self.max_concurrency is not None else (
            scope.max_concurrency if scope is not None else _DEFAULT_MAX_CONCURRENCY)
        max_queue = self.max_queue if self.max_queue is not None else (
            scope.max_queue if scope is not None else _DEFAULT_MAX_QUEUE)
        ticket = lane.accept(limit, max_queue)
        if ticket is None:
            lane.dropped += 1
            if not lane.overflowing:
                lane.overflowing = True
                self._report(scope, LiveScoringError(
                    kind="queue_full", entity=call.entity,
                    message=f"{call.entity}: live scoring is saturated ({limit} running, "
                            f"{max_queue} queued); the call was dropped, and so will be the "
                            f"next ones until the queue has room (see LiveScorer.stats)",
                ))
            return False
        lane.overflowing = False
        try:
            group.start_soon(self._job, call, scope, ticket)
        except Exception as exc:  # noqa: BLE001 - a closed or foreign task group must not reach the caller
            lane.withdraw(ticket)
            lane.dropped += 1
            self._report(scope, LiveScoringError(
                kind="not_scheduled", entity=call.entity, exception=exc,
                message=f"{call.entity}: could not schedule live scoring: "
                        f"{type(exc).__qualname__}: {exc}",
            ))
            return False
        return True

    def _sample(self, call: _Call, scope: LiveScoringScope | None) -> _Call | None:
        """The call with its trace and run ids if the sampling scores it, else ``None``
        (sampled out, or its trace id could not be had: reported and counted failed)."""
        lane = self._lane
        trace_id = call.trace_id
        try:
            if call.from_call and self.trace_id_from is not None:
                trace_id = self.trace_id_from(*call.args, **call.kwargs)  # user code
            run_id = call.run_id or (self.runtime or DEFAULT_RUNTIME).new_id()
            keep = self.sampling.decide(trace_id if trace_id is not None else run_id)
        except Exception as exc:  # noqa: BLE001 - a user extractor, or a key that is no text
            lane.failed += 1
            self._report(scope, LiveScoringError(
                kind="extract_raised", entity=call.entity, trace_id=None, exception=exc,
                message=f"{call.entity}: taking the trace id to sample the call raised "
                        f"{type(exc).__qualname__}: {exc}; the call was not scored",
            ))
            return None
        if not keep:
            lane.sampled_out += 1
            return None
        return attrs.evolve(call, trace_id=trace_id, run_id=run_id, sampled=True)

    async def _job(self, call: _Call, scope: LiveScoringScope | None, ticket: _Ticket) -> None:
        """One accepted call: wait for a slot if queued, score, count, free the slot."""
        lane = self._lane
        # Anything that escapes (a cancellation of the task group) leaves it "cancelled".
        outcome = "cancelled"
        try:
            if not ticket.admitted:
                ticket.event = anyio.Event()
                await ticket.event.wait()
            outcome = "completed" if await self._score(call, scope) else "failed"
        finally:
            lane.leave(ticket)
            if outcome == "completed":
                lane.completed += 1
            elif outcome == "failed":
                lane.failed += 1
            else:
                lane.cancelled += 1

    def _report(self, scope: LiveScoringScope | None, error: LiveScoringError) -> None:
        if scope is not None:
            scope._record(error)
        handler = self.on_error or (scope.on_error if scope is not None else None)
        if handler is None:
            _LOG.warning("live scoring: %s", error.message)
            return
        try:
            handler(error)
        except Exception:  # noqa: BLE001 - on_error is user code; it must not break scoring
            _LOG.exception("live scoring: on_error raised while reporting %r", error.message)

    async def _score(self, call: _Call, scope: LiveScoringScope | None) -> bool:
        """Score one call; ``False`` if a problem was reported."""
        runtime = self.runtime or DEFAULT_RUNTIME
        entity = call.entity
        try:
            # input_from, output_from and trace_id_from are user code.
            if call.from_call:
                args, kwargs = call.args, call.kwargs
                scorer_input = (
                    self.input_from(*args, **kwargs) if self.input_from
                    else _default_input(call.signature, args, kwargs)
                )
                trace_id = (
                    call.trace_id if call.sampled
                    else self.trace_id_from(*args, **kwargs) if self.trace_id_from else None
                )
            else:
                scorer_input, trace_id = call.input, call.trace_id
            scorer_output = self.output_from(call.output) if self.output_from else call.output
        except Exception as exc:  # noqa: BLE001 - user extractors; skip the call, report it
            self._report(scope, LiveScoringError(
                kind="extract_raised", entity=entity, exception=exc,
                message=f"{entity}: extracting the input/output/trace id raised "
                        f"{type(exc).__qualname__}: {exc}; the call was not scored",
            ))
            return False
        run_id = call.run_id or runtime.new_id()
        request_context = (None if call.request_context is None
                           else cast(Mapping[str, Any], redact_secrets(call.request_context)))
        if self.filter is not None:
            seen = LiveCall(entity=entity, input=scorer_input, output=scorer_output,
                            run_id=run_id, trace_id=trace_id, request_context=request_context)
            try:
                keep = bool(self.filter(seen))
            except Exception as exc:  # noqa: BLE001 - a user predicate; fail closed
                self._report(scope, LiveScoringError(
                    kind="filter_raised", entity=entity, run_id=run_id, trace_id=trace_id,
                    exception=exc,
                    message=f"{entity}: the filter raised {type(exc).__qualname__}: {exc}; "
                            f"the call was not scored",
                ))
                return False
            if not keep:
                return True
        job = _Job(input=scorer_input, output=scorer_output, run_id=run_id,
                   trace_id=trace_id, request_context=request_context, call=call, scope=scope)
        if len(self.scorers) == 1:
            return await self._run_one(self.scorers[0], job)
        outcomes: list[bool] = []

        async def run_one(scorer: AnyScorer) -> None:
            outcomes.append(await self._run_one(scorer, job))

        async with anyio.create_task_group() as group:
            for scorer in self.scorers:
                group.start_soon(run_one, scorer)
        return all(outcomes)

    async def _run_one(self, scorer: AnyScorer, job: _Job) -> bool:
        """Run one scorer on a job and deliver its record; ``False`` if a problem was reported."""
        entity = job.call.entity

        def error(kind: LiveScoringErrorKind, message: str, *,
                  exception: BaseException | None = None,
                  run_error: ScorerRunError | None = None) -> LiveScoringError:
            return LiveScoringError(
                kind=kind, message=f"{entity}: {message}", entity=entity, scorer_id=scorer.id,
                run_id=job.run_id, trace_id=job.trace_id, exception=exception,
                run_error=run_error,
            )

        try:
            outcome = await scorer.run(
                input=job.input, output=job.output, run_id=job.run_id,
                request_context=job.request_context, runtime=self.runtime,
                extra={"score_source": "live", "entity": entity,
                       "target_trace_id": job.trace_id},
            )
        except Exception as exc:  # noqa: BLE001 - Scorer.run must not raise; if it does, report
            self._report(job.scope, error(
                "scorer_raised", f"scorer {scorer.id!r} raised {type(exc).__qualname__}: {exc}",
                exception=exc,
            ))
            return False
        if isinstance(outcome, Failure):
            failed = outcome.failure()
            self._report(job.scope, error("scorer_failed", str(failed), run_error=failed))
            return False
        if self.sink is None:
            return True
        record = ScoreRecord(
            scorer_id=scorer.id, scorer_name=scorer.name, source="live",
            result=outcome.unwrap(), trace_id=job.trace_id, entity_type="function",
            entity_id=entity, scorer_description=scorer.description,
            has_judge=scorer.has_judge,
        )
        try:
            await deliver(self.sink, record)
        except Exception as exc:  # noqa: BLE001 - the sink is user code
            self._report(job.scope, error(
                "sink_raised",
                f"the sink raised {type(exc).__qualname__}: {exc} for scorer {scorer.id!r}",
                exception=exc,
            ))
            return False
        return True


@final
@attrs.frozen(kw_only=True)
class _Job:
    input: Any
    output: Any
    run_id: str
    trace_id: str | None
    request_context: Mapping[str, Any] | None
    call: _Call
    scope: LiveScoringScope | None


def scored(
    *scorers: AnyScorer,
    sampling: Sampling | Literal["none"] | Mapping[str, Any] | None = None,
    filter: Callable[[LiveCall], bool] | None = None,
    sink: ScoreSink | None = None,
    on_error: OnError | None = None,
    task_group: anyio.abc.TaskGroup | None = None,
    runtime: Runtime | None = None,
    name: str | None = None,
    input_from: Callable[..., Any] | None = None,
    output_from: Callable[[Any], Any] | None = None,
    trace_id_from: Callable[..., str | None] | None = None,
    max_concurrency: int | None = None,
    max_queue: int | None = None,
) -> LiveScorer:
    """A decorator scoring each call of a function in the background (see :class:`LiveScorer`).

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> boom = create_scorer(id="boom", description="d").generate_score(lambda ctx: 1 / 0)
    >>> @scored(boom, sampling=RatioSampling(rate=1.0))
    ... async def echo(text: str) -> str:
    ...     return text
    >>> async def main() -> tuple[str, list[str]]:
    ...     async with live_scoring() as scope:
    ...         value = await echo("unchanged")
    ...     return value, [e.kind for e in scope.errors]
    >>> anyio.run(main)
    ('unchanged', ['scorer_failed'])
    """
    return LiveScorer(
        scorers=scorers, sampling=cast(Any, sampling), filter=filter, sink=sink,
        on_error=on_error, task_group=task_group, runtime=runtime, name=name,
        input_from=input_from, output_from=output_from, trace_id_from=trace_id_from,
        max_concurrency=max_concurrency, max_queue=max_queue,
    )
