"""The review queue and the agreement ledger: where a reviewer's time counts, and what the
labels given so far say about each scorer.

The queue lists first the runs whose score is least certain — a regression against the
baseline, a cascade whose last tier was unsure (the run is not scorable, ``low_confidence``),
a panel whose judges disagreed, a pairwise verdict that flipped with the order, a
score near the pass mark — then a uniform random sample of the batch's scored runs. Every entry
records why it was queued, and a label given from the queue keeps that record, so the ledger
can estimate agreement from the random stratum alone: the uncertain runs are chosen *because*
the judge is likely wrong there, and counting them would bias κ low.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, final

import attrs

from scorecore.evals import Calibration, Comparison, LabelValue, ScoreRow, calibrate
from scorecore.evals.results import Estimate
from scorecore.evals.store import row_item_id
from scorecore_adapters.storage._labels import Label, labels_for_calibration

__all__ = ["Candidate", "LedgerLine", "QueueEntry", "agreement_ledger", "candidate_of",
           "review_queue"]

LOW_CONFIDENCE: Final = "low_confidence"
"""The not-scorable kind of a judge, or a cascade's last tier, below the confidence asked for."""
RANDOM: Final = "random"
"""The stratum of the uniform sample: the one the ledger's κ is measured on."""
# Most telling first: what the queue puts ahead when a run has several reasons.
REASONS: Final = ("regression", LOW_CONFIDENCE, "panel_disagreement", "position_bias",
                  "near_threshold")
TARGET_HALF_WIDTH: Final = 0.1


@final
@attrs.frozen(kw_only=True)
class QueueEntry:
    """One run offered for review.

    Attributes:
        item_id: the dataset item.
        scorer_id: the scorer whose score is to be checked.
        run_id: the run.
        score: its score.
        reasons: why it is queued, most telling first (``"random"`` when it is in the
            uniform sample, whatever else).
    """

    item_id: str
    scorer_id: str
    run_id: str
    score: float | None
    reasons: tuple[str, ...]


@final
@attrs.frozen(kw_only=True)
class Candidate:
    """One stored run as the review queue weighs it (a few columns, never the whole row).

    Attributes:
        item_id: its dataset item.
        scorer_id: its scorer.
        run_id: its run.
        status: ``scored`` or ``not_scorable``.
        score: its score, when scored.
        panel_split: its panel's judges disagreed.
        position_bias: its pairwise verdict flipped with the order.
        not_scorable_kind: why it was not scorable (``"low_confidence"``: a cascade's last
            tier was unsure).
    """

    item_id: str
    scorer_id: str
    run_id: str
    status: str
    score: float | None
    panel_split: bool = False
    position_bias: bool = False
    not_scorable_kind: str | None = None



def _uncertain(c: Candidate, threshold: float, near: float,
               regressed: set[tuple[str, str]]) -> list[str]:
    found = []
    if (c.item_id, c.scorer_id) in regressed:
        found.append("regression")
    if c.not_scorable_kind == LOW_CONFIDENCE:
        found.append(LOW_CONFIDENCE)
    if c.panel_split:
        found.append("panel_disagreement")
    if c.position_bias:
        found.append("position_bias")
    if c.score is not None and abs(c.score - threshold) <= near:
        found.append("near_threshold")
    return found


def candidate_of(row: ScoreRow) -> Candidate:
    """A stored row as the queue weighs it."""
    metadata = row.metadata or {}
    panel = metadata.get("panel")
    pairwise = metadata.get("pairwise")
    return Candidate(
        item_id=row_item_id(row), scorer_id=row.scorer_id, run_id=row.run_id,
        status=row.status, score=row.score,
        panel_split=isinstance(panel, Mapping) and panel.get("agreed") is False,
        position_bias=isinstance(pairwise, Mapping)
        and pairwise.get("outcome") == "position_bias",
        not_scorable_kind=row.not_scorable_kind())


def review_queue(
    rows: Iterable[ScoreRow | Candidate], *, comparison: Comparison | None = None,
    threshold: float = 0.5, near: float = 0.1, sample: int = 20, seed: int = 0,
) -> list[QueueEntry]:
    """The runs to review, least certain first, then the random sample.

    Args:
        rows: the batch's rows (the first trial of an item counts), or the same as
            :class:`Candidate` values (what the workbench reads by SQL). Scored runs are
            queued, and runs not scorable because a cascade's last tier was unsure
            (``"low_confidence"``): the reviewer gives the score no tier was sure of.
        comparison: the batch compared with its baseline (:func:`scorecore.evals.compare`,
            with ``most_regressed`` large enough): its regressed items are queued.
        threshold: the pass mark; scores within ``near`` of it are queued.
        near: how near counts.
        sample: how many scored runs the uniform random sample holds.
        seed: the sample's seed (the same batch and seed, the same sample).

    >>> from scorecore.evals import ScoreRow
    >>> rows = [ScoreRow(id=str(i), scorer_id="s", run_id=f"b:{i}", batch_id="b",
    ...                  status="scored", score=i / 10) for i in range(10)]
    >>> for entry in review_queue(rows, sample=2):
    ...     print(entry.item_id, entry.reasons)
    5 ('near_threshold',)
    4 ('near_threshold',)
    6 ('near_threshold', 'random')
    9 ('random',)
    """
    regressed: set[tuple[str, str]] = set()
    if comparison is not None:
        for scorer in comparison.scorers:
            regressed.update((d.item_id, scorer.scorer_id) for d in scorer.most_regressed
                             if d.delta is None or d.delta < -comparison.tolerance)
    firsts: dict[tuple[str, str], Candidate] = {}
    unsure: dict[tuple[str, str], Candidate] = {}
    for row in rows:
        c = row if isinstance(row, Candidate) else candidate_of(row)
        key = (c.item_id, c.scorer_id)
        if c.status == "scored":
            firsts.setdefault(key, c)
        elif c.not_scorable_kind == LOW_CONFIDENCE:
            unsure.setdefault(key, c)
    keys = list(firsts)
    rng = random.Random(seed)  # noqa: S311 - a review sample, not a secret
    drawn = rng.sample(keys, min(sample, len(keys)))
    in_sample = set(drawn)
    held = {**unsure, **firsts}  # an item scored in one trial is judged by that score
    uncertain = []
    for key, c in held.items():
        reasons = _uncertain(c, threshold, near, regressed)
        if reasons:
            rank = min(REASONS.index(r) for r in reasons)
            distance = abs(c.score - threshold) if c.score is not None else 1.0
            uncertain.append((rank, distance, key, reasons))
    uncertain.sort(key=lambda u: (u[0], u[1]))

    def entry(key: tuple[str, str], reasons: Sequence[str]) -> QueueEntry:
        c = held[key]
        extra = (RANDOM,) if key in in_sample else ()
        return QueueEntry(item_id=key[0], scorer_id=key[1], run_id=c.run_id,
                          score=c.score, reasons=(*reasons, *extra))

    queued = [entry(key, reasons) for _, _, key, reasons in uncertain]
    shown = {key for _, _, key, _ in uncertain}
    queued += [entry(key, ()) for key in drawn if key not in shown]
    return queued


