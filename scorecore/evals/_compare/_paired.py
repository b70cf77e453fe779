"""Comparing two batches a store pairs itself: the same comparison, without their rows.

``scorecore compare`` on batches of millions of rows cannot hold them: a store that pairs the
two batches by scorer and item (:class:`~scorecore.evals.store.PairedReader`) streams
:class:`PairedScore` values instead, and :class:`PairedComparison` folds them one scorer at a
time into the :class:`Comparison` :func:`~scorecore.evals.compare` gives for the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, final

import attrs

from scorecore.evals._compare._compute import _Settings, check_options, scorer_result
from scorecore.evals._compare._items import match_items
from scorecore.evals._compare._pairs import PairedScore, PairFold
from scorecore.evals._compare._values import DEFAULT_MIN_PAIRED, Comparison, ScorerComparison

if TYPE_CHECKING:
    from scorecore.evals._report._values import Threshold
    from scorecore.evals._stats._bootstrap import MeanResampler

__all__ = ["PairedComparison"]


@final
class PairedComparison:
    """A :class:`Comparison` built from a store's pairs, scorer by scorer (see the module).

    Give what the store knows of each batch (its scorers with their fingerprints, the items
    only one batch has), :meth:`add` the pairs in the store's order (scorer id, then item id),
    page by page, then take :meth:`result`. Each scorer's pairs are folded as they come and
    only its deltas are kept until the scorer is done. The options are
    :func:`~scorecore.evals.compare`'s, with the same defaults and checks (``base_items`` and
    ``new_items``: pairs of an item whose content changed are left out, as there;
    ``resampler``: the bootstrap's means computed faster, as there).

    >>> from scorecore.evals.store import PairedComparison, PairedScore
    >>> pairs = [PairedScore(scorer_id="s", item_id=f"q{i}", base_status="scored",
    ...                      base_score=1.0, new_status="scored", new_score=0.0,
    ...                      base_row_id=f"a{i}", new_row_id=f"b{i}") for i in range(10)]
    >>> building = PairedComparison(base_batch="a", new_batch="b",
    ...                             base_scorers={"s": {None}}, new_scorers={"s": {None}},
    ...                             only_in_base=(), only_in_new=())
    >>> building.add(pairs)
    >>> building.result().verdict
    'regressed'
    """

    __slots__ = ("_base", "_batches", "_changed", "_changed_items", "_common", "_done",
                 "_effect", "_fold", "_items", "_new", "_only", "_options", "_settings",
                 "_thresholds")

    def __init__(
        self,
        *,
        base_batch: str,
        new_batch: str,
        base_scorers: Mapping[str, Iterable[str | None]],
        new_scorers: Mapping[str, Iterable[str | None]],
        only_in_base: Sequence[str],
        only_in_new: Sequence[str],
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
    ) -> None:
        check_options(tolerance=tolerance, alpha=alpha, resamples=resamples,
                      min_paired=min_paired)
        if (base_items is None) != (new_items is None):
            raise ValueError("give both batches' items (base_items and new_items) or neither")
        # As compare(): an item whose content changed under its id is another item, unpaired.
        self._items = (None if base_items is None or new_items is None
                       else match_items(base_items, new_items))
        self._changed_items = frozenset(() if self._items is None else self._items.changed)
        self._effect = tolerance if effect is None else effect
        base = {sid: frozenset(prints) for sid, prints in base_scorers.items()}
        new = {sid: frozenset(prints) for sid, prints in new_scorers.items()}
        self._common = sorted(base.keys() & new.keys())
        self._changed = tuple(sid for sid in self._common if base[sid] != new[sid])
        self._base, self._new = base, new
        self._batches = (base_batch, new_batch)
        self._only = (tuple(sorted(only_in_base)), tuple(sorted(only_in_new)))
        self._thresholds = dict(thresholds or {})
        self._settings = _Settings(tolerance=tolerance,
                                   alpha=alpha / max(1, len(self._common)), seed=seed,
                                   resamples=resamples, most_regressed=most_regressed,
                                   min_paired=min_paired, resampler=resampler)
        self._options = (tolerance, seed, resamples, min_paired)
        self._done: dict[str, ScorerComparison] = {}
        self._fold: PairFold | None = None

    def add(self, pairs: Iterable[PairedScore]) -> None:
        """Fold ``pairs`` in, ordered by scorer id then item id (as the store yields them).

        Raises:
            ValueError: a pair of a scorer not in both batches, or out of order; an item whose
                change is beyond the largest float (as :func:`~scorecore.evals.compare`).
        """
        for pair in pairs:
            if pair.item_id in self._changed_items:
                continue
            fold = self._fold
            if fold is None or fold.scorer_id != pair.scorer_id:
                fold = self._start(pair.scorer_id)
            fold.add(pair)

    def _start(self, scorer_id: str) -> PairFold:
        if scorer_id not in self._base or scorer_id not in self._new:
            raise ValueError(f"a pair of scorer {scorer_id!r}, which is not in both batches")
        if scorer_id in self._done or (self._fold is not None
                                       and scorer_id < self._fold.scorer_id):
            raise ValueError(f"pairs of scorer {scorer_id!r} out of order (by scorer id, then "
                             f"item id)")
        self._finish()
        self._fold = PairFold(scorer_id, self._thresholds.get(scorer_id),
                              self._settings.most_regressed)
        return self._fold

    def _finish(self) -> None:
        if self._fold is not None:
            fold, self._fold = self._fold, None
            self._done[fold.scorer_id] = scorer_result(fold, self._settings, self._batches)

    def result(self) -> Comparison:
        """The comparison of what was added (a scorer in both batches without pairs has
        ``paired=0``)."""
        self._finish()
        for sid in self._common:
            if sid not in self._done:
                self._done[sid] = scorer_result(
                    PairFold(sid, self._thresholds.get(sid), self._settings.most_regressed),
                    self._settings, self._batches)
        tolerance, seed, resamples, min_paired = self._options
        changed = frozenset(self._changed)
        return Comparison(
            base_batch=self._batches[0],
            new_batch=self._batches[1],
            tolerance=tolerance,
            seed=seed,
            resamples=resamples,
            scorers=tuple(_marked(self._done[sid], sid in changed) for sid in self._common),
            only_in_base=self._only[0],
            only_in_new=self._only[1],
            scorers_only_in_base=tuple(sorted(self._base.keys() - self._new.keys())),
            scorers_only_in_new=tuple(sorted(self._new.keys() - self._base.keys())),
            changed_scorers=self._changed,
            min_paired=min_paired,
            items=self._items,
        ).with_effect(self._effect)


def _marked(result: ScorerComparison, changed: bool) -> ScorerComparison:
    return attrs.evolve(result, definition_changed=True) if changed else result
