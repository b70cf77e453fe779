"""A trace or live score sink that saves each score to a :class:`ScoreStore` as it arrives."""

from __future__ import annotations

from typing import Literal

from scorecore.evals._persistence._port import ScoreStore
from scorecore.evals._rows._row import ScoreRow
from scorecore.traces._sinks import ScoreRecord, ScoreSink

__all__ = ["store_sink"]


def store_sink(
    store: ScoreStore,
    *,
    source: Literal["LIVE", "TEST"] | None = None,
    batch_id: str | None = None,
) -> ScoreSink:
    """A sink saving each trace or live score to ``store`` as one :class:`ScoreRow`.

    Pass it as ``sink=`` to :func:`score_trace`, :func:`score_traces`,
    :func:`scored` or :class:`LiveScorer`. Each record becomes
    :meth:`ScoreRow.from_record` (``source`` and ``batch_id`` as there: by default ``"LIVE"``
    for live scoring and ``"TEST"`` for traces, batched by trace id, else run id) and is saved
    at once, idempotently per (run, scorer). The store must be open while scores arrive (keep
    ``async with store`` around the ``live_scoring()`` block). A failing save is reported as
    the sink's failure (``sink_failed`` / ``sink_raised``), never raised to the caller.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> from scorecore.traces import score_trace
    >>> from scorecore_adapters.testing import InMemoryScoreStore
    >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    >>> span = {"spanId": "s", "spanType": "tool_call", "startedAt": "2025-01-01T00:00:00Z"}
    >>> store = InMemoryScoreStore()
    >>> _ = anyio.run(lambda: score_trace(one, {"traceId": "t", "spans": [span]},
    ...                                   sink=store_sink(store)))
    >>> [(r.scorer_id, r.score, r.source, r.batch_id, r.span_id)
    ...  for r in anyio.run(store.list_run, "t")]
    [('one', 1.0, 'TEST', 't', 's')]
    """

    async def save(record: ScoreRecord) -> None:
        await store.save([ScoreRow.from_record(record, source=source, batch_id=batch_id)])

    return save
