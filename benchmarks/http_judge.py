"""Benchmark 5: the default HTTP judge client against an injected shared one, over real HTTP.

A loopback OpenAI-compatible provider (127.0.0.1, HTTP/1.1 keep-alive, a fixed latency per
reply) runs in a child process, so its work does not compete with the client for the GIL.
N items go through a scorer with one prompt step (``generate_score``) at a fixed
concurrency, once with the model a user gets by default —
``OpenAIChatModel("gpt-4o-mini", base_url=..., api_key=...)``, which owns its client — and
once with an ``httpx.AsyncClient`` injected and shared. The two are run alternately for a few
rounds; the best round of each is compared (other load on the machine only slows a round
down), and the client's CPU time per item is printed too. The target: the default within 10 % of the
shared client. RSS and open file descriptors are printed before and after each run, and the
TCP connections the provider accepted (one pool reused: tens; a client per request: one per
item).

    .venv/bin/python benchmarks/http_judge.py [--backend asyncio|trio] [--items N]
        [--concurrency C] [--latency SECONDS] [--rounds R]

Everything is bounded: N items per run, R rounds, and the provider process stops when the
benchmark tells it to, when the benchmark's end of the pipe closes, or after 10 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import resource
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any

import anyio
import httpx

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore_adapters.openai import OpenAIChatModel

API_KEY = "sk-benchmark-not-a-real-key"
_SERVER_LIFETIME = 600.0  # seconds: the provider process never outlives a stuck benchmark


def _reply_bytes() -> bytes:
    body = json.dumps({
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": json.dumps({"score": 1})},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }).encode()
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


async def _provider(latency: float, control: Connection) -> None:
    reply = _reply_bytes()
    stats = {"connections": 0, "requests": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stats["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                await reader.readexactly(length)
                await asyncio.sleep(latency)
                writer.write(reply)
                await writer.drain()
                stats["requests"] += 1
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # the client closed the connection
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    control.send(server.sockets[0].getsockname()[1])
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _SERVER_LIFETIME
    async with server:
        while loop.time() < deadline:
            await asyncio.sleep(0.05)
            try:
                if not control.poll():
                    continue
                command = control.recv()
            except (EOFError, OSError):
                return  # the benchmark went away
            if command == "stop":
                return
            control.send(dict(stats))  # "stats": counts so far


def _serve(latency: float, control: Connection) -> None:
    asyncio.run(_provider(latency, control))


@contextlib.contextmanager
def provider(latency: float) -> Any:
    """Start the provider process; yields ``(url, stats)`` where ``stats()`` asks its counts."""
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(latency, theirs), daemon=True)
    process.start()
    try:
        if not ours.poll(30):
            raise RuntimeError("the loopback provider did not start within 30 s")
        port = ours.recv()

        def stats() -> dict[str, int]:
            ours.send("stats")
            if not ours.poll(10):
                raise RuntimeError("the loopback provider did not answer within 10 s")
            counts: dict[str, int] = ours.recv()
            return counts

        yield f"http://127.0.0.1:{port}/v1", stats
    finally:
        with contextlib.suppress(OSError):
            ours.send("stop")
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)


def rss_mb() -> float:
    """Resident memory now (Linux ``/proc``), else the peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def cpu_seconds() -> float:
    """CPU time this process (not the provider) has used, user plus system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def open_fds() -> int:
    """Open file descriptors of this process (``-1`` where it cannot be told)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(folder))
    return -1


def scorer_for(model: OpenAIChatModel) -> Any:
    return create_scorer(
        id="judged", description="rated by a judge over HTTP",
        judge=JudgeConfig(model=model, instructions="Rate the answer."),
    ).generate_score(
        ScorePromptStep(description="rate", create_prompt=lambda ctx: f"Rate {ctx.run.output}")
    )


