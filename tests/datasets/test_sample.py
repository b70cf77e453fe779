"""Seeded stratified samples: reproducible, order-free, proportional, the right size."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.datasets import SampleSpec, sample_ids, stratum_of
from scorecore.datasets._sample import allocate

_KEYS = st.lists(st.tuples(st.text(min_size=1, max_size=6), st.sampled_from("abcd")),
                 unique_by=lambda k: k[0], max_size=60)


@given(_KEYS, st.integers(1, 80), st.integers(0, 5), st.randoms())
def test_the_same_seed_takes_the_same_items_in_any_order(
        keys: list[tuple[str, str]], size: int, seed: int, rng: object) -> None:
    """Reordering the items never changes the sample; the sample is min(size, items) big."""
    spec = SampleSpec(size=size, stratify="k", seed=seed)
    shuffled = list(keys)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    picked = sample_ids(keys, spec)
    assert picked == sample_ids(shuffled, spec)
    assert len(picked) == min(size, len(keys))
    assert picked <= {k for k, _ in keys}


@given(st.dictionaries(st.sampled_from("abcdefg"), st.integers(1, 50), min_size=1),
       st.integers(1, 200))
def test_allocation_is_proportional_within_one_item(counts: dict[str, int], size: int) -> None:
    """Each stratum gets its exact share rounded down or up, the shares add up to the size,
    and no stratum gives more items than it has (largest remainders)."""
    total = sum(counts.values())
    quotas = allocate(counts, size)
    assert sum(quotas.values()) == min(size, total)
    for stratum, n in counts.items():
        exact = min(size, total) * n / total
        assert quotas[stratum] <= n
        assert exact - 1 < quotas[stratum] < exact + 1


def test_strata_give_their_shares() -> None:
    """30 math and 10 geo items sampled 8: 6 math, 2 geo; another seed takes other items."""
    keys = [(f"m{i}", "math") for i in range(30)] + [(f"g{i}", "geo") for i in range(10)]
    picked = sample_ids(keys, SampleSpec(size=8, stratify="topic", seed=1))
    assert Counter(i[0] for i in picked) == {"m": 6, "g": 2}
    assert picked != sample_ids(keys, SampleSpec(size=8, stratify="topic", seed=2))


def test_a_stratum_is_read_from_extra_or_a_dotted_path() -> None:
    """``category`` reads ``extra.category`` when the item has no such field; a missing field
    is its own stratum; values are compared as JSON (1 and "1" differ)."""
    assert stratum_of({"extra": {"category": 1}}, "category") == "1"
    assert stratum_of({"extra": {"category": "1"}}, "extra.category") == '"1"'
    assert stratum_of({"input": {"lang": "fr"}}, "input.lang") == '"fr"'
    assert stratum_of({"input": "q"}, "category") == "(missing)"


@pytest.mark.parametrize(("fields", "message"), [
    ({"size": 0}, "size is a whole number >= 1"),
    ({"size": 5, "seed": -1}, "seed is a whole number >= 0"),
    ({"size": 5, "stratify": "a..b"}, "a name or a dotted path"),
])
def test_bad_specs_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SampleSpec(**fields)  # type: ignore[arg-type]


@given(_KEYS, st.sampled_from([{"a": 0.5, "b": 0.5}, {"train": 0.8, "dev": 0.1, "test": 0.1},
                               {"all": 1.0}]), st.integers(0, 3))
def test_a_split_puts_each_item_in_one_part_in_proportion(
        keys: list[tuple[str, str]], fractions: dict[str, float], seed: int) -> None:
    """Parts are disjoint and cover every item; in each stratum a part's size is within one
    of its share."""
    from scorecore.datasets import split_ids  # noqa: PLC0415

    parts = split_ids(keys, fractions, seed=seed)
    assert sum(len(p) for p in parts.values()) == len(keys)
    assert set().union(*parts.values()) == {k for k, _ in keys}
    for stratum in {s for _, s in keys}:
        members = {k for k, s in keys if s == stratum}
        for part, ids in parts.items():
            exact = len(members) * fractions[part]
            assert exact - 1 < len(ids & members) < exact + 1
