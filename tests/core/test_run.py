"""Tests of ``Scorer.run`` with function steps: context, prepare_run, failures, not_scorable."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.primitives.exceptions import UnwrapFailedError
from returns.result import Failure, Success

from scorecore import (
    InvalidScore,
    InvalidStepValue,
    PrepareRunFailed,
    Runtime,
    ScorerRun,
    ScorerRunError,
    StepRaised,
    create_scorer,
    is_not_scorable,
    not_scorable,
)
from scorecore_adapters.testing import virtual_runtime
from tests import strategies as sts
from tests.strategies import STEPS

pytestmark = pytest.mark.anyio


def fixed_runtime() -> Runtime:
    return Runtime(new_id=lambda: "fixed-id")


async def test_sync_and_async_steps_see_earlier_results_only(anyio_backend: str) -> None:
    """Sync and async steps run in order; ``ctx.results`` holds only the steps already run."""
    seen: dict[str, tuple[Any, Any]] = {}

    def record(name: str, ctx: Any) -> None:
        seen[name] = (ctx.results.preprocess_step_result, ctx.results.analyze_step_result)

    async def preprocess(ctx: Any) -> str:
        record("preprocess", ctx)
        await anyio.lowlevel.checkpoint()
        return "P"

    def analyze(ctx: Any) -> dict[str, int]:
        record("analyze", ctx)
        return {"n": 3}

    async def score(ctx: Any) -> float:
        record("generate_score", ctx)
        return ctx.results.analyze_step_result["n"] / 4

    def reason(ctx: Any) -> str:
        record("generate_reason", ctx)
        return f"score={ctx.score}"

    scorer = (create_scorer(id="s", description="d").preprocess(preprocess).analyze(analyze)
              .generate_score(score).generate_reason(reason))
    result = (await scorer.run(input="i", output="o", runtime=fixed_runtime())).unwrap()
    assert seen == {
        "preprocess": (None, None),
        "analyze": ("P", None),
        "generate_score": ("P", {"n": 3}),
        "generate_reason": ("P", {"n": 3}),
    }
    assert result.score == 0.75
    assert result.reason == "score=0.75"
    assert result.preprocess_step_result == "P"
    assert result.analyze_step_result == {"n": 3}
    assert result.run.run_id == "fixed-id"
    assert result.not_scorable is None


async def test_lambda_returning_awaitable_is_awaited(anyio_backend: str) -> None:
    """A sync callable that returns an awaitable (e.g. a lambda calling an async function) works."""

    async def half(ctx: Any) -> float:
        return 0.5

    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: half(ctx))  # noqa: PLW0108
    assert (await scorer.run(input=1, output=2)).unwrap().score == 0.5


async def test_run_fields_and_extra_keys_reach_steps_and_result(anyio_backend: str) -> None:
    """Every run field and the extra keys are in ``ctx.run`` and in the result's run."""
    seen: list[ScorerRun[Any, Any]] = []

    def score(ctx: Any) -> float:
        seen.append(ctx.run)
        return 1

    scorer = create_scorer(id="s", description="d").generate_score(score)
    result = (await scorer.run(
        input="i", output="o", ground_truth="g", run_id="r", request_context={"u": 1},
        expected_trajectory=["t"], extra={"source": "ci", "batch": 7},
    )).unwrap()
    assert seen[0] == result.run
    assert result.run == ScorerRun(
        input="i", output="o", run_id="r", ground_truth="g", request_context={"u": 1},
        expected_trajectory=["t"], extra={"source": "ci", "batch": 7},
    )
    assert result.score == 1.0
    assert isinstance(result.score, float)


async def test_a_misspelt_run_argument_is_a_type_error(anyio_backend: str) -> None:
    """``grund_truth=`` is refused naming it, instead of landing silently in ``extra``."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1.0)
    with pytest.raises(TypeError, match="grund_truth"):
        await scorer.run(input="i", output="o", grund_truth="g")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="grund_truth"):
        scorer.run_sync(input="i", output="o", grund_truth="g")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["source"], r"Scorer\.run: extra must be a mapping of str keys, got \['source'\]"),
        ({1: "x"}, r"Scorer\.run: extra keys must be str, got 1"),
        ({"ground_truth": "g"},
         r"Scorer\.run: extra must not contain 'ground_truth': give ground_truth= to "
         r"Scorer\.run\(\) itself"),
        ({"runtime": None}, r"extra must not contain 'runtime'"),
    ],
)
async def test_extra_must_be_a_mapping_of_other_keys(
    anyio_backend: str, extra: Any, message: str
) -> None:
    """``extra`` is a mapping of str keys that are not ``run``'s own arguments."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1.0)
    with pytest.raises(TypeError, match=message):
        await scorer.run(input="i", output="o", extra=extra)


