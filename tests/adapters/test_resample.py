"""The command line's numpy bootstrap gives the core's intervals, float for float.

``scorecore compare`` bootstraps with numpy (millions of rows); the library computes the same
means in pure Python. Whichever runs, the same data, seed and stream give the same interval.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, compare
from scorecore.evals._stats._bootstrap import (
    bootstrap_key,
    bootstrap_mean_interval,
    resample_means,
)
from scorecore_adapters._resample import mean_resampler, numpy_resample_means

_VALUES = st.lists(st.one_of(st.floats(-1, 1), st.floats(-1e300, 1e300),
                             st.sampled_from([0.0, 0.1, 1 / 3, -0.7])),
                   min_size=1, max_size=200)


@given(values=_VALUES, resamples=st.integers(1, 40), seed=st.integers(0, 2**64),
       stream=st.text(max_size=5))
def test_numpy_means_are_the_pure_means_bit_for_bit(
    *, values: list[float], resamples: int, seed: int, stream: str
) -> None:
    """The same draws and the same left-to-right sums: equal floats, not merely close ones."""
    key = bootstrap_key(seed, stream)
    assert numpy_resample_means(values, resamples=resamples, key=key) == resample_means(
        values, resamples=resamples, key=key)


@given(values=_VALUES, seed=st.integers(0, 2**32), stream=st.text(max_size=5))
def test_the_interval_is_the_same_with_either_resampler(
    *, values: list[float], seed: int, stream: str
) -> None:
    assert bootstrap_mean_interval(values, resamples=100, seed=seed, stream=stream,
                                   resampler=numpy_resample_means) == bootstrap_mean_interval(
        values, resamples=100, seed=seed, stream=stream)


def _rows(batch: str, scores: list[float]) -> list[ScoreRow]:
    return [ScoreRow(id=f"{batch}{i}", scorer_id=f"s{i % 2}", run_id=f"{batch}:{i}",
                     batch_id=batch, status="scored", score=s, dataset_item_id=str(i // 2))
            for i, s in enumerate(scores)]


@settings(max_examples=30)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=24, max_size=80),
       st.integers(0, 2**32))
def test_compare_is_the_same_with_the_command_lines_resampler(
    scores: list[tuple[float, float]], seed: int
) -> None:
    """``scorecore compare`` passes the numpy resampler: its result is the library's."""
    base, new = _rows("a", [b for b, _ in scores]), _rows("b", [n for _, n in scores])
    assert compare(base, new, seed=seed, resamples=200,
                   resampler=mean_resampler()) == compare(base, new, seed=seed, resamples=200)


def test_the_command_line_uses_numpy_where_it_is_installed() -> None:
    assert mean_resampler() is numpy_resample_means
