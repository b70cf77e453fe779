"""Live scoring under load: bounded concurrency, a bounded queue, drops counted, prompt exits.

The judge is a :class:`FunctionJudge` whose calls wait on anyio Events that the test sets:
nothing sleeps, and the calls in flight are measured by the judge itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.judge import JudgeRequest
from scorecore.live import (
    LiveScorer,
    LiveScoringError,
    LiveStats,
    RatioSampling,
    live_scoring,
    sample_point,
    scored,
)
from scorecore.traces import ScoreRecord
from scorecore_adapters.testing import FunctionJudge, judge_error
from tests import strategies as sts

CALL = re.compile(r"call=(\d+):(ok|fail)")


class Gate:
    """A judge body whose calls wait until the test releases them; it counts calls in flight."""

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.opened = False
        # The events of the waiting judge calls, by call index (one per scorer of the call).
        self.waiting: dict[int, list[anyio.Event]] = {}

    async def __call__(self, request: JudgeRequest) -> Any:
        """Wait for release (unless open), then answer: a score, or a 401 for ``fail``."""
        match = CALL.search(request.messages[-1].content)
        assert match is not None
        index, verdict = int(match[1]), match[2]
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if not self.opened:
                event = anyio.Event()
                self.waiting.setdefault(index, []).append(event)
                await event.wait()
        finally:
            self.in_flight -= 1
        return judge_error(401, code="invalid_api_key") if verdict == "fail" else {"score": 1.0}

    def release(self, index: int) -> None:
        """Let the waiting judge calls of call ``index`` answer."""
        for event in self.waiting.pop(index):
            event.set()

    def open(self) -> None:
        """Let every waiting and every later call answer at once."""
        self.opened = True
        for index in list(self.waiting):
            self.release(index)


def judged(gate: Gate, id: str = "judged") -> Any:
    """A scorer whose score comes from the gated judge."""
    return create_scorer(
        id=id, description="d",
        judge=JudgeConfig(model=FunctionJudge(gate), instructions="Rate."),
    ).generate_score(ScorePromptStep(
        description="rate", create_prompt=lambda ctx: f"call={ctx.run.output}",
    ))


def submit(live: LiveScorer, index: int, *, fail: bool = False) -> bool:
    """Offer call ``index`` (its judge answers ``fail`` with an error)."""
    return live.submit(input=index, output=f"{index}:{'fail' if fail else 'ok'}")


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the other tasks until ``condition()`` holds (no sleeping, no clock).

    A state that is never reached fails after a fixed number of scheduling rounds, far more
    than the few that every expected state here needs.
    """
    for _ in range(2000):
        if condition():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("the expected state was not reached")


async def drain(gate: Gate, *lives: LiveScorer) -> None:
    """Open the gate and wait until nothing is running or queued (a lost call fails here)."""
    gate.open()
    await until(lambda: all(live.stats.in_flight == live.stats.queued == 0 for live in lives))


def settled(gate: Gate, live: LiveScorer, waiting: set[int], finished: int) -> bool:
    """The judge holds exactly the calls ``waiting`` and ``finished`` calls have ended."""
    stats = live.stats
    return set(gate.waiting) == waiting and stats.completed + stats.failed == finished


def balanced(stats: LiveStats) -> bool:
    """Every offered call is in exactly one state."""
    return stats.submitted == (stats.dropped + stats.queued + stats.in_flight + stats.completed
                               + stats.failed + stats.cancelled)


pytestmark = pytest.mark.anyio


async def test_five_thousand_submits_start_at_most_the_limit(anyio_backend: str) -> None:
    """The default bound: 16 judge calls at once, 1,000 queued, the rest dropped and counted."""
    gate = Gate()
    errors: list[LiveScoringError] = []
    records: list[ScoreRecord] = []
    live = LiveScorer(scorers=[judged(gate)], sink=records.append, on_error=errors.append)
    async with live_scoring():
        accepted = [submit(live, i) for i in range(5000)]
        # Nothing ran inside submit: it only did the bookkeeping and returned.
        assert gate.calls == 0
        assert accepted == [True] * 1016 + [False] * 3984
        assert live.stats == LiveStats(submitted=5000, started=16, dropped=3984, in_flight=16,
                                       queued=1000)
        await until(lambda: gate.in_flight == 16)
        assert [e.kind for e in errors] == ["queue_full"]
        assert "16 running, 1000 queued" in errors[0].message
        await drain(gate, live)
    assert gate.max_in_flight == 16
    assert gate.calls == len(records) == 1016
    assert live.stats == LiveStats(submitted=5000, started=1016, completed=1016, dropped=3984)