async def test_extra_is_copied(anyio_backend: str) -> None:
    """The run keeps its own copy: changing the caller's dict later changes nothing."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1.0)
    given = {"source": "ci"}
    result = (await scorer.run(input="i", output="o", extra=given)).unwrap()
    given["source"] = "changed"
    assert result.run.extra == {"source": "ci"}


@pytest.mark.parametrize("is_async", [False, True])
async def test_prepare_run_runs_first_and_may_set_run_id(
    anyio_backend: str, is_async: bool
) -> None:
    """prepare_run (sync or async) transforms the run before any step; its run_id is kept."""
    calls: list[str] = []

    def sync_prepare(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        calls.append("prepare")
        return ScorerRun(input=run.input, output=run.output.upper(), run_id="from-prepare")

    async def async_prepare(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        return sync_prepare(run)

    def score(ctx: Any) -> float:
        calls.append("score")
        assert ctx.run.output == "OUT"
        return 1.0

    new_ids: list[str] = []

    def new_id() -> str:
        new_ids.append("x")
        return "generated"

    scorer = create_scorer(
        id="s", description="d", prepare_run=async_prepare if is_async else sync_prepare
    ).generate_score(score)
    result = (await scorer.run(input="i", output="out", runtime=Runtime(new_id=new_id))).unwrap()
    assert calls == ["prepare", "score"]
    assert result.run.run_id == "from-prepare"
    assert result.run.output == "OUT"
    assert new_ids == []


async def test_run_id_generated_only_when_missing(anyio_backend: str) -> None:
    """The runtime's id source is asked for an id only when the run has none."""
    ids = iter(["id-1", "id-2"])
    runtime = Runtime(new_id=lambda: next(ids))
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 0)
    assert (await scorer.run(input=1, output=1, run_id="given", runtime=runtime)).unwrap().run_id \
        == "given"
    assert (await scorer.run(input=1, output=1, runtime=runtime)).unwrap().run_id == "id-1"
    assert (await scorer.run(input=1, output=1, runtime=runtime)).unwrap().run_id == "id-2"