@final
@attrs.frozen(kw_only=True)
class LedgerLine:
    """One scorer's agreement with the random stratum's labels.

    Attributes:
        scorer_id: the scorer.
        labels: random-stratum labels it has (all strata: ``all_labels``).
        all_labels: labels of any stratum.
        statistic: ``"kappa"`` for pass/fail labels, ``"spearman"`` for numbers.
        estimate: the statistic with its bootstrap interval (``None`` without labels).
        more_needed: about how many more random labels bring the interval to ±0.1
            (``None`` while there is no interval).
        calibration: the calibration it comes from (``scorecore calibrate`` computes the same).
    """

    scorer_id: str
    labels: int
    all_labels: int
    statistic: str
    estimate: Estimate | None
    more_needed: int | None
    calibration: Calibration | None = attrs.field(repr=False, default=None)


def _more_needed(estimate: Estimate | None, n: int) -> int | None:
    if estimate is None or estimate.low is None or estimate.high is None or n == 0:
        return None
    half = (estimate.high - estimate.low) / 2
    # An interval's width shrinks as 1/√n: n·(w/0.1)² labels reach ±0.1.
    return max(0, math.ceil(n * (half / TARGET_HALF_WIDTH) ** 2) - n)


def _values(labels: Mapping[str, Label]) -> dict[str, LabelValue]:
    return {item: label.value for item, label in labels.items()}


def agreement_ledger(rows: Sequence[ScoreRow], labels: Sequence[Label], *,
                     threshold: float = 0.5, seed: int = 0,
                     scorer_ids: Iterable[str] | None = None) -> list[LedgerLine]:
    """Each scorer's agreement with the labels of the random stratum, as ``scorecore
    calibrate BATCH --labels FILE --scorer ID`` computes it on ``scorecore labels export
    --batch BATCH --scorer ID --stratum random``'s file (κ for true/false labels; Spearman's
    ρ, with ``--kind continuous``, for numbers).

    >>> from scorecore.evals import ScoreRow
    >>> rows = [ScoreRow(id=str(i), scorer_id="s", run_id=f"b:{i}", batch_id="b",
    ...                  status="scored", score=float(i % 2)) for i in range(6)]
    >>> labels = [Label(batch_id="b", item_id=str(i), scorer_id="s", value=i % 2 == 1,
    ...                 queued=("random",)) for i in range(6)]
    >>> (line,) = agreement_ledger(rows, labels)
    >>> line.statistic, line.labels, line.estimate.value
    ('kappa', 6, 1.0)
    """
    scorers = sorted(set(scorer_ids) if scorer_ids is not None
                     else {row.scorer_id for row in rows})
    lines = []
    for scorer in scorers:
        every = labels_for_calibration(labels, scorer)
        random_only = labels_for_calibration([lb for lb in labels if RANDOM in lb.queued],
                                             scorer)
        values = _values(random_only)
        binary = all(isinstance(v, bool) for v in values.values())
        statistic = "kappa" if binary else "spearman"
        if not values:
            lines.append(LedgerLine(scorer_id=scorer, labels=0, all_labels=len(every),
                                    statistic=statistic, estimate=None, more_needed=None))
            continue
        try:
            result = calibrate(rows, values, kind="binary" if binary else "continuous",
                               threshold=threshold, scorer_ids=[scorer], seed=seed)
        except ValueError:
            # labels calibrate cannot read together (strings without values, mixed kinds)
            lines.append(LedgerLine(scorer_id=scorer, labels=len(values),
                                    all_labels=len(every), statistic=statistic,
                                    estimate=None, more_needed=None))
            continue
        (line,) = result.scorers
        estimate = line.kappa if binary else line.spearman
        lines.append(LedgerLine(scorer_id=scorer, labels=line.n, all_labels=len(every),
                                statistic=statistic, estimate=estimate,
                                more_needed=_more_needed(estimate, line.n),
                                calibration=result))
    return lines
