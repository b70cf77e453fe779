"""Why a scorer run failed, as a kind and a full message, and failures grouped by cause.

A run's structured cause (``ScorerRunError.cause``) is at hand while a batch runs; a stored row
keeps its text (``metadata["error"]``) and its kind (``metadata["cause"]``, both from
:func:`scorecore.evals.engine.failure_kind`). :func:`cause_of_row` reads that kind, and recovers it
from the message the cause's ``describe()`` wrote for rows stored before rows kept it. Both give
the same :class:`FailureCause` for the same failure, so ``scorecore eval`` and
``scorecore show`` group alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final, final

import attrs

from scorecore import ScorerRunError
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
            prefix; never truncated here.
        step: the step that failed, when known.
    """

    kind: str
    message: str
    step: str | None = None


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


# Causes whose message starts with a stable head, then "; " and the amounts of one run (a
# budget refusal: the limit and what to change, then what was spent and what this call would
# have reserved). They are grouped by that head: 59 refusals by one limit are one cause.
_GROUPED_BY_HEAD: Final = frozenset({"budget exhausted"})
_PREFIX: Final = re.compile(
    # The scorer id is a Python repr: single quotes, or double when the id holds a quote.
    r"""scorer (?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") failed at step """
    r"'(?P<step>[^']*)' \(completed: [^)]*\): ",
    re.DOTALL
)
_JUDGE_KIND: Final = re.compile(r"judge call failed after \d+ call\(s\) \([^)]*\): (?P<kind>\w+)")
_RAISED: Final = re.compile(r"^\S+ raised (?P<type>[\w.]+)(?::|$)")


def _kind_of_text(text: str) -> str:
    """The kind :func:`failure_kind` gives, recovered from a cause's ``describe()`` text (rows
    stored before rows kept the kind)."""
    if found := _JUDGE_KIND.match(text):
        return f"judge {found['kind']}"
    if text.startswith("judge output invalid"):
        return "judge output invalid"
    if found := _RAISED.match(text):
        return f"raised {found['type']}"
    if text.startswith("prepare_run failed"):
        return "prepare run failed"
    if re.match(r"(input|output) processor \S+ aborted", text):
        return "processor aborted"
    if re.match(r"(input|output) does not match ", text):
        return "input mismatch"
    if text.startswith("generate_score must return"):
        return "invalid score"
    if re.match(r"\w+ returned Failure\(", text):
        return "step failed"
    if " must be " in text.split(",", 1)[0]:
        return "invalid step value"
    return "error"


def cause_of_outcome(outcome: ScorerOutcome, *, item_error: str | None = None) -> FailureCause:
    """The cause of a failed outcome of a running batch (its structured cause when it has one).

    ``item_error`` is the item's own error (:attr:`ItemResult.error`): the item failed as a whole.

    >>> from scorecore.evals.results import ScorerOutcome
    >>> cause_of_outcome(ScorerOutcome(scorer_id="s", status="failed", error="scorer raised X"))
    FailureCause(kind='error', message='scorer raised X', step=None)
    """
    if item_error is not None:
        kind = "target raised" if item_error.startswith("target raised") else "item"
        return FailureCause(kind=kind, message=item_error)
    error = outcome.run_error
    if isinstance(error, ScorerRunError):
        return FailureCause(kind=failure_kind(error.cause), message=error.cause.describe(),
                            step=str(error.failed_step))
    return _from_text(outcome.error or "failed (no error recorded)", None)


def _from_text(text: str, step: str | None, kind: str | None = None) -> FailureCause:
    prefix = _PREFIX.match(text)
    if prefix is None:
        if kind is None:
            kind = "target raised" if text.startswith("target raised") else "error"
        return FailureCause(kind=kind, message=text, step=step)
    message = text[prefix.end():]
    return FailureCause(kind=kind if kind is not None else _kind_of_text(message),
                        message=message, step=step or prefix["step"])


def cause_of_row(row: ScoreRow) -> FailureCause | None:
    """The cause a failed stored row records; ``None`` for a row that did not fail.

    The kind is ``metadata["cause"]["kind"]`` when the row has it; a row stored before rows
    kept it gets the kind read back from its error text.

    >>> from scorecore.evals import ScoreRow
    >>> row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
    ...                metadata={"failedStep": "analyze", "error": "scorer 's' failed at step "
    ...                          "'analyze' (completed: none): analyze raised KeyError: 'x'"})
    >>> cause_of_row(row)
    FailureCause(kind='raised KeyError', message="analyze raised KeyError: 'x'", step='analyze')
    >>> cause_of_row(attrs.evolve(row, metadata={**row.metadata,
    ...                                          "cause": {"kind": "raised a.<locals>.E"}})).kind
    'raised a.<locals>.E'
    """
    if row.status != "failed":
        return None
    metadata: Mapping[str, object] = row.metadata or {}
    text = str(metadata.get("error") or "failed (no error recorded)")
    step = metadata.get("failedStep")
    stored = metadata.get("cause")
    kind = stored.get("kind") if isinstance(stored, Mapping) else None
    if step is None and isinstance(stored, Mapping):
        step = stored.get("step")
    return _from_text(text, str(step) if step is not None else None,
                      kind if isinstance(kind, str) and kind else None)


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

        A budget refusal counts under its limit and what to change, without the amounts of
        the one call (:meth:`scorecore.BudgetExhausted.describe` puts them after ``"; "``).
        """
        if cause.kind in _GROUPED_BY_HEAD:
            cause = attrs.evolve(cause, message=cause.message.split("; ", 1)[0])
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