async def test_default_run_id_is_a_uuid4(anyio_backend: str) -> None:
    """Without a runtime, run ids are fresh uuid4 strings."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 0)
    first = (await scorer.run(input=1, output=1)).unwrap().run_id
    second = (await scorer.run(input=1, output=1)).unwrap().run_id
    assert first != second
    assert len(first) == 36
    assert first[14] == "4"


@pytest.mark.parametrize("is_async", [False, True])
async def test_prepare_run_raising_is_a_failure(anyio_backend: str, is_async: bool) -> None:
    """prepare_run raising gives Failure naming prepare_run; no step runs."""
    ran: list[str] = []

    def boom(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        raise KeyError("missing")

    async def aboom(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        return boom(run)

    scorer = create_scorer(id="s", description="d", prepare_run=aboom if is_async else boom) \
        .generate_score(lambda ctx: ran.append("x") or 1.0)
    error = (await scorer.run(input=1, output=2)).failure()
    assert error.failed_step == "prepare_run"
    assert error.completed_steps == ()
    assert isinstance(error.cause, PrepareRunFailed)
    assert error.cause.exception_type == "KeyError"
    assert "missing" in error.cause.message
    assert isinstance(error.cause.exception, KeyError)
    assert ran == []


@pytest.mark.parametrize("returned", [None, {"input": 1, "output": 2}, "run"])
async def test_prepare_run_returning_non_run_is_a_failure(
    anyio_backend: str, returned: Any
) -> None:
    """prepare_run returning something that is not a ScorerRun gives Failure naming it."""
    scorer = create_scorer(id="s", description="d", prepare_run=lambda run: returned) \
        .generate_score(lambda ctx: 1.0)
    error = (await scorer.run(input=1, output=2)).failure()
    assert error.failed_step == "prepare_run"
    assert isinstance(error.cause, PrepareRunFailed)
    assert repr(returned) in error.cause.message


@pytest.mark.parametrize("failing", STEPS)
async def test_step_raising_is_a_failure_with_partial_results(
    anyio_backend: str, failing: str
) -> None:
    """A step raising gives Failure(StepRaised) naming it, the completed steps and their results.

    A score computed before the failing step is kept in ``partial`` (Mastra keeps it too).
    """
    results = {"preprocess": "P", "analyze": "A", "generate_score": 0.25, "generate_reason": "R"}

    def step(name: str) -> Any:
        def run(ctx: Any) -> Any:
            if name == failing:
                raise ValueError(f"{name} broke")
            return results[name]
        return run

    scorer = (create_scorer(id="s", description="d").preprocess(step("preprocess"))
              .analyze(step("analyze")).generate_score(step("generate_score"))
              .generate_reason(step("generate_reason")))
    outcome = await scorer.run(input=1, output=2, run_id="r")
    assert isinstance(outcome, Failure)
    error = outcome.failure()
    index = STEPS.index(failing)
    assert error.scorer_id == "s"
    assert error.failed_step == failing
    assert error.completed_steps == STEPS[:index]
    assert isinstance(error.cause, StepRaised)
    assert error.cause.exception_type == "ValueError"
    assert error.cause.message == f"{failing} broke"
    assert "ValueError" in error.cause.traceback
    assert error.partial.run.run_id == "r"
    assert error.partial.preprocess_step_result == (results["preprocess"] if index > 0 else None)
    assert error.partial.analyze_step_result == (results["analyze"] if index > 1 else None)
    assert error.partial.score == (results["generate_score"] if index > 2 else None)


@pytest.mark.parametrize(
    "bad", [True, False, math.nan, math.inf, -math.inf, "0.5", None, 10**400, [1], {"score": 1}]
)
async def test_generate_score_must_be_a_finite_real(anyio_backend: str, bad: Any) -> None:
    """A bool, NaN, inf, str, None, huge int or container score is a Failure naming the value."""
    scorer = create_scorer(id="s", description="d").preprocess(lambda ctx: "P") \
        .generate_score(lambda ctx: bad)
    error = (await scorer.run(input=1, output=2)).failure()
    assert error.failed_step == "generate_score"
    assert error.completed_steps == ("preprocess",)
    assert isinstance(error.cause, InvalidScore)
    assert error.cause.type_name == type(bad).__name__
    assert error.cause.value_repr[:20] == repr(bad)[:20]
    assert error.partial.preprocess_step_result == "P"


@pytest.mark.parametrize("good", [0, -3, 2.5, 1e300, -0.0])
async def test_any_finite_number_is_a_score(anyio_backend: str, good: float) -> None:
    """Any finite int or float is accepted (no range check) and stored as a float."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: good)
    result = (await scorer.run(input=1, output=2)).unwrap()
    assert result.score == good
    assert type(result.score) is float


@pytest.mark.parametrize("bad", [None, 1, b"bytes", ["r"]])
async def test_generate_reason_must_be_a_str(anyio_backend: str, bad: Any) -> None:
    """A non-str reason is a Failure naming the value; the score is kept in partial."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 0.5) \
        .generate_reason(lambda ctx: bad)
    error = (await scorer.run(input=1, output=2)).failure()
    assert error.failed_step == "generate_reason"
    assert error.completed_steps == ("generate_score",)
    assert isinstance(error.cause, InvalidStepValue)
    assert repr(bad) in error.cause.value_repr
    assert error.partial.score == 0.5


def failing_scorer() -> Any:
    return create_scorer(id="acc", description="d").preprocess(lambda ctx: 1) \
        .generate_score(lambda ctx: 1 / 0)


def assert_readable(error: ScorerRunError) -> None:
    message = str(error)
    assert "'acc'" in message
    assert "'generate_score'" in message
    assert "preprocess" in message
    assert "ZeroDivisionError" in message
    assert "division by zero" in message


async def test_unwrap_failure_carries_readable_run_error(anyio_backend: str) -> None:
    """``.unwrap()`` on a Failure raises, chained from a ScorerRunError with a readable message."""
    outcome = await failing_scorer().run(input=1, output=2)
    with pytest.raises(Exception) as info:  # noqa: PT011 - the cause is what is checked
        outcome.unwrap()
    error = info.value if isinstance(info.value, ScorerRunError) else info.value.__cause__
    assert isinstance(error, ScorerRunError)
    assert_readable(error)
    assert_readable(outcome.failure())


async def test_unwrap_chains_from_the_run_error(anyio_backend: str) -> None:
    """``.unwrap()`` raises returns' UnwrapFailedError caused by the ScorerRunError itself."""
    outcome = await failing_scorer().run(input=1, output=2)
    with pytest.raises(UnwrapFailedError) as info:
        outcome.unwrap()
    assert info.value.__cause__ is outcome.failure()
    assert_readable(outcome.failure())
    with pytest.raises(ScorerRunError):
        raise outcome.failure()


