"""Benchmark: the discrete reply against the probability-weighted score, on the bundled model.

The 50 labelled items of ``benchmarks/data/real_judge.jsonl`` (25 questions, each answered once
faithfully and once not) go through one yes/no faithfulness step judged by the bundled
SmolLM2-135M model (``LocalModel``, in process, greedy), read two ways:

- ``reply``: the verdict the judge wrote (yes → 1.0, no → 0.0);
- ``probabilities``: ``ScorePromptStep(score_from="probabilities", verdicts={"yes": 1.0,
  "no": 0.0})``: the probability-weighted verdict, with the chosen verdict's probability as
  the confidence.

It prints, per reading: runs scored / not scorable / failed; agreement with the labels (a
score >= 0.5 reads "faithful"); and for the probabilities the expected calibration error of
the confidence (10 equal-width bins: the mean |accuracy - confidence| of the chosen verdict,
weighted by the bin's share) and the agreement among the runs above each confidence floor
(what a cascade's first tier would decide, and its share).

With ``--parts cascade`` it measures a two-tier cascade against its last tier alone, on the
same items and model (one local model, so the panel's members differ by prompt and sampling):

- tier 0, ``cheap``: the probabilities reading above (greedy), deciding a run when its
  confidence is at least ``--min-confidence`` (0.9 by default);
- tier 1, ``panel``: a majority vote (pass at 0.5) of three members reading the reply's
  verdict: ``strict`` (the prompt above, greedy), ``support`` (asks whether the context
  supports every statement; temperature 0.7, seed 1) and ``invent`` (asks whether the answer
  adds anything the context does not say, "no" being faithful; temperature 0.7, seed 2).

Both run through ``run_evals`` (one item at a time, no judge cache, every call priced at a
nominal USD 0.15 / 0.60 per million input / output tokens, so that a dollar column exists: the
local model costs nothing but its time). Per tier it prints the runs reaching it, the share it
decided, its judge calls, tokens and cost, and its agreement with the labels on the runs it
decided; then, for the cascade and for the panel alone: runs decided, calls, tokens, cost,
agreement, agreement per dollar and per 1,000 tokens, and the wall time.

    .venv/bin/python benchmarks/confidence_real.py [--items 50] [--parts readings,cascade]
        [--min-confidence 0.9]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import anyio
from returns.result import Failure

from scorecore import (
    JudgeConfig,
    JudgeExecution,
    ModelSettings,
    ScorePromptStep,
    ScoreResult,
    create_scorer,
)
from scorecore.evals import run_evals
from scorecore.judge.economics import ModelPrice, Pricing
from scorecore.scorers import CascadeResult, cascade, panel

DATA = Path(__file__).parent / "data" / "real_judge.jsonl"
SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}},
          "required": ["verdict"], "additionalProperties": False}


_STRICT = ("Is every claim of the answer supported by the context? Reply with a JSON object "
           'whose "verdict" is "yes" or "no".')


def _prompt(item: dict[str, Any]) -> str:
    return _facts(item) + _STRICT


# The panel's other two wordings. "invent" asks the question the other way round, so its
# "no" is the faithful verdict.
_SUPPORT = ("Does the context support every statement of the answer? Reply with a JSON object "
            'whose "verdict" is "yes" or "no".')
_INVENT = ("Does the answer say anything that the context does not say? Reply with a JSON "
           'object whose "verdict" is "yes" or "no".')
# Nominal prices (USD per million input / output tokens) for the local model's calls.
_PRICE = ModelPrice(input=0.15, output=0.60)


def _facts(item: dict[str, Any]) -> str:
    context = "\n".join(item["context"])
    return f"Context:\n{context}\n\nQuestion: {item['question']}\nAnswer: {item['answer']}\n\n"


def _scorer(model: Any, score_from: str, *, scorer_id: str | None = None) -> Any:
    judge = JudgeConfig(model=model, instructions="You check answers against their context.",
                        model_settings=ModelSettings(max_output_tokens=16))
    extra: dict[str, Any] = (
        {"score_from": "probabilities", "verdicts": {"yes": 1.0, "no": 0.0}}
        if score_from == "probabilities"
        else {"calculate_score": lambda ctx: 1.0 if ctx.judge_output["verdict"] == "yes" else 0.0}
    )
    return create_scorer(id=scorer_id or f"faithful-{score_from}", description="d",
                         judge=judge).generate_score(
        ScorePromptStep(description="faithful", output_schema=SCHEMA,
                        create_prompt=lambda ctx: _prompt(ctx.run.input), **extra))


def _ece(points: list[tuple[float, bool]], bins: int = 10) -> float:
    total = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(c, ok) for c, ok in points if low < c <= high or (b == 0 and c == 0.0)]
        if inside:
            accuracy = sum(ok for _, ok in inside) / len(inside)
            confidence = sum(c for c, _ in inside) / len(inside)
            total += len(inside) / len(points) * abs(accuracy - confidence)
    return total


def _member(model: Any, member_id: str, ask: str, *, faithful: str, temperature: float,
            seed: int) -> Any:
    """A panel member: the reply's verdict read, ``faithful`` the verdict that scores 1."""
    judge = JudgeConfig(model=model, instructions="You check answers against their context.",
                        model_settings=ModelSettings(max_output_tokens=16,
                                                     temperature=temperature, seed=seed))
    return create_scorer(id=member_id, description="d", judge=judge).generate_score(
        ScorePromptStep(
            description=member_id, output_schema=SCHEMA,
            create_prompt=lambda ctx: _facts(ctx.run.input) + ask,
            calculate_score=lambda ctx: float(ctx.judge_output["verdict"] == faithful)))


