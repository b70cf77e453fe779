"""Tests of live scoring: background jobs that never fail, block or change the caller."""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

import anyio
import pytest
from returns.result import Result

from scorecore import Scorer, ScoreResult, ScorerRunError, create_scorer
from scorecore.live import (
    LiveCall,
    LiveScorer,
    LiveScoringError,
    LiveStats,
    RatioSampling,
    _admission,
    _calls,
    _sampling,
    _scope,
    _scorer,
    live_scoring,
    sample_point,
    scored,
)
from scorecore.traces import ScoreRecord
from scorecore_adapters.testing import virtual_runtime
from tests.module_checks import assert_all_is_sorted_and_complete

pytestmark = pytest.mark.anyio


def length_scorer(id: str = "length") -> Any:
    """Scores the output's length."""
    return create_scorer(id=id, description="d").generate_score(
        lambda ctx: float(len(ctx.run.output))
    )


def failing_scorer() -> Any:
    """A scorer whose step raises (the run returns Failure)."""
    return create_scorer(id="boom", description="d").generate_score(lambda ctx: 1 / 0)


class RaisingScorer(Scorer[Any, Any, Any, Any]):
    """A scorer that breaks the contract: its ``run`` raises."""

    __slots__ = ()

    async def run(self, **kwargs: Any) -> Result[ScoreResult[Any, Any], ScorerRunError]:
        raise RuntimeError("run itself exploded")


def raising_scorer() -> RaisingScorer:
    """Build a :class:`RaisingScorer` from a real definition."""
    return RaisingScorer(failing_scorer()._definition)


async def test_results_arrive_in_the_sink_and_the_value_is_unchanged(anyio_backend: str):
    """Each scorer's record reaches the sink after the block; the caller's value is as is."""
    records: list[ScoreRecord] = []
    runtime, _ = virtual_runtime()

    @scored(length_scorer(), length_scorer("length-2"), sink=records.append, runtime=runtime)
    async def answer(question: str) -> str:
        return f"answer to {question}"

    async with live_scoring() as scope:
        value = await answer("q")
    assert value == "answer to q"
    assert scope.errors == ()
    assert sorted(r.scorer_id for r in records) == ["length", "length-2"]
    record = records[0]
    assert (record.source, record.entity_type) == ("live", "function")
    assert record.entity_id is not None
    assert record.entity_id.endswith("answer")
    assert record.score == float(len("answer to q"))
    # One run id per call, shared by its scorers (idempotent store rows per run and scorer).
    assert {r.run_id for r in records} == {"run-1"}
    assert record.result.run.input == "q"
    assert record.result.run.extra["score_source"] == "live"


async def test_the_caller_returns_before_scoring_finishes(anyio_backend: str):
    """Scoring is only scheduled: a scorer waiting on an event does not hold the caller."""
    release = anyio.Event()
    records: list[ScoreRecord] = []

    async def waits(ctx: Any) -> float:
        await release.wait()
        return 1.0

    slow = create_scorer(id="slow", description="d").generate_score(waits)

    @scored(slow, sink=records.append)
    async def answer() -> str:
        return "done"

    async with live_scoring():
        assert await answer() == "done"
        assert records == []
        release.set()
    assert [r.score for r in records] == [1.0]


@pytest.mark.parametrize("make", [failing_scorer, raising_scorer])
async def test_a_crashing_scorer_is_reported_not_raised(anyio_backend: str, make: Any):
    """A failing or raising scorer reaches on_error; the caller and the scope survive."""
    errors: list[LiveScoringError] = []
    records: list[ScoreRecord] = []

    @scored(make(), length_scorer(), sink=records.append, on_error=errors.append)
    async def answer() -> str:
        return "fine"

    async with live_scoring() as scope:
        assert await answer() == "fine"
        assert await answer() == "fine"
    assert [r.scorer_id for r in records] == ["length", "length"]
    assert [e.kind for e in errors] == [
        "scorer_failed" if make is failing_scorer else "scorer_raised"
    ] * 2
    assert scope.errors == tuple(errors)
    error = errors[0]
    assert error.scorer_id == "boom"
    if make is failing_scorer:
        assert isinstance(error.run_error, ScorerRunError)
        assert "ZeroDivisionError" in error.message
    else:
        assert isinstance(error.exception, RuntimeError)
        assert "run itself exploded" in error.message


