"""A cached re-run: 10,000 items through a three-judge-step scorer, cold vs warm.

The judge is a fake with a fixed latency (``--latency``, real sleeps, default 20 ms) so the cold
run pays for judge calls the way a real batch does; the warm run reads every reply back from
the SQLite cache file. Prints items/s for a run without a cache, the cold run (asking and
storing) and the warm re-run (reading back), the judge calls each made, the warm run's CPU
time (what it costs whatever else the machine runs), and the cache's size on disk.

    .venv/bin/python benchmarks/cache.py [--items 10000] [--latency 0.02] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from returns.result import Success

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore_adapters.cache import SqliteJudgeCache

SCHEMA = {
    "type": "object", "required": ["claims"],
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
}


class LatencyJudge:
    model_id = "bench-judge"
    provider = "bench"
    supports_structured_output = False

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.calls += 1
        await anyio.sleep(self.latency)
        if request.step == "analyze":
            text = '{"claims": ["the answer names a city", "the city is right"]}'
        elif request.step == "generate_score":
            text = '{"score": 0.75}'
        else:
            text = "Two claims, both supported by the context; one detail is missing."
        return Success(JudgeResponse(text=text, usage=JudgeUsage(input_tokens=250,
                                                                 output_tokens=20)))


def build(judge: LatencyJudge) -> Any:
    return (
        create_scorer(id="bench", description="three judge steps",
                      judge=JudgeConfig(model=judge, instructions="You are a careful grader."))
        .analyze(PromptStep(description="claims", output_schema=SCHEMA,
                            create_prompt=lambda c: f"List the claims in: {c.run.output}"))
        .generate_score(ScorePromptStep(description="score",
                                        create_prompt=lambda c: f"Score: {c.run.output}"))
        .generate_reason(PromptStep(description="why",
                                    create_prompt=lambda c: f"Why {c.score}? {c.run.output}"))
    )


async def timed(
    items: int, concurrency: int, latency: float, cache: Any, judge: Any = None
) -> tuple[float, int, float]:
    """Wall seconds, judge calls and this process's CPU seconds for one batch (``judge``:
    another judge than a LatencyJudge of ``latency``)."""
    judge = LatencyJudge(latency) if judge is None else judge
    data = ({"id": f"q{i}", "input": f"question {i}", "output": f"answer number {i}"}
            for i in range(items))
    started, cpu = time.perf_counter(), time.process_time()
    report = await run_evals(data, [build(judge)], concurrency=concurrency, cache=cache)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert report.summary("bench").scored == items, report.summary("bench")
    return elapsed, judge.calls, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp()) / "cache.db"

    async def run() -> None:
        n, c, lat = args.items, args.concurrency, args.latency
        ideal = c / (3 * lat) if lat else 0
        print(f"{n:,} items x 3 judge steps, judge latency {lat * 1000:.0f} ms, "
              f"concurrency {c} (ideal without a cache: {ideal:,.0f} items/s)")
        plain, calls, _ = await timed(n, c, lat, None)
        print(f"no cache : {plain:7.2f} s  {n / plain:9,.0f} items/s  {calls:,} judge calls")
        async with SqliteJudgeCache(path) as cache:
            cold, calls, _ = await timed(n, c, lat, cache)
            print(f"cold     : {cold:7.2f} s  {n / cold:9,.0f} items/s  {calls:,} judge calls")
        async with SqliteJudgeCache(path) as cache:
            warm, calls, cpu = await timed(n, c, lat, cache)
            print(f"warm     : {warm:7.2f} s  {n / warm:9,.0f} items/s  {calls:,} judge calls "
                  f"({cold / warm:.1f}x the cold run)")
            # On a shared machine the wall time counts other jobs' turns; the CPU time does not.
            print(f"warm CPU : {cpu:7.2f} s  {n / cpu:9,.0f} items per CPU-second "
                  f"({cpu / (3 * n) * 1e6:.0f} µs per cached judge step)")
        size = sum(p.stat().st_size for p in path.parent.glob("cache.db*"))
        print(f"cache on disk: {size / 1e6:.1f} MB for {3 * n:,} replies "
              f"({size / (3 * n):,.0f} bytes each)")

    anyio.run(run)


if __name__ == "__main__":
    main()
