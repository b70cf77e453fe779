"""The bootstrap's resample means with numpy: the core's draws and sums, without a Python loop.

``scorecore compare`` of two batches of a million rows bootstraps 500,000 paired differences a
scorer 1,000 times; the core's pure-Python means (:func:`numpy_resample_means`'s reference)
take minutes there. This computes the very same floats: the same SHAKE-256 bytes read as
native 32-bit integers (``memoryview.cast("I")``), the same multiply-shift to indices, and each
resample's values summed left to right (``cumsum``, not numpy's pairwise ``sum``) then divided
by ``n``. Without numpy (an extra), :func:`mean_resampler` is ``None`` and the core computes
them itself, with the same result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scorecore.evals import MeanResampler

__all__ = ["mean_resampler", "numpy_resample_means"]


def numpy_resample_means(values: Sequence[float], *, resamples: int,
                         key: bytes) -> list[float]:
    """Each resample's mean of ``values``, as the core's pure-Python bootstrap computes it.

    >>> means = numpy_resample_means([0.1, 0.7, 0.25, 1.0], resamples=3, key=b"k")
    >>> len(means), all(0.1 <= m <= 1.0 for m in means)
    (3, True)

    ``compare(..., resampler=numpy_resample_means)`` gives the same comparison as without it.
    """
    import numpy as np  # noqa: PLC0415 - an optional extra

    n = len(values)
    array = np.asarray(values, dtype=np.float64)
    idx = np.empty(n, dtype=np.uint64)
    positions = idx.view(np.int64)  # the indices are below n: the same bits as int64
    size, shift = np.uint64(n), np.uint64(32)
    means: list[float] = []
    for b in range(resamples):
        stream = hashlib.shake_256(key + b.to_bytes(8, "big")).digest(4 * n)
        # 32-bit draws times n fit 64 bits: the exact multiply-shift of the pure draws.
        np.multiply(np.frombuffer(stream, dtype=np.uint32), size, out=idx)
        np.right_shift(idx, shift, out=idx)
        # Indexing by int64 (not uint64, which numpy converts on every call) gathers fastest.
        picked = array[positions]
        np.cumsum(picked, out=picked)
        means.append(float(picked[-1]) / n)
    return means


def mean_resampler() -> MeanResampler | None:
    """:func:`numpy_resample_means` where numpy is installed, else ``None`` (the core's)."""
    try:
        import numpy  # noqa: F401, PLC0415 - only whether it is there
    except ImportError:  # pragma: no cover - the extra is installed where tests run
        return None
    return numpy_resample_means
