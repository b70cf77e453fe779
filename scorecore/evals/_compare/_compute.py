"""Comparing two batches: paired items, a seeded bootstrap interval, an exact McNemar test.

Pure statistics: no I/O, no clock. The only randomness is a stream of SHAKE-256 output seeded
by ``(seed, scorer id, resample index)``, so the same rows and seed give the same interval on
every machine and Python version, whatever order the rows come in.

Why no statistics library: the bootstrap of a paired mean and the exact binomial tail are a
few lines each here (checked against their definitions in tests/evals/compare), while scipy would
bring numpy and 60 MB into a library that has neither, and could only live in the adapters —
``scorecore.evals.compare`` would then not be part of the pure core.

The gate (:attr:`ScorerComparison.significant_regression`) fires for a scorer when

- the mean score fell: the bootstrap interval's upper end is below ``-tolerance``, or
- the pass rate fell: the exact McNemar p-value is below the scorer's alpha and the pass-rate
  delta is below ``-tolerance``.

Too few pairs give no verdict, never a pass (``min_paired``, 10 by default): a scorer with
fewer paired items is ``"not_enough_pairs"`` and is not tested, and the interval is only
computed from at least ``min_paired`` scored pairs (with fewer, only the pass-rate test, over
every pair, can fire). Why 10: the percentile bootstrap interval is too narrow on few values
— measured with ``benchmarks/compare_coverage.py``, the nominal 95 % interval of a mean of n
paired deltas covers the true mean in 43 % of samples at n=2, 75 % at n=5, 86 % at n=8 and
89 % at n=10, 93.5 % at n=30 — and the exact McNemar test cannot reach p < 0.05 with fewer
than 6 discordant pairs. 10 is the smallest size where both tests mean roughly what they say.

``alpha`` (0.05) is shared by the scorers compared (Bonferroni): each is tested at
``alpha / k`` and its interval has confidence ``1 - alpha / k`` (95 % for one scorer), so one
comparison of k unchanged scorers fires in at most about ``alpha`` of runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from scorecore._core._reprs import short_repr
from scorecore.evals._compare._items import match_items
from scorecore.evals._compare._pairs import PairedScore, PairFold
from scorecore.evals._compare._power import power_fields
from scorecore.evals._compare._values import (
    DEFAULT_MIN_PAIRED,
    DEFAULT_PASS_MIN,
    Comparison,
    ScorerComparison,
)
from scorecore.evals._rows._row import row_item_id
from scorecore.evals._rows._trials import rows_by_item
from scorecore.evals._stats._bootstrap import MeanResampler, bootstrap_mean_interval
from scorecore.evals._stats._sums import mean_of
from scorecore.validators import is_int

if TYPE_CHECKING:
    from scorecore.evals._report._values import Threshold
    from scorecore.evals._rows._row import ScoreRow

__all__ = ["compare"]

def mcnemar_p_value(newly_passing: int, newly_failing: int) -> float:
    """The exact two-sided McNemar p-value: a binomial test of the discordant pairs at 1/2.

    ``min(1, 2 * P[X <= min(b, c)])`` for ``X ~ Binomial(b + c, 1/2)``, in exact integers.

    >>> mcnemar_p_value(1, 9)
    0.021484375
    >>> mcnemar_p_value(0, 0)
    1.0
    """
    if newly_passing < 0 or newly_failing < 0:
        raise ValueError(
            f"discordant counts must be >= 0, got {newly_passing} and {newly_failing}"
        )
    n = newly_passing + newly_failing
    if n == 0:
        return 1.0
    k = min(newly_passing, newly_failing)
    term = 1  # C(n, 0); each next term is C(n, i + 1) = C(n, i) * (n - i) / (i + 1)
    tail = 0
    for i in range(k + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    # Exact integers, one division: no float underflow in the sum for large n.
    return min(1.0, 2 * tail / (1 << n))


def _fingerprint(row: ScoreRow) -> str | None:
    # Hook for scorer fingerprints: compared once rows record them.
    found = row.scorer.get("fingerprint") if row.scorer else None
    return found if isinstance(found, str) else None


def _beyond_floats(scorer_id: str, pair: PairedScore, base_batch: str,
                   new_batch: str) -> ValueError:
    return ValueError(
        f"cannot compare scorer {scorer_id!r} on item {short_repr(pair.item_id, 80)}: its "
        f"score went from {pair.base_score!r} (row {pair.base_row_id}, batch "
        f"{short_repr(base_batch, 80)}) to {pair.new_score!r} (row {pair.new_row_id}, batch "
        f"{short_repr(new_batch, 80)}), a change beyond the largest float"
    )


@attrs.frozen(kw_only=True)
class _Settings:
    tolerance: float
    alpha: float
    seed: int
    resamples: int
    most_regressed: int
    min_paired: int
    resampler: MeanResampler | None = None


def _compare_scorer(
    scorer_id: str,
    base: Mapping[str, ScoreRow],
    new: Mapping[str, ScoreRow],
    threshold: Threshold | None,
    settings: _Settings,
) -> ScorerComparison:
    fold = PairFold(scorer_id, threshold, settings.most_regressed)
    for k in sorted(base.keys() & new.keys()):
        b, n = base[k], new[k]
        fold.add(PairedScore(scorer_id=scorer_id, item_id=k, base_status=b.status,
                             base_score=b.score, new_status=n.status, new_score=n.score,
                             base_row_id=b.id, new_row_id=n.id))
    batches = (next(iter(base.values())).batch_id if base else "",
               next(iter(new.values())).batch_id if new else "")
    return scorer_result(fold, settings, batches)


def scorer_result(
    fold: PairFold, settings: _Settings, batches: tuple[str, str]
) -> ScorerComparison:
    """One scorer's comparison from its folded pairs (``batches``: base and new ids, for an
    error)."""
    scorer_id, threshold = fold.scorer_id, fold.threshold
    if fold.first_infinite is not None:  # scores near the largest float, opposite signs
        raise _beyond_floats(scorer_id, fold.first_infinite, *batches)
    deltas = fold.deltas
    confidence = 1 - settings.alpha
    enough = fold.paired >= settings.min_paired
    ci: tuple[float, float] | None = None
    if enough and len(deltas) >= settings.min_paired:
        ci = bootstrap_mean_interval(deltas, confidence=confidence,
                                     resamples=settings.resamples, seed=settings.seed,
                                     stream=scorer_id, resampler=settings.resampler)
    base_pass, new_pass = fold.base_pass, fold.new_pass
    newly_passing = sum(1 for b, n in zip(base_pass, new_pass, strict=True) if n and not b)
    newly_failing = sum(1 for b, n in zip(base_pass, new_pass, strict=True) if b and not n)
    p_value = mcnemar_p_value(newly_passing, newly_failing)
    base_rate = sum(base_pass) / fold.paired if fold.paired else None
    new_rate = sum(new_pass) / fold.paired if fold.paired else None
    rate_delta = new_rate - base_rate if new_rate is not None and base_rate is not None else None
    tol = settings.tolerance
    tested = enough and rate_delta is not None and p_value < settings.alpha
    pass_drop = tested and rate_delta is not None and rate_delta < -tol
    pass_rise = tested and rate_delta is not None and rate_delta > tol
    return ScorerComparison(
        scorer_id=scorer_id,
        paired=fold.paired,
        scored_pairs=len(deltas),
        base_mean=mean_of(fold.base_scores) if deltas else None,
        new_mean=mean_of(fold.new_scores) if deltas else None,
        mean_delta=mean_of(deltas) if deltas else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        confidence=confidence,
        pass_rule=threshold.describe() if threshold is not None else f">= {DEFAULT_PASS_MIN:g}",
        base_pass_rate=base_rate,
        new_pass_rate=new_rate,
        newly_passing=newly_passing,
        newly_failing=newly_failing,
        mcnemar_p=p_value,
        improved=sum(1 for d in deltas if d > 0),
        regressed=sum(1 for d in deltas if d < 0),
        unchanged=sum(1 for d in deltas if d == 0),
        status_changes=dict(sorted(fold.changes.items())),
        most_regressed=tuple(fold.losers_list()),
        significant_regression=(ci is not None and ci[1] < -tol) or pass_drop,
        significant_improvement=(ci is not None and ci[0] > tol) or pass_rise,
        enough_pairs=enough,
        **power_fields(deltas, base_pass, new_pass, alpha=settings.alpha),
    )


def check_options(*, tolerance: float, alpha: float, resamples: int, min_paired: int) -> None:
    """Refuse a comparison option out of range, naming it and its value."""
    if not (0 <= tolerance < math.inf):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    if not is_int(min_paired) or min_paired < 1:
        raise ValueError(f"min_paired must be an int >= 1, got {min_paired!r}")


def compare(
    base: Iterable[ScoreRow],
    new: Iterable[ScoreRow],
    *,
    tolerance: float = 0.02,
    thresholds: Mapping[str, Threshold] | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    resamples: int = 1000,
    most_regressed: int = 10,
    min_paired: int = DEFAULT_MIN_PAIRED,
    effect: float | None = None,
    base_items: Mapping[str, str] | None = None,
    new_items: Mapping[str, str] | None = None,
    resampler: MeanResampler | None = None,
) -> Comparison:
    """Compare two batches' rows scorer by scorer, pairing items by their id.

    Per scorer: the mean delta over items scored in both batches with a seeded percentile
    bootstrap interval; the pass-rate delta (an item passes when scored within
    ``thresholds[scorer_id]``, else at least 0.5) with an exact McNemar p-value; counts of
    improved, regressed and unchanged items and the most regressed ones. Items and scorers
    present in one batch only are listed in the result, never silently dropped; a scorer whose
    definition changed (another fingerprint) is compared and marked ``definition_changed``
    (refuse such pairs yourself when :attr:`Comparison.scorers_differ`). A batch run
    with ``trials`` has one row per trial: an item's trials are one item
    (:func:`~scorecore.evals.store.row_item_id`), scored with the mean of its scored trials. See the
    module docstring for the gate, :attr:`Comparison.regressed`.

    Each scorer carries its minimum detectable effect (:attr:`ScorerComparison.mde`, at 80 %
    power, from the paired differences' spread); a scorer without a significant change whose
    tests could not have detected ``effect`` is marked ``uninformative``.

    With ``base_items`` and ``new_items`` (each batch's data as item id → content digest,
    the digests a dataset version keeps), only the items with the same id and content are
    compared; the others are listed in :attr:`Comparison.items`.

    Args:
        base: the baseline batch's rows (one batch).
        new: the rows of the batch judged against it.
        tolerance: a regression must exceed this (score units / pass-rate points) to count.
        thresholds: per scorer id, when an item passes.
        alpha: the false-alarm rate shared by the compared scorers.
        seed: the bootstrap's seed; the same rows and seed give the same result.
        resamples: the bootstrap's resample count.
        most_regressed: how many of the most regressed items to keep per scorer.
        min_paired: the fewest paired items a scorer needs for a verdict (>= 1, default 10);
            with fewer it is ``"not_enough_pairs"`` and the comparison has no verdict
            (:attr:`Comparison.verdict`), never a pass.
        effect: the smallest change a "no regression" must have been able to detect (default:
            the tolerance); see :attr:`ScorerComparison.uninformative`.
        base_items: the base batch's items (id → content digest); with ``new_items``, pairs
            are kept to the items whose content is the same in both.
        new_items: the new batch's items, the same way.
        resampler: computes the bootstrap's resample means faster with the same result:
            ``resampler(deltas, resamples=..., key=...)`` gives each resample's mean, its
            values summed left to right (the command line passes a numpy one).

    Scores anywhere in the float range are compared (means and intervals of scores near
    ±1e308 do not overflow), but an item whose score changed by more than the largest float
    (from -1e308 to 1e308) has no delta.

    Raises:
        ValueError: a bad option, or an item whose change is beyond the largest float (the
            message names both rows).

    >>> from scorecore.evals import ScoreRow, compare
    >>> def rows(batch, scores):
    ...     return [ScoreRow(id=f"{batch}{i}", scorer_id="s", run_id=f"{batch}:{i}",
    ...                      batch_id=batch, status="scored", score=s, dataset_item_id=str(i))
    ...             for i, s in enumerate(scores)]
    >>> result = compare(rows("a", [1.0] * 30), rows("b", [1.0] * 10 + [0.0] * 20))
    >>> result.regressed, result.scorers[0].newly_failing, result.scorers[0].mean_delta
    (True, 20, -0.6666666666666666)
    """
    check_options(tolerance=tolerance, alpha=alpha, resamples=resamples, min_paired=min_paired)
    if (base_items is None) != (new_items is None):
        raise ValueError("give both batches' items (base_items and new_items) or neither")
    base_rows = list(base)
    new_rows = list(new)
    base_batch = base_rows[0].batch_id if base_rows else ""
    new_batch = new_rows[0].batch_id if new_rows else ""
    items = None
    if base_items is not None and new_items is not None:
        items = match_items(base_items, new_items)
        # A changed item is another item under the same id: its rows are left unpaired (the
        # rows of added and removed items have no partner anyway, and stay listed).
        changed_items = frozenset(items.changed)
        base_rows = [r for r in base_rows if row_item_id(r) not in changed_items]
        new_rows = [r for r in new_rows if row_item_id(r) not in changed_items]
    base_index = rows_by_item(base_rows)
    new_index = rows_by_item(new_rows)
    common = sorted(base_index.keys() & new_index.keys())
    settings = _Settings(tolerance=tolerance, alpha=alpha / max(1, len(common)), seed=seed,
                         resamples=resamples, most_regressed=most_regressed,
                         min_paired=min_paired, resampler=resampler)
    chosen = thresholds or {}
    changed = tuple(
        sid for sid in common
        if {_fingerprint(r) for r in base_index[sid].values()}
        != {_fingerprint(r) for r in new_index[sid].values()}
    )
    scorers = tuple(
        attrs.evolve(
            _compare_scorer(sid, base_index[sid], new_index[sid], chosen.get(sid), settings),
            definition_changed=sid in changed,
        )
        for sid in common
    )
    base_ids = {k for rows in base_index.values() for k in rows}
    new_ids = {k for rows in new_index.values() for k in rows}
    return Comparison(
        base_batch=base_batch,
        new_batch=new_batch,
        tolerance=tolerance,
        seed=seed,
        resamples=resamples,
        scorers=scorers,
        only_in_base=tuple(sorted(base_ids - new_ids)),
        only_in_new=tuple(sorted(new_ids - base_ids)),
        scorers_only_in_base=tuple(sorted(base_index.keys() - new_index.keys())),
        scorers_only_in_new=tuple(sorted(new_index.keys() - base_index.keys())),
        changed_scorers=changed,
        min_paired=min_paired,
        items=items,
    ).with_effect(tolerance if effect is None else effect)
