"""Naming versions, what a batch records, diffs, and in-memory versions."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.datasets import (
    DatasetDiff,
    DatasetError,
    DatasetItem,
    DatasetRef,
    DatasetSpec,
    SampleSpec,
    version_digest,
    version_of,
)


@pytest.mark.parametrize(("text", "parsed"), [
    ("qa", DatasetSpec(name="qa")),
    ("qa@v12", DatasetSpec(name="qa", number=12)),
    ("qa@ABCD12", DatasetSpec(name="qa", prefix="abcd12")),
    ("my.set-2_x@v1", DatasetSpec(name="my.set-2_x", number=1)),
])
def test_specs_parse(text: str, parsed: DatasetSpec) -> None:
    assert DatasetSpec.parse(text) == parsed


@pytest.mark.parametrize("text", ["", "@v1", "qa@", "qa@v0", "qa@abc", "qa@xyz1", "a b",
                                  "qa@v1@v2", "-qa"])
def test_bad_specs_are_one_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(repr(text))):
        DatasetSpec.parse(text)


@given(st.sampled_from([None, "qa", "b-2"]), st.text("0123456789abcdef", min_size=64,
                                                     max_size=64),
       st.one_of(st.none(), st.integers(1, 99)),
       st.one_of(st.none(), st.builds(SampleSpec, size=st.integers(1, 9),
                                      stratify=st.sampled_from([None, "topic"]),
                                      seed=st.integers(0, 9))))
def test_a_ref_round_trips_through_json(name: str | None, version: str, number: int | None,
                                        sample: SampleSpec | None) -> None:
    ref = DatasetRef(name=name, version=version, number=number, sample=sample)
    assert DatasetRef.from_json(ref.to_json()) == ref


def test_a_ref_says_what_it_ran_on() -> None:
    ref = DatasetRef(name="qa", version="ab" * 32, number=3,
                     sample=SampleSpec(size=200, stratify="category", seed=1))
    assert str(ref) == "qa@v3 (abababababab, sample 200 by category, seed 1)"
    assert str(DatasetRef(name=None, version="ab" * 32)) == "unnamed version abababababab"


_PAIRS = st.dictionaries(st.text(max_size=4), st.sampled_from(["1", "2", "3"]), max_size=12)


@given(_PAIRS, _PAIRS)
def test_a_diff_partitions_the_ids(old: dict[str, str], new: dict[str, str]) -> None:
    """Every id is added, removed, changed or the same, exactly once, as sets say."""
    diff = DatasetDiff.of(sorted(old.items()), sorted(new.items()))
    assert set(diff.added) == new.keys() - old.keys()
    assert set(diff.removed) == old.keys() - new.keys()
    assert set(diff.changed) == {k for k in old.keys() & new.keys() if old[k] != new[k]}
    assert diff.same == sum(1 for k in old.keys() & new.keys() if old[k] == new[k])


def test_pairs_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="out of order"):
        DatasetDiff.of([("b", "1"), ("a", "1")], [])


def test_version_of_refuses_a_repeated_id_naming_both_lines() -> None:
    items = [DatasetItem(id="a", fields={"input": 1}, line=2),
             DatasetItem(id="a", fields={"input": 2}, line=5)]
    with pytest.raises(DatasetError, match=r"^f:5: field 'id': duplicate id 'a', first at "
                                           r"line 2$"):
        version_of(items, source="f")


def test_version_of_is_the_digest_rule() -> None:
    items = [DatasetItem(id="b", fields={"input": 2}), DatasetItem(id="a", fields={"input": 1})]
    version, digests = version_of(items, source="f")
    assert version == version_digest({i.id: i.digest for i in items})
    assert list(digests) == ["b", "a"]