def _panel(model: Any, panel_id: str) -> Any:
    return panel([
        _member(model, f"{panel_id}-strict", _STRICT, faithful="yes", temperature=0.0, seed=0),
        _member(model, f"{panel_id}-support", _SUPPORT, faithful="yes", temperature=0.7, seed=1),
        _member(model, f"{panel_id}-invent", _INVENT, faithful="no", temperature=0.7, seed=2),
    ], aggregate="majority", threshold=0.5, id=panel_id)


class _Tally:
    """Runs, calls, tokens and cost of one tier (or one whole scorer), and its agreement."""

    def __init__(self) -> None:
        self.runs = self.decided = self.agree = self.calls = self.tokens = 0
        self.cost = 0.0

    def add(self, executions: list[JudgeExecution]) -> None:
        for e in executions:
            self.calls += e.model_call_count
            usage = e.usage
            if usage is not None:
                self.tokens += (usage.input_tokens or 0) + (usage.output_tokens or 0)
            self.cost += e.cost_usd or 0.0

    def line(self, label: str, of: int) -> str:
        rate = self.agree / self.decided if self.decided else float("nan")
        per_usd = rate / self.cost if self.cost else float("nan")
        per_1k = rate / (self.tokens / 1000) if self.tokens else float("nan")
        return (f"{label:18} {self.runs:>4} {self.decided:>4} {self.decided / of:>6.0%} "
                f"{self.calls:>5} {self.tokens:>7} {self.cost:>10.6f} {rate:>9.2f} "
                f"{per_usd:>9.0f} {per_1k:>9.4f}")


async def _batch(
    rows: list[dict[str, Any]], scorer: Any
) -> tuple[list[tuple[str, ScoreResult[Any, Any]]], float]:
    """Each item's id and result (a failed run is printed and left out), and the time."""
    items = [{"id": row["id"], "input": row, "output": row["answer"]} for row in rows]
    started = time.perf_counter()
    report = await run_evals(items, [scorer], concurrency=1, keep_results=True,
                             max_failures=None, pricing=Pricing(models={_MODEL_ID: _PRICE}))
    took = time.perf_counter() - started
    results = []
    for item in report.results or ():
        (outcome,) = item.outcomes
        if outcome.result is None:
            print(f"  {item.item_id}: {outcome.status} {outcome.error}")
        else:
            results.append((str(item.item_id), outcome.result))
    return results, took


_MODEL_ID = "SmolLM2-135M-Instruct.Q4_1.gguf"


