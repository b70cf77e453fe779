"""Compares that know what they compare: only items with the same id and content are paired."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, compare
from scorecore.evals._compare._items import match_items

digests = st.dictionaries(st.text(max_size=3), st.sampled_from("abc"), max_size=8)


def rows(batch: str, scores: dict[str, float]) -> list[ScoreRow]:
    return [ScoreRow(id=f"{batch}/{k}", scorer_id="s", run_id=f"{batch}:{k}", batch_id=batch,
                     status="scored", score=v, dataset_item_id=k) for k, v in scores.items()]


@given(digests, digests)
def test_every_item_is_same_changed_added_or_removed_exactly_once(
        base: dict[str, str], new: dict[str, str]) -> None:
    """The four groups partition both batches' ids; same means equal digests."""
    m = match_items(base, new)
    groups = [m.same, m.changed, m.removed, m.added]
    every = [i for g in groups for i in g]
    assert sorted(every) == sorted(base.keys() | new.keys())
    assert all(base[i] == new[i] for i in m.same)
    assert all(base[i] != new[i] for i in m.changed)
    assert set(m.removed) == base.keys() - new.keys()
    assert m.differ == (base != new)


def test_compare_pairs_only_the_items_whose_content_is_the_same() -> None:
    """A changed item's big drop is not compared; the change is listed and said."""
    base_items = {f"i{k}": "x" for k in range(12)} | {"moved": "old", "gone": "g"}
    new_items = {f"i{k}": "x" for k in range(12)} | {"moved": "new", "fresh": "f"}
    base = rows("a", dict.fromkeys(base_items, 0.9))
    new = rows("b", dict.fromkeys(new_items, 0.9) | {"moved": 0.0})
    result = compare(base, new, base_items=base_items, new_items=new_items)
    assert result.datasets_differ
    assert result.items is not None
    assert (result.items.changed, result.items.removed, result.items.added) == (
        ("moved",), ("gone",), ("fresh",))
    assert result.scorers[0].paired == 12
    assert (result.only_in_base, result.only_in_new) == (("gone",), ("fresh",))
    assert result.scorers[0].mean_delta == 0.0
    assert result.base_batch == "a"
    assert result.new_batch == "b"
    assert result.to_json()["items"] == {"same": 12, "changed": ["moved"],
                                         "removed": ["gone"], "added": ["fresh"]}
    # Without the digests, items pair by id, and the changed item's drop counts.
    plain = compare(base, new)
    assert plain.items is None
    assert not plain.datasets_differ
    assert plain.scorers[0].paired == 13


def test_the_same_data_is_said_to_be_the_same() -> None:
    """Equal digests: nothing differs, every item compared."""
    items = {str(k): "d" for k in range(10)}
    result = compare(rows("a", dict.fromkeys(items, 0.5)), rows("b", dict.fromkeys(items, 0.5)),
                     base_items=items, new_items=dict(items))
    assert not result.datasets_differ
    assert result.scorers[0].paired == 10


def test_items_of_one_batch_only_are_refused() -> None:
    """Both batches' digests or neither: half a match would drop every row silently."""
    with pytest.raises(ValueError, match="give both batches' items"):
        compare([], [], base_items={"a": "x"})
