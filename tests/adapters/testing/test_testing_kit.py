"""Tests of the public test kit: ScriptedJudge, FunctionJudge, judge_error, VirtualClock."""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore_adapters.testing as kit
from scorecore import JudgeConfig, JudgeModel, Runtime, ScorePromptStep, create_scorer
from scorecore.evals.store import ScoreStore
from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import JudgeMeter
from scorecore.judge.retry import kind_for
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.retry import StreamErrorRetryProcessor
from scorecore_adapters.testing import (
    ChaosJudge,
    FaultPlan,
    FunctionJudge,
    InMemoryScoreStore,
    ScriptedJudge,
    SequentialIds,
    VirtualClock,
    judge_error,
    virtual_runtime,
)
from tests.module_checks import assert_all_is_sorted_and_complete
from tests.strategies_adapters import REQUEST

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=10,
)


def request(text: str) -> JudgeRequest:
    return JudgeRequest(messages=[JudgeMessage(role="user", content=text)])


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names every public name of the module."""
    assert_all_is_sorted_and_complete(kit)


def test_fakes_are_judge_models() -> None:
    """The fakes and the chaos wrapper satisfy the JudgeModel port (statically, and at run
    time), and the kit's store the ScoreStore port."""
    scripted: JudgeModel = ScriptedJudge([])
    function: JudgeModel = FunctionJudge(lambda _r: "x")
    chaos: JudgeModel = ChaosJudge(scripted, plan=FaultPlan(rate=0.5))
    store: ScoreStore = InMemoryScoreStore()
    assert isinstance(scripted, JudgeModel)
    assert isinstance(function, JudgeModel)
    assert isinstance(chaos, JudgeModel)
    assert all(callable(getattr(store, m)) for m in ("save", "completed", "list_run", "has_batch"))
    assert (scripted.model_id, scripted.provider) == ("scripted-judge", "scripted")
    assert (function.model_id, function.provider) == ("function-judge", "function")
    assert not scripted.supports_structured_output
    custom = ScriptedJudge(
        [], model_id="m", provider="p", supports_structured_output=True
    )
    assert (custom.model_id, custom.provider, custom.supports_structured_output) == (
        "m", "p", True,
    )


# --- ScriptedJudge ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_scripted_replies_in_order(anyio_backend: str) -> None:
    """Each call takes the next reply: text verbatim, other JSON values as JSON text."""
    judge = ScriptedJudge(["raw text", {"score": 0.5}, [1, "a"], 3, 2.5, True, None])
    texts = [(await judge.generate(REQUEST)).unwrap().text for _ in range(7)]
    assert texts == ["raw text", '{"score": 0.5}', '[1, "a"]', "3", "2.5", "true", "null"]
    assert judge.remaining == 0
    assert judge.calls == 7


@given(value=json_values)
def test_json_replies_round_trip(value: Any) -> None:
    """Any JSON value comes back as text that parses to the same value."""
    judge = ScriptedJudge([value])
    text = anyio.run(judge.generate, REQUEST).unwrap().text
    if isinstance(value, str):
        assert text == value
    else:
        assert json.loads(text) == value


@pytest.mark.anyio
async def test_scripted_error_is_a_failure(anyio_backend: str) -> None:
    """A JudgeError reply is returned as Failure, unchanged."""
    err = judge_error(503, message="overloaded")
    judge = ScriptedJudge([err, "ok"])
    assert (await judge.generate(REQUEST)).failure() is err
    assert (await judge.generate(REQUEST)).unwrap().text == "ok"


@pytest.mark.anyio
async def test_scripted_response_is_returned_verbatim(anyio_backend: str) -> None:
    """A whole JudgeResponse is returned as is (usage and finish reason included)."""
    response = JudgeResponse(
        text="{}", usage=JudgeUsage(input_tokens=1, output_tokens=2), finish_reason="length"
    )
    assert (await ScriptedJudge([response]).generate(REQUEST)).unwrap() is response