async def test_the_limit_holds_while_the_queue_drains(anyio_backend: str) -> None:
    """With limit 3, releasing calls one by one admits queued ones one by one, never more."""
    gate = Gate()
    records: list[ScoreRecord] = []
    live = scored(judged(gate), sink=records.append, max_concurrency=3)
    async with live_scoring():
        assert all(submit(live, i) for i in range(10))
        await until(lambda: set(gate.waiting) == {0, 1, 2})
        for finished in range(7):
            gate.release(finished)
            await until(functools.partial(settled, gate, live, {finished + 1, finished + 2,
                                                                finished + 3}, finished + 1))
            assert live.stats.in_flight == 3
            assert live.stats.queued == 6 - finished
        await drain(gate, live)
    assert gate.max_in_flight == 3
    assert sorted(r.result.run.input for r in records) == list(range(10))
    assert live.stats == LiveStats(submitted=10, started=10, completed=10)


async def test_a_full_queue_drops_and_reports_once_per_episode(anyio_backend: str) -> None:
    """Beyond the queue, calls are dropped at once; one queue_full per overflow, all counted."""
    gate = Gate()
    errors: list[LiveScoringError] = []
    live = LiveScorer(scorers=[judged(gate)], max_concurrency=1, max_queue=2)
    async with live_scoring(on_error=errors.append) as scope:
        assert [submit(live, i) for i in range(6)] == [True, True, True, False, False, False]
        await until(lambda: set(gate.waiting) == {0})
        assert [e.kind for e in errors] == ["queue_full"]
        gate.release(0)
        await until(lambda: set(gate.waiting) == {1})
        assert submit(live, 6) is True  # the queue had room again: the episode ended
        assert [submit(live, i) for i in (7, 8)] == [False, False]
        assert live.stats == LiveStats(submitted=9, started=2, completed=1, dropped=5,
                                       in_flight=1, queued=2)
        await drain(gate, live)
    assert [e.kind for e in scope.errors] == ["queue_full", "queue_full"]
    assert live.stats == LiveStats(submitted=9, started=4, completed=4, dropped=5)


async def test_judge_failures_are_counted_as_failed(anyio_backend: str) -> None:
    """A failed run is reported and counted; the others complete; the sums balance."""
    gate = Gate()
    gate.open()
    errors: list[LiveScoringError] = []
    live = LiveScorer(scorers=[judged(gate)], on_error=errors.append, max_concurrency=2)
    async with live_scoring():
        for i in range(6):
            submit(live, i, fail=i % 3 == 0)
        await drain(gate, live)
    assert [e.kind for e in errors] == ["scorer_failed"] * 2
    assert live.stats == LiveStats(submitted=6, started=6, completed=4, failed=2)


async def test_the_scope_sets_the_default_limits_and_the_scorer_wins(anyio_backend: str) -> None:
    """``live_scoring(max_concurrency=, max_queue=)`` applies to scorers without their own."""
    gate = Gate()
    default = LiveScorer(scorers=[judged(gate, "a")])
    own = LiveScorer(scorers=[judged(gate, "b")], max_concurrency=1, max_queue=1)
    async with live_scoring(max_concurrency=2, max_queue=3) as scope:
        assert (scope.max_concurrency, scope.max_queue) == (2, 3)
        assert sum(submit(default, i) for i in range(10)) == 5
        assert sum(submit(own, i) for i in range(10, 20)) == 2
        await until(lambda: gate.in_flight == 3)
        assert (default.stats.in_flight, default.stats.queued) == (2, 3)
        assert (own.stats.in_flight, own.stats.queued) == (1, 1)
        await drain(gate, default, own)
    assert (default.stats.completed, own.stats.completed) == (5, 2)