async def score_items(model: OpenAIChatModel, items: int, concurrency: int) -> float:
    """Seconds to score ``items`` items; every one must be scored."""
    data = ({"input": i, "output": f"answer {i}"} for i in range(items))
    start = time.perf_counter()
    report = await run_evals(data, [scorer_for(model)], concurrency=concurrency)
    elapsed = time.perf_counter() - start
    summary = report.summary("judged")
    if summary.scored != items:
        raise RuntimeError(f"only {summary.scored} of {items} items scored: {report}")
    return elapsed


@contextlib.asynccontextmanager
async def default_model(url: str) -> AsyncIterator[OpenAIChatModel]:
    async with OpenAIChatModel("gpt-4o-mini", base_url=url, api_key=API_KEY) as model:
        yield model


@contextlib.asynccontextmanager
async def shared_client_model(url: str) -> AsyncIterator[OpenAIChatModel]:
    async with httpx.AsyncClient() as client:
        yield OpenAIChatModel("gpt-4o-mini", base_url=url, api_key=API_KEY, client=client)


Setup = Callable[[str], contextlib.AbstractAsyncContextManager[OpenAIChatModel]]
SETUPS: dict[str, Setup] = {"default": default_model, "shared": shared_client_model}


def run_once(
    label: str, url: str, stats: Callable[[], dict[str, int]], args: argparse.Namespace
) -> tuple[float, float]:
    """One run in a fresh event loop; prints its figures, returns items/s and CPU ms/item."""

    async def main() -> float:
        async with SETUPS[label](url) as model:
            return await score_items(model, args.items, args.concurrency)

    rss, fds, before, cpu = rss_mb(), open_fds(), stats(), cpu_seconds()
    runner: Callable[[], Awaitable[float]] = main
    elapsed = anyio.run(runner, backend=args.backend)
    cpu_ms = (cpu_seconds() - cpu) * 1000 / args.items
    after = stats()
    rate = args.items / elapsed
    print(
        f"  {label:>7}: {rate:6,.0f} items/s ({elapsed:5.2f} s), CPU {cpu_ms:5.2f} ms/item   "
        f"RSS {rss:5.1f} -> {rss_mb():5.1f} MB   open fds {fds:3d} -> {open_fds():3d}   "
        f"TCP connections {after['connections'] - before['connections']:5d}"
    )
    return rate, cpu_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("SCORECORE_ALLOW_MODEL_REQUESTS", "1")  # loopback only

    ceiling = args.concurrency / args.latency if args.latency > 0 else float("inf")
    print(
        f"http_judge ({args.backend}): {args.items:,} items x {args.rounds} rounds, "
        f"concurrency {args.concurrency}, provider latency {args.latency * 1000:.0f} ms "
        f"(ceiling {ceiling:,.0f} items/s)"
    )
    best: dict[str, float] = dict.fromkeys(SETUPS, 0.0)
    least_cpu: dict[str, float] = dict.fromkeys(SETUPS, float("inf"))
    with provider(args.latency) as (url, stats):
        # A short warm-up of each, so neither pays for imports and first connections.
        for setup in SETUPS.values():
            async def warm_up(setup: Setup = setup) -> None:
                async with setup(url) as model:
                    await score_items(model, min(args.items, 200), args.concurrency)

            anyio.run(warm_up, backend=args.backend)
        for round_ in range(1, args.rounds + 1):
            print(f" round {round_}")
            for label in SETUPS:
                rate, cpu_ms = run_once(label, url, stats, args)
                best[label] = max(best[label], rate)
                least_cpu[label] = min(least_cpu[label], cpu_ms)
    ratio = best["default"] / best["shared"]
    verdict = "OK" if ratio >= 0.9 else "MISSED"
    print(
        f"  best round: default {best['default']:,.0f} items/s, shared {best['shared']:,.0f} "
        f"items/s, default/shared = {ratio:.1%}   target >= 90 %: {verdict}"
    )
    print(
        f"  least CPU: default {least_cpu['default']:.2f} ms/item, shared "
        f"{least_cpu['shared']:.2f} ms/item (less sensitive to other load on the machine)"
    )


if __name__ == "__main__":
    main()