@pytest.mark.anyio
async def test_default_usage_is_four_characters_a_token(anyio_backend: str) -> None:
    """Usage is estimated at one token per four characters, rounded up; finish reason stop."""
    req = JudgeRequest(
        messages=[
            JudgeMessage(role="system", content="abcd"),
            JudgeMessage(role="user", content="efghi"),
        ]
    )
    reply = (await ScriptedJudge(["123456789"], model_id="m").generate(req)).unwrap()
    assert reply.usage == JudgeUsage(input_tokens=3, output_tokens=3, total_tokens=6)
    assert reply.finish_reason == "stop"
    assert reply.model_id == "m"


@pytest.mark.anyio
async def test_requests_are_recorded(anyio_backend: str) -> None:
    """Every request is recorded in order, including calls past the end of the script."""
    judge = ScriptedJudge(["a"])
    first, second = request("one"), request("two")
    await judge.generate(first)
    await judge.generate(second)
    assert judge.requests == (first, second)
    assert judge.calls == 2


@pytest.mark.anyio
async def test_running_out_is_a_clear_failure(anyio_backend: str) -> None:
    """Past the script every call fails, naming the call number; nothing is raised."""
    judge = ScriptedJudge(["a", "b"])
    await judge.generate(REQUEST)
    await judge.generate(REQUEST)
    assert judge.remaining == 0
    for call in (3, 4):
        err = (await judge.generate(REQUEST)).failure()
        assert err.kind == "unknown"
        assert err.code == "script_exhausted"
        assert not err.is_retryable
        assert err.message == f"ScriptedJudge ran out of replies at call {call} (script has 2)"
    assert judge.remaining == 0


@pytest.mark.anyio
async def test_an_empty_script_fails_at_call_one(anyio_backend: str) -> None:
    """An empty script fails on the first call."""
    err = (await ScriptedJudge([]).generate(REQUEST)).failure()
    assert "at call 1 (script has 0)" in err.message


def test_replies_may_be_any_iterable() -> None:
    """A generator of replies is consumed once, up front."""
    judge = ScriptedJudge(str(n) for n in range(3))
    assert judge.remaining == 3


@pytest.mark.parametrize("bad", [{1, 2}, math.nan, {"x": math.inf}, object(), b"bytes"])
def test_bad_replies_raise_at_construction(bad: object) -> None:
    """A reply that is not text, JSON, an error or a response is rejected up front."""
    with pytest.raises(TypeError, match=r"ScriptedJudge\.replies\[1\]"):
        ScriptedJudge(["ok", bad])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["one string", {"score": 1}])
def test_a_single_reply_is_not_a_script(bad: object) -> None:
    """Passing one str or dict instead of a list of replies is caught."""
    with pytest.raises(TypeError, match=r"ScriptedJudge\.replies"):
        ScriptedJudge(bad)  # type: ignore[arg-type]


def test_bad_names_raise() -> None:
    """Empty model ids and providers are rejected, naming the field."""
    with pytest.raises(ValueError, match=r"ScriptedJudge\.model_id"):
        ScriptedJudge([], model_id="")
    with pytest.raises(ValueError, match=r"FunctionJudge\.provider"):
        FunctionJudge(str, provider="")


def test_repr_is_informative() -> None:
    """The repr shows the ids and the progress through the script."""
    assert repr(ScriptedJudge(["a"])) == (
        "ScriptedJudge(model_id='scripted-judge', provider='scripted', calls=0, remaining=1)"
    )


# --- FunctionJudge ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_function_judge_sync(anyio_backend: str) -> None:
    """A sync function answers each request; replies are of the ScriptedJudge kinds."""

    def answer(req: JudgeRequest) -> Any:
        prompt = req.messages[-1].content
        if prompt == "fail":
            return judge_error(429)
        return {"length": len(prompt)}

    judge = FunctionJudge(answer)
    assert (await judge.generate(request("abc"))).unwrap().text == '{"length": 3}'
    assert (await judge.generate(request("fail"))).failure().kind == "rate_limit"
    assert judge.calls == 2
    assert [r.messages[-1].content for r in judge.requests] == ["abc", "fail"]


