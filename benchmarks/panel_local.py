"""A jury of the bundled local model: three prompt variants of one judge, measured against labels.

Three members, each the in-process SmolLM2-135M judge (``LocalModel()``, grammar-constrained)
asked the same question — does the context back the answer? — in three wordings, each with
its own answer format:

- ``supported``: "Is every statement of the answer supported by the context?" → a bool
  (score 1 or 0);
- ``grade``: "Rate from 1 (contradicted) to 5 (fully backed)" → a ``Literal[1..5]``
  (score ``(grade - 1) / 4``);
- ``contradicts``: "Does the answer say anything the context contradicts or does not say?"
  → ``"yes"`` / ``"no"`` (score 0 for yes, 1 for no: the question is reversed).

They form ``panel([...], aggregate="median", threshold=0.5)``, run through ``run_evals`` over
the labelled set ``benchmarks/data/real_judge.jsonl`` (25 questions with their context, each
answered once faithfully and once not; label ``"faithful"`` or ``"unfaithful"``). Printed:
Krippendorff's alpha between the members (interval metric for the scores, nominal for the
pass/fail votes, each with its seeded bootstrap interval, from ``report.panels``), the items
the members disagree on most, ``calibrate`` of the panel and of each member against the labels
(binary: faithful = pass; Cohen's kappa and accuracy with intervals, the confusion matrix, the
fitted threshold), and the wall time, judge calls and tokens.

    .venv/bin/python benchmarks/panel_local.py [--items 50] [--concurrency 2]

Needs the ``local`` extra. The model runs one call at a time in process; concurrency above 1
overlaps the rest of the pipeline with it. A 135M model is a weak judge: the figures are a
measurement of it, not a recommendation.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import attrs

from scorecore import JudgeConfig, ModelSettings, PromptStep, Scorer, create_scorer
from scorecore.evals import Calibration, EvalReport, ScoreRow, calibrate, run_evals
from scorecore.evals.results import ScorerCalibration
from scorecore.evals.store import row_id
from scorecore.judge import JudgeModel
from scorecore.scorers import PanelResult, panel
from scorecore_adapters import allow_model_requests

DATA = Path(__file__).parent / "data" / "real_judge.jsonl"
PANEL_ID = "faithful-jury"
INSTRUCTIONS = "You check answers against a context. Answer in the JSON format asked for."


@attrs.frozen
class Supported:
    supported: bool
    """Whether the context supports every statement of the answer."""


@attrs.frozen
class Grade:
    grade: Literal[1, 2, 3, 4, 5]
    """1: the context contradicts the answer; 5: the context fully backs it."""


@attrs.frozen
class Contradiction:
    contradicts: Literal["yes", "no"]
    """Whether the answer says anything the context contradicts or does not say."""


def _facts(ctx: Any) -> str:
    return " ".join(ctx.run.extra["context"])


def _shown(ctx: Any) -> str:
    return (f"Context: {_facts(ctx)}\nQuestion: {ctx.run.input}\n"
            f"Answer: {ctx.run.output}")


def members(model: JudgeModel) -> list[Scorer[Any, Any]]:
    """The three prompt variants, each a one-call scorer on the same judge."""
    judge = JudgeConfig(model=model, instructions=INSTRUCTIONS,
                        model_settings=ModelSettings(max_output_tokens=32))
    supported = (
        create_scorer(id="supported", description="The context supports the answer",
                      judge=judge)
        .analyze(PromptStep(
            description="Is the answer supported?", output_type=Supported,
            create_prompt=lambda ctx: f"{_shown(ctx)}\n\nIs every statement of the answer "
                                      f"supported by the context?"))
        .generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result.supported else 0.0)
    )
    grade = (
        create_scorer(id="grade", description="How well the context backs the answer",
                      judge=judge)
        .analyze(PromptStep(
            description="Grade the answer", output_type=Grade,
            create_prompt=lambda ctx: f"{_shown(ctx)}\n\nRate the answer from 1 (the context "
                                      f"contradicts it) to 5 (the context fully backs it)."))
        .generate_score(lambda ctx: (ctx.results.analyze_step_result.grade - 1) / 4)
    )
    contradicts = (
        create_scorer(id="contradicts", description="The answer says nothing the context "
                      "does not", judge=judge)
        .analyze(PromptStep(
            description="Find a contradiction", output_type=Contradiction,
            create_prompt=lambda ctx: f"{_shown(ctx)}\n\nDoes the answer say anything that "
                                      f"the context contradicts or does not say?"))
        .generate_score(
            lambda ctx: 0.0 if ctx.results.analyze_step_result.contradicts == "yes" else 1.0)
    )
    return [supported, grade, contradicts]


def member_rows(report: EvalReport) -> list[ScoreRow]:
    """One row per member and item, from the panel's kept results, as if each member had
    been a scorer of the batch (so ``calibrate`` measures each member with the same labels)."""
    rows: list[ScoreRow] = []
    for result in report.results or ():
        for outcome in result.outcomes:
            panel = None if outcome.result is None else outcome.result.details_as(PanelResult)
            if panel is None:
                continue
            rows.extend(ScoreRow(
                id=row_id(result.run_id, m.scorer_id), scorer_id=m.scorer_id,
                run_id=result.run_id, batch_id=report.batch_id, status=m.status,
                score=m.score, dataset_item_id=result.item_id or f"#{result.index}")
                for m in panel.members)
    return rows


def _estimate(s: ScorerCalibration) -> str:
    fitted = s.fitted_threshold
    return (f"{s.scorer_id:<12} n={s.n:<3} kappa {s.kappa.describe():<24} "
            f"accuracy {s.accuracy.describe():<24} confusion {s.confusion.counts} "
            f"fitted threshold {fitted.threshold} (kappa {number(fitted.kappa)}, fitted on "
            f"these labels)")


def number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _alpha(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _usage(report: EvalReport) -> tuple[int, int, int]:
    """Judge calls, input and output tokens over every member's executions."""
    calls = tokens_in = tokens_out = 0
    for result in report.results or ():
        for outcome in result.outcomes:
            if outcome.result is None:
                continue
            for executions in outcome.result.judge.values():
                for e in executions:
                    calls += e.model_call_count
                    if e.usage is not None:
                        tokens_in += e.usage.input_tokens or 0
                        tokens_out += e.usage.output_tokens or 0
    return calls, tokens_in, tokens_out


