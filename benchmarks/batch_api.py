"""Batch judges on the protocol fakes: 10,000 items x 2 prompt steps, batched, priced, killed.

Runs one scorer with two judge steps (analyze with a schema, then the score) over ``--items``
items, three ways, on the same answers and token counts:

1. **synchronous**: ``OpenAIChatModel`` (``AnthropicModel``) against an in-process Chat
   Completions (Messages) fake answering with the batch fake's replies and token counts: one
   HTTP call per request, at the direct price;
2. **batch**: ``OpenAIBatchModel`` (or ``AnthropicBatchModel`` with ``--provider anthropic``)
   against the Batch API fake, in virtual time: the fake takes ``--processing`` seconds per
   batch, the judge polls every ``--poll`` seconds; a batch closes at ``--batch-size``
   requests or ``--max-wait`` seconds after its first;
3. **killed and resumed**: the batch run killed at its ``--kill-at``-th HTTP exchange with
   the provider, every object abandoned, and run again on the same cache file.

Prints, per run: provider batches, requests submitted (and how many were duplicates), judge
cost and the batch savings, the wall time and the virtual time the waiting took; and for the
killed run what was submitted before and after the kill (resubmissions: custom ids or
(step, item) requests sent twice).

    .venv/bin/python benchmarks/batch_api.py [--items 10000] [--provider openai]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
from scorecore.evals import EvalReport, run_evals
from scorecore.judge.economics import Pricing
from scorecore_adapters import allow_model_requests
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.batch import AnthropicBatchModel, BatchJournal, OpenAIBatchModel
from scorecore_adapters.batch.fakes import (
    FakeAnthropicBatchAPI,
    FakeOpenAIBatchAPI,
    FakeReply,
    SimulatedKill,
)
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.testing import VirtualClock

CLAIMS = {"type": "object", "required": ["claims"],
          "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}
# gpt-4o-mini's list prices (USD per million tokens); batch_discount defaults to 0.5.
PRICING = Pricing.from_mapping({"judge-model": {"input": 0.15, "output": 0.60}})


def _item(body: Mapping[str, Any]) -> tuple[str, int]:
    text = json.dumps(body["messages"], ensure_ascii=False)
    n = int(text.split("answer ")[1].split('"')[0].split("\\")[0])
    return ("analyze" if "Claims in" in text else "score"), n


def answer(body: Mapping[str, Any]) -> FakeReply:
    step, n = _item(body)
    if step == "analyze":
        return json.dumps({"claims": [f"the answer names item {n}", "it is right"]})
    return json.dumps({"score": (n % 10) / 10})


def scorer(judge: Any) -> Any:
    return (
        create_scorer(id="judged", description="two judge steps",
                      judge=JudgeConfig(model=judge, instructions="You grade answers."))
        .analyze(PromptStep(description="claims", output_schema=CLAIMS,
                            create_prompt=lambda c: f"Claims in: {c.run.output}"))
        .generate_score(ScorePromptStep(description="score",
                                        create_prompt=lambda c: f"Score: {c.run.output}"))
    )


def items(n: int) -> list[dict[str, str]]:
    return [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(n)]


def _tokens(value: object) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def chat_fake(request: httpx.Request) -> httpx.Response:
    """Chat Completions with the batch fake's answers and token counts."""
    body = json.loads(request.content)
    reply = answer(body)
    assert isinstance(reply, str)
    return httpx.Response(200, json={
        "id": "chatcmpl", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": reply}}],
        "usage": {"prompt_tokens": _tokens(body["messages"]), "completion_tokens": _tokens(reply),
                  "total_tokens": _tokens(body["messages"]) + _tokens(reply)},
    })


def messages_fake(request: httpx.Request) -> httpx.Response:
    """Anthropic Messages with the batch fake's answers and token counts."""
    body = json.loads(request.content)
    reply = answer(body)
    assert isinstance(reply, str)
    forced = isinstance(body.get("tool_choice"), dict)
    content = ([{"type": "tool_use", "id": "toolu", "name": "respond",
                 "input": json.loads(reply)}] if forced else [{"type": "text", "text": reply}])
    return httpx.Response(200, json={
        "id": "msg", "type": "message", "role": "assistant", "model": body["model"],
        "content": content, "stop_reason": "tool_use" if forced else "end_turn",
        "usage": {"input_tokens": _tokens(body["messages"]), "output_tokens": _tokens(reply)},
    })


def cost_line(report: EvalReport) -> str:
    e = report.economics
    assert e is not None
    return f"cost ${e.cost_usd:.4f}, saved ${e.saved_usd:.4f}"