@pytest.mark.anyio
async def test_function_judge_async(anyio_backend: str) -> None:
    """An async function is awaited."""

    async def answer(req: JudgeRequest) -> str:
        await anyio.lowlevel.checkpoint()
        return req.messages[-1].content.upper()

    judge = FunctionJudge(answer)
    assert (await judge.generate(request("hi"))).unwrap().text == "HI"


@pytest.mark.anyio
async def test_function_judge_bad_reply_raises(anyio_backend: str) -> None:
    """A function returning something that is not a reply is a bug in the test: TypeError."""
    judge = FunctionJudge(lambda _r: {1, 2})  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="FunctionJudge reply to call 1"):
        await judge.generate(REQUEST)


@pytest.mark.anyio
async def test_a_changed_function_is_asked_again_not_read_from_the_cache(
    anyio_backend: str,
) -> None:
    """A FunctionJudge whose function changed (same model id) misses the cache; the same
    code in a new judge object hits it."""
    cache = MemoryJudgeCache()

    def scorer_for(judge: FunctionJudge) -> Any:
        return create_scorer(id="s", description="d", judge=JudgeConfig(
            model=judge, instructions="Grade.")).generate_score(
            ScorePromptStep(description="s", create_prompt=lambda c: f"grade {c.run.output}"))

    async def score(fn: Any) -> tuple[float, int]:
        judge = FunctionJudge(fn)
        meter = JudgeMeter(cache=cache)
        result = await scorer_for(judge).run(input="q", output="a", runtime=Runtime(meter=meter))
        return result.unwrap().score, judge.calls

    def old(_req: JudgeRequest) -> Any:
        return {"score": 0.2}

    def new(_req: JudgeRequest) -> Any:
        return {"score": 0.9}

    def old_again(_req: JudgeRequest) -> Any:
        return {"score": 0.2}

    assert await score(old) == (0.2, 1)
    assert await score(new) == (0.9, 1)  # changed code: asked, not the old answer
    assert await score(old_again) == (0.2, 0)  # the same code: the cached answer
    assert FunctionJudge(old).cache_identity == FunctionJudge(old_again).cache_identity
    assert FunctionJudge(old).cache_identity != FunctionJudge(new).cache_identity


def test_function_judge_needs_a_callable() -> None:
    """A non-callable is rejected."""
    with pytest.raises(TypeError, match=r"FunctionJudge\.fn"):
        FunctionJudge("nope")  # type: ignore[arg-type]


# --- judge_error ------------------------------------------------------------------------------


@given(
    status=st.one_of(st.none(), st.integers(100, 599)),
    code=st.one_of(st.none(), st.sampled_from(["rate_limit_exceeded", "ECONNRESET", "x"])),
)
def test_judge_error_derives_kind(status: int | None, code: str | None) -> None:
    """The kind comes from kind_for, and retryability from the kind and status."""
    err = judge_error(status, code=code)
    assert err.kind == kind_for(status, code, None)
    assert err.is_retryable == JudgeError(kind=err.kind, status=status, code=code).is_retryable


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (401, "auth", False),
        (403, "auth", False),
        (400, "bad_request", False),
        (408, "timeout", True),
        (409, "bad_request", True),
        (429, "rate_limit", True),
        (500, "server", True),
        (503, "server", True),
    ],
)
def test_judge_error_by_status(status: int, kind: str, retryable: bool) -> None:
    """Common statuses map to the expected kinds and retryability."""
    err = judge_error(status)
    assert (err.kind, err.is_retryable) == (kind, retryable)


def test_judge_error_fields() -> None:
    """Headers are lower-cased; an explicit kind wins; the cause chain is kept."""
    cause = judge_error(code="ECONNRESET")
    err = judge_error(
        502,
        headers={"Retry-After": "3"},
        type="overloaded_error",
        message="bad gateway",
        kind="network",
        cause=cause,
    )
    assert dict(err.headers) == {"retry-after": "3"}
    assert err.kind == "network"
    assert err.type == "overloaded_error"
    assert err.message == "bad gateway"
    assert err.chain() == (err, cause)


