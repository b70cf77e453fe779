"""A pairwise judgement: which of two outputs for one input is better, asked in both orders.

A judge shown two answers tends to prefer one position. ``pairwise`` asks twice, the second
time with the answers swapped, and keeps a verdict only when both orders agree; a verdict that
follows the position is reported as ``position_bias``.

The run carries the answer to judge as ``output`` and the one to compare it with as
``baseline_output`` (an extra key of the run:
``scorer.run(..., extra={"baseline_output": ...})``, or a dataset item's ``baseline_output``),
structured into the same type as ``output``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, final

import attrs
from returns.result import Failure, Result, Success

from scorecore import (
    AgentInput,
    AgentOutput,
    InputMismatch,
    NotScorable,
    PromptStep,
    ReasonContext,
    Runtime,
    Scorer,
    ScoreResult,
    ScorerRun,
    ScorerRunError,
    StepContext,
    create_scorer,
)
from scorecore.composite import CompositeScorer, run_members, structure_value
from scorecore.scorers._details import PairwiseResult, PairwiseVerdict
from scorecore.scorers._members import (
    JudgeCalls,
    Member,
    MemberResult,
    MemberRun,
    Outcome,
    merged_judge,
)
from scorecore.scorers._shapes import RunShape, ShapeIn, ShapeOut, check_text, refuse, shape_of
from scorecore.scorers.llm._engine import Judge, judge_config, render
from scorecore.scorers.llm._reading import assistant_text, has_text, user_text

__all__ = ["OnPositionBias", "pairwise"]

OnPositionBias: TypeAlias = Literal["tie", "not_scorable"]
"""What a position-biased judgement gives: a tie (0.5, the default) or not scorable."""

_SCORES: Final[Mapping[str, float]] = {"win": 1.0, "loss": 0.0, "tie": 0.5}
_OUTCOME: Final[Mapping[PairwiseVerdict, Literal["win", "loss", "tie"]]] = {
    "output": "win", "baseline": "loss", "tie": "tie"}
_PERSONA: Final = ("You are an impartial judge comparing two responses to the same request. "
                   "The order the responses are shown in says nothing about their quality.")


@final
@attrs.frozen(kw_only=True)
class PairwiseReply:
    """The judge's reply: why, then which response better meets the criteria."""

    reason: str
    winner: Literal["A", "B", "tie"]


@final
@attrs.frozen(kw_only=True)
class Shown:
    """What one judge call is shown: the request and two responses, in this order."""

    question: str
    first: str
    second: str


_Ctx: TypeAlias = StepContext[Shown, None, None, None]


def _prompt(criteria: str, shown: Shown) -> str:
    data = [("RESPONSE_A", shown.first), ("RESPONSE_B", shown.second)]
    if has_text(shown.question):
        data.insert(0, ("REQUEST", shown.question))
    return render(
        task="Decide which of two responses to the same request better meets the criteria.",
        principles=[
            f"The criteria: {criteria}",
            "Judge the content only: neither the order of the responses nor their length "
            "makes one better.",
            "Answer tie when neither response is better by the criteria.",
        ],
        example=('Request: "Capital of France?" Response A: "Paris." Response B: "Lyon."\n'
                 'Reply: {"reason": "A names the capital; B is wrong.", "winner": "A"}'),
        data=data,
    )


def _judge_scorer(scorer_id: str, judge: Judge, criteria: str) -> Member:
    """One judge call on one order: its score is where the preferred response was shown
    (A 1.0, B 0.0, tie 0.5), its reason the judge's."""

    def score(ctx: StepContext[Any, Any, None, PairwiseReply]) -> float:
        return {"A": 1.0, "B": 0.0, "tie": 0.5}[ctx.results.analyze_step_result.winner]

    def reason(ctx: ReasonContext[Any, Any, None, PairwiseReply]) -> str:
        return ctx.results.analyze_step_result.reason

    def prompt(ctx: _Ctx) -> str:
        return _prompt(criteria, ctx.run.input)

    return (
        create_scorer(id=scorer_id, description="Which of two responses is better",
                      judge=judge_config(scorer_id, judge, _PERSONA))
        .analyze(PromptStep(description="Choose the better response", output_type=PairwiseReply,
                            create_prompt=prompt))
        .generate_score(score)
        .generate_reason(reason)
    )


