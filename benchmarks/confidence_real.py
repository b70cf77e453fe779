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

    .venv/bin/python benchmarks/confidence_real.py [--items 50]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import anyio
from returns.result import Failure

from scorecore import JudgeConfig, ModelSettings, ScorePromptStep, create_scorer

DATA = Path(__file__).parent / "data" / "real_judge.jsonl"
SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}},
          "required": ["verdict"], "additionalProperties": False}


def _prompt(item: dict[str, Any]) -> str:
    context = "\n".join(item["context"])
    return (f"Context:\n{context}\n\nQuestion: {item['question']}\nAnswer: {item['answer']}\n\n"
            "Is every claim of the answer supported by the context? Reply with a JSON object "
            'whose "verdict" is "yes" or "no".')


def _scorer(model: Any, score_from: str) -> Any:
    judge = JudgeConfig(model=model, instructions="You check answers against their context.",
                        model_settings=ModelSettings(max_output_tokens=16))
    extra: dict[str, Any] = (
        {"score_from": "probabilities", "verdicts": {"yes": 1.0, "no": 0.0}}
        if score_from == "probabilities"
        else {"calculate_score": lambda ctx: 1.0 if ctx.judge_output["verdict"] == "yes" else 0.0}
    )
    return create_scorer(id=f"faithful-{score_from}", description="d", judge=judge).generate_score(
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


async def main(items: int) -> None:
    from scorecore_adapters._guard import allow_model_requests  # noqa: PLC0415
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - the local extra

    rows = [json.loads(line) for line in DATA.read_text().splitlines()][:items]
    model = LocalModel(isolation="in_process")
    with allow_model_requests():
        for score_from in ("reply", "probabilities"):
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
    anyio.run(main, parser.parse_args().items)
