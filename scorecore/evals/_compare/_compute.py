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
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final

import attrs

from scorecore._core._reprs import short_repr
from scorecore.evals._rows._row import row_item_id
from scorecore.evals._stats._bootstrap import bootstrap_mean_interval, sum_scale
from scorecore.validators import is_int

if TYPE_CHECKING:
    from scorecore.evals._report._values import OutcomeStatus, Threshold
    from scorecore.evals._rows._row import ScoreRow

__all__ = ["Comparison", "ItemDelta", "ScorerComparison", "compare"]

DEFAULT_PASS_MIN: Final = 0.5
"""Without a threshold for a scorer, an item passes when it is scored at least 0.5."""

DEFAULT_MIN_PAIRED: Final = 10
"""Fewer paired items than this give no verdict (see the module docstring for why 10)."""

Verdict: TypeAlias = Literal["regressed", "improved", "unchanged", "not_enough_pairs"]
ComparisonVerdict: TypeAlias = Literal["regressed", "not_enough_pairs", "no_regression"]


@final
@attrs.frozen(kw_only=True)
class ItemDelta:
    """One item's row in both batches (the score is ``None`` when it was not scored)."""

    item_id: str
    base_status: OutcomeStatus
    new_status: OutcomeStatus
    base_score: float | None
    new_score: float | None

    @property
    def delta(self) -> float | None:
        """``new_score - base_score`` when both were scored."""
        if self.base_score is None or self.new_score is None:
            return None
        return self.new_score - self.base_score


@final
@attrs.frozen(kw_only=True)
class ScorerComparison:
    """One scorer's change from the base batch to the new one.

    Attributes:
        scorer_id: the scorer.
        paired: items with a row of this scorer in both batches.
        scored_pairs: items scored in both (the mean delta is over these).
        base_mean: the base batch's mean over ``scored_pairs``.
        new_mean: the new batch's mean over ``scored_pairs``.
        mean_delta: ``new_mean - base_mean``.
        ci_low: the lower end of the bootstrap interval of ``mean_delta``.
        ci_high: its upper end.
        confidence: the interval's confidence (0.95 for one scorer; see the module docstring).
        pass_rule: when an item passes (e.g. ``">= 0.5"``); not scored never passes.
        base_pass_rate: the share of ``paired`` items passing in the base batch.
        new_pass_rate: the same in the new batch.
        newly_passing: items failing in the base batch and passing in the new one.
        newly_failing: items passing in the base batch and failing in the new one.
        mcnemar_p: the exact two-sided McNemar p-value of those two counts.
        improved: scored pairs whose score rose.
        regressed: scored pairs whose score fell.
        unchanged: scored pairs whose score stayed.
        status_changes: counts of pairs whose status changed, keyed ``"scored->failed"`` …
        most_regressed: the items that lost most (scores that disappeared first).
        significant_regression: the gate (see the module docstring).
        significant_improvement: the same test the other way.
        enough_pairs: whether ``paired`` reached the comparison's ``min_paired``; when not,
            neither test ran and the verdict is ``"not_enough_pairs"``.
        definition_changed: the scorer's recorded fingerprints differ between the batches
            (its code, prompt or judge changed): it is compared all the same, and its delta
            measures the scorer's change as well as the agent's.
    """

    scorer_id: str
    paired: int
    scored_pairs: int
    base_mean: float | None
    new_mean: float | None
    mean_delta: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    pass_rule: str
    base_pass_rate: float | None
    new_pass_rate: float | None
    newly_passing: int
    newly_failing: int
    mcnemar_p: float
    improved: int
    regressed: int
    unchanged: int
    status_changes: Mapping[str, int]
    most_regressed: tuple[ItemDelta, ...]
    significant_regression: bool
    significant_improvement: bool
    enough_pairs: bool = True
    definition_changed: bool = False

    @property
    def pass_rate_delta(self) -> float | None:
        """``new_pass_rate - base_pass_rate``."""
        if self.base_pass_rate is None or self.new_pass_rate is None:
            return None
        return self.new_pass_rate - self.base_pass_rate

    @property
    def verdict(self) -> Verdict:
        """``"regressed"``, ``"improved"``, ``"unchanged"`` (no significant change) or
        ``"not_enough_pairs"`` (too few paired items to say)."""
        if not self.enough_pairs:
            return "not_enough_pairs"
        if self.significant_regression:
            return "regressed"
        return "improved" if self.significant_improvement else "unchanged"


