"""The warm-cache re-run against the floors it is compared with, measured in one process.

Four figures, their rounds interleaved so that on a shared machine each gets the same chances
of a quiet moment:

- **warm**: items/s of ``run_evals`` over ``--items`` items through a scorer of three prompt
  steps (``benchmarks/cache.py``'s scorer), every reply read back from a SQLite cache file
  filled once before the rounds, and its CPU time per prompt step;
- **instant**: the same run without a cache against an in-process judge that answers at once
  (no sleep): what the run costs when the judge and the cache cost nothing;
- **minimal pipeline**: runs/s of ``benchmarks/overhead.py``'s hand-written four-call async
  pipeline (the floor), best of many short rounds;
- **function steps**: runs/s of ``benchmarks/overhead.py``'s scorer of four function steps,
  best of the same rounds, as a ratio of the minimal pipeline;
- **one prompt step**: the CPU time of one prompt step, from 200 runs of the scorer one after
  another (``Scorer.run``, no ``run_evals``), warm from an in-memory cache and against the
  instant judge without a cache, best of many rounds: the prompt step's own cost, which the
  load of a shared machine inflates least.

The warm figure is also given per 1,000 minimal-pipeline runs/s, a figure that changes less
from one machine (and one load) to another than items/s do. The warm and instant figures are
the median of ``--rounds`` rounds.

    .venv/bin/python benchmarks/warm_path.py [--items 10000] [--rounds 3] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from returns.result import Success

sys.path.insert(0, str(Path(__file__).parent))

from cache import LatencyJudge, build, timed
from overhead import _hand_runs, _scorer_runs

from scorecore import Runtime
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import JudgeMeter
from scorecore_adapters.cache import MemoryJudgeCache, SqliteJudgeCache

_ANSWERS = {
    "analyze": '{"claims": ["the answer names a city", "the city is right"]}',
    "generate_score": '{"score": 0.75}',
}
_REASON = "Two claims, both supported by the context; one detail is missing."


class InstantJudge(LatencyJudge):
    """``cache.py``'s judge, answering the same replies without waiting at all."""

    def __init__(self) -> None:
        super().__init__(0.0)

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.calls += 1
        text = _ANSWERS.get(request.step, _REASON)
        return Success(JudgeResponse(text=text, usage=JudgeUsage(input_tokens=250,
                                                                 output_tokens=20)))


async def _batch(items: int, concurrency: int, cache: Any) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and judge calls of one batch against an instant judge."""
    elapsed, calls, cpu = await timed(items, concurrency, 0.0, cache, InstantJudge())
    return elapsed, cpu, calls


async def _floors(rounds: int, runs: int = 1_000) -> tuple[float, float]:
    """Best seconds for ``runs`` runs of the hand-written pipeline and of the scorer."""
    hand = scorer = float("inf")
    for _ in range(rounds):
        hand = min(hand, await _hand_runs(runs))
        scorer = min(scorer, await _scorer_runs(runs))
    return hand, scorer


async def _one_step(rounds: int, runs: int = 200) -> tuple[float, float]:
    """Best CPU µs per prompt step, sequential runs: warm (memory cache), instant judge."""
    scorer = build(InstantJudge())
    runtime = Runtime(meter=JudgeMeter(cache=MemoryJudgeCache()))
    warm = instant = float("inf")
    for round_ in range(rounds + 1):
        for cached in (True, False):
            started = time.process_time()
            for i in range(runs):
                await scorer.run(input=f"question {i}", output=f"answer number {i}",
                                 run_id=f"r{i}", runtime=runtime if cached else None)
            spent = (time.process_time() - started) / (3 * runs) * 1e6
            if not round_:
                continue  # the first round fills the cache
            if cached:
                warm = min(warm, spent)
            else:
                instant = min(instant, spent)
    return warm, instant


async def main(items: int, rounds: int, concurrency: int) -> None:
    path = Path(tempfile.mkdtemp()) / "cache.db"
    async with SqliteJudgeCache(path) as cache:
        _, _, calls = await _batch(items, concurrency, cache)
    assert calls == 3 * items, calls
    await _floors(20)  # warm up
    warm: list[float] = []
    warm_cpu: list[float] = []
    instant: list[float] = []
    instant_cpu: list[float] = []
    hand = scorer = float("inf")
    for _ in range(rounds):
        async with SqliteJudgeCache(path) as cache:
            elapsed, cpu, calls = await _batch(items, concurrency, cache)
        assert calls == 0, f"the warm run asked the judge {calls} times"
        warm.append(items / elapsed)
        warm_cpu.append(cpu)
        round_hand, round_scorer = await _floors(30)
        hand, scorer = min(hand, round_hand), min(scorer, round_scorer)
        elapsed, cpu, _ = await _batch(items, concurrency, None)
        instant.append(items / elapsed)
        instant_cpu.append(cpu)
        round_hand, round_scorer = await _floors(30)
        hand, scorer = min(hand, round_hand), min(scorer, round_scorer)
    step_warm, step_instant = await _one_step(30 * rounds)
    warm_rate, instant_rate = statistics.median(warm), statistics.median(instant)
    minimal = 1_000 / hand
    # On a shared machine the wall time counts other jobs' turns; the CPU time does not.
    cpu, cpu_instant = statistics.median(warm_cpu), statistics.median(instant_cpu)
    print(f"{items:,} items x 3 prompt steps, concurrency {concurrency}, "
          f"median of {rounds} rounds")
    print(f"warm, SQLite cache : {warm_rate:8,.0f} items/s "
          f"({', '.join(f'{r:,.0f}' for r in warm)}); {items / cpu:,.0f} items per "
          f"CPU-second, {cpu / (3 * items) * 1e6:.1f} µs per prompt step (whole run)")
    print(f"instant judge      : {instant_rate:8,.0f} items/s "
          f"({', '.join(f'{r:,.0f}' for r in instant)}); {items / cpu_instant:,.0f} items per "
          f"CPU-second; warm / instant {warm_rate / instant_rate:.2f}")
    print(f"minimal pipeline   : {minimal:8,.0f} runs/s (best of {60 * rounds} rounds of "
          f"1,000 runs)")
    print(f"warm per 1,000 minimal-pipeline runs/s: {warm_rate / minimal * 1_000:.1f} "
          f"(per CPU-second: {items / cpu / minimal * 1_000:.1f})")
    print(f"function steps     : {1_000 / scorer:8,.0f} runs/s; ratio to the minimal "
          f"pipeline {hand / scorer:.2f}")
    print(f"one prompt step    : {step_warm:.1f} µs CPU warm (memory cache), {step_instant:.1f} µs "
          f"against the instant judge (best of {30 * rounds} rounds of 200 runs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    anyio.run(main, args.items, args.rounds, args.concurrency)