async def test_each_call_runs_its_scorers_together_in_one_slot(anyio_backend: str) -> None:
    """The limit counts calls: two scorers per call under limit 2 make four judge calls."""
    gate = Gate()
    live = LiveScorer(scorers=[judged(gate, "a"), judged(gate, "b")], max_concurrency=2)
    async with live_scoring():
        for i in range(10):
            live.submit(input=i, output=f"{i}:ok")
        await until(lambda: gate.in_flight == 4)
        assert live.stats.in_flight == 2
        await drain(gate, live)
    assert gate.max_in_flight == 4
    assert live.stats.completed == 10


async def test_cancelling_the_scope_drops_the_queue_at_once(anyio_backend: str) -> None:
    """A cancelled block does not wait for judges that never answer; all is counted."""
    gate = Gate()  # never released
    live = LiveScorer(scorers=[judged(gate)], max_concurrency=4, max_queue=10)
    with anyio.fail_after(10):  # a safety net: a hang fails instead of blocking the suite
        with anyio.CancelScope() as cancel:
            async with live_scoring():
                accepted = sum(submit(live, i) for i in range(20))
                await until(lambda: gate.in_flight == 4)
                cancel.cancel()
    assert accepted == 14
    assert gate.in_flight == 0
    # A slot freed by a cancelled call may go to a queued one just before it is cancelled too.
    assert 4 <= live.stats.started <= 14
    assert attrs.evolve(live.stats, started=0) == LiveStats(submitted=20, dropped=6,
                                                            cancelled=14)
    # The slots were given back: the same scorer works in the next block.
    gate.open()
    async with live_scoring():
        assert all(submit(live, i) for i in range(20, 25))
        await drain(gate, live)
    assert live.stats.completed == 5
    assert live.stats.in_flight == live.stats.queued == 0


async def test_cancelling_before_any_call_started_frees_everything(anyio_backend: str) -> None:
    """Cancelled before the loop ran any scoring task: no slot or queue place is left behind."""
    gate = Gate()
    live = LiveScorer(scorers=[judged(gate)], max_concurrency=3, max_queue=4)
    with anyio.CancelScope() as cancel:
        async with live_scoring():
            assert sum(submit(live, i) for i in range(10)) == 7
            cancel.cancel()
    assert gate.in_flight == 0  # running calls reached at most their first checkpoint
    assert attrs.evolve(live.stats, started=0) == LiveStats(submitted=10, dropped=3,
                                                            cancelled=7)
    async with anyio.create_task_group() as group:
        async with live_scoring(task_group=group):
            assert sum(submit(live, i) for i in range(10, 20)) == 7
        group.cancel_scope.cancel()
    assert (live.stats.in_flight, live.stats.queued, live.stats.cancelled) == (0, 0, 14)


async def test_a_cancelled_user_group_frees_the_slots(anyio_backend: str) -> None:
    """With your own task group, cancelling it stops queued and running calls promptly."""
    gate = Gate()
    live = LiveScorer(scorers=[judged(gate)], max_concurrency=2, max_queue=5)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            async with live_scoring(task_group=group):
                assert sum(submit(live, i) for i in range(5)) == 5
            await until(lambda: gate.in_flight == 2)
            group.cancel_scope.cancel()
    assert attrs.evolve(live.stats, started=0) == LiveStats(submitted=5, cancelled=5)


async def test_the_decorated_caller_is_unaffected_by_drops(anyio_backend: str) -> None:
    """A wrapped function returns its value even when its call is dropped."""
    gate = Gate()
    live = scored(judged(gate), max_concurrency=1, max_queue=0)

    @live
    def echo(text: str) -> str:
        return text

    async with live_scoring() as scope:
        assert [echo(f"{i}:ok") for i in range(3)] == ["0:ok", "1:ok", "2:ok"]
        await drain(gate, live)
    assert live.stats == LiveStats(submitted=3, started=1, completed=1, dropped=2)
    assert [e.kind for e in scope.errors] == ["queue_full"]