async def test_a_raising_sink_is_reported(anyio_backend: str):
    """An async sink that raises becomes sink_raised; other scorers still deliver."""
    delivered: list[str] = []

    async def sink(record: ScoreRecord) -> None:
        if record.scorer_id == "bad-sink":
            raise OSError("store down")
        delivered.append(record.scorer_id)

    @scored(length_scorer("bad-sink"), length_scorer("ok"), sink=sink)
    async def answer() -> str:
        return "x"

    async with live_scoring() as scope:
        assert await answer() == "x"
    assert delivered == ["ok"]
    (error,) = scope.errors
    assert error.kind == "sink_raised"
    assert isinstance(error.exception, OSError)
    assert "OSError: store down" in error.message


async def test_a_raising_filter_skips_the_call(anyio_backend: str):
    """Fail closed: a filter that raises means no scoring, and is reported."""
    records: list[ScoreRecord] = []

    def broken(call: LiveCall) -> bool:
        raise KeyError("tenant")

    @scored(length_scorer(), filter=broken, sink=records.append)
    async def answer() -> str:
        return "x"

    async with live_scoring() as scope:
        assert await answer() == "x"
    assert records == []
    assert [e.kind for e in scope.errors] == ["filter_raised"]


async def test_the_filter_sees_the_call_and_decides(anyio_backend: str):
    """Only calls the filter accepts are scored; it sees input, output and ids."""
    records: list[ScoreRecord] = []
    seen: list[LiveCall] = []

    def only_long(call: LiveCall) -> bool:
        seen.append(call)
        return len(call.output) > 3

    @scored(length_scorer(), filter=only_long, sink=records.append, name="echo",
            trace_id_from=lambda text: f"trace-{text}")
    def echo(text: str) -> str:
        return text

    async with live_scoring() as scope:
        assert echo("hi") == "hi"
        assert echo("hello") == "hello"
    assert [r.result.run.output for r in records] == ["hello"]
    assert sorted((c.entity, c.input, c.trace_id) for c in seen) == [
        ("echo", "hello", "trace-hello"), ("echo", "hi", "trace-hi"),
    ]
    assert records[0].trace_id == "trace-hello"
    assert scope.errors == ()


async def test_ratio_sampling_keys_on_the_trace_id(anyio_backend: str):
    """Calls whose trace id falls under the rate are scored, the others are not."""
    ids = [f"t{i}" for i in range(40)]
    expected = sorted(i for i in ids if sample_point(i) < 0.5)
    records: list[ScoreRecord] = []

    @scored(length_scorer(), sampling=RatioSampling(rate=0.5), sink=records.append,
            trace_id_from=lambda trace_id: trace_id)
    async def answer(trace_id: str) -> str:
        return "x"

    async with live_scoring():
        for trace_id in ids:
            await answer(trace_id)
    assert sorted(r.trace_id or "" for r in records) == expected
    assert 0 < len(expected) < len(ids)


async def test_ratio_sampling_keys_on_the_run_id_without_a_trace(anyio_backend: str):
    """Without a trace id, the run id decides, so fixed run ids decide alike."""
    runtime, _ = virtual_runtime(id_prefix="live")
    expected = [f"live-{i}" for i in range(1, 31) if sample_point(f"live-{i}") < 0.3]
    records: list[ScoreRecord] = []
    live = LiveScorer(scorers=[length_scorer()], sampling={"type": "ratio", "rate": 0.3},
                      sink=records.append, runtime=runtime)
    async with live_scoring():
        for _ in range(30):
            assert live.submit(input="i", output="o") is True
    assert sorted(r.run_id for r in records) == sorted(expected)


async def test_rate_zero_never_scores(anyio_backend: str):
    """A zero rate schedules but never runs a scorer."""
    records: list[ScoreRecord] = []

    @scored(length_scorer(), sampling=RatioSampling(rate=0.0), sink=records.append)
    async def answer() -> str:
        return "x"

    async with live_scoring():
        for _ in range(5):
            await answer()
    assert records == []


