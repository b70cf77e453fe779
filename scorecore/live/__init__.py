"""Scoring production traffic: live scoring with sampling, and the registry of named scorers.

Live scoring scores what a function returns, in the background, without touching the caller.
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

One module per concept: ``_sampling`` (which calls), ``_admission`` (slots, queue, counts),
``_scope`` (:func:`live_scoring` and the problems it records), ``_calls`` (what is known about a
call), ``_scorer`` (:class:`LiveScorer`, :func:`scored`), ``_registry`` (named scorers).
"""

from scorecore.live._admission import LiveStats
from scorecore.live._calls import LiveCall
from scorecore.live._registry import Registry, ScorerNotFoundError
from scorecore.live._sampling import NoSampling, RatioSampling, Sampling, sample_point
from scorecore.live._scope import (
    LiveScoringError,
    LiveScoringErrorKind,
    LiveScoringScope,
    OnError,
    live_scoring,
)
from scorecore.live._scorer import LiveScorer, scored

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
    "Registry",
    "Sampling",
    "ScorerNotFoundError",
    "live_scoring",
    "sample_point",
    "scored",
]
