"""Per-run overhead of a scorer with four trivial function steps, against a hand-written floor.

Prints, in one process and on one backend:

- runs/s of a scorer of four trivial function steps (steps return small dicts, ``run_id``
  given) run one after another;
- runs/s of a minimal hand-written async pipeline doing the same four awaited calls and
  returning an attrs value in ``Success`` (no validation, no contexts: the floor);
- their ratio (scorer / hand-written); the target is >= 0.50;
- runs/s of the scorer 100 at a time (anyio task group) and the peak traced memory.

Each figure is the best of ``--repeats`` rounds of ``--runs`` runs, the rounds of the two
pipelines interleaved: on a shared machine short alternating rounds (a few milliseconds each)
give both pipelines the same chances of a quiet moment, so the ratio stays meaningful when the
load is not (0.51 on asyncio and 0.53 on trio at a load average of 6 on 2 cores).

Run: ``.venv/bin/python benchmarks/overhead.py [--runs N] [--backend asyncio|trio]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import final

import anyio
import attrs
from returns.result import Result, Success

from scorecore import create_scorer

SCORER = (
    create_scorer(id="trivial", description="four trivial function steps")
    .preprocess(lambda ctx: {"length": len(ctx.run.output)})
    .analyze(lambda ctx: {"short": ctx.results.preprocess_step_result["length"] < 10})
    .generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result["short"] else 0.5)
    .generate_reason(lambda ctx: f"score {ctx.score}")
)


@final
@attrs.frozen(kw_only=True)
class _Outcome:
    score: float
    reason: str
    preprocess: dict[str, int]
    analyze: dict[str, bool]


async def _h_preprocess(output: str) -> dict[str, int]:
    return {"length": len(output)}


async def _h_analyze(pre: dict[str, int]) -> dict[str, bool]:
    return {"short": pre["length"] < 10}


async def _h_score(analysis: dict[str, bool]) -> float:
    return 1.0 if analysis["short"] else 0.5


async def _h_reason(score: float) -> str:
    return f"score {score}"


async def hand_written(input: str, output: str, run_id: str) -> Result[_Outcome, str]:
    """The floor: four awaited calls and an attrs value in Success, nothing checked."""
    pre = await _h_preprocess(output)
    analysis = await _h_analyze(pre)
    score = await _h_score(analysis)
    reason = await _h_reason(score)
    return Success(_Outcome(score=score, reason=reason, preprocess=pre, analyze=analysis))


async def _scorer_runs(runs: int) -> float:
    run = SCORER.run
    start = time.perf_counter()
    for i in range(runs):
        result = await run(input="q", output="a", run_id=f"r{i}")
        assert result.unwrap().score == 1.0
    return time.perf_counter() - start


async def _hand_runs(runs: int) -> float:
    start = time.perf_counter()
    for i in range(runs):
        result = await hand_written("q", "a", f"r{i}")
        assert result.unwrap().score == 1.0
    return time.perf_counter() - start


async def _batched(runs: int, width: int = 100) -> float:
    async def one(i: int) -> None:
        result = await SCORER.run(input="q", output="a", run_id=f"r{i}")
        assert result.unwrap().score == 1.0

    start = time.perf_counter()
    for _ in range(runs // width):
        async with anyio.create_task_group() as tg:
            for i in range(width):
                tg.start_soon(one, i)
    return time.perf_counter() - start


async def _best(measure: Callable[[int], Awaitable[float]], runs: int, best: float) -> float:
    return min(best, await measure(runs))


async def main(runs: int, repeats: int) -> None:
    await _scorer_runs(2_000)  # warm up
    await _hand_runs(2_000)
    scorer = hand = batch = float("inf")
    for _ in range(repeats):
        scorer = await _best(_scorer_runs, runs, scorer)
        hand = await _best(_hand_runs, runs, hand)
    batch_rounds = max(3, repeats // 5)
    for _ in range(batch_rounds):
        batch = await _best(_batched, runs, batch)
    tracemalloc.start()
    await _scorer_runs(runs // 10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"scorer, sequential: {runs / scorer:,.0f} runs/s ({runs} runs, best of {repeats})")
    print(f"hand-written pipeline: {runs / hand:,.0f} runs/s ({runs} runs, best of {repeats})")
    print(f"ratio scorer / hand-written: {hand / scorer:.2f} (target >= 0.50)")
    print(f"scorer, 100 at a time: {runs / batch:,.0f} runs/s ({runs} runs, "
          f"best of {batch_rounds})")
    print(f"peak traced memory during {runs // 10} sequential runs: {peak / 1024:,.0f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    args = parser.parse_args()
    print(f"backend: {args.backend}")
    anyio.run(main, args.runs, args.repeats, backend=args.backend)