async def test_without_a_task_group_the_call_is_not_scored_but_unaffected(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
):
    """No scope and no task group: reported (or logged), and the value comes back."""
    errors: list[LiveScoringError] = []

    @scored(length_scorer(), on_error=errors.append)
    async def answer() -> str:
        return "still fine"

    assert await answer() == "still fine"
    assert [e.kind for e in errors] == ["not_scheduled"]
    assert "live_scoring()" in errors[0].message

    @scored(length_scorer())
    async def quiet() -> str:
        return "ok"

    with caplog.at_level(logging.WARNING, logger="scorecore.live"):
        assert await quiet() == "ok"
    assert "no task group for live scoring" in caplog.text


async def test_a_closed_task_group_is_reported(anyio_backend: str):
    """Scheduling into a task group that has exited is not_scheduled, not an exception."""
    errors: list[LiveScoringError] = []
    async with anyio.create_task_group() as group:
        pass
    live = LiveScorer(scorers=[length_scorer()], task_group=group, on_error=errors.append,
                      max_concurrency=1)
    assert live.submit(input="i", output="o") is False
    assert live.submit(input="i", output="o") is False  # the slot was given back
    assert [e.kind for e in errors] == ["not_scheduled"] * 2
    assert errors[0].exception is not None
    assert live.stats == LiveStats(submitted=2, dropped=2)


async def test_a_user_owned_task_group(anyio_backend: str):
    """``task_group=`` on the scorer, or on ``live_scoring``, uses the caller's group."""
    records: list[ScoreRecord] = []
    async with anyio.create_task_group() as group:
        live = LiveScorer(scorers=[length_scorer()], task_group=group, sink=records.append)
        assert live.submit(input="i", output="abc", entity="step-1") is True
    assert [(r.entity_id, r.score) for r in records] == [("step-1", 3.0)]

    records.clear()

    @scored(length_scorer(), sink=records.append)
    async def answer() -> str:
        return "abcd"

    async with anyio.create_task_group() as group, live_scoring(task_group=group) as scope:
        assert scope.task_group is group
        await answer()
    assert [r.score for r in records] == [4.0]


async def test_input_and_output_extraction(anyio_backend: str):
    """Defaults: the only argument, else the bound arguments; or the given extractors."""
    records: list[ScoreRecord] = []

    @scored(length_scorer(), sink=records.append)
    async def two(a: int, b: str = "dflt", *, c: bool = False) -> str:
        return "xy"

    @scored(length_scorer(), sink=records.append,
            input_from=lambda *args, **kwargs: {"question": kwargs["q"]},
            output_from=lambda result: result["text"])
    async def custom(*, q: str) -> dict[str, str]:
        return {"text": "abc"}

    async with live_scoring():
        await two(1, b="z")
        await custom(q="why")
    by_id = [(r.result.run.input, r.result.run.output) for r in records]
    assert sorted(by_id, key=repr) == sorted([
        ({"a": 1, "b": "z", "c": False}, "xy"),
        ({"question": "why"}, "abc"),
    ], key=repr)


