"""Trials are units of work: they share the item concurrency and are generated lazily.

``run_evals(..., trials=N)`` hands out each item's trials one by one to the same workers as
items, so 2 items x 8 trials of a 0.5 s judge take 0.5 s at concurrency 16 (not 4 s, one
trial after another), and only the trials in flight exist at any moment (memory flat in N).
Run ids, stored rows, the order of kept results and resume are what they were.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import tracemalloc
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from scorecore import JudgeConfig, Runtime, ScorePromptStep, create_scorer
from scorecore.evals import EvalReport, run_evals
from scorecore.evals._run._scoring import ClaimedItem
from scorecore_adapters.testing import FunctionJudge, InMemoryScoreStore

pytestmark = pytest.mark.anyio


class Timeline:
    """Virtual time shared by concurrent sleepers (like trio's MockClock with autojump).

    A sleep ends when the time reaches its end; once every other task is waiting, ``drive``
    jumps the time to the earliest end. Concurrent sleeps of 0.5 s take 0.5 s, not their sum.
    """

    def __init__(self) -> None:
        self.now = 0.0
        self._ends: list[tuple[float, int, anyio.Event]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        event = anyio.Event()
        heapq.heappush(self._ends, (self.now + seconds, next(self._order), event))
        await event.wait()

    async def drive(self) -> None:
        """Jump to the next end whenever nothing else can run (run it in the task group)."""
        while True:
            for _ in range(100):  # far more rounds than any step between two sleeps takes
                await anyio.lowlevel.checkpoint()
            if self._ends:
                self.now = self._ends[0][0]
                while self._ends and self._ends[0][0] <= self.now:
                    heapq.heappop(self._ends)[2].set()


class SlowJudge:
    """A judge body answering 0.5 s (or ``latency(output)``) of timeline time later."""

    def __init__(self, timeline: Timeline, latency: Any = None) -> None:
        self.timeline = timeline
        self.latency = latency or (lambda output: 0.5)
        self.in_flight = 0
        self.most = 0
        self.calls = 0

    async def __call__(self, request: Any) -> dict[str, float]:
        self.calls += 1
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await self.timeline.sleep(self.latency(request.messages[-1].content))
        finally:
            self.in_flight -= 1
        return {"score": 1.0}


def judged(judge: SlowJudge) -> Any:
    return create_scorer(
        id="judged", description="d",
        judge=JudgeConfig(model=FunctionJudge(judge), instructions="Rate."),
    ).generate_score(ScorePromptStep(description="rate",
                                     create_prompt=lambda ctx: f"{ctx.run.output}"))


async def on_timeline(timeline: Timeline, **kwargs: Any) -> EvalReport:
    report: list[EvalReport] = []
    async with anyio.create_task_group() as group:
        group.start_soon(timeline.drive)
        report.append(await run_evals(
            runtime=Runtime(clock=timeline, sleep=timeline.sleep), **kwargs
        ))
        group.cancel_scope.cancel()
    return report[0]


@pytest.mark.parametrize("concurrency", [16, 64])
async def test_trials_share_the_item_concurrency(anyio_backend: str, concurrency: int) -> None:
    """2 items x 8 trials of a 0.5 s judge at concurrency >= 16: all 16 trials run at once,
    the batch takes 0.5 s of virtual time (one after another per item: 4.0 s)."""
    timeline = Timeline()
    judge = SlowJudge(timeline)
    items = [{"id": f"q{i}", "input": "q", "output": f"a{i}"} for i in range(2)]
    report = await on_timeline(timeline, data=items, scorers=[judged(judge)], trials=8,
                               concurrency=concurrency)
    assert report.summary("judged").scored == judge.calls == 16
    assert judge.most == 16
    assert report.duration == 0.5


async def test_the_concurrency_still_bounds_trials(anyio_backend: str) -> None:
    """At concurrency 3, 2 items x 8 trials run 3 at a time: ceil(16 / 3) rounds of 0.5 s."""
    timeline = Timeline()
    judge = SlowJudge(timeline)
    items = [{"id": f"q{i}", "input": "q", "output": f"a{i}"} for i in range(2)]
    report = await on_timeline(timeline, data=items, scorers=[judged(judge)], trials=8,
                               concurrency=3)
    assert judge.most == 3
    assert report.duration == 3.0


async def test_kept_results_are_in_dataset_then_trial_order(anyio_backend: str) -> None:
    """Trials finish in any order (later trials answer first here); the kept results are by
    item, then trial, each under its trial's run id, and rows are stored the same way."""
    timeline = Timeline()
    answered: list[str] = []

    def latency(output: str) -> float:
        answered.append(output)
        return 1.0 / len(answered)  # each call answers sooner than the one before

    judge = SlowJudge(timeline, latency)
    store = InMemoryScoreStore()
    items = [{"id": f"q{i}", "input": "q", "output": f"a{i}"} for i in range(3)]
    report = await on_timeline(timeline, data=items, scorers=[judged(judge)], trials=4,
                               concurrency=12, keep_results=True, store=store, batch_id="b")
    assert report.results is not None
    expected = [(i, t, f"b{'' if t == 0 else f'/trial-{t}'}:q{i}")
                for i in range(3) for t in range(4)]
    assert [(r.index, r.trial, r.run_id) for r in report.results] == expected
    assert sorted(store.rows) == sorted((run_id, "judged") for _, _, run_id in expected)
    assert judge.most == 12


def _alive(kind: type) -> int:
    # Collected first: unreachable objects that earlier tests left in reference cycles are
    # not alive, and how many of them the collector has yet to free depends on the Python
    # version's thresholds, not on this run.
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, kind))