def test_limits_are_checked_when_building() -> None:
    """max_concurrency is an int >= 1 and max_queue an int >= 0; the error names them."""
    gate = Gate()
    for bad in (0, -1, True, 2.5, "4"):
        with pytest.raises(ValueError, match=r"LiveScorer\.max_concurrency must be an int >= 1"):
            LiveScorer(scorers=[judged(gate)], max_concurrency=bad)  # type: ignore[arg-type]
    for bad in (-1, False, 1.0):
        with pytest.raises(ValueError, match=r"LiveScorer\.max_queue must be an int >= 0"):
            scored(judged(gate), max_queue=bad)  # type: ignore[arg-type]
    assert LiveScorer(scorers=[judged(gate)], max_queue=0).max_queue == 0


async def test_live_scoring_checks_its_limits(anyio_backend: str) -> None:
    """A bad scope limit raises when the block is entered, before anything runs."""
    with pytest.raises(ValueError, match=r"live_scoring\.max_concurrency must be an int >= 1"):
        async with live_scoring(max_concurrency=0):
            pass
    with pytest.raises(ValueError, match=r"live_scoring\.max_queue must be an int >= 0, got -3"):
        async with live_scoring(max_queue=-3):
            pass


def test_evolve_gives_fresh_slots() -> None:
    """An evolved copy has its own limit and counts; equality ignores the counts."""
    gate = Gate()
    live = LiveScorer(scorers=[judged(gate)])
    live.submit(input=0, output="0:ok")  # no task group: dropped
    copy = attrs.evolve(live, max_concurrency=2)
    assert (live.stats.dropped, copy.stats.dropped) == (1, 0)
    assert attrs.evolve(live) == live


async def _drive(limit: int, queue: int, ops: list[tuple[str, bool]]) -> None:
    """Apply ``ops`` and compare every state with a model of the slots and the queue."""
    gate = Gate()
    live = LiveScorer(scorers=[judged(gate)], max_concurrency=limit, max_queue=queue,
                      on_error=lambda error: None)
    running: set[int] = set()  # the model: call indices holding a slot
    queued: list[int] = []  # ... and waiting, first come first served
    verdicts: dict[int, bool] = {}
    dropped = 0

    def done(good: bool) -> int:
        return sum(1 for i, fail in verdicts.items()
                   if fail is not good and i not in running and i not in queued)

    async with live_scoring():
        for index, (op, fail) in enumerate(ops):
            if op == "submit":
                accepted = submit(live, index, fail=fail)
                if len(running) < limit and not queued:
                    running.add(index)
                elif len(queued) < queue:
                    queued.append(index)
                else:
                    dropped += 1
                assert accepted is (index in running or index in queued)
                if accepted:
                    verdicts[index] = fail
            elif running:
                finished = min(running)
                gate.release(finished)
                running.remove(finished)
                if queued:
                    running.add(queued.pop(0))
            expected = LiveStats(
                submitted=sum(1 for o, _ in ops[:index + 1] if o == "submit"),
                started=len(verdicts) - len(queued), completed=done(True), failed=done(False),
                dropped=dropped, in_flight=len(running), queued=len(queued),
            )
            await until(functools.partial(settled, gate, live, running,
                                          expected.completed + expected.failed))
            assert live.stats == expected
            assert balanced(live.stats)
        await drain(gate, live)
    stats = live.stats
    assert gate.max_in_flight <= limit
    assert stats.completed + stats.dropped + stats.failed == stats.submitted
    assert stats.in_flight == stats.queued == stats.cancelled == 0
    assert stats.failed == sum(verdicts.values())


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=60)
@given(limit=st.integers(1, 5), queue=st.integers(0, 6), ops=sts.live_load_ops)
def test_slots_and_queue_follow_the_model(
    backend: str, limit: int, queue: int, ops: list[tuple[str, bool]]
) -> None:
    """In flight <= limit, queued <= queue, FIFO admission; after the drain all is counted."""
    anyio.run(_drive, limit, queue, ops, backend=backend)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=30)