async def test_a_raising_extractor_skips_the_call(anyio_backend: str):
    """``input_from`` raising is extract_raised; the caller is unaffected."""

    def bad_input(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("no input")

    @scored(length_scorer(), input_from=bad_input)
    async def answer() -> str:
        return "x"

    async with live_scoring() as scope:
        assert await answer() == "x"
    assert [e.kind for e in scope.errors] == ["extract_raised"]


async def test_a_raising_on_error_is_logged_and_dropped(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
):
    """Even a broken on_error cannot reach the caller."""

    def broken(error: LiveScoringError) -> None:
        raise RuntimeError("handler bug")

    @scored(failing_scorer(), on_error=broken)
    async def answer() -> str:
        return "x"

    with caplog.at_level(logging.ERROR, logger="scorecore.live"):
        async with live_scoring():
            assert await answer() == "x"
    assert "on_error raised" in caplog.text


async def test_scope_on_error_is_the_default_handler(anyio_backend: str):
    """A scorer without on_error reports to the scope's handler."""
    errors: list[LiveScoringError] = []

    @scored(failing_scorer())
    async def answer() -> str:
        return "x"

    async with live_scoring(on_error=errors.append):
        await answer()
    assert [e.kind for e in errors] == ["scorer_failed"]


async def test_a_raising_function_is_not_scored_and_raises_as_is(anyio_backend: str):
    """The wrapper does not swallow or change the function's own exception."""
    records: list[ScoreRecord] = []

    @scored(length_scorer(), sink=records.append)
    async def answer() -> str:
        raise LookupError("caller's own error")

    async with live_scoring():
        with pytest.raises(LookupError, match="caller's own error"):
            await answer()
    assert records == []


async def test_the_wrapper_keeps_the_function_identity(anyio_backend: str):
    """``functools.wraps``: the name and docstring are the function's."""

    @scored(length_scorer())
    async def documented() -> str:
        """Docs."""
        return "x"

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "Docs."


def test_misuse_raises_when_building():
    """Scorers, callables and sampling are checked up front."""
    with pytest.raises(ValueError, match="at least one Scorer"):
        scored()
    with pytest.raises(TypeError, match=r"LiveScorer\.scorers\[0\] must be a Scorer"):
        scored(create_scorer(id="b", description="d"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"LiveScorer\.filter must be callable"):
        scored(length_scorer(), filter="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sampling must be"):
        scored(length_scorer(), sampling="ratio")  # type: ignore[arg-type]


@pytest.mark.parametrize("mod", [_admission, _calls, _sampling, _scope, _scorer],
                         ids=lambda m: m.__name__)
def test_all_is_sorted(mod: ModuleType):
    """Each private live module's ``__all__`` is sorted and covers its public names."""
    assert_all_is_sorted_and_complete(mod)


async def test_default_input_and_request_context_are_redacted(anyio_backend: str):
    """Secret arguments and request-context entries never reach a scorer, filter or sink."""
    records: list[ScoreRecord] = []
    calls: list[LiveCall] = []
    key = "sk-proj-Abc123def456ghi789jkl012"

    def keep(call: LiveCall) -> bool:
        calls.append(call)
        return True

    @scored(length_scorer(), sink=records.append, filter=keep)
    async def ask(x: int, *, api_key: str = key, note: str = "") -> str:
        return "ok"

    @scored(length_scorer(), sink=records.append, input_from=lambda x, **_: {"x": x})
    async def chosen(x: int, *, api_key: str) -> str:
        return "ok"

    live = LiveScorer(scorers=[length_scorer()], sink=records.append, filter=keep)
    async with live_scoring():
        await ask(2, note=f"Authorization: Bearer {key}")
        await ask(3, api_key="hunter2")
        await chosen(4, api_key=key)
        live.submit(input="i", output="o", request_context={
            "user": "u1", "headers": {"Authorization": "Bearer abc", "cookie": "c"},
            "openaiKey": key,
        })
    inputs = sorted((r.result.run.input for r in records), key=repr)
    assert inputs == sorted([
        {"x": 2, "api_key": "[REDACTED]", "note": "Authorization: [REDACTED]"},
        {"x": 3, "api_key": "[REDACTED]", "note": ""},
        {"x": 4},
        "i",
    ], key=repr)
    submitted = next(r for r in records if r.result.run.input == "i")
    expected = {"user": "u1", "headers": {"Authorization": "[REDACTED]", "cookie": "[REDACTED]"},
                "openaiKey": "[REDACTED]"}
    assert submitted.result.run.request_context == expected
    assert [c.request_context for c in calls if c.input == "i"] == [expected]
    everything = repr([(r.result, c) for r in records for c in calls])
    assert key not in everything
    assert "hunter2" not in everything


async def test_a_lone_secret_argument_is_redacted_before_it_is_unwrapped(anyio_backend: str):
    """``call(api_key="…")`` and ``call("…")`` into an ``api_key`` parameter store no key."""
    records: list[ScoreRecord] = []

    @scored(length_scorer(), sink=records.append)
    async def by_name(*, api_key: str) -> str:
        return "ok"

    @scored(length_scorer(), sink=records.append)
    async def by_position(api_key: str) -> str:
        return "ok"

    @scored(length_scorer(), sink=records.append)
    async def plain(question: str) -> str:
        return "ok"

    async with live_scoring():
        await by_name(api_key="hunter2")
        await by_position("hunter2")
        await plain("what is 2+2?")
    inputs = sorted(repr(r.result.run.input) for r in records)
    assert inputs == sorted(["'[REDACTED]'", "'[REDACTED]'", "'what is 2+2?'"])
    assert all("hunter2" not in repr(r) for r in records)
