"""Tests of the scorer registry: add, get, get_by_id, list, remove and their errors."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import scorecore.live._registry as mod
from scorecore import ScorecoreError, create_scorer
from scorecore.live._registry import Registry, ScorerNotFoundError


def make(id: str, name: str | None = None) -> Any:
    """A trivial scorer."""
    return create_scorer(id=id, name=name, description="d").generate_score(lambda ctx: 1.0)


def test_constructor_registers_by_key_in_order():
    """``Registry(scorers={...})`` adds every scorer under its key."""
    a, b = make("a"), make("b")
    registry = Registry(scorers={"first": a, "second": b})
    assert dict(registry.list()) == {"first": a, "second": b}
    assert list(registry) == ["first", "second"]
    assert len(registry) == 2
    assert "first" in registry
    assert "a" not in registry
    assert repr(registry) == "Registry('first', 'second')"


def test_add_is_a_no_op_for_an_existing_key_unless_replace():
    """Mastra keeps the first scorer; ``replace=True`` overrides it."""
    first, second = make("x"), make("x")
    registry = Registry()
    assert registry.add(first) is True
    assert registry.add(second) is False
    assert registry.get("x") is first
    assert registry.add(second, replace=True) is True
    assert registry.get("x") is second
    assert registry.add(first, "alias") is True
    assert list(registry) == ["x", "alias"]


def test_list_is_a_read_only_snapshot():
    """Changing the registry later does not change an earlier listing."""
    registry = Registry(scorers={"a": make("a")})
    listing = registry.list()
    registry.add(make("b"))
    assert list(listing) == ["a"]
    with pytest.raises(TypeError):
        listing["c"] = make("c")  # type: ignore[index]


def test_get_by_id_matches_id_or_name():
    """The lookup finds a scorer by its id or its name, whatever its key."""
    quality = make("response-quality", name="Response quality")
    registry = Registry(scorers={"q": quality})
    assert registry.get_by_id("response-quality") is quality
    assert registry.get_by_id("Response quality") is quality


def test_get_error_names_the_key_the_keys_and_a_suggestion():
    """The message says what was asked for, what exists, and the closest key."""
    registry = Registry(scorers={"quality": make("a"), "toxicity": make("b")})
    with pytest.raises(ScorerNotFoundError) as info:
        registry.get("qualty")
    error = info.value
    assert str(error) == (
        "no scorer registered with key 'qualty'; did you mean 'quality'? "
        "(registered: 'quality', 'toxicity')"
    )
    assert (error.requested, error.lookup, error.available) == (
        "qualty", "key", ("quality", "toxicity"),
    )
    assert isinstance(error, KeyError)
    assert isinstance(error, ScorecoreError)


def test_get_by_id_error_lists_ids_and_names():
    """Without a close match there is no suggestion."""
    registry = Registry(scorers={"k": make("tone", name="Tone")})
    with pytest.raises(ScorerNotFoundError) as info:
        registry.get_by_id("zzz")
    assert str(info.value) == (
        "no scorer registered with id or name 'zzz' (registered: 'tone', 'Tone')"
    )


def test_empty_registry_error():
    """An empty registry says so."""
    with pytest.raises(ScorerNotFoundError, match="the registry is empty"):
        Registry().get("anything")


def test_remove_by_key_then_by_id_or_name():
    """``remove`` prefers the key, then the id or name; it returns the scorer."""
    a, b = make("a-id", name="A"), make("b-id")
    registry = Registry(scorers={"ka": a, "kb": b})
    assert registry.remove("ka") is a
    assert registry.remove("b-id") is b
    assert len(registry) == 0
    registry.add(a)
    assert registry.remove("A") is a


def test_remove_error_lists_keys_ids_and_names():
    """Nothing matching raises with everything the lookup considered."""
    registry = Registry(scorers={"k": make("i", name="n")})
    with pytest.raises(ScorerNotFoundError) as info:
        registry.remove("x")
    assert info.value.available == ("k", "i", "n")
    assert info.value.lookup == "key_or_id"
    assert "key, id or name 'x'" in str(info.value)


def test_the_error_pickles():
    """The structured attributes survive pickling."""
    error = ScorerNotFoundError(requested="x", lookup="id", available=("a",))
    back = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes, just produced
    assert (back.requested, back.lookup, back.available, str(back)) == (
        "x", "id", ("a",), str(error),
    )


def test_misuse_raises():
    """Only runnable scorers and non-empty keys are accepted."""
    builder = create_scorer(id="b", description="d")
    with pytest.raises(TypeError, match=r"Registry\.add needs a Scorer"):
        Registry().add(builder)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Registry\.add needs a Scorer"):
        Registry(scorers={"x": "not a scorer"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"key must be a non-empty str, got ''"):
        Registry().add(make("a"), "")


def test_all_is_sorted():
    """``__all__`` is sorted and names the public classes."""
    assert mod.__all__ == sorted(mod.__all__) == ["Registry", "ScorerNotFoundError"]
