"""One scorer's paired items, folded as they come: what the comparison's statistics need.

A comparison's statistics are functions of the paired items only (their scores, statuses and
pass flags), so the pairs can come from rows in memory (:func:`~scorecore.evals.compare`) or
stream from a store that pairs the two batches itself (``scorecore compare``): either way each
pair is folded into a :class:`PairFold` once and dropped, and what stays is a float per scored
pair (the deltas, kept for the bootstrap) and a few counts, never the rows.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, final

import attrs

from scorecore.evals._compare._values import DEFAULT_PASS_MIN, ItemDelta
from scorecore.evals._stats._sums import mean_of

if TYPE_CHECKING:
    from scorecore.evals._report._values import OutcomeStatus, Threshold

__all__ = ["PairedScore", "TrialScore", "paired_score"]


@final
@attrs.frozen(kw_only=True)
class PairedScore:
    """One item of one scorer in both batches, as a store pairs them (``scorecore compare``).

    A store that can pair two batches itself yields these, ordered by scorer id then item id
    (code point order), one per (scorer, item) with a row in both batches; an item's trials are
    one item, as :func:`~scorecore.evals.compare` takes them (scored with the mean of its scored
    trials, else its first trial's status). The row ids name the rows a problem is reported on.

    >>> pair = PairedScore(scorer_id="exact", item_id="q1", base_status="scored",
    ...                    base_score=1.0, new_status="scored", new_score=0.0,
    ...                    base_row_id="a:q1/exact", new_row_id="b:q1/exact")
    >>> pair.new_score - pair.base_score
    -1.0
    """

    scorer_id: str
    item_id: str
    base_status: OutcomeStatus
    base_score: float | None
    new_status: OutcomeStatus
    new_score: float | None
    base_row_id: str
    new_row_id: str


@final
@attrs.frozen(kw_only=True)
class TrialScore:
    """What a store reads of one row to pair it: its ids, status and score.

    >>> TrialScore(row_id="a:q1/s", run_id="a:q1", batch_id="a", status="scored", score=0.5)
    TrialScore(row_id='a:q1/s', run_id='a:q1', batch_id='a', status='scored', score=0.5)
    """

    row_id: str
    run_id: str
    batch_id: str
    status: OutcomeStatus
    score: float | None


def _one(trials: Sequence[TrialScore], item_id: str) -> tuple[OutcomeStatus, float | None, str]:
    # An item's trials as one, as compare() takes a batch's rows: the mean of the scored
    # trials (named by the first scored one), else the first trial; the plain run id first.
    if len(trials) == 1:
        only = trials[0]
        return only.status, only.score, only.row_id
    ordered = sorted(trials, key=lambda t: (t.run_id != f"{t.batch_id}:{item_id}", t.run_id))
    scores = [t.score for t in ordered if t.status == "scored" and t.score is not None]
    if not scores:
        return ordered[0].status, ordered[0].score, ordered[0].row_id
    first = next(t for t in ordered if t.status == "scored")
    return "scored", mean_of(scores), first.row_id


def paired_score(
    scorer_id: str, item_id: str, base: Sequence[TrialScore], new: Sequence[TrialScore]
) -> PairedScore:
    """The pair of one scorer's item from its rows in each batch (one per trial, at least one).

    >>> one = TrialScore(row_id="a:q1/s", run_id="a:q1", batch_id="a", status="scored",
    ...                  score=1.0)
    >>> trials = [TrialScore(row_id=f"b/trial-{n}:q1/s", run_id=f"b/trial-{n}:q1",
    ...                      batch_id="b", status="scored", score=s)
    ...           for n, s in ((1, 0.0), (2, 0.5))]
    >>> pair = paired_score("s", "q1", [one], trials)
    >>> pair.base_score, pair.new_score, pair.new_row_id
    (1.0, 0.25, 'b/trial-1:q1/s')
    """
    base_status, base_score, base_row = _one(base, item_id)
    new_status, new_score, new_row = _one(new, item_id)
    return PairedScore(scorer_id=scorer_id, item_id=item_id, base_status=base_status,
                       base_score=base_score, new_status=new_status, new_score=new_score,
                       base_row_id=base_row, new_row_id=new_row)


def passes(status: str, score: float | None, threshold: Threshold | None) -> bool:
    """Whether an item passes: scored, and within its threshold (else at least 0.5)."""
    if status != "scored" or score is None:
        return False
    if threshold is None:
        return score >= DEFAULT_PASS_MIN
    return threshold.check(score)


def loss_order(item: ItemDelta) -> tuple[int, float, str]:
    """Items whose score disappeared first, then by the size of the drop, then by id."""
    delta = item.delta
    if delta is None:
        return (0, 0.0, item.item_id)
    return (1, delta, item.item_id)


@final
class PairFold:
    """One scorer's pairs, folded in item order: deltas, scores, pass flags, counts, losers."""

    __slots__ = ("_cutoff", "_losers", "base_pass", "base_scores", "changes", "deltas",
                 "first_infinite", "most_regressed", "new_pass", "new_scores", "paired",
                 "scorer_id", "threshold")

    def __init__(self, scorer_id: str, threshold: Threshold | None, most_regressed: int) -> None:
        self.scorer_id = scorer_id
        self.threshold = threshold
        self.most_regressed = most_regressed
        self.paired = 0
        # Floats as C doubles: 8 bytes a pair rather than a float object and a pointer.
        self.deltas = array("d")
        self.base_scores = array("d")
        self.new_scores = array("d")
        self.base_pass: list[bool] = []
        self.new_pass: list[bool] = []
        self.changes: dict[str, int] = {}
        self.first_infinite: PairedScore | None = None
        # The most regressed items so far, trimmed to the first ``most_regressed`` now and
        # then: an item id is paired once per scorer, so the loss order has no ties.
        self._losers: list[ItemDelta] = []
        # The loss order of the last item kept at the latest trim, once as many are kept as
        # are asked for: a later item that orders after it can never be among them.
        self._cutoff: tuple[int, float, str] | None = None

    def add(self, pair: PairedScore) -> None:
        """Fold one pair in (pairs come in item order)."""
        base_score = pair.base_score if pair.base_status == "scored" else None
        new_score = pair.new_score if pair.new_status == "scored" else None
        self.paired += 1
        self.base_pass.append(passes(pair.base_status, base_score, self.threshold))
        self.new_pass.append(passes(pair.new_status, new_score, self.threshold))
        if pair.base_status != pair.new_status:
            change = f"{pair.base_status}->{pair.new_status}"
            self.changes[change] = self.changes.get(change, 0) + 1
        delta = None
        if base_score is not None and new_score is not None:
            delta = new_score - base_score
            if delta - delta != 0 and self.first_infinite is None:  # inf or nan: beyond floats
                self.first_infinite = pair
            self.deltas.append(delta)
            self.base_scores.append(base_score)
            self.new_scores.append(new_score)
        lost = (delta is not None and delta < 0) or (
            pair.base_status == "scored" and pair.new_status != "scored")
        if not lost or self.most_regressed <= 0:
            return
        cutoff = self._cutoff
        if cutoff is not None and (
                (0, 0.0, pair.item_id) if delta is None else (1, delta, pair.item_id)) > cutoff:
            return
        self._losers.append(ItemDelta(
            item_id=pair.item_id, base_status=pair.base_status,
            new_status=pair.new_status, base_score=base_score, new_score=new_score))
        if len(self._losers) >= 4 * self.most_regressed + 1024:
            self._losers = self.losers_list()
            if len(self._losers) == self.most_regressed:
                self._cutoff = loss_order(self._losers[-1])

    def losers_list(self) -> list[ItemDelta]:
        """The most regressed items, most regressed first (as sorting all of them would)."""
        return sorted(self._losers, key=loss_order)[: self.most_regressed]
