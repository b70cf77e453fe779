"""Why a scorer run failed, as a kind and a full message, and failures grouped by cause.

A run's structured cause (``ScorerRunError.cause``) is at hand while a batch runs; a stored row
keeps it too (``metadata["cause"]``: its kind, step, message and the cause itself, read back by
:meth:`scorecore.evals.ScoreRow.failure_cause`). Both give the same :class:`FailureCause` for
the same failure, so ``scorecore eval`` and ``scorecore show`` group alike. Nothing here reads a
cause from its message: a row stored before rows kept the cause gives the kind it stored (or
``"error"``) and its error text as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import final

import attrs

from scorecore import BudgetExhausted, RunFailureCause, ScorerRunError, redact_secrets
from scorecore.evals import ScoreRow
from scorecore.evals.engine import failure_kind
from scorecore.evals.results import ScorerOutcome

__all__ = [
    "FailureCause",
    "FailureGroup",
    "FailureTally",
    "cause_of_outcome",
    "cause_of_row",
    "group_failures",
]


def _redacted(text: str) -> str:
    return redact_secrets(text)


def _maybe_redacted(text: str | None) -> str | None:
    return None if text is None else redact_secrets(text)


@final
@attrs.frozen(kw_only=True)
class FailureCause:
    """Why one scorer run (or a whole item) failed.

    Attributes:
        kind: a short class of failure, e.g. ``"judge network"``, ``"judge output invalid"``,
            ``"raised KeyError"``, ``"input mismatch"``, ``"step failed"``, ``"target raised"``,
            ``"item"`` (the item failed before any scorer ran: unreadable line, repeated id),
            ``"error"``.
        message: the full cause, without the ``scorer 'x' failed at step 'y' (completed: …):``
            prefix; never truncated here, secrets redacted (:func:`scorecore.redact_secrets`:
            a message may quote a reply).
        step: the step that failed, when known.
        summary: what every run failing the same way shares, when that is less than
            ``message``: a budget refusal's limit and what to change, without the amounts of
            the one call (:meth:`scorecore.BudgetExhausted.describe_limit`); failures are
            grouped by it.
    """

    kind: str
    message: str = attrs.field(converter=_redacted)
    step: str | None = None
    summary: str | None = attrs.field(default=None, converter=_maybe_redacted)


@final
@attrs.frozen(kw_only=True)
class FailureGroup:
    """Failed scorer runs sharing a cause (kind, step and message).

    Attributes:
        cause: the shared cause.
        count: how many scorer runs failed with it.
        scorer_ids: the scorers among them, sorted.
        item_ids: the first few items (in the order they came).
        more_items: whether other items failed with it too.
    """

    cause: FailureCause
    count: int
    scorer_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    more_items: bool = False


def _of_cause(cause: RunFailureCause, step: str | None, message: str | None = None) -> FailureCause:
    # A budget refusal's amounts differ per call: 59 refusals by one limit are one cause.
    summary = cause.describe_limit() if isinstance(cause, BudgetExhausted) else None
    return FailureCause(kind=failure_kind(cause),
                        message=cause.describe() if message is None else message,
                        step=step, summary=summary)


def cause_of_outcome(
    outcome: ScorerOutcome,
    *,
    item_error: str | None = None,
    item_error_kind: str | None = None,
) -> FailureCause:
    """The cause of a failed outcome of a running batch (its structured cause when it has one).

    ``item_error`` is the item's own error (:attr:`ItemResult.error`): the item failed as a
    whole, of kind ``item_error_kind`` (:attr:`ItemResult.error_kind`; ``"item"`` when not
    given).

    >>> from scorecore.evals.results import ScorerOutcome
    >>> cause_of_outcome(ScorerOutcome(scorer_id="s", status="failed", error="scorer raised X"))
    FailureCause(kind='error', message='scorer raised X', step=None, summary=None)
    """
    if item_error is not None:
        return FailureCause(kind=(item_error_kind or "item").replace("_", " "),
                            message=item_error)
    error = outcome.run_error
    if isinstance(error, ScorerRunError):
        return _of_cause(error.cause, str(error.failed_step))
    return FailureCause(kind="error", message=outcome.error or "failed (no error recorded)")


def cause_of_row(row: ScoreRow) -> FailureCause | None:
    """The cause a failed stored row records; ``None`` for a row that did not fail.

    Read from the stored cause (:meth:`ScoreRow.failure_cause`); a row stored before rows kept
    it gives its stored kind (else ``"error"``), its step and its error text as they are.

    >>> from scorecore import InvalidScore
    >>> from scorecore.evals import ScoreRow
    >>> cause = InvalidScore(value_repr="nan", type_name="float")
    >>> row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
    ...                metadata={"failedStep": "generate_score", "cause": {
    ...                    "kind": "invalid score", "step": "generate_score",
    ...                    "message": cause.describe(), "value": {
    ...                        "cause": "invalid_score", "valueRepr": "nan", "typeName": "float"}}})
    >>> cause_of_row(row).kind, cause_of_row(row).step
    ('invalid score', 'generate_score')
    >>> old = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
    ...                metadata={"error": "scorer 's' failed: boom"})
    >>> cause_of_row(old)
    FailureCause(kind='error', message="scorer 's' failed: boom", step=None, summary=None)
    """
    if row.status != "failed":
        return None
    metadata: Mapping[str, object] = row.metadata or {}
    stored = metadata.get("cause")
    stored = stored if isinstance(stored, Mapping) else {}
    step = metadata.get("failedStep", stored.get("step"))
    step_text = None if step is None else str(step)
    cause = row.failure_cause()
    if cause is not None:
        message = stored.get("message")
        return _of_cause(cause, step_text, message if isinstance(message, str) else None)
    kind = stored.get("kind")
    return FailureCause(kind=kind if isinstance(kind, str) and kind else "error",
                        message=str(metadata.get("error") or "failed (no error recorded)"),
                        step=step_text)


@final
class FailureTally:
    """Groups failures by cause as they come, keeping counts, scorer ids and the first item ids
    only (flat memory).

    >>> tally = FailureTally()
    >>> cause = FailureCause(kind="judge network", message="network: down")
    >>> tally.add("s", "1", cause)
    >>> tally.add("t", "1", cause)
    >>> [(g.count, g.scorer_ids, g.item_ids) for g in tally.groups()]
    [(2, ('s', 't'), ('1',))]
    """

    def __init__(self, *, examples: int = 3) -> None:
        self._examples = examples
        self._counts: dict[FailureCause, int] = {}
        self._scorers: dict[FailureCause, set[str]] = {}
        self._ids: dict[FailureCause, list[str]] = {}
        self._more: set[FailureCause] = set()

    def add(self, scorer_id: str, item_id: str, cause: FailureCause) -> None:
        """Count one failed run of ``scorer_id`` on ``item_id``.

        A cause with a :attr:`~FailureCause.summary` (a budget refusal) counts under it: its
        limit and what to change, without the amounts of the one call.
        """
        if cause.summary is not None:
            cause = attrs.evolve(cause, message=cause.summary, summary=None)
        self._counts[cause] = self._counts.get(cause, 0) + 1
        self._scorers.setdefault(cause, set()).add(scorer_id)
        first = self._ids.setdefault(cause, [])
        if item_id in first:
            return
        if len(first) < self._examples:
            first.append(item_id)
        else:
            self._more.add(cause)

    def groups(self) -> list[FailureGroup]:
        """The groups, largest first (then by kind and message)."""
        counts = self._counts
        ordered = sorted(counts, key=lambda c: (-counts[c], c.kind, c.step or "", c.message))
        return [
            FailureGroup(cause=cause, count=counts[cause],
                         scorer_ids=tuple(sorted(self._scorers[cause])),
                         item_ids=tuple(self._ids[cause]), more_items=cause in self._more)
            for cause in ordered
        ]


def group_failures(
    failures: Iterable[tuple[str, str, FailureCause]], *, examples: int = 3
) -> list[FailureGroup]:
    """Group ``(scorer id, item id, cause)`` triples by cause; the largest groups first.

    >>> c = FailureCause(kind="judge network", message="network: down", step="analyze")
    >>> [(g.count, g.item_ids) for g in group_failures([("s", "1", c), ("s", "2", c)])]
    [(2, ('1', '2'))]
    """
    tally = FailureTally(examples=examples)
    for scorer_id, item_id, cause in failures:
        tally.add(scorer_id, item_id, cause)
    return tally.groups()
