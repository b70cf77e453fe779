"""Tests of live-scoring sampling: Mastra's deterministic ratio on the trace or run id."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.live import NoSampling, RatioSampling, sample_point
from scorecore.live._sampling import _to_sampling

keys = st.text(max_size=40)
rates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_sample_point_is_the_first_six_bytes_of_sha256_over_2_48():
    """A known vector: sha256("abc") starts with ba7816bf8f01."""
    assert hashlib.sha256(b"abc").hexdigest().startswith("ba7816bf8f01")
    assert sample_point("abc") == 0xBA7816BF8F01 / 2**48


@given(keys)
def test_sample_point_is_in_the_unit_interval(key: str):
    """Every key maps into [0, 1)."""
    assert 0.0 <= sample_point(key) < 1.0


@given(keys, rates)
def test_the_same_id_always_decides_the_same(key: str, rate: float):
    """Deterministic per key, across separately built samplings."""
    assert RatioSampling(rate=rate).decide(key) == RatioSampling(rate=rate).decide(key)
    assert RatioSampling(rate=rate).decide(key) == (sample_point(key) < rate)


@given(keys)
def test_rate_zero_never_and_rate_one_always(key: str):
    """The extremes decide alike for every key; no sampling always scores."""
    assert RatioSampling(rate=0.0).decide(key) is False
    assert RatioSampling(rate=1.0).decide(key) is True
    assert RatioSampling(rate=1).decide(key) is True
    assert NoSampling().decide(key) is True


@given(rates, st.text(min_size=1, max_size=6))
def test_over_many_ids_the_fraction_is_close_to_the_rate(rate: float, prefix: str):
    """Over 4,000 distinct ids the sampled fraction is within 0.03 of the rate (> 5 sigma)."""
    n = 4000
    sampling = RatioSampling(rate=rate)
    chosen = sum(sampling.decide(f"{prefix}-trace-{i}") for i in range(n))
    assert abs(chosen / n - rate) < 0.03


@given(st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=1.0), keys)
def test_sampling_is_monotonic_in_the_rate(low: float, high: float, key: str):
    """A call sampled at some rate is sampled at every higher rate."""
    low, high = sorted((low, high))
    if RatioSampling(rate=low).decide(key):
        assert RatioSampling(rate=high).decide(key)


@pytest.mark.parametrize("bad", [-0.1, 1.01, float("nan"), float("inf"), True, "0.5", None])
def test_a_bad_rate_is_rejected_naming_the_value(bad: Any):
    """Only a number in [0, 1] is a rate."""
    with pytest.raises(ValueError, match=r"RatioSampling\.rate must be a number in \[0, 1\]"):
        RatioSampling(rate=bad)


def test_type_is_fixed_and_mastra_shapes_are_accepted():
    """``type`` mirrors Mastra's tag; Mastra's dicts and "none" convert."""
    assert NoSampling().type == "none"
    assert RatioSampling(rate=0.2).type == "ratio"
    assert _to_sampling("none") == NoSampling()
    assert _to_sampling(None) == NoSampling()
    assert _to_sampling({"type": "none"}) == NoSampling()
    assert _to_sampling({"type": "ratio", "rate": 0.25}) == RatioSampling(rate=0.25)
    sampling = RatioSampling(rate=0.5)
    assert _to_sampling(sampling) is sampling
    for bad in ("ratio", 0.5, {"type": "ratio"}, {"type": "weird", "rate": 1}):
        with pytest.raises(ValueError, match="sampling must be NoSampling"):
            _to_sampling(bad)
