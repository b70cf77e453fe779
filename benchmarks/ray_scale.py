"""Benchmark: scorecore on Ray Data (1 and 2 actors) against in-process run_evals.

Three workloads, each timed end to end (score_dataset's wall time includes numbering the
dataset, the repeated-id pass, starting the actors and folding the report):

- cpu: a function scorer burning about 1 ms of CPU per item (2,000 and 4,000 items);
- judge: a judge answering after 50 ms, 64 items in flight per process (1,000 and 3,000);
- trivial: a scorer returning 1.0: the per-item framework overhead (the slope between 2,000 and
  12,000 items) and the fixed cost of one score_dataset call (one item).

Each workload runs at two sizes: items/s end to end at the larger, and the steady rate between
the two (the fixed cost cancels out), which is what a long run approaches.

Then 10,000 items with fake judges (a judge step, a not-scorable scorer, a repeated id, a
poison item) through two actors: the report must equal run_evals's exactly.

Rows go to PostgreSQL (several actors need a shared store):

    export SCORECORE_TEST_POSTGRES_DSN="$(bash .ci/postgres.sh)"
    .venv/bin/python benchmarks/ray_scale.py
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
import zlib
from typing import Any

import anyio
import attrs

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer, not_scorable
from scorecore.evals import EvalReport, run_evals
from scorecore_adapters.ray import items_dataset, score_dataset
from scorecore_adapters.storage import open_store
from scorecore_adapters.testing import FunctionJudge

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
LATENCY = 0.05
IN_FLIGHT = 64


def burn(ctx: Any) -> float:
    digest = str(ctx.run.output).encode()
    for _ in range(1_000):  # about 1 ms of CPU on this machine
        digest = hashlib.sha256(digest).digest()
    return digest[0] / 255


async def slow_reply(_: Any) -> Any:
    await anyio.sleep(LATENCY)
    return {"score": 1}


def cpu_scorers() -> list[Any]:
    return [create_scorer(id="cpu", description="1 ms of CPU").generate_score(burn)]


def judge_scorers() -> list[Any]:
    judge = JudgeConfig(model=FunctionJudge(slow_reply), instructions="Rate the answer.")
    return [create_scorer(id="judged", description="a 50 ms judge", judge=judge).generate_score(
        ScorePromptStep(description="rate", create_prompt=lambda ctx: f"Rate {ctx.run.output}"))]


def trivial_scorers() -> list[Any]:
    return [create_scorer(id="one", description="1.0").generate_score(lambda ctx: 1.0)]


def fake_judge(request: Any) -> Any:
    digest = zlib.crc32(request.messages[-1].content.encode())
    return {"claims": [f"c{i}" for i in range(digest % 5)]}


def exact(ctx: Any) -> Any:
    if ctx.run.ground_truth is None:
        return not_scorable("no ground truth")
    if ctx.run.input == "poison":
        raise RuntimeError("poisoned item")
    return float(ctx.run.output == ctx.run.ground_truth)


def equality_scorers() -> list[Any]:
    judge = JudgeConfig(model=FunctionJudge(fake_judge), instructions="Find claims.")
    claims = (
        create_scorer(id="claims", description="claims", judge=judge)
        .analyze(PromptStep(
            description="List claims",
            output_schema={"type": "object", "properties": {"claims": {
                "type": "array", "items": {"type": "string"}}}, "required": ["claims"]},
            create_prompt=lambda ctx: f"Claims in: {ctx.run.output}"))
        .generate_score(lambda ctx: 1.0 - len(ctx.results.analyze_step_result["claims"]) / 5)
    )
    return [claims, create_scorer(id="exact", description="exact").generate_score(exact)]


def items(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"input": f"q{i}", "output": f"answer {i % 11}",
         **({"id": f"i{i}"} if i % 3 else {}),
         **({"ground_truth": f"answer {i % 7}"} if i % 10 else {})}
        for i in range(n)
    ]
    out[n // 2] = {"input": "poison", "output": "x", "ground_truth": "x", "id": "poison"}
    out.append({"input": "again", "output": "y", "id": "i1"})  # a repeated id
    return out


def in_process(data: list[Any], factory: Any, concurrency: int) -> tuple[float, EvalReport]:
    async def run() -> EvalReport:
        assert DSN is not None
        async with open_store(DSN) as store:
            return await run_evals(data, factory(), concurrency=concurrency, store=store,
                                   batch_id=f"bench-{uuid.uuid4().hex[:8]}")

    start = time.perf_counter()
    report = anyio.run(run)
    return time.perf_counter() - start, report


def on_ray(data: list[Any], factory: Any, actors: int, in_flight: int,
           batch_id: str | None = None) -> tuple[float, EvalReport]:
    assert DSN is not None
    start = time.perf_counter()
    result = score_dataset(items_dataset(data), factory, store_url=DSN,
                           batch_id=batch_id or f"bench-{uuid.uuid4().hex[:8]}",
                           concurrency=actors, batch_size=max(64, 2 * in_flight),
                           judge_concurrency=in_flight)
    return time.perf_counter() - start, result.report


def workload(name: str, sizes: tuple[int, int], factory: Any, in_flight: int) -> None:
    """End-to-end items/s at the larger size, and the steady rate between the two sizes
    (what a long run approaches once the fixed cost is paid)."""
    small, large = sizes
    for actors in (0, 1, 2):
        times = []
        for n in sizes:
            data = [{"input": f"q{i}", "output": f"answer {i}"} for i in range(n)]
            if actors == 0:
                seconds, report = in_process(data, factory, in_flight)
            else:
                seconds, report = on_ray(data, factory, actors, in_flight)
            assert report.scorers[0].scored == n, report
            times.append(seconds)
        where = "in-process run_evals" if actors == 0 else f"ray, {actors} actor(s)"
        steady = (large - small) / max(times[1] - times[0], 1e-9)
        print(f"{name:6} {where:21}: {large / times[1]:7,.0f} items/s end to end "
              f"({large:,} items, {times[1]:.2f} s); steady {steady:7,.0f} items/s")


def main() -> None:
    if DSN is None:
        raise SystemExit("set SCORECORE_TEST_POSTGRES_DSN (bash .ci/postgres.sh prints one)")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray  # noqa: PLC0415 - after the environment is set

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    on_ray([{"input": 0, "output": 0}], trivial_scorers, 1, 1)  # warm the worker pool

    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    workload("cpu", (2_000, 4_000), cpu_scorers, 8)
    workload("judge", (1_000, 3_000), judge_scorers, IN_FLIGHT)
    print(f"judge ceiling per process: {IN_FLIGHT / LATENCY:,.0f} items/s "
          f"({IN_FLIGHT} in flight / {LATENCY * 1000:.0f} ms)")

    fixed = sorted(on_ray([{"input": 0, "output": 0}], trivial_scorers, 1, 1)[0]
                   for _ in range(3))[1]
    print(f"fixed cost of one score_dataset call (1 item, 1 actor, median of 3): {fixed:.2f} s")
    per_item = {}
    for actors in (0, 1):
        times = []
        for n in (2_000, 12_000):
            data = [{"input": i, "output": i} for i in range(n)]
            run = in_process if actors == 0 else lambda d, f, c: on_ray(d, f, 1, c)
            times.append(run(data, trivial_scorers, 8)[0])
        per_item[actors] = (times[1] - times[0]) / 10_000
    print(f"per-item cost, trivial scorer (slope between 2,000 and 12,000 items): in-process "
          f"{per_item[0] * 1e6:.0f} µs (store writes included), ray 1 actor "
          f"{per_item[1] * 1e6:.0f} µs; framework overhead of Ray "
          f"{(per_item[1] - per_item[0]) * 1e6:.0f} µs/item")

    data = items(10_000)
    batch = f"bench-{uuid.uuid4().hex[:8]}"
    seconds, report = on_ray(data, equality_scorers, 2, 32, batch_id=batch)
    expected = anyio.run(lambda: run_evals(data, equality_scorers(), batch_id=batch))
    same = attrs.evolve(report, duration=0.0) == attrs.evolve(expected, duration=0.0)
    print(f"10,000 items with fake judges, 2 actors: {seconds:.2f} s; report equals "
          f"run_evals's exactly: {same}")
    assert same, (report, expected)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