@final
@attrs.frozen(kw_only=True)
class Comparison:
    """Two batches compared scorer by scorer (see :func:`compare`).

    Attributes:
        base_batch: the baseline batch id.
        new_batch: the batch judged against it.
        tolerance: regressions up to this size (score units, and pass-rate points) are ignored.
        seed: the bootstrap's seed.
        resamples: the bootstrap's resample count.
        scorers: one comparison per scorer present in both batches, by scorer id.
        only_in_base: item ids with rows in the base batch only (listed, not compared).
        only_in_new: item ids with rows in the new batch only.
        scorers_only_in_base: scorer ids the new batch lacks.
        scorers_only_in_new: scorer ids the base batch lacks.
        changed_scorers: scorers whose recorded fingerprints differ between the batches;
            they are compared too, each marked ``definition_changed``.
        min_paired: the fewest paired items a scorer needs for a verdict.
    """

    base_batch: str
    new_batch: str
    tolerance: float
    seed: int
    resamples: int
    scorers: tuple[ScorerComparison, ...]
    only_in_base: tuple[str, ...]
    only_in_new: tuple[str, ...]
    scorers_only_in_base: tuple[str, ...]
    scorers_only_in_new: tuple[str, ...]
    changed_scorers: tuple[str, ...]
    min_paired: int = DEFAULT_MIN_PAIRED

    @property
    def regressed(self) -> bool:
        """Whether any scorer's regression beyond the tolerance is significant (the CI gate)."""
        return any(s.significant_regression for s in self.scorers)

    @property
    def verdict(self) -> ComparisonVerdict:
        """``"regressed"`` when a scorer regressed significantly; else ``"not_enough_pairs"``
        when a scorer had fewer than ``min_paired`` paired items (or no scorer is in both
        batches): no verdict, never a pass; else ``"no_regression"``."""
        if self.regressed:
            return "regressed"
        if not self.scorers or any(not s.enough_pairs for s in self.scorers):
            return "not_enough_pairs"
        return "no_regression"

    @property
    def verdict_reason(self) -> str | None:
        """Why there is no verdict or which scorers regressed, in one line (``None`` for
        ``"no_regression"``).

        ``"not enough paired items: n=1 for s (at least 10 needed)"``
        """
        verdict = self.verdict
        if verdict == "regressed":
            names = ", ".join(s.scorer_id for s in self.scorers if s.significant_regression)
            return f"significant regression in {names}"
        if verdict == "no_regression":
            return None
        if not self.scorers:
            return "not enough paired items: n=0 (no scorer in both batches)"
        counts = ", ".join(f"n={s.paired} for {s.scorer_id}"
                           for s in self.scorers if not s.enough_pairs)
        return f"not enough paired items: {counts} (at least {self.min_paired} needed)"

    @property
    def scorers_differ(self) -> bool:
        """Whether the batches ran different scorers (ids or fingerprints)."""
        return bool(self.scorers_only_in_base or self.scorers_only_in_new
                    or self.changed_scorers)

    def scorer_differences(self) -> str:
        """How the batches' scorers differ, in one line (``""`` when they do not).

        ``"only in base: length; definition changed: quality"``
        """
        parts = []
        if self.scorers_only_in_base:
            parts.append(f"only in {self.base_batch}: {', '.join(self.scorers_only_in_base)}")
        if self.scorers_only_in_new:
            parts.append(f"only in {self.new_batch}: {', '.join(self.scorers_only_in_new)}")
        if self.changed_scorers:
            parts.append(f"definition changed: {', '.join(self.changed_scorers)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON-ready data (camelCase keys, like the eval report)."""
        return {
            "baseBatch": self.base_batch,
            "newBatch": self.new_batch,
            "tolerance": self.tolerance,
            "seed": self.seed,
            "resamples": self.resamples,
            "regressed": self.regressed,
            "verdict": self.verdict,
            "verdictReason": self.verdict_reason,
            "minPaired": self.min_paired,
            "onlyInBase": list(self.only_in_base),
            "onlyInNew": list(self.only_in_new),
            "scorersOnlyInBase": list(self.scorers_only_in_base),
            "scorersOnlyInNew": list(self.scorers_only_in_new),
            "changedScorers": list(self.changed_scorers),
            "scorers": [_scorer_json(s) for s in self.scorers],
        }


def _item_json(item: ItemDelta) -> dict[str, Any]:
    return {"itemId": item.item_id, "baseStatus": item.base_status,
            "newStatus": item.new_status, "baseScore": item.base_score,
            "newScore": item.new_score, "delta": item.delta}


def _scorer_json(s: ScorerComparison) -> dict[str, Any]:
    return {
        "id": s.scorer_id, "verdict": s.verdict, "paired": s.paired,
        "scoredPairs": s.scored_pairs, "baseMean": s.base_mean, "newMean": s.new_mean,
        "meanDelta": s.mean_delta, "ciLow": s.ci_low, "ciHigh": s.ci_high,
        "confidence": s.confidence, "passRule": s.pass_rule,
        "basePassRate": s.base_pass_rate, "newPassRate": s.new_pass_rate,
        "passRateDelta": s.pass_rate_delta, "newlyPassing": s.newly_passing,
        "newlyFailing": s.newly_failing, "mcnemarP": s.mcnemar_p, "improved": s.improved,
        "regressed": s.regressed, "unchanged": s.unchanged,
        "statusChanges": dict(s.status_changes),
        "mostRegressed": [_item_json(i) for i in s.most_regressed],
        "significantRegression": s.significant_regression,
        "significantImprovement": s.significant_improvement,
        "enoughPairs": s.enough_pairs,
        "definitionChanged": s.definition_changed,
    }


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


def _index(rows: Iterable[ScoreRow]) -> dict[str, dict[str, ScoreRow]]:
    """Each scorer's row per item; an item's trials become one row (see :func:`_one_row`)."""
    grouped: dict[str, dict[str, list[ScoreRow]]] = {}
    for row in rows:
        grouped.setdefault(row.scorer_id, {}).setdefault(row_item_id(row), []).append(row)
    return {sid: {key: _one_row(trials) for key, trials in items.items()}
            for sid, items in grouped.items()}


def _one_row(trials: Sequence[ScoreRow]) -> ScoreRow:
    """An item's rows over its trials as one: scored with the mean of the scored trials if
    any trial scored, else the first trial's row (one trial: that row)."""
    if len(trials) == 1:
        return trials[0]
    ordered = sorted(trials, key=lambda r: (r.run_id != f"{r.batch_id}:{row_item_id(r)}",
                                            r.run_id))
    scores = [r.score for r in ordered if r.status == "scored" and r.score is not None]
    if not scores:
        return ordered[0]
    first_scored = next(r for r in ordered if r.status == "scored")
    return attrs.evolve(first_scored, score=_mean(scores))


def _passes(row: ScoreRow, threshold: Threshold | None) -> bool:
    if row.status != "scored" or row.score is None:
        return False
    if threshold is None:
        return row.score >= DEFAULT_PASS_MIN
    return threshold.check(row.score)


def _mean(values: Sequence[float]) -> float:
    bits = sum_scale(values)
    if not bits:
        return math.fsum(values) / len(values)
    return math.ldexp(math.fsum([math.ldexp(v, -bits) for v in values]) / len(values), bits)


def _beyond_floats(scorer_id: str, base: ScoreRow, new: ScoreRow) -> ValueError:
    return ValueError(
        f"cannot compare scorer {scorer_id!r} on item {short_repr(row_item_id(new), 80)}: its "
        f"score went from {base.score!r} (row {base.id}, batch {short_repr(base.batch_id, 80)}) "
        f"to {new.score!r} (row {new.id}, batch {short_repr(new.batch_id, 80)}), a change "
        f"beyond the largest float"
    )


@attrs.frozen(kw_only=True)
class _Settings:
    tolerance: float
    alpha: float
    seed: int
    resamples: int
    most_regressed: int
    min_paired: int


def _loss_order(item: ItemDelta) -> tuple[int, float, str]:
    # Items whose score disappeared first, then by the size of the drop, then by id.
    delta = item.delta
    if delta is None:
        return (0, 0.0, item.item_id)
    return (1, delta, item.item_id)


def _compare_scorer(
    scorer_id: str,
    base: Mapping[str, ScoreRow],
    new: Mapping[str, ScoreRow],
    threshold: Threshold | None,
    settings: _Settings,
) -> ScorerComparison:
    keys = sorted(base.keys() & new.keys())
    pairs = [ItemDelta(item_id=k, base_status=base[k].status, new_status=new[k].status,
                       base_score=base[k].score if base[k].status == "scored" else None,
                       new_score=new[k].score if new[k].status == "scored" else None)
             for k in keys]
    scored = [p for p in pairs if p.delta is not None]
    deltas = [p.delta for p in scored if p.delta is not None]
    if not all(map(math.isfinite, deltas)):  # scores near the largest float, opposite signs
        k = next(p.item_id for p in scored if p.delta is not None and not math.isfinite(p.delta))
        raise _beyond_floats(scorer_id, base[k], new[k])
    confidence = 1 - settings.alpha
    enough = len(pairs) >= settings.min_paired
    ci: tuple[float, float] | None = None
    if enough and len(deltas) >= settings.min_paired:
        ci = bootstrap_mean_interval(deltas, confidence=confidence,
                                     resamples=settings.resamples, seed=settings.seed,
                                     stream=scorer_id)
    base_pass = [_passes(base[k], threshold) for k in keys]
    new_pass = [_passes(new[k], threshold) for k in keys]
    newly_passing = sum(1 for b, n in zip(base_pass, new_pass, strict=True) if n and not b)
    newly_failing = sum(1 for b, n in zip(base_pass, new_pass, strict=True) if b and not n)
    p_value = mcnemar_p_value(newly_passing, newly_failing)
    base_rate = sum(base_pass) / len(keys) if keys else None
    new_rate = sum(new_pass) / len(keys) if keys else None
    rate_delta = new_rate - base_rate if new_rate is not None and base_rate is not None else None
    tol = settings.tolerance
    tested = enough and rate_delta is not None and p_value < settings.alpha
    pass_drop = tested and rate_delta is not None and rate_delta < -tol
    pass_rise = tested and rate_delta is not None and rate_delta > tol
    changes: dict[str, int] = {}
    for p in pairs:
        if p.base_status != p.new_status:
            change = f"{p.base_status}->{p.new_status}"
            changes[change] = changes.get(change, 0) + 1
    losers = sorted(
        (p for p in pairs
         if (p.delta is not None and p.delta < 0)
         or (p.base_status == "scored" and p.new_status != "scored")),
        key=_loss_order,
    )
    base_scores = [p.base_score for p in scored if p.base_score is not None]
    new_scores = [p.new_score for p in scored if p.new_score is not None]
    return ScorerComparison(
        scorer_id=scorer_id,
        paired=len(pairs),
        scored_pairs=len(scored),
        base_mean=_mean(base_scores) if base_scores else None,
        new_mean=_mean(new_scores) if new_scores else None,
        mean_delta=_mean(deltas) if deltas else None,
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
        status_changes=dict(sorted(changes.items())),
        most_regressed=tuple(losers[: settings.most_regressed]),
        significant_regression=(ci is not None and ci[1] < -tol) or pass_drop,
        significant_improvement=(ci is not None and ci[0] > tol) or pass_rise,
        enough_pairs=enough,
    )


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
    if not (0 <= tolerance < math.inf):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    if not is_int(min_paired) or min_paired < 1:
        raise ValueError(f"min_paired must be an int >= 1, got {min_paired!r}")
    base_rows = list(base)
    new_rows = list(new)
    base_index = _index(base_rows)
    new_index = _index(new_rows)
    common = sorted(base_index.keys() & new_index.keys())
    settings = _Settings(tolerance=tolerance, alpha=alpha / max(1, len(common)), seed=seed,
                         resamples=resamples, most_regressed=most_regressed,
                         min_paired=min_paired)
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
    base_items = {k for rows in base_index.values() for k in rows}
    new_items = {k for rows in new_index.values() for k in rows}
    return Comparison(
        base_batch=base_rows[0].batch_id if base_rows else "",
        new_batch=new_rows[0].batch_id if new_rows else "",
        tolerance=tolerance,
        seed=seed,
        resamples=resamples,
        scorers=scorers,
        only_in_base=tuple(sorted(base_items - new_items)),
        only_in_new=tuple(sorted(new_items - base_items)),
        scorers_only_in_base=tuple(sorted(base_index.keys() - new_index.keys())),
        scorers_only_in_new=tuple(sorted(new_index.keys() - base_index.keys())),
        changed_scorers=changed,
        min_paired=min_paired,
    )
