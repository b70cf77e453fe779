"""Simulated batch pairs for validating ``compare``'s gate (tests and benchmarks/compare_power.py).

Each item has a latent quality ``q ~ U(0, 1)``; a batch scores it ``q - shift + N(0, noise)``
clipped to [0, 1]. Two batches with ``shift = 0`` come from the same distribution (a null
comparison); ``shift = d`` plants a regression of about ``d`` in the mean.
"""

from __future__ import annotations

import random

from scorecore.evals import ScoreRow, compare


def batch(batch_id: str, quality: list[float], *, shift: float, noise: float,
          rng: random.Random) -> list[ScoreRow]:
    """One batch's rows for one scorer over items of the given latent quality."""
    return [
        ScoreRow(id=f"{batch_id}/{i}", scorer_id="quality", run_id=f"{batch_id}:{i}",
                 batch_id=batch_id, status="scored", dataset_item_id=str(i),
                 score=min(1.0, max(0.0, q - shift + rng.gauss(0.0, noise))))
        for i, q in enumerate(quality)
    ]


def gate_rate(*, runs: int, items: int, shift: float, seed: int, noise: float = 0.15,
              tolerance: float = 0.02, resamples: int = 1000) -> float:
    """The share of ``runs`` simulated comparisons in which ``compare``'s gate fires."""
    rng = random.Random(seed)  # noqa: S311 - simulation, not security
    fired = 0
    for run in range(runs):
        quality = [rng.random() for _ in range(items)]
        base = batch("base", quality, shift=0.0, noise=noise, rng=rng)
        new = batch("new", quality, shift=shift, noise=noise, rng=rng)
        fired += compare(base, new, tolerance=tolerance, resamples=resamples, seed=run).regressed
    return fired / runs
