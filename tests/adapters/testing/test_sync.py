"""Scorer.run_sync and run_evals_sync: blocking twins for scripts, refused inside a loop."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest

from scorecore import Scorer, create_scorer
from scorecore.evals import run_evals, run_evals_sync
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime

INSIDE = r"cannot be called while an event loop is running in this thread"


def echo() -> Scorer[Any, Any]:
    return create_scorer(id="echo", description="d").generate_score(
        lambda ctx: float(ctx.run.output)
    ).generate_reason(lambda ctx: f"run {ctx.run.run_id}")


def test_run_sync_returns_what_run_returns() -> None:
    """Outside any loop, run_sync gives the Result that awaiting run gives, argument for
    argument (runtime, run id, extra keys)."""
    runtime, _ = virtual_runtime()
    expected_runtime, _ = virtual_runtime()
    got = echo().run_sync(input="q", output=0.25, runtime=runtime, extra={"topic": "x"})
    expected = anyio.run(lambda: echo().run(input="q", output=0.25, runtime=expected_runtime,
                                            extra={"topic": "x"}))
    assert got == expected
    assert got.unwrap().reason == "run run-1"
    assert got.unwrap().run.extra == {"topic": "x"}


def test_run_sync_reports_a_failed_run_as_failure() -> None:
    """run_sync never raises for what a step did: a raising step is a Failure."""
    def boom(ctx: Any) -> float:
        raise ValueError("nope")

    result = create_scorer(id="b", description="d").generate_score(boom).run_sync(
        input=1, output=2)
    assert result.failure().failed_step == "generate_score"


@pytest.mark.anyio
async def test_run_sync_inside_a_running_loop_says_to_await(anyio_backend: str) -> None:
    """Called from async code (either backend) it raises at once, naming the scorer and the
    awaitable form, and runs nothing."""
    judge = ScriptedJudge([{"score": 1}])
    with pytest.raises(RuntimeError, match=INSIDE) as info:
        echo().run_sync(input="q", output=1)
    assert "scorer 'echo': run_sync()" in str(info.value)
    assert "use `await scorer.run(...)` instead" in str(info.value)
    assert judge.calls == 0


@pytest.mark.anyio
async def test_run_sync_from_a_worker_thread_of_a_loop_runs(anyio_backend: str) -> None:
    """A worker thread has no loop of its own, so run_sync works there."""
    result = await anyio.to_thread.run_sync(lambda: echo().run_sync(input="q", output=0.5))
    assert result.unwrap().score == 0.5


def test_run_sync_from_a_loop_callback_is_the_same_clear_error() -> None:
    """Code called by an asyncio loop outside any task (a callback) gets the same error, not
    asyncio's own."""
    seen: list[BaseException] = []

    def callback() -> None:
        try:
            echo().run_sync(input="q", output=1)
        except BaseException as exc:
            seen.append(exc)

    async def main() -> None:
        asyncio.get_running_loop().call_soon(callback)
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert len(seen) == 1
    assert isinstance(seen[0], RuntimeError)
    assert "use `await scorer.run(...)` instead" in str(seen[0])


def test_run_sync_in_many_threads_at_once() -> None:
    """Each thread gets its own loop: concurrent run_sync calls do not interfere."""
    results: dict[int, float | None] = {}

    def work(i: int) -> None:
        results[i] = echo().run_sync(input="q", output=i / 10).unwrap().score

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: i / 10 for i in range(8)}


def test_run_evals_sync_returns_what_run_evals_returns() -> None:
    """run_evals_sync takes run_evals' arguments and returns the same report."""
    data = [{"input": i, "output": i / 4, "id": f"i{i}"} for i in range(4)]
    got = run_evals_sync(data, [echo()], batch_id="b", runtime=virtual_runtime()[0],
                         keep_results=True, thresholds={"echo": 0.3})
    expected = anyio.run(lambda: run_evals(data, [echo()], batch_id="b",
                                           runtime=virtual_runtime()[0], keep_results=True,
                                           thresholds={"echo": 0.3}))
    assert got == expected
    assert got.summary("echo").mean == 0.375


@pytest.mark.anyio
async def test_run_evals_sync_inside_a_running_loop_says_to_await(anyio_backend: str) -> None:
    """Inside a loop it raises before reading a single item."""
    pulled: list[int] = []

    def data() -> Iterator[dict[str, int]]:
        pulled.append(1)
        yield {"input": 1, "output": 1}

    with pytest.raises(RuntimeError, match=INSIDE) as info:
        run_evals_sync(data(), [echo()])
    assert "run_evals_sync() cannot be called" in str(info.value)
    assert "use `await run_evals(...)` instead" in str(info.value)
    assert pulled == []


def test_run_evals_sync_looks_like_a_function_of_scorecore_evals() -> None:
    """It has its own name and docstring, and run_evals' signature for help() and IDEs."""
    assert run_evals_sync.__name__ == "run_evals_sync"
    assert (run_evals_sync.__doc__ or "").startswith("Run :func:`run_evals` to completion")
    assert inspect.signature(run_evals_sync) == inspect.signature(run_evals)
