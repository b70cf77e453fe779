"""Checked by ``mypy --strict``, never executed: the types of panels and pairwise judgements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_type

from returns.result import Result

from scorecore import AgentInput, AgentOutput, Scorer, ScoreResult, ScorerRunError, create_scorer
from scorecore.composite import CompositeDetails
from scorecore.evals import EvalReport, pairwise_summaries, panel_agreements
from scorecore.evals._stats._alpha import krippendorff_alpha
from scorecore.evals.results import PairwiseSummary, PanelAgreement
from scorecore.scorers import (
    TEXT,
    PairwiseResult,
    PanelFailed,
    PanelMember,
    PanelResult,
    answer_relevancy,
    faithfulness,
    pairwise,
    panel,
)
from scorecore_adapters.testing import ScriptedJudge

judges = [ScriptedJudge([]) for _ in range(3)]

# --- a panel of Scorer[AgentInput, AgentOutput] members is a Scorer[AgentInput, AgentOutput] ----

members: list[Scorer[AgentInput, AgentOutput]] = [
    faithfulness(judge, id=f"faithfulness-{i}") for i, judge in enumerate(judges)
]
jury = panel(members)
# Members from different factories, given inline, are inferred too.
assert_type(panel([faithfulness(judges[0], id="f"), answer_relevancy(judges[1], id="r")]),
            Scorer[AgentInput, AgentOutput])
assert_type(jury, Scorer[AgentInput, AgentOutput])
assert_type(panel(members, aggregate="majority", threshold=0.5, on_tie="not_scorable",
                  min_successful=2, replacements=[answer_relevancy(judges[0])]),
            Scorer[AgentInput, AgentOutput])


def trimmed_mean(scores: Sequence[float]) -> float:
    return sum(sorted(scores)[1:-1]) / max(1, len(scores) - 2)


assert_type(panel(members, aggregate=trimmed_mean), Scorer[AgentInput, AgentOutput])

plain = [create_scorer(id=f"p{i}", description="d").generate_score(lambda ctx: 1.0)
         for i in range(2)]
assert_type(panel(plain), Scorer[Any, Any])

panel(members, aggregate="mode")  # type: ignore[arg-type]
panel(members, on_tie="maybe")  # type: ignore[arg-type]


async def use_a_panel() -> None:
    result = await jury.run(input={"inputMessages": []}, output=[])
    assert_type(result, Result[ScoreResult[AgentInput, AgentOutput, Any, Any], ScorerRunError])
    value = result.unwrap()
    panel_result = value.details_as(PanelResult)
    assert_type(panel_result, PanelResult | None)
    if panel_result is not None:
        assert_type(panel_result.members, tuple[PanelMember, ...])
        assert_type(panel_result.std_dev, float | None)
        assert_type(panel_result.agreed, bool | None)
        assert_type(panel_result.tie, bool)
    error = result.failure()
    if isinstance(error.cause, PanelFailed):
        assert_type(error.cause.failures[0].scorer_id, str)


# --- pairwise: agent runs by default, strings with shape=TEXT --------------------------------

assert_type(pairwise(judges[0], criteria="helpfulness"), Scorer[AgentInput, AgentOutput])
assert_type(pairwise(judges[0], criteria="c", shape=TEXT, swap=False), Scorer[str, str])
pairwise(judges[0], criteria="c", on_position_bias="first")  # type: ignore[arg-type]
pairwise(judges[0])  # type: ignore[call-arg]


async def use_pairwise() -> None:
    scorer = pairwise(judges[0], criteria="c", shape=TEXT)
    result = (await scorer.run(input="q", output="a", extra={"baseline_output": "b"})).unwrap()
    verdict = result.details_as(PairwiseResult)
    assert_type(verdict, PairwiseResult | None)
    if verdict is not None:
        assert_type(verdict.consistent, bool)
    assert_type(result.details, CompositeDetails | None)
    result.details_as(str)  # type: ignore[type-var]


# --- the batch's trust values ------------------------------------------------------------------


def read(report: EvalReport) -> None:
    assert_type(report.panels, tuple[PanelAgreement, ...])
    assert_type(report.pairwise, tuple[PairwiseSummary, ...])
    # Runs the judge could not decide (position bias, a panel tie …), by kind.
    assert_type(report.undecided_runs, int)
    assert_type(report.scorers[0].undecided_by, Mapping[str, int])
    assert_type(panel_agreements([]), tuple[PanelAgreement, ...])
    assert_type(pairwise_summaries([]), tuple[PairwiseSummary, ...])
    assert_type(krippendorff_alpha([[1.0, None], [True]], level="nominal"), float | None)
    krippendorff_alpha([[1.0]], level="ordinal")  # type: ignore[arg-type]
