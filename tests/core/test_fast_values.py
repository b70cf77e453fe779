"""The run path builds its values faster than ``__init__`` does, and exactly the same values."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    ReasonContext,
    ScoreResult,
    ScorerRun,
    StepContext,
    StepResults,
    create_scorer,
)
from scorecore._core._pipeline import make_run, make_score_result
from tests import strategies as sts

BUILDERS: list[tuple[type, Callable[..., Any]]] = [
    (ScorerRun, make_run),
    (ScoreResult, make_score_result),
]
BUILT_INLINE = (StepResults, StepContext, ReasonContext)


@pytest.mark.parametrize(("cls", "builder"), BUILDERS)
def test_builders_take_every_field(cls: type, builder: Callable[..., Any]) -> None:
    """A builder has one parameter per field, so a new field cannot be left unset."""
    assert list(inspect.signature(builder).parameters) == [f.name for f in attrs.fields(cls)]


@pytest.mark.parametrize("cls", [c for c, _ in BUILDERS] + list(BUILT_INLINE))
def test_fast_built_classes_check_nothing(cls: type) -> None:
    """None of these classes checks or converts its fields: nothing ``__init__`` does is skipped."""
    assert all(f.validator is None and f.converter is None for f in attrs.fields(cls))


@given(st.lists(sts.json_values, min_size=13, max_size=13))
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


@given(sts.json_values, sts.json_values, sts.finite_scores)
def test_contexts_built_inline_equal_init_built_ones(pre: Any, analysis: Any, score: float) -> None:
    """Every context a step receives equals the one ``__init__`` builds, and is frozen."""
    seen: dict[str, Any] = {}

    def keep(name: str, answer: Any) -> Callable[[Any], Any]:
        def step(ctx: Any) -> Any:
            seen[name] = ctx
            return answer

        return step

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(keep("preprocess", pre))
        .analyze(keep("analyze", analysis))
        .generate_score(keep("generate_score", score))
        .generate_reason(keep("generate_reason", "why"))
    )
    result = anyio.run(lambda: scorer.run(input="q", output="a", run_id="r")).unwrap()
    run = result.run
    expected: dict[str, Any] = {
        "preprocess": StepContext(run=run, results=StepResults(
            preprocess_step_result=None, analyze_step_result=None)),
        "analyze": StepContext(run=run, results=StepResults(
            preprocess_step_result=pre, analyze_step_result=None)),
        "generate_score": StepContext(run=run, results=StepResults(
            preprocess_step_result=pre, analyze_step_result=analysis)),
        "generate_reason": ReasonContext(run=run, results=StepResults(
            preprocess_step_result=pre, analyze_step_result=analysis), score=score),
    }
    for name, ctx in seen.items():
        assert type(ctx) is type(expected[name])
        assert ctx == expected[name]
        assert repr(ctx) == repr(expected[name])
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            ctx.__setattr__("run", None)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            ctx.results.__setattr__("preprocess_step_result", None)