async def _cascade(model: Any, rows: list[dict[str, Any]], min_confidence: float) -> None:
    labels = {row["id"]: row["label"] == "faithful" for row in rows}
    cheap = _scorer(model, "probabilities", scorer_id="cheap")
    both = cascade(cheap, _panel(model, "panel"), min_confidence=min_confidence, id="cascade")
    tiers = [_Tally(), _Tally()]
    whole, alone = _Tally(), _Tally()
    results, took = await _batch(rows, both)
    for item_id, result in results:
        details = result.details_as(CascadeResult)
        assert details is not None
        executions = [e for step in result.judge.values() for e in step]
        # Tier 0 is one step asked once: the first execution is its, the rest the panel's.
        parts = [executions[:1], executions[1:]]
        whole.runs += 1
        whole.add(executions)
        for index in range(len(details.scorer_ids)):
            tiers[index].runs += 1
            tiers[index].add(parts[index])
        if details.tier is not None and result.score is not None:
            right = (result.score >= 0.5) == labels[item_id]
            for tally in (tiers[details.tier], whole):
                tally.decided += 1
                tally.agree += right
    results_alone, took_alone = await _batch(rows, _panel(model, "alone"))
    for item_id, result in results_alone:
        alone.runs += 1
        alone.add([e for step in result.judge.values() for e in step])
        if result.score is not None:
            alone.decided += 1
            alone.agree += (result.score >= 0.5) == labels[item_id]
    n = len(rows)
    print(f"\ncascade (min_confidence {min_confidence}) against the panel alone, {n} items")
    print(f"{'':18} {'runs':>4} {'dec.':>4} {'share':>6} {'calls':>5} {'tokens':>7} "
          f"{'cost USD':>10} {'agreement':>9} {'agr./USD':>9} {'agr./1k t':>9}")
    print(tiers[0].line("tier 0: cheap", n))
    print(tiers[1].line("tier 1: panel", n))
    print(whole.line("cascade", n) + f"   {took:.0f} s")
    print(alone.line("panel alone", n) + f"   {took_alone:.0f} s")


async def main(items: int, parts: list[str], min_confidence: float) -> None:
    from scorecore_adapters._guard import allow_model_requests  # noqa: PLC0415
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - the local extra

    rows = [json.loads(line) for line in DATA.read_text().splitlines()][:items]
    model = LocalModel(isolation="in_process")
    assert model.model_id == _MODEL_ID
    with allow_model_requests():
        if "cascade" in parts:
            await _cascade(model, rows, min_confidence)
        for score_from in ("reply", "probabilities") if "readings" in parts else ():
            scorer = _scorer(model, score_from)
            scored = unscorable = failed = agree = 0
            points: list[tuple[float, bool, bool]] = []
            started = time.perf_counter()
            for row in rows:
                outcome = await scorer.run(input=row, output=row["answer"])
                if isinstance(outcome, Failure):
                    failed += 1
                    continue
                result = outcome.unwrap()
                if result.score is None:
                    unscorable += 1
                    continue
                scored += 1
                faithful = row["label"] == "faithful"
                right = (result.score >= 0.5) == faithful
                agree += right
                if result.confidence is not None:
                    # The chosen verdict's correctness, for calibration.
                    points.append((result.confidence, right, True))
            took = time.perf_counter() - started
            print(f"{score_from:13}: {scored} scored, {unscorable} not scorable, {failed} failed;"
                  f" agreement {agree}/{scored} = {agree / max(scored, 1):.2f}; {took:.0f} s")
            if points:
                ece = _ece([(c, ok) for c, ok, _ in points])
                print(f"{'':13}  ECE of the confidence: {ece:.3f} over {len(points)} runs")
                for floor in (0.6, 0.7, 0.8, 0.9):
                    above = [ok for c, ok, _ in points if c >= floor]
                    share = len(above) / len(points)
                    rate = sum(above) / len(above) if above else float("nan")
                    print(f"{'':13}  confidence >= {floor}: {share:.0%} of runs, agreement "
                          f"{rate:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--parts", default="readings,cascade")
    parser.add_argument("--min-confidence", type=float, default=0.9)
    args = parser.parse_args()
    anyio.run(main, args.items, args.parts.split(","), args.min_confidence)
