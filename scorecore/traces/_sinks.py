"""Where scores go: :class:`ScoreRecord`, the :data:`ScoreSink` callable, and delivery."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias, final

import attrs

from scorecore._core._values import ScoreResult

__all__ = ["ScoreRecord", "ScoreSink"]


@final
@attrs.frozen(kw_only=True)
class ScoreRecord:
    """A score and where it came from, as delivered to a sink (one row of a score store).

    Attributes:
        scorer_id: the scorer's id.
        scorer_name: the scorer's name.
        source: ``"trace"`` for trace scoring, ``"live"`` for live scoring.
        result: the scorer's result (``score`` or ``not_scorable``).
        trace_id: the trace scored or the live call's trace, when known.
        span_id: the span scored, for trace scoring.
        entity_type: the span type (trace scoring) or ``"function"`` (live scoring).
        entity_id: the span's entity, or the live function's name.
        scorer_description: the scorer's description.
        has_judge: whether the scorer has a prompt step (asks a judge).

    :meth:`ScoreRow.from_record <scorecore.evals.ScoreRow.from_record>` turns a record into a stored
    row; :func:`~scorecore.evals.store_sink` is a sink saving each record to a score store.
    """

    scorer_id: str
    scorer_name: str
    source: Literal["trace", "live"]
    result: ScoreResult[Any, Any]
    trace_id: str | None = None
    span_id: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    scorer_description: str = ""
    has_judge: bool = False

    @property
    def run_id(self) -> str:
        """The scorer run's id."""
        return self.result.run_id

    @property
    def score(self) -> float | None:
        """The score (``None`` when the run was not scorable)."""
        return self.result.score


ScoreSink: TypeAlias = Callable[[ScoreRecord], "Awaitable[object] | object"]
"""Receives each score: a sync or async callable taking a :class:`ScoreRecord`.

``store_sink(store)`` (:func:`~scorecore.evals.store_sink`) saves each record to a score store as a
Mastra-shaped row.

Its return value is ignored. An exception it raises is reported, never propagated to the
code that produced the score.
"""


async def deliver(sink: ScoreSink, record: ScoreRecord) -> None:
    """Hand a record to a sink, awaiting it when it is async (exceptions propagate)."""
    outcome = sink(record)
    if inspect.isawaitable(outcome):
        await outcome
