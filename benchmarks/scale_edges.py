"""Benchmark: the scale edges — trials, rejecting a huge wrong value, a sampled burst.

Each part prints the figures the issue quoted, so the same script run against an older
checkout (``PYTHONPATH=/path/to/old:/path/to/old/adapters``) gives the "before" column:

1. **trials**: 2 items x 8 trials with a judge that answers in 0.5 s, at concurrency 16
   (real time): trials one after another per item took 4.0 s, trials sharing the item
   concurrency take 0.5 s. Then 2,000 and 20,000 trials of one item with a judge that answers
   at once, and 200,000 for 20 s (the issue: 0.9 GB in 20 s): trials done, peak RSS.
2. **validation**: a scorer input declared ``list[int]`` given 200,000 strings (and 200,000
   ints): how long structuring takes to reject (accept) it, and how long the event loop was
   blocked; the same for a judge reply typed ``list[int]`` (its generated JSON schema is
   checked first, lazily, so the reply is refused before it is structured).
3. **live**: 3,000 submits at rate 0.3 with the default limits (16 running, 1,000 queued) and
   a judge that answers in 10 ms: sampled calls, how many were scored, dropped, sampled out.

    .venv/bin/python benchmarks/scale_edges.py [trials|validation|live ...]
"""

from __future__ import annotations

import functools
import resource
import subprocess
import sys
import time
from typing import Any

import anyio
import attrs
from returns.result import Success

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore.judge import JudgeRequest, JudgeResponse
from scorecore.live import LiveScorer, RatioSampling, live_scoring, sample_point
from scorecore_adapters.testing import FunctionJudge


class _Judge:
    """A judge answering a score after ``latency`` seconds; it keeps nothing (the testing kit's
    fakes record every request, which a memory figure must not count)."""

    model_id = "bench"
    provider = "bench"
    supports_structured_output = False

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def generate(self, request: JudgeRequest, /) -> Any:
        if self.latency:
            await anyio.sleep(self.latency)
        return Success(JudgeResponse(text='{"score": 1}'))


def _judged(latency: float, *, id: str = "judged") -> Any:
    judge = JudgeConfig(model=_Judge(latency), instructions="Rate.")
    return create_scorer(id=id, description="d", judge=judge).generate_score(
        ScorePromptStep(description="rate", create_prompt=lambda ctx: "rate it"))


async def _trials_time() -> None:
    items = [{"id": f"q{i}", "input": "q", "output": "a"} for i in range(2)]
    start = time.perf_counter()
    report = await run_evals(items, [_judged(0.5)], trials=8, concurrency=16)
    elapsed = time.perf_counter() - start
    judged = report.summary("judged")
    print(f"  2 items x 8 trials, judge 0.5 s, concurrency 16: {elapsed:.2f} s "
          f"({judged.scored} runs scored)")


async def _trials_memory(trials: int, seconds: float) -> None:
    done = 0

    def count(result: Any) -> None:
        nonlocal done
        done += 1

    start = time.perf_counter()
    with anyio.move_on_after(seconds):
        await run_evals([{"id": "q0", "input": "q", "output": "a"}], [_judged(0.0)],
                        trials=trials, concurrency=16, on_item_complete=count)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"  1 item x {trials:,} trials (judge answers at once, at most {seconds:g} s): "
          f"{done:,} done in {elapsed:.1f} s, peak RSS {peak:.0f} MB")


def trials() -> None:
    print("trials")
    anyio.run(_trials_time)
    for count, seconds in ((2_000, 600.0), (20_000, 600.0), (200_000, 20.0)):
        # A process each: the peak RSS is the process's own.
        subprocess.run([sys.executable, __file__, "trials-memory", str(count), str(seconds)],  # noqa: S603 - this script, fixed arguments
                       check=True)


@attrs.frozen
class _Reply:
    values: list[int]


async def _blocked(work: Any) -> tuple[float, float]:
    """How long ``work()`` took, and the longest the event loop went without a tick meanwhile."""
    longest = 0.0
    done = False

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await anyio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await anyio.sleep(0.01)
        start = time.perf_counter()
        await work()
        elapsed = time.perf_counter() - start
        done = True
    return elapsed, longest


async def _run_input(scorer: Any, name: str, value: Any) -> None:
    result = await scorer.run(input=value, output="o")
    errors = "" if type(result).__name__ == "Success" else \
        f", {len(result.failure().cause.errors)} error line(s)"
    print(f"    input list[int] <- {name}: {type(result).__name__}{errors}", end="")


async def _run_reply(scorer: Any, name: str) -> None:
    result = await scorer.run(input="i", output="o")
    print(f"    judge reply values: list[int] <- {name}: {type(result).__name__}", end="")


def validation() -> None:
    print("validation")
    typed = create_scorer(id="typed", description="d", input_type=list[int]).generate_score(
        lambda ctx: 1.0)
    reply_judge = FunctionJudge(lambda request: {"values": CURRENT[0]})
    replied = create_scorer(
        id="replied", description="d",
        judge=JudgeConfig(model=reply_judge, instructions="List."),
    ).analyze(PromptStep(description="list", output_type=_Reply,
                         create_prompt=lambda ctx: "list")).generate_score(lambda ctx: 1.0)
    values = {"200,000 strings": ["x"] * 200_000, "200,000 ints": list(range(200_000))}
    for name, value in values.items():
        CURRENT[0] = value
        elapsed, longest = anyio.run(_blocked, functools.partial(_run_input, typed, name, value))
        print(f"; {elapsed:.3f} s, event loop blocked {longest:.3f} s")
        elapsed, longest = anyio.run(_blocked, functools.partial(_run_reply, replied, name))
        print(f"; {elapsed:.3f} s, event loop blocked {longest:.3f} s")


CURRENT: list[Any] = [None]


async def _live() -> None:
    keys = [f"trace-{i}" for i in range(3000)]
    sampled = sum(sample_point(k) < 0.3 for k in keys)
    scored: list[Any] = []
    live = LiveScorer(scorers=[_judged(0.01)], sampling=RatioSampling(rate=0.3),
                      sink=scored.append, on_error=lambda error: None)
    start = time.perf_counter()
    async with live_scoring():
        for i, key in enumerate(keys):
            live.submit(input=i, output="o", trace_id=key)
    elapsed = time.perf_counter() - start
    stats = live.stats
    print(f"  3,000 submits at rate 0.3 (default limits): {sampled} sampled, {len(scored)} "
          f"scored, {stats.dropped} dropped, sampled out: "
          f"{getattr(stats, 'sampled_out', 'not counted')}; {elapsed:.2f} s")


def live() -> None:
    print("live")
    anyio.run(_live)


PARTS = {"trials": trials, "validation": validation, "live": live}

if __name__ == "__main__":
    if sys.argv[1:2] == ["trials-memory"]:
        anyio.run(_trials_memory, int(sys.argv[2]), float(sys.argv[3]))
    else:
        for part in sys.argv[1:] or list(PARTS):
            PARTS[part]()