@given(limit=st.integers(1, 40), queue=st.integers(0, 300), submits=st.integers(0, 600))
def test_a_burst_is_bounded_and_fully_accounted(
    backend: str, limit: int, queue: int, submits: int
) -> None:
    """A burst of submits: at most ``limit`` judge calls, ``limit + queue`` accepted, sums hold."""

    async def main() -> LiveStats:
        gate = Gate()
        live = LiveScorer(scorers=[judged(gate)], max_concurrency=limit, max_queue=queue,
                          on_error=lambda error: None)
        async with live_scoring():
            accepted = sum(submit(live, i, fail=i % 7 == 3) for i in range(submits))
            assert accepted == min(submits, limit + queue)
            await until(lambda: gate.in_flight == min(submits, limit))
            await drain(gate, live)
        assert gate.max_in_flight == min(submits, limit)
        return live.stats

    stats = anyio.run(main, backend=backend)
    assert stats.completed + stats.dropped + stats.failed == stats.submitted == submits
    assert stats.dropped == max(0, submits - limit - queue)
    assert stats.in_flight == stats.queued == stats.cancelled == 0


async def test_a_burst_is_sampled_before_it_is_queued(anyio_backend: str) -> None:
    """3,000 submits at rate 0.3 with the default limits: sampling is decided at submit, so
    every sampled call is queued and scored (none dropped), and the calls sampling skips are
    counted as sampled out, never taking a slot or a queue place."""
    gate = Gate()
    records: list[ScoreRecord] = []
    errors: list[LiveScoringError] = []
    live = LiveScorer(scorers=[judged(gate)], sampling=RatioSampling(rate=0.3),
                      sink=records.append, on_error=errors.append)
    keys = [f"trace-{i}" for i in range(3000)]
    sampled = sum(sample_point(key) < 0.3 for key in keys)
    assert sampled <= 16 + 1000 < 3000  # every sampled call fits; all 3,000 would not
    async with live_scoring():
        for i, key in enumerate(keys):
            assert live.submit(input=i, output=f"{i}:ok", trace_id=key) is True
        assert live.stats == LiveStats(submitted=3000, started=16, in_flight=16,
                                       queued=sampled - 16, sampled_out=3000 - sampled)
        await drain(gate, live)
    assert errors == []
    assert gate.calls == len(records) == sampled
    assert sorted(r.trace_id or "" for r in records) == sorted(
        key for key in keys if sample_point(key) < 0.3)
    assert live.stats == LiveStats(submitted=3000, started=sampled, completed=sampled,
                                   sampled_out=3000 - sampled)


async def test_a_wrapped_call_is_sampled_on_its_trace_id_at_the_call(anyio_backend: str) -> None:
    """``trace_id_from`` is asked when the wrapped function returns; a sampled-out call is
    never scheduled, and one whose trace id cannot be extracted is reported and failed."""
    gate = Gate()
    errors: list[LiveScoringError] = []

    def trace_of(index: int) -> str:
        if index == 7:
            raise KeyError("trace")
        return f"trace-{index}"

    live = scored(judged(gate), sampling=RatioSampling(rate=0.5), trace_id_from=trace_of,
                  output_from=lambda index: f"{index}:ok", on_error=errors.append, max_queue=0,
                  max_concurrency=1)

    @live
    async def answer(index: int) -> int:
        return index

    sampled = [i for i in range(40) if i != 7 and sample_point(f"trace-{i}") < 0.5]
    async with live_scoring():
        for index in range(40):
            assert await answer(index) == index
        stats = live.stats
        # One slot, no queue: the first sampled call runs, the other sampled ones are dropped;
        # the calls sampling skips never reach the full queue.
        assert stats == LiveStats(submitted=40, started=1, in_flight=1, failed=1,
                                  dropped=len(sampled) - 1, sampled_out=39 - len(sampled))
        await drain(gate, live)
    assert [e.kind for e in errors] == ["extract_raised", "queue_full"]
    assert "trace_id_from" in errors[0].message or "trace id" in errors[0].message
