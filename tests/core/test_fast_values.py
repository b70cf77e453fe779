"""The run path builds its values faster than ``__init__`` does, and exactly the same values.

Its constructors are written from the classes' fields (``fast_init``), so a field added to one
of these classes is a parameter of its constructor: it cannot be left unset.
"""

from __future__ import annotations

import inspect
import pickle
import weakref
from collections.abc import Callable
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from scorecore import (
    ReasonContext,
    ScoreResult,
    ScorerRun,
    StepContext,
    StepResults,
    create_scorer,
)
from scorecore._core import _pipeline
from scorecore._core._slot_init import fast_init, new_success
from tests import strategies as sts

BUILDERS: list[tuple[type, Callable[..., Any]]] = [
    (ScorerRun, _pipeline.make_run),
    (ScoreResult, _pipeline.make_score_result),
    (StepResults, _pipeline._new_results),
    (StepContext, _pipeline._new_context),
    (ReasonContext, _pipeline._new_reason_context),
]


@pytest.mark.parametrize(("cls", "builder"), BUILDERS)
def test_builders_take_every_field(cls: type, builder: Callable[..., Any]) -> None:
    """A builder has one parameter per field, so a new field cannot be left unset."""
    assert list(inspect.signature(builder).parameters) == [f.name for f in attrs.fields(cls)]


@pytest.mark.parametrize(("cls", "builder"), BUILDERS)
def test_builders_set_every_field_to_its_own_argument(
    cls: type, builder: Callable[..., Any]
) -> None:
    """Each field reads back the value given for it (none is set from another argument)."""
    names = [f.name for f in attrs.fields(cls)]
    marks = [object() for _ in names]
    built = builder(*marks)
    assert [getattr(built, name) for name in names] == marks


def test_the_run_path_builds_every_value_with_a_derived_constructor() -> None:
    """No hand-written slot setter is left: the pipeline's builders are fast_init's."""
    assert not [name for name in vars(_pipeline) if name.startswith("_SET_")]
    for cls, builder in BUILDERS:
        assert builder.__name__ == f"new_{cls.__name__}"


@pytest.mark.parametrize(("cls", "builder"), BUILDERS)
def test_fast_built_classes_check_nothing(cls: type, builder: Callable[..., Any]) -> None:
    """None of these classes checks or converts its fields: nothing ``__init__`` does is skipped."""
    assert all(f.validator is None and f.converter is None for f in attrs.fields(cls))


_MOST_FIELDS = max(len(attrs.fields(cls)) for cls, _ in BUILDERS)


@given(st.lists(sts.json_values, min_size=_MOST_FIELDS, max_size=_MOST_FIELDS))
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


def test_a_field_added_to_a_class_is_a_parameter_of_its_constructor() -> None:
    """The constructor follows the class: a new field, wherever it is, is set from its argument."""

    @attrs.frozen(kw_only=True)
    class Before:
        run: Any
        results: Any

    @attrs.frozen(kw_only=True)
    class After:
        run: Any
        added: Any
        results: Any = None

    assert list(inspect.signature(fast_init(Before)).parameters) == ["run", "results"]
    build = fast_init(After)
    assert list(inspect.signature(build).parameters) == ["run", "added", "results"]
    assert build(1, 2, 3) == After(run=1, added=2, results=3)


@attrs.frozen
class _Validated:
    x: int = attrs.field(validator=attrs.validators.instance_of(int))


@attrs.frozen
class _Converted:
    x: int = attrs.field(converter=int)


@attrs.frozen
class _NotInit:
    x: int = attrs.field(init=False, default=0)


@attrs.frozen
class _Hooked:
    x: int

    def __attrs_post_init__(self) -> None:
        pass


@attrs.frozen(cache_hash=True)
class _CachedHash:
    x: int


@attrs.frozen(slots=False)
class _NoSlots:
    x: int


class _Plain:
    __slots__ = ("x",)


@pytest.mark.parametrize(
    ("cls", "why"),
    [
        (_Validated, "checked or converted"),
        (_Converted, "checked or converted"),
        (_NotInit, "init=False"),
        (_Hooked, "hook"),
        (_CachedHash, "not fields"),
        (_NoSlots, "no slots"),
        (_Plain, "not an attrs class"),
    ],
)
def test_a_class_whose_init_does_more_than_set_its_fields_is_refused(cls: type, why: str) -> None:
    """Setting slots would skip what __init__ does: refused when the constructor is made."""
    with pytest.raises(TypeError, match=why) as caught:
        fast_init(cls)
    assert cls.__qualname__ in str(caught.value)