def build_with_outcomes(outcomes: dict[str, Any]) -> Any:
    def step(name: str) -> Any:
        def run(ctx: Any) -> Any:
            value = outcomes[name]
            if isinstance(value, BaseException):
                raise type(value)(*value.args)  # a fresh exception: no traceback carried over
            return value
        return run

    return (create_scorer(id="s", description="d").preprocess(step("preprocess"))
            .analyze(step("analyze")).generate_score(step("generate_score"))
            .generate_reason(step("generate_reason")))


@given(st.sampled_from(STEPS), st.none() | sts.text)
def test_not_scorable_stops_exactly_at_the_step(step: str, reason: str | None) -> None:
    """not_scorable from any step ends the run there; earlier results are kept, no score."""
    outcomes: dict[str, Any] = {
        "preprocess": "P", "analyze": "A", "generate_score": 0.5, "generate_reason": "R",
    }
    later = STEPS[STEPS.index(step) + 1:]
    for name in later:
        outcomes[name] = AssertionError(f"{name} must not run")
    outcomes[step] = not_scorable(reason)
    result = anyio.run(lambda: build_with_outcomes(outcomes).run(input=1, output=2)).unwrap()
    assert result.score is None
    assert result.reason is None
    assert result.not_scorable is not None
    assert result.not_scorable.step == step
    assert result.not_scorable.reason == reason
    index = STEPS.index(step)
    assert result.preprocess_step_result == ("P" if index > 0 else None)
    assert result.analyze_step_result == ("A" if index > 1 else None)


def test_is_not_scorable_recognises_only_the_marker() -> None:
    """``is_not_scorable`` is true for the marker only."""
    assert is_not_scorable(not_scorable())
    assert is_not_scorable(not_scorable("why"))
    assert not is_not_scorable(None)
    assert not is_not_scorable({"reason": "x"})


exceptions = st.sampled_from(
    [ValueError("v"), KeyError("k"), RuntimeError(), ZeroDivisionError("z"), TypeError("t"),
     AssertionError("a"), LookupError(), ArithmeticError(), NotImplementedError()]
)
outcome_values = st.one_of(exceptions, sts.json_values, st.just(math.nan))


@given(st.fixed_dictionaries(dict.fromkeys(STEPS, outcome_values)))
def test_run_never_raises_for_what_steps_do(outcomes: dict[str, Any]) -> None:
    """Whatever steps return or raise, ``run`` never raises: it fails at the first bad step."""

    def bad(step: str, value: Any) -> bool:
        if isinstance(value, BaseException):
            return True
        if step == "generate_score":
            return isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value))
        return step == "generate_reason" and not isinstance(value, str)

    outcome = anyio.run(lambda: build_with_outcomes(outcomes).run(input=1, output=2))
    first_bad = next((step for step in STEPS if bad(step, outcomes[step])), None)
    if first_bad is None:
        result = outcome.unwrap()
        assert result.score == outcomes["generate_score"]
        assert result.reason == outcomes["generate_reason"]
    else:
        error = outcome.failure()
        assert error.failed_step == first_bad
        assert error.completed_steps == STEPS[: STEPS.index(first_bad)]
        if isinstance(outcomes[first_bad], BaseException):
            assert isinstance(error.cause, StepRaised)


@given(st.fixed_dictionaries(dict.fromkeys(STEPS, outcome_values)), sts.json_values, sts.text)
def test_runs_are_deterministic_under_fixed_runtime(
    outcomes: dict[str, Any], given_input: Any, output: str
) -> None:
    """The same inputs and runtime (virtual clock, fixed ids) give equal results."""

    async def once() -> Any:
        runtime, _ = virtual_runtime()
        return await build_with_outcomes(outcomes).run(input=given_input, output=output,
                                                       runtime=runtime)

    first, second = anyio.run(once), anyio.run(once)
    assert type(first) is type(second)
    # repr, not ==: a NaN step result is never equal to itself, yet is the same result.
    if isinstance(first, Success):
        assert repr(first.unwrap()) == repr(second.unwrap())
    else:
        a, b = first.failure(), second.failure()
        assert repr((a.failed_step, a.completed_steps, a.cause, a.partial)) == \
            repr((b.failed_step, b.completed_steps, b.cause, b.partial))
        assert str(a) == str(b)


# --- values and exceptions that used to make run() raise ------------------------------------


class Unprintable:
    """An object whose repr() and str() both raise."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


class UnprintableError(Exception):
    """An exception whose str() and repr() both raise."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    __repr__ = __str__


