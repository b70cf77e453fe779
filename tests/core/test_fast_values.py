"""The run path's fast constructors build exactly what the classes' ``__init__`` builds."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import ReasonContext, ScoreResult, ScorerRun, StepContext, StepResults
from scorecore._pipeline import (
    make_context,
    make_reason_context,
    make_results,
    make_run,
    make_score_result,
)
from tests import strategies as sts

BUILDERS: list[tuple[type, Callable[..., Any]]] = [
    (ScorerRun, make_run),
    (StepResults, make_results),
    (StepContext, make_context),
    (ReasonContext, make_reason_context),
    (ScoreResult, make_score_result),
]


@pytest.mark.parametrize(("cls", "builder"), BUILDERS)
def test_builders_take_every_field(cls: type, builder: Callable[..., Any]) -> None:
    """A builder has one parameter per field, so a new field cannot be left unset."""
    parameters = list(inspect.signature(builder).parameters)
    fields = [field.name for field in attrs.fields(cls)]
    if cls is StepResults:
        assert parameters == ["preprocess", "analyze"]
        assert fields == ["preprocess_step_result", "analyze_step_result"]
    else:
        assert parameters == fields
    # None of these classes checks or converts its fields: nothing __init__ does is skipped.
    assert all(f.validator is None and f.converter is None for f in attrs.fields(cls))


@given(st.lists(sts.json_values, min_size=11, max_size=11))
def test_built_values_equal_init_built_values(values: list[Any]) -> None:
    """For any field values, each builder's value equals (and reprs as) the ``__init__`` one."""
    for cls, builder in BUILDERS:
        names = [field.name for field in attrs.fields(cls)]
        given_values = values[: len(names)]
        fast = builder(*given_values)
        slow = cls(**dict(zip(names, given_values, strict=True)))
        assert type(fast) is cls
        assert fast == slow
        assert repr(fast) == repr(slow)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            fast.__setattr__(names[0], None)
