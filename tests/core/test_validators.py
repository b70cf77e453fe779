"""``scorecore.validators``: the one home of the small option checks and the misuse error."""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore.validators
from scorecore import ScorerDefinitionError
from scorecore.validators import (
    check_count,
    check_fraction,
    is_int,
    is_number,
    misuse,
    unit_interval,
)
from scorecore_adapters.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[2]
SHARED = ("is_int", "is_number", "misuse", "check_count", "check_fraction", "unit_interval")


def _definitions(name: str) -> list[str]:
    """Where a function ``name`` is defined at module level in the core or the adapters."""
    found = []
    for folder in ("scorecore", "adapters/scorecore_adapters"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(
                isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body
            ):
                found.append(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("name", SHARED)
def test_each_validator_is_defined_once(name: str) -> None:
    """No layer keeps its own copy of a shared validator, under its name or with another
    contract (the adapters, evals and scorers used to)."""
    assert _definitions(name) == ["scorecore/validators.py"]


def test_a_positive_int_check_has_one_home() -> None:
    """The command line's "an integer >= 1" argument type is written once; the kernel's
    options use :func:`check_count`."""
    assert len(_definitions("_positive_int") + _definitions("positive_int")) <= 1


def test_the_public_module_lists_the_validators() -> None:
    """``scorecore.validators`` exports exactly the shared checks."""
    assert sorted(scorecore.validators.__all__) == sorted(SHARED)


@given(st.one_of(st.booleans(), st.integers(), st.floats(), st.text(), st.none()))
def test_numbers_are_never_bools(value: object) -> None:
    """A bool is neither an int nor a number; every other int or float is."""
    assert is_int(value) == (type(value) is int)
    assert is_number(value) == (type(value) in (int, float))


def test_misuse_names_the_field_the_value_and_the_scorer() -> None:
    """The error says the field, the problem and the value, and carries them as attributes."""
    error = misuse("threshold", 2, "must be from 0 to 1", scorer_id="tone")
    assert isinstance(error, ScorerDefinitionError)
    assert str(error) == "scorer 'tone': threshold must be from 0 to 1, got 2"
    assert (error.scorer_id, error.field, error.value) == ("tone", "threshold", 2)


def test_misuse_never_fails_on_a_hostile_value() -> None:
    """A value whose repr raises or is huge still gives a short message."""

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert "Hostile" in str(misuse("x", Hostile(), "is wrong"))
    assert len(str(misuse("x", "y" * 100_000, "is wrong"))) < 300


def test_check_count_refuses_bools_and_small_counts() -> None:
    """A count is an int (not a bool) of at least ``minimum``."""
    assert check_count("n", 3, minimum=1) == 3
    for bad in (True, 0, 1.0):
        with pytest.raises(ScorerDefinitionError, match=r"^n must be an int >= 1, got "):
            check_count("n", bad, minimum=1)


def test_adapters_raise_the_shared_misuse_error() -> None:
    """An adapter's bad option reads like a kernel one: field, problem, bounded value."""
    with pytest.raises(ScorerDefinitionError) as caught:
        RetryPolicy(match=lambda _error: True, max_retries=-1)
    assert caught.value.field == "RetryPolicy.max_retries"
    assert str(caught.value).endswith(", got -1")


def test_check_count_names_the_scorer_being_built() -> None:
    """A scorer factory's count says which scorer refused it."""
    with pytest.raises(ScorerDefinitionError) as caught:
        check_count("times", 0, minimum=1, scorer_id="tool-called")
    assert str(caught.value) == "scorer 'tool-called': times must be an int >= 1, got 0"
    assert (caught.value.scorer_id, caught.value.field) == ("tool-called", "times")


@given(st.one_of(st.booleans(), st.integers(), st.floats(), st.text(), st.none()))
def test_check_fraction_takes_finite_numbers_from_0_to_1(value: object) -> None:
    """A fraction is a finite int or float (not a bool) from 0 to 1, returned as a float."""
    good = type(value) in (int, float) and 0 <= value <= 1  # type: ignore[operator]
    if good:
        assert check_fraction("rate", value) == float(value)  # type: ignore[arg-type]
        return
    wanted = r"^rate must be a (finite )?number in \[0, 1\], got "
    with pytest.raises(ScorerDefinitionError, match=wanted):
        check_fraction("rate", value)


def test_check_fraction_refuses_an_int_too_large_for_a_float() -> None:
    """``10**400`` is an int, but no fraction (and no OverflowError either)."""
    with pytest.raises(ScorerDefinitionError, match=r"must be a finite number in \[0, 1\]"):
        check_fraction("rate", 10**400, scorer_id="tone")


def test_unit_interval_refuses_a_judge_score_outside_0_to_1() -> None:
    """As a field validator of a judge reply, it fails structuring (a ValueError) on a score
    outside [0, 1], a bool or NaN, naming the field."""

    @attrs.frozen
    class Reply:
        score: float = attrs.field(validator=unit_interval)

    assert Reply(score=0.25).score == 0.25
    for bad in (7, -0.1, True, float("nan")):
        with pytest.raises(ValueError, match=r"^score must be a finite number from 0 to 1"):
            Reply(score=bad)