async def synchronous(
    n: int, concurrency: int, provider: str
) -> tuple[EvalReport, int, float]:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return chat_fake(request) if provider == "openai" else messages_fake(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        judge: OpenAIChatModel | AnthropicModel = (
            OpenAIChatModel("judge-model", api_key="sk-bench-key-000", client=client,
                            structured_output="json_schema")
            if provider == "openai"
            else AnthropicModel("judge-model", api_key="sk-bench-key-000", client=client))
        start = time.perf_counter()
        report = await run_evals(items(n), [scorer(judge)], pricing=PRICING,
                                 concurrency=concurrency)
    return report, calls, time.perf_counter() - start


class BatchWorld:
    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.clock = VirtualClock()
        self.path = folder / "cache.db"
        cls = FakeOpenAIBatchAPI if args.provider == "openai" else FakeAnthropicBatchAPI
        self.fake = cls(answer, clock=self.clock, processing_seconds=args.processing)

    async def run(self) -> EvalReport:
        cls = OpenAIBatchModel if self.args.provider == "openai" else AnthropicBatchModel
        judge = cls("judge-model", journal=BatchJournal(self.path), client=self.fake.client(),
                    api_key="sk-bench-key-000", clock=self.clock, sleep=self.clock.sleep,
                    max_batch_size=self.args.batch_size, max_wait=self.args.max_wait,
                    poll_interval=self.args.poll)
        async with SqliteJudgeCache(self.path) as cache:
            return await run_evals(items(self.args.items), [scorer(judge)], cache=cache,
                                   pricing=PRICING, concurrency=self.args.items)

    def asked(self) -> Counter[tuple[str, int]]:
        return Counter(_item(body) for batch in self.fake.batches.values()
                       for _, body in batch.lines)


def _report_batch(label: str, world: BatchWorld, report: EvalReport, wall: float) -> None:
    asked = world.asked()
    twice = sum(1 for count in asked.values() if count > 1)
    print(f"{label}: {len(world.fake.batches)} provider batch(es), "
          f"{len(world.fake.submitted)} request(s) submitted "
          f"({len(world.fake.duplicates())} duplicate custom id(s), {twice} request(s) sent "
          f"twice), {report.total_items} item(s); {cost_line(report)}; wall {wall:.1f} s, "
          f"virtual {world.clock():,.0f} s")


async def main(args: argparse.Namespace) -> None:
    n = args.items
    print(f"{n:,} items x 2 prompt steps = {2 * n:,} judge requests; provider {args.provider}; "
          f"batch size {args.batch_size}, max wait {args.max_wait:g} s, processing "
          f"{args.processing:g} s, poll {args.poll:g} s")
    sync, calls, wall = await synchronous(n, args.sync_concurrency, args.provider)
    print(f"synchronous: {calls:,} HTTP call(s); {cost_line(sync)}; wall {wall:.1f} s")
    with tempfile.TemporaryDirectory() as folder:
        world = BatchWorld(args, Path(folder))
        start = time.perf_counter()
        batch = await world.run()
        _report_batch("batch", world, batch, time.perf_counter() - start)
    assert sync.economics is not None
    assert batch.economics is not None
    ratio = (batch.economics.cost_usd or 0) / (sync.economics.cost_usd or 1)
    print(f"batch cost / synchronous cost = {ratio:.3f}")
    with tempfile.TemporaryDirectory() as folder:
        world = BatchWorld(args, Path(folder))
        world.fake.kill_at = args.kill_at
        world.fake.kill_after_processing = True
        start = time.perf_counter()
        try:
            await world.run()
        except* SimulatedKill:
            pass
        before = list(world.fake.submitted)
        batches_before = len(world.fake.batches)
        world.fake.restart()
        print(f"killed at HTTP exchange {args.kill_at} ({world.fake.calls[args.kill_at - 1]}, "
              f"after the provider acted): {batches_before} batch(es), {len(before):,} "
              f"request(s) submitted before the kill")
        resumed = await world.run()
        after = world.fake.submitted[len(before):]
        resent = len(set(after) & set(before))
        _report_batch("killed + resumed", world, resumed, time.perf_counter() - start)
        print(f"resumed run submitted {len(after):,} new request(s); resubmissions: {resent} "
              f"custom id(s), {sum(1 for c in world.asked().values() if c > 1)} request(s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--batch-size", type=int, default=5_000)
    parser.add_argument("--max-wait", type=float, default=60.0)
    parser.add_argument("--processing", type=float, default=1_800.0)
    parser.add_argument("--poll", type=float, default=60.0)
    parser.add_argument("--kill-at", type=int, default=5)
    parser.add_argument("--sync-concurrency", type=int, default=64)
    with allow_model_requests():
        anyio.run(main, parser.parse_args())
