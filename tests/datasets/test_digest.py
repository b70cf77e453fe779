"""The digests that decide whether two items, or two versions, hold the same content."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scorecore.datasets._digest import item_digest, version_digest

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(), _JSON, max_size=5))
def test_key_order_does_not_change_an_items_digest(item: dict[str, object]) -> None:
    assert item_digest(dict(reversed(list(item.items())))) == item_digest(item)


def test_a_changed_value_changes_the_digest() -> None:
    assert item_digest({"id": "a", "input": "x"}) != item_digest({"id": "a", "input": "y"})
    # 1 and 1.0 and "1" are different JSON, so different content.
    assert item_digest({"v": 1}) != item_digest({"v": "1"})


@given(st.dictionaries(st.text(), st.text(min_size=1), max_size=6))
def test_a_versions_digest_ignores_item_order(digests: dict[str, str]) -> None:
    assert version_digest(dict(reversed(list(digests.items())))) == version_digest(digests)


def test_adding_removing_or_changing_an_item_changes_the_version() -> None:
    base = {"a": "1", "b": "2"}
    assert version_digest({**base, "c": "3"}) != version_digest(base)
    assert version_digest({"a": "1"}) != version_digest(base)
    assert version_digest({"a": "1", "b": "9"}) != version_digest(base)
    # An id holding the separator cannot pass for two items.
    assert version_digest({"a\tx\nb": "2"}) != version_digest({"a": "x", "b": "2"})