@given(st.one_of(st.none(), st.integers(), st.text(), st.lists(st.integers())))
def test_a_fast_built_success_is_the_success_returns_builds(value: Any) -> None:
    """``new_success(v)`` is ``Success(v)``: the same class, value, equality, hash and repr."""
    built, expected = new_success(value), Success(value)
    assert type(built) is Success
    assert built == expected
    assert built.unwrap() is value
    assert repr(built) == repr(expected)
    if not isinstance(value, list):
        assert hash(built) == hash(expected)


@given(st.lists(sts.json_values, min_size=_MOST_FIELDS, max_size=_MOST_FIELDS))
def test_built_values_pickle_and_weakref_as_init_built_values(values: list[Any]) -> None:
    """A built value is an instance of its class itself: it pickles back equal, and is as
    weakly referenceable as the ``__init__`` one."""
    for cls, builder in BUILDERS:
        given_values = values[: len(attrs.fields(cls))]
        fast = builder(*given_values)
        assert type(pickle.loads(pickle.dumps(fast))) is cls  # noqa: S301 - our own bytes
        assert pickle.loads(pickle.dumps(fast)) == fast  # noqa: S301 - our own bytes
        assert weakref.ref(fast)() is fast


@attrs.frozen
class _NoSubclasses:
    a: int
    b: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("no subclasses")


@attrs.frozen(weakref_slot=False)
class _NoWeakref:
    a: int
    b: str


@attrs.define
class _Mutable:
    a: int
    b: str


@pytest.mark.parametrize("cls", [_NoSubclasses, _NoWeakref, _Mutable])
@given(st.integers(), st.text())
def test_any_slotted_attrs_layout_gets_a_constructor_building_init_values(
    cls: type, a: int, b: str
) -> None:
    """A class that cannot be subclassed, one without a weakref slot, or a mutable one: each
    gets a constructor that builds what ``__init__`` builds."""
    fast: object = fast_init(cls)(a, b)
    slow = cls(a=a, b=b)
    assert type(fast) is cls
    assert fast == slow
    assert repr(fast) == repr(slow)


def test_the_judge_loop_builds_an_execution_field_by_field_from_its_parts() -> None:
    """The execution the judge loop builds (every field by position) holds each part it was
    given in the field of that name: a field added, or moved, cannot take another's value."""
    from types import SimpleNamespace  # noqa: PLC0415 - only this test builds stand-ins

    from scorecore._core import _invoke  # noqa: PLC0415
    from scorecore._core._values import JudgeExecution  # noqa: PLC0415
    from scorecore.judge import JudgeUsage  # noqa: PLC0415

    tally = _invoke._Tally()
    tally.attempts, tally.model_calls = 2, 3
    tally.usage, tally.finish_reason, tally.raw_output = JudgeUsage(input_tokens=1), "stop", "raw"
    tally.structured_output, tally.logprobs = "tool", ()
    tally.waits, tally.processor_errors = [0.5], ["boom"]
    meter = SimpleNamespace(settlement=lambda: (0.25, 0.125, 4, 5))
    judge = SimpleNamespace(model=SimpleNamespace(model_id="m", provider="p"))
    runtime = SimpleNamespace(clock=lambda: 10.0)
    value, error = object(), object()
    outcome = _invoke._finish(value, error, "the prompt", judge, tally, meter,  # type: ignore[arg-type]
                              runtime, 7.5)  # type: ignore[arg-type]
    assert outcome.execution == JudgeExecution(
        status="failed", prompt="the prompt", model_id="m", provider="p", attempt_count=2,
        model_call_count=3, duration=2.5, output=value, usage=tally.usage,
        finish_reason="stop", raw_output="raw", error=error,  # type: ignore[arg-type]
        waits=(0.5,), processor_errors=("boom",), cost_usd=0.25, saved_usd=0.125,
        cache_hits=4, cache_misses=5, structured_output="tool",
    )
    assert outcome.value is value
    assert outcome.logprobs == ()