def pairwise(
    judge: Judge, *, criteria: str, swap: bool = True, on_position_bias: OnPositionBias = "tie",
    shape: RunShape[ShapeIn, ShapeOut] | None = None, id: str = "pairwise-scorer",
) -> Scorer[ShapeIn, ShapeOut]:
    """Whether ``output`` is better than ``baseline_output`` for the same input (LLM-judged).

    The judge sees the input and both answers, labelled A and B, and names the better one by
    ``criteria`` (or a tie). With ``swap`` (the default) it is asked again with the answers
    swapped: consistent verdicts give 1.0 (``output`` wins), 0.0 (it loses) or 0.5 (a tie);
    verdicts that follow the position give ``position_bias``, scored as a tie (0.5) or, with
    ``on_position_bias="not_scorable"``, not scorable with the kind ``"position_bias"`` (the
    judge could not decide: a batch counts it against its failure budget, as a failed run).
    The result's ``pairwise`` holds the outcome and both verdicts; a batch's report gives the
    win rate and the share of position-biased items
    (:func:`scorecore.evals.pairwise_summaries`).

    The run needs ``baseline_output`` (``scorer.run(..., extra={"baseline_output": ...})``, or
    a dataset item's ``baseline_output``), of the same type as ``output``: agent messages by
    default, a ``str`` with ``shape=TEXT``. Not scorable without it or without text in either
    answer.

    >>> from scorecore_adapters.testing import FunctionJudge
    >>> def first_wins(request):  # a judge that always prefers response A
    ...     return {"reason": "A reads better", "winner": "A"}
    >>> from scorecore.scorers import TEXT
    >>> scorer = pairwise(FunctionJudge(first_wins), criteria="correctness", shape=TEXT)
    >>> result = scorer.run_sync(input="2+2?", output="4",
    ...                          extra={"baseline_output": "5"})
    >>> from scorecore.scorers import PairwiseResult
    >>> verdict = result.unwrap().details_as(PairwiseResult)
    >>> verdict.outcome, result.unwrap().score
    ('position_bias', 0.5)
    """
    chosen = check_text(id, "criteria", criteria)
    if not isinstance(swap, bool):
        raise refuse(id, "swap", "a bool", swap)
    if on_position_bias not in ("tie", "not_scorable"):
        raise refuse(id, "on_position_bias", "'tie' or 'not_scorable'", on_position_bias)
    runs = shape_of(id, shape)
    asker = _judge_scorer(id, judge, chosen)
    policy = _Pairwise(scorer_id=id, asker=asker, swap=swap, on_position_bias=on_position_bias,
                       text=runs == "text")
    scorer: Member = CompositeScorer(
        kind="pairwise", id=id, name="Pairwise Judge", members=(asker,), runner=policy.run,
        description=f"Whether the output is better than the baseline output: {chosen}",
        policy={"swap": swap, "on_position_bias": on_position_bias, "type": runs},
        shape=("agent", AgentInput, AgentOutput) if runs == "agent" else (None, str | None, str),
    )
    return scorer