class FloatRaises(float):
    """A float whose conversion to float raises (user code)."""

    def __float__(self) -> float:
        raise RuntimeError("no float")


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("bad", "type_name"),
    [
        (10**5000, "int"),
        (-(10**5000), "int"),
        (nested(100_000), "list"),
        ({"score": nested(100_000)}, "dict"),
        (Unprintable(), "Unprintable"),
        ("x" * 2_000_000, "str"),
        (FloatRaises(0.5), "FloatRaises"),
    ],
    ids=["huge-int", "huge-negative-int", "deep-list", "deep-dict", "unprintable", "2mb-str",
         "float-raises"],
)
async def test_unprintable_scores_are_invalid_scores(
    anyio_backend: str, bad: Any, type_name: str
) -> None:
    """A score whose repr() raises or is huge is an InvalidScore with a short rendering."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: bad)
    error = (await scorer.run(input=1, output=2)).failure()
    assert isinstance(error.cause, InvalidScore)
    assert error.cause.type_name == type_name
    assert 0 < len(error.cause.value_repr) <= 260
    assert len(str(error)) < 600


@pytest.mark.parametrize(
    "bad", [nested(100_000), 10**5000, Unprintable(), b"\x00" * 10**6],
    ids=["deep-list", "huge-int", "unprintable", "1mb-bytes"],
)
async def test_unprintable_reasons_are_invalid_step_values(anyio_backend: str, bad: Any) -> None:
    """A non-str reason that cannot be printed is still an InvalidStepValue; the score is kept."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 0.5) \
        .generate_reason(lambda ctx: bad)
    error = (await scorer.run(input=1, output=2)).failure()
    assert isinstance(error.cause, InvalidStepValue)
    assert len(error.cause.value_repr) <= 260
    assert error.partial.score == 0.5


@pytest.mark.parametrize("failing", STEPS)
async def test_exception_whose_str_raises_is_still_step_raised(
    anyio_backend: str, failing: str
) -> None:
    """A step raising an exception whose __str__ and __repr__ raise gives StepRaised."""
    exc = UnprintableError()

    def step(name: str) -> Any:
        def run(ctx: Any) -> Any:
            if name == failing:
                raise exc
            return {"generate_score": 0.5, "generate_reason": "r"}.get(name, name)
        return run

    scorer = (create_scorer(id="s", description="d").preprocess(step("preprocess"))
              .analyze(step("analyze")).generate_score(step("generate_score"))
              .generate_reason(step("generate_reason")))
    error = (await scorer.run(input=1, output=2)).failure()
    assert error.failed_step == failing
    assert isinstance(error.cause, StepRaised)
    assert error.cause.exception is exc
    assert error.cause.exception_type == "UnprintableError"
    assert "str() raised RuntimeError" in error.cause.message
    assert "UnprintableError" in error.cause.traceback
    assert "UnprintableError" in str(error)


async def test_huge_exception_messages_are_cut(anyio_backend: str) -> None:
    """A 2 MB exception message is kept to about 1,000 characters (and 20,000 of traceback)."""
    def boom(ctx: Any) -> float:
        raise ValueError("x" * 2_000_000)

    error = (await create_scorer(id="s", description="d").generate_score(boom)
             .run(input=1, output=2)).failure()
    assert isinstance(error.cause, StepRaised)
    assert error.cause.message.startswith("xxx")
    assert "2,000,000 chars" in error.cause.message
    assert len(error.cause.message) < 1_100
    assert len(error.cause.traceback) < 20_100
    assert len(str(error)) < 1_300


async def test_prepare_run_raising_unprintable_exception_is_prepare_run_failed(
    anyio_backend: str,
) -> None:
    """prepare_run raising an exception whose __str__ raises is PrepareRunFailed."""
    def prepare(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        raise UnprintableError

    scorer = create_scorer(id="s", description="d", prepare_run=prepare) \
        .generate_score(lambda ctx: 1.0)
    error = (await scorer.run(input=1, output=2)).failure()
    assert isinstance(error.cause, PrepareRunFailed)
    assert error.cause.exception_type == "UnprintableError"
    assert "str() raised RuntimeError" in error.cause.message


async def test_prepare_run_returning_unprintable_value_is_prepare_run_failed(
    anyio_backend: str,
) -> None:
    """prepare_run returning a value whose repr() raises is PrepareRunFailed naming its type."""
    scorer = create_scorer(id="s", description="d", prepare_run=lambda run: Unprintable()) \
        .generate_score(lambda ctx: 1.0)
    error = (await scorer.run(input=1, output=2)).failure()
    assert isinstance(error.cause, PrepareRunFailed)
    assert "Unprintable" in error.cause.message