async def test_trials_are_generated_lazily(anyio_backend: str) -> None:
    """Only the trials in flight are claimed at any moment, never all of an item's trials."""
    seen: list[int] = []

    def score(ctx: Any) -> float:
        if ctx.run.run_id == "b/trial-5000:q0":
            seen.append(_alive(ClaimedItem))
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(score)
    report = await run_evals([{"id": "q0", "input": "q", "output": "a"}], [scorer], trials=10_000,
                             concurrency=4, batch_id="b")
    assert report.summary("s").scored == 10_000
    (alive,) = seen
    assert alive <= 2 * 4 + 2  # about one per worker (and the item's own claim)


def _peak(trials: int) -> int:
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1.0)

    async def main() -> EvalReport:
        return await run_evals([{"id": "q0", "input": "q", "output": "a"}], [scorer],
                               trials=trials, concurrency=4)

    gc.collect()
    tracemalloc.start()
    try:
        report = anyio.run(main)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.summary("s").scored == trials
    assert report.trials is not None
    return peak


def test_memory_is_flat_in_the_number_of_trials() -> None:
    """Ten times the trials: about the same peak memory (before: ten times as much)."""
    small, large = _peak(1_000), _peak(10_000)
    assert large < 1.5 * small + 200_000, (small, large)


async def test_resume_with_trials_runs_only_what_failed(anyio_backend: str) -> None:
    """A resumed batch with trials reruns the failed (item, trial) pairs only, and ends with
    one row per item, trial and scorer."""
    flaky_runs: list[str] = []
    failing = {"b/trial-1:q0", "b:q2", "b/trial-2:q1"}

    def score(ctx: Any) -> float:
        flaky_runs.append(ctx.run.run_id)
        if ctx.run.run_id in failing:
            raise RuntimeError("flaky")
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(score)
    store = InMemoryScoreStore()
    items = [{"id": f"q{i}", "input": "q", "output": "a"} for i in range(3)]
    first = await run_evals(items, [scorer], trials=3, store=store, batch_id="b",
                            concurrency=5)
    assert first.summary("s").failed == 3
    failing.clear()
    flaky_runs.clear()
    second = await run_evals(items, [scorer], trials=3, store=store, batch_id="b",
                             resume=True, concurrency=5)
    assert sorted(flaky_runs) == ["b/trial-1:q0", "b/trial-2:q1", "b:q2"]
    assert second.summary("s").scored == 9
    assert len(store.rows) == 9
    assert {row.status for row in store.rows.values()} == {"scored"}