@attrs.frozen(kw_only=True)
class _Pairwise:
    scorer_id: str
    asker: Member
    swap: bool
    on_position_bias: OnPositionBias
    text: bool

    async def run(self, run: MemberRun, runtime: Runtime) -> Outcome:
        if run.run_id is None:
            run = attrs.evolve(run, run_id=runtime.new_id())
        read = self._read(run)
        if isinstance(read, Failure):
            return Failure(ScorerRunError(
                scorer_id=self.scorer_id, failed_step="input", completed_steps=(),
                cause=read.failure(), partial=ScoreResult(run=run)))
        typed, question, answer, baseline = read.unwrap()
        missing = _missing(answer, baseline)
        if missing is not None or baseline is None:
            return Success(ScoreResult(run=typed, not_scorable=NotScorable(reason=missing)))
        orders = [Shown(question=question, first=answer, second=baseline)]
        if self.swap:
            orders.append(Shown(question=question, first=baseline, second=answer))
        outcomes = await run_members(
            [(self.asker, ScorerRun(input=shown, output=None, run_id=typed.run_id))
             for shown in orders], runtime)
        judge = merged_judge(outcomes)
        for outcome in outcomes:
            if isinstance(outcome, Failure):
                error = outcome.failure()
                return Failure(ScorerRunError(
                    scorer_id=self.scorer_id, failed_step=error.failed_step,
                    completed_steps=error.completed_steps, cause=error.cause,
                    partial=ScoreResult(run=typed, judge=judge)))
        results = [outcome.unwrap() for outcome in outcomes]
        return Success(self._verdict(typed, judge, results))

    def _read(
        self, run: MemberRun
    ) -> Result[tuple[MemberRun, str, str, str | None], InputMismatch]:
        """The run with typed input, output and baseline, and the texts the judge is shown."""
        given_baseline = run.extra.get("baseline_output")
        parts: list[tuple[Literal["input", "output", "baseline_output"], object, Any]]
        if self.text:
            parts = [("input", run.input, str | None), ("output", run.output, str),
                     ("baseline_output", given_baseline, str | None)]
        else:
            parts = [("input", run.input, AgentInput), ("output", run.output, AgentOutput),
                     ("baseline_output", given_baseline, AgentOutput | None)]
        typed: dict[str, Any] = {}
        mismatches: list[InputMismatch] = []
        for which, value, expected in parts:
            structured = structure_value(value, expected, which=which)
            if isinstance(structured, Success):
                typed[which] = structured.unwrap()
            else:
                mismatches.append(structured.failure())
        if mismatches:  # every bad field of every part at once
            errors = tuple(e for m in mismatches for e in m.errors)
            return Failure(attrs.evolve(mismatches[0], errors=errors))
        shaped = attrs.evolve(run, input=typed["input"], output=typed["output"])
        baseline = typed["baseline_output"]
        if self.text:
            return Success((shaped, typed["input"] or "", typed["output"],
                            baseline))
        return Success((shaped, user_text(typed["input"]), assistant_text(typed["output"]),
                        None if baseline is None else assistant_text(baseline)))

    def _verdict(
        self, run: MemberRun, judge: JudgeCalls,
        results: Sequence[MemberResult],
    ) -> MemberResult:
        forward = _verdict(results[0].score, swapped=False)
        swapped = _verdict(results[1].score, swapped=True) if len(results) > 1 else None
        outcome = (_OUTCOME[forward] if swapped is None or swapped == forward
                   else "position_bias")
        pair = PairwiseResult(outcome=outcome, forward=forward, swapped=swapped)
        reasons = [f"with the output shown first the judge preferred {forward}: "
                   f"{results[0].reason}"]
        if swapped is not None:
            reasons.append(f"with the baseline shown first it preferred {swapped}: "
                           f"{results[1].reason}")
        reason = f"{outcome.replace('_', ' ')}: " + "; ".join(reasons)
        if outcome == "position_bias" and self.on_position_bias == "not_scorable":
            return ScoreResult(run=run, judge=judge, details=pair,
                               not_scorable=NotScorable(reason=reason, kind="position_bias"))
        score = _SCORES[outcome] if outcome != "position_bias" else _SCORES["tie"]
        return ScoreResult(run=run, score=score, reason=reason, judge=judge, details=pair)


def _verdict(position_score: float | None, *, swapped: bool) -> PairwiseVerdict:
    """The verdict for ``output`` from where the preferred response was shown (1.0: first,
    0.0: second, 0.5: a tie); ``output`` was shown second when ``swapped``."""
    if position_score == 0.5:
        return "tie"
    first = position_score == 1.0
    return "output" if first != swapped else "baseline"


def _missing(answer: str, baseline: str | None) -> str | None:
    """Why the two answers cannot be compared, or ``None``."""
    if baseline is None:
        return ("no baseline_output: the run needs the output to compare with "
                "(scorer.run(..., extra={'baseline_output': ...}), or a dataset item's "
                "baseline_output)")
    if not has_text(answer):
        return "no answer: run.output has no text"
    if not has_text(baseline):
        return "no baseline answer: baseline_output has no text"
    return None
