"""Simulated batch pairs for validating ``compare``'s gate (tests and benchmarks/compare_power.py).

Each item has a latent quality ``q ~ U(0, 1)``; a batch scores it ``q - shift + N(0, noise)``
clipped to [0, 1]. Two batches with ``shift = 0`` come from the same distribution (a null
comparison); ``shift = d`` plants a regression of about ``d`` in the mean (exactly ``d``
with ``clip=False``: clipping at 0 and 1 makes the drop of the items near the ends smaller).
"""

from __future__ import annotations

import random

from scorecore.evals import ScoreRow, compare
from scorecore.evals._compare._power import spread


def batch(batch_id: str, quality: list[float], *, shift: float, noise: float,
          rng: random.Random, clip: bool = True) -> list[ScoreRow]:
    """One batch's rows for one scorer over items of the given latent quality."""
    def score(q: float) -> float:
        raw = q - shift + rng.gauss(0.0, noise)
        return min(1.0, max(0.0, raw)) if clip else raw

    return [
        ScoreRow(id=f"{batch_id}/{i}", scorer_id="quality", run_id=f"{batch_id}:{i}",
                 batch_id=batch_id, status="scored", dataset_item_id=str(i), score=score(q))
        for i, q in enumerate(quality)
    ]


def gate_rates(*, runs: int, items: int, shift: float, seed: int, noise: float = 0.15,
               tolerance: float = 0.02, resamples: int = 1000,
               clip: bool = True) -> tuple[float, float]:
    """The shares of ``runs`` simulated comparisons in which ``compare``'s gate fires, and in
    which its mean test alone does (the interval's upper end below ``-tolerance``: what the
    MDE describes; the gate also fires on the pass-rate test)."""
    rng = random.Random(seed)  # noqa: S311 - simulation, not security
    fired = mean_fired = 0
    for run in range(runs):
        quality = [rng.random() for _ in range(items)]
        base = batch("base", quality, shift=0.0, noise=noise, rng=rng, clip=clip)
        new = batch("new", quality, shift=shift, noise=noise, rng=rng, clip=clip)
        result = compare(base, new, tolerance=tolerance, resamples=resamples, seed=run)
        fired += result.regressed
        mean_fired += any(s.ci_high is not None and s.ci_high < -tolerance
                          for s in result.scorers)
    return fired / runs, mean_fired / runs


def gate_rate(*, runs: int, items: int, shift: float, seed: int, noise: float = 0.15,
              tolerance: float = 0.02, resamples: int = 1000, clip: bool = True) -> float:
    """The share of ``runs`` simulated comparisons in which ``compare``'s gate fires."""
    return gate_rates(runs=runs, items=items, shift=shift, seed=seed, noise=noise,
                      tolerance=tolerance, resamples=resamples, clip=clip)[0]


def pilot_spread(*, items: int, seed: int, noise: float = 0.15, clip: bool = True) -> float:
    """The paired differences' spread of one simulated null comparison: what ``scorecore
    plan`` measures on a baseline and its predecessor before planning the next comparison."""
    rng = random.Random(seed)  # noqa: S311 - simulation, not security
    quality = [rng.random() for _ in range(items)]
    base = batch("base", quality, shift=0.0, noise=noise, rng=rng, clip=clip)
    new = batch("new", quality, shift=0.0, noise=noise, rng=rng, clip=clip)
    return spread([n.score - b.score for b, n in zip(base, new, strict=True)
                   if n.score is not None and b.score is not None])
