"""The live scorer: :class:`LiveScorer` and :func:`scored` schedule, score and report each call.

How a call flows through sampling, admission, the scope and the scorers is described in
:mod:`scorecore.live`.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast, final

import anyio
import anyio.abc
import attrs
from returns.result import Failure

from scorecore._core._config import optional_callable
from scorecore._core._redact import redact_secrets
from scorecore._core._runtime import DEFAULT_RUNTIME, Runtime
from scorecore._core._scorer import Scorer
from scorecore._core._values import ScorerRunError
from scorecore.live._admission import (
    _DEFAULT_MAX_CONCURRENCY,
    _DEFAULT_MAX_QUEUE,
    LiveStats,
    _checked_concurrency,
    _checked_queue,
    _Lane,
    _Ticket,
)
from scorecore.live._calls import LiveCall, _Call, _default_input, _Job
from scorecore.live._registry import AnyScorer
from scorecore.live._sampling import NoSampling, Sampling, _to_sampling
from scorecore.live._scope import (
    _SCOPE,
    LiveScoringError,
    LiveScoringErrorKind,
    LiveScoringScope,
    OnError,
)
from scorecore.traces._sinks import ScoreRecord, ScoreSink, deliver

__all__ = ["LiveScorer", "scored"]

_LOG = logging.getLogger("scorecore.live")
_F = TypeVar("_F", bound=Callable[..., Any])


def _check_limit(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if attribute.name == "max_concurrency":
        _checked_concurrency("LiveScorer", value)
    else:
        _checked_queue("LiveScorer", value)


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

        def call_of(args: tuple[object, ...], kwargs: dict[str, object], result: object) -> _Call:
            return _Call(entity=entity, output=result, args=args, kwargs=kwargs,
                         signature=signature, from_call=True)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: object, **kwargs: object) -> object:
                result = await fn(*args, **kwargs)
                self._schedule(call_of(args, kwargs, result))
                return result

            return cast(_F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: object, **kwargs: object) -> object:
            result = fn(*args, **kwargs)
            self._schedule(call_of(args, kwargs, result))
            return result

        return cast(_F, wrapper)

    def submit(
        self,
        *,
        input: object,
        output: object,
        trace_id: str | None = None,
        run_id: str | None = None,
        request_context: Mapping[str, object] | None = None,
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
                           else cast(Mapping[str, object], redact_secrets(call.request_context)))
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


def scored(
    *scorers: AnyScorer,
    sampling: Sampling | Literal["none"] | Mapping[str, object] | None = None,
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
    >>> from scorecore.live import RatioSampling, live_scoring
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