# --- VirtualClock -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_virtual_sleep_advances_without_waiting(anyio_backend: str) -> None:
    """Sleeping records the wait and advances virtual time; no real time passes."""
    vc = VirtualClock(start=10.0)
    with anyio.fail_after(1):
        await vc.sleep(3600)
        await vc.sleep(0)
        await vc.sleep(1.5)
    assert vc() == 3611.5
    assert vc.sleeps == (3600.0, 0.0, 1.5)
    assert vc.slept == 3601.5


@pytest.mark.anyio
async def test_virtual_sleep_is_a_checkpoint(anyio_backend: str) -> None:
    """A cancelled scope interrupts a virtual sleep."""
    vc = VirtualClock()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await vc.sleep(5)
        pytest.fail("not cancelled")  # pragma: no cover
    assert scope.cancelled_caught


def test_advance_moves_time_without_recording() -> None:
    """advance() moves time but is not a sleep."""
    vc = VirtualClock()
    vc.advance(2)
    assert vc() == 2.0
    assert vc.sleeps == ()


@given(waits=st.lists(st.floats(0, 1e6), max_size=20))
def test_virtual_time_is_the_sum_of_waits(waits: list[float]) -> None:
    """Time never decreases and equals the start plus every wait."""

    async def main() -> None:
        vc = VirtualClock()
        last = vc()
        for w in waits:
            await vc.sleep(w)
            assert vc() >= last
            last = vc()
        assert vc.sleeps == tuple(waits)

    anyio.run(main)


@pytest.mark.parametrize("bad", [-1, math.nan, math.inf, "1", True])
def test_bad_waits_raise(bad: object) -> None:
    """Negative, non-finite and non-numeric waits are rejected (the Sleep contract)."""
    vc = VirtualClock()
    with pytest.raises((ValueError, TypeError), match=r"VirtualClock\.sleep"):
        anyio.run(vc.sleep, bad)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError), match=r"VirtualClock\.advance"):
        vc.advance(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"VirtualClock\.start"):
        VirtualClock(math.nan)


def test_virtual_runtime_and_ids() -> None:
    """virtual_runtime gives a Runtime on a fresh clock with run-1, run-2, ... ids."""
    runtime, clock = virtual_runtime(start=5.0)
    assert isinstance(runtime, Runtime)
    assert runtime.clock() == 5.0
    assert [runtime.new_id() for _ in range(3)] == ["run-1", "run-2", "run-3"]
    anyio.run(runtime.sleep, 2.0)
    assert clock.sleeps == (2.0,)
    ids = SequentialIds("eval")
    assert (ids(), ids()) == ("eval-1", "eval-2")


# --- a whole scorer, offline ------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_scorer_runs_offline_in_virtual_time(anyio_backend: str) -> None:
    """A rate-limited judge is retried after its Retry-After, in virtual time."""
    judge = ScriptedJudge([judge_error(429, headers={"retry-after": "2"}), {"score": 0.8}])
    scorer = create_scorer(
        id="quality",
        description="Scores quality",
        judge=JudgeConfig(
            model=judge,
            instructions="Be strict.",
            error_processors=[StreamErrorRetryProcessor(max_retries=2)],
            max_processor_retries=2,
        ),
    ).generate_score(
        ScorePromptStep(description="Rate", create_prompt=lambda ctx: f"Rate: {ctx.run.output}")
    )
    runtime, clock = virtual_runtime()
    result = (await scorer.run(input="q", output="an answer", runtime=runtime)).unwrap()
    assert result.score == 0.8
    assert result.run_id == "run-1"
    assert clock.sleeps == (2.0,)
    assert judge.calls == 2
    assert judge.requests[0].messages[-1].content.startswith("Rate: an answer")
