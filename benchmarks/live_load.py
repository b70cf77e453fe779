"""Benchmark 6: a burst of live-scoring submits against a real HTTP judge, then a cancellation.

A burst of 3,000 ``LiveScorer.submit`` calls with a real HTTP judge once sent no request in
180 s, and cancelling took another 3 minutes. This drives the same burst through the
default ``OpenAIChatModel`` (it owns its client) against the loopback OpenAI-compatible
provider of ``benchmarks/http_judge.py`` (a child process on 127.0.0.1):

1. **drain**: N submits at once (the queue sized so all are accepted), then the
   ``live_scoring()`` block waits for them; prints how long ``submit`` took, when the first
   score arrived, the total time, items/s (the ceiling is max_concurrency / latency), the
   largest number of requests the provider had open at once, and the stats;
2. **cancel**: N submits against a slow provider, then the block is cancelled after a moment;
   prints how long leaving it took, and the stats.

    .venv/bin/python benchmarks/live_load.py [--backend asyncio|trio] [--submits N]
        [--max-concurrency K] [--latency SECONDS] [--slow-latency SECONDS]

``--max-concurrency N`` approximates the unbounded behaviour from before the fix.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

# benchmarks/ is not a package: reuse the loopback provider of its sibling http_judge.py.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_judge import API_KEY, open_fds, provider, rss_mb, scorer_for

from scorecore.live import LiveScorer, LiveStats, live_scoring
from scorecore_adapters.openai import OpenAIChatModel


async def drain(url: str, args: argparse.Namespace) -> None:
    """Submit the burst, let the block wait for every accepted call; print the figures."""
    first: list[float] = []

    def sink(record: Any) -> None:
        if not first:
            first.append(time.perf_counter())

    async with OpenAIChatModel("gpt-4o-mini", base_url=url, api_key=API_KEY) as model:
        live = LiveScorer(scorers=[scorer_for(model)], sink=sink,
                          max_concurrency=args.max_concurrency, max_queue=args.submits)
        start = time.perf_counter()
        async with live_scoring():
            accepted = sum(live.submit(input=i, output=f"answer {i}")
                           for i in range(args.submits))
            submitted = time.perf_counter()
        end = time.perf_counter()
    stats = live.stats
    print(f"  drain: {accepted:,} accepted; {args.submits:,} submits took "
          f"{(submitted - start) * 1000:.1f} ms in the caller")
    print(f"    first score after {(first[0] - start) if first else float('nan'):.3f} s, "
          f"all after {end - start:.2f} s = {stats.completed / (end - start):,.0f} items/s "
          f"(ceiling {args.max_concurrency / args.latency:,.0f})")
    print(f"    RSS {rss_mb():.1f} MB, open fds {open_fds()}")
    print(f"    {stats}")
    assert stats == LiveStats(submitted=args.submits, started=args.submits,
                              completed=args.submits), stats


async def cancel(url: str, args: argparse.Namespace) -> None:
    """Submit the burst against a slow provider, cancel the block; print how long exit took."""
    async with OpenAIChatModel("gpt-4o-mini", base_url=url, api_key=API_KEY) as model:
        live = LiveScorer(scorers=[scorer_for(model)], on_error=lambda error: None,
                          max_concurrency=args.max_concurrency, max_queue=args.submits)
        with anyio.CancelScope() as scope:
            async with live_scoring():
                for i in range(args.submits):
                    live.submit(input=i, output=f"answer {i}")
                await anyio.sleep(0.5)  # the requests are on the wire
                in_flight = live.stats.in_flight
                cancelled_at = time.perf_counter()
                scope.cancel()
        left = time.perf_counter() - cancelled_at
    print(f"  cancel: {in_flight} requests in flight; leaving the cancelled block took "
          f"{left * 1000:.1f} ms")
    print(f"    {live.stats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--submits", type=int, default=3_000)
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--slow-latency", type=float, default=30.0)
    args = parser.parse_args()
    os.environ.setdefault("SCORECORE_ALLOW_MODEL_REQUESTS", "1")  # loopback only
    print(f"live_load ({args.backend}): {args.submits:,} submits, max_concurrency "
          f"{args.max_concurrency}, provider latency {args.latency * 1000:.0f} ms")
    with provider(args.latency) as (url, _):
        anyio.run(drain, url, args, backend=args.backend)
    with provider(args.slow_latency) as (url, _):
        anyio.run(cancel, url, args, backend=args.backend)


if __name__ == "__main__":
    main()