async def run(items: int, concurrency: int) -> dict[str, Any]:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415  (the optional extra)

    data = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()][:items]
    labels: Mapping[str, bool] = {d["id"]: d["label"] == "faithful" for d in data}
    dataset = [{"id": d["id"], "input": d["question"], "output": d["answer"],
                "extra": {"context": d["context"]}} for d in data]
    jury = panel(members(LocalModel()), aggregate="median", threshold=0.5, id=PANEL_ID)
    started = time.perf_counter()
    with allow_model_requests():
        report = await run_evals(dataset, [jury], concurrency=concurrency, keep_results=True)
    wall = time.perf_counter() - started
    calls, tokens_in, tokens_out = _usage(report)
    summary = report.summary(PANEL_ID)
    print(f"{len(data)} items ({sum(labels.values())} labelled faithful), concurrency "
          f"{concurrency}: panel scored {summary.scored}, not scorable {summary.not_scorable}, "
          f"failed {summary.failed}; mean {summary.mean}")
    print(f"wall time {wall:.1f} s; {calls} judge calls ({calls / wall:.2f}/s); tokens "
          f"{tokens_in} in, {tokens_out} out")
    (agreement,) = report.panels
    print(f"alpha between members ({', '.join(agreement.members)}) over {agreement.units} "
          f"units: scores (interval) "
          f"{_alpha(agreement.alpha_interval, agreement.alpha_interval_ci)}, votes (nominal) "
          f"{_alpha(agreement.alpha_nominal, agreement.alpha_nominal_ci)}; all agreed on "
          f"{agreement.agreed} of {agreement.runs} runs")
    for d in agreement.most_disagreed[:5]:
        print(f"  disagree on {d.item_id}: spread {d.spread:.2f} "
              f"{ {m: round(s, 2) for m, s in d.scores.items()} }")
    jury_calibration: Calibration = calibrate(report, labels)
    member_calibration = calibrate(member_rows(report), labels)
    print("calibration against the labels (binary: faithful = pass, threshold 0.5, 95% "
          "bootstrap intervals, seed 0; confusion rows: label fail/pass, columns: judge "
          "fail/pass):")
    for s in (*jury_calibration.scorers, *member_calibration.scorers):
        print("  " + _estimate(s))
    return {
        "items": len(data), "wall seconds": wall, "calls": calls,
        "input tokens": tokens_in, "output tokens": tokens_out,
        "panel": agreement.to_json(),
        "calibration": [s.to_json() for s in (*jury_calibration.scorers,
                                              *member_calibration.scorers)],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = anyio.run(run, args.items, args.concurrency)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
