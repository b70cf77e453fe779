"""cascade(): a cheap tier scores every run, the next tier only the runs it was unsure of."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
    from_mastra_json,
    not_scorable,
    to_mastra_json,
)
from scorecore.judge import JudgeRequest, JudgeResponse
from scorecore.scorers import CascadeResult, cascade
from scorecore_adapters.testing import FunctionJudge, ScriptedJudge, verdict_reply

pytestmark = pytest.mark.anyio


def sure(scorer_id: str, confidence_of: dict[str, float], calls: list[str] | None = None,
         ) -> Any:
    """A tier scoring 1.0 with, for each run output, the confidence given."""

    def answer(request: JudgeRequest) -> JudgeResponse:
        # The prompt, then the schema the core appends: the run's output is its first line.
        output = request.messages[-1].content.removeprefix("Pass? ").split("\n")[0]
        if calls is not None:
            calls.append(output)
        p = confidence_of[output]
        return verdict_reply({"score": 1}, {"1": p, "0": 1 - p}, chosen="1")

    judge = JudgeConfig(model=FunctionJudge(answer, model_id=scorer_id), instructions="Judge.")
    return create_scorer(id=scorer_id, description="d", judge=judge).generate_score(
        ScorePromptStep(description="pass", create_prompt=lambda ctx: f"Pass? {ctx.run.output}",
                        score_from="probabilities", verdicts={"1": 1.0, "0": 0.0}))


def fixed(scorer_id: str, score: float) -> Any:
    return create_scorer(id=scorer_id, description="d").generate_score(lambda ctx: score)


async def test_an_unsure_run_goes_to_the_next_tier_which_decides(anyio_backend: str) -> None:
    """Tier 0 below min_confidence: tier 1 decides; the result names it, keeps its confidence
    and every tier's judge executions."""
    scorer = cascade(sure("cheap", {"a": 0.6}), sure("strong", {"a": 0.95}), min_confidence=0.8)
    result = (await scorer.run(input="q", output="a")).unwrap()
    details = result.details_as(CascadeResult)
    assert details is not None
    assert (details.tier, details.scorer_ids, details.escalations) == (1, ("cheap", "strong"), 1)
    assert details.confidences == (pytest.approx(0.6), pytest.approx(0.95))
    assert result.confidence == pytest.approx(0.95)
    assert result.score == pytest.approx(0.95)
    assert [e.model_id for e in result.judge["generate_score"]] == ["cheap", "strong"]


async def test_a_sure_run_never_pays_for_the_next_tier(anyio_backend: str) -> None:
    """Tier 0 at or above min_confidence decides; tier 1's judge is never asked."""
    strong_calls: list[str] = []
    scorer = cascade(sure("cheap", {"a": 0.8}), sure("strong", {"a": 0.9}, strong_calls))
    result = (await scorer.run(input="q", output="a")).unwrap()
    details = result.details_as(CascadeResult)
    assert details is not None
    assert (details.tier, details.scorer_ids) == (0, ("cheap",))
    assert strong_calls == []


async def test_below_the_last_tier_the_run_is_not_scorable_low_confidence(
    anyio_backend: str
) -> None:
    """No tier sure enough: not scorable, kind low_confidence (the judges could not decide)."""
    scorer = cascade(sure("cheap", {"a": 0.6}), sure("strong", {"a": 0.7}), id="c")
    result = (await scorer.run(input="q", output="a")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert result.not_scorable.kind == "low_confidence"
    assert result.not_scorable.judge_undecided
    assert "cheap: 0.6 at confidence 0.60" in (result.not_scorable.reason or "")
    details = result.details_as(CascadeResult)
    assert details is not None
    assert (details.tier, details.escalations) == (None, 1)


async def test_a_judge_without_probabilities_escalates_and_a_run_that_does_not_apply_stops(
    anyio_backend: str
) -> None:
    """A tier's judge-undecided kind (no_logprobs) sends the run on; a step's own
    not_scorable (the run does not apply) is the cascade's answer."""
    no_logprobs = create_scorer(
        id="anthropic-like", description="d",
        judge=JudgeConfig(model=ScriptedJudge([{"score": 1}]), instructions="Judge."),
    ).generate_score(ScorePromptStep(description="p", create_prompt=lambda ctx: "Pass?",
                                     score_from="probabilities", verdicts={"1": 1.0}))
    result = (await cascade(no_logprobs, fixed("plain", 0.4)).run(
        input="q", output="a")).unwrap()
    assert result.score == 0.4  # a tier that measures no confidence is trusted
    assert result.details_as(CascadeResult).tier == 1  # type: ignore[union-attr]
    skip = create_scorer(id="skip", description="d").generate_score(
        lambda ctx: not_scorable("no ground truth"))
    result = (await cascade(skip, fixed("plain", 0.4)).run(input="q", output="a")).unwrap()
    assert result.not_scorable is not None
    assert result.not_scorable.reason == "no ground truth"
    assert result.details_as(CascadeResult).tier == 0  # type: ignore[union-attr]


async def test_a_failing_tier_fails_the_cascade_with_its_cause(anyio_backend: str) -> None:
    """A tier whose run fails ends the cascade's run: the error names the cascade."""
    broken = create_scorer(id="broken", description="d").generate_score(
        lambda ctx: 1 / 0)  # raises on purpose
    failure = (await cascade(broken, fixed("plain", 0.4), id="c").run(
        input="q", output="a")).failure()
    assert failure.scorer_id == "c"
    assert failure.cause.kind == "step_raised"
    assert failure.partial.details_as(CascadeResult).tier is None  # type: ignore[union-attr]


async def test_a_tier_failing_after_an_escalation_keeps_every_tier_s_judge_calls(
    anyio_backend: str
) -> None:
    """The failure's partial result holds the judge executions of the tier escalated past
    and of the failing tier, in tier order, and a cost for each of them."""
    failing = create_scorer(
        id="failing", description="d",
        judge=JudgeConfig(model=ScriptedJudge([], model_id="strong"), instructions="Judge."),
    ).generate_score(ScorePromptStep(description="p", create_prompt=lambda ctx: "Pass?"))
    failure = (await cascade(sure("cheap", {"a": 0.6}), failing, id="c").run(
        input="q", output="a")).failure()
    assert failure.cause.kind == "judge_failed"
    assert [e.model_id for e in failure.partial.judge["generate_score"]] == ["cheap", "strong"]
    details = failure.partial.details_as(CascadeResult)
    assert details is not None
    assert (details.scorer_ids, len(details.costs)) == (("cheap", "failing"), 2)


# Confidences on a grid of 0.05 and floors between its points: a judge's probability read
# back through exp(log p) is off by rounding, which must not decide a tie the oracle reads.
_grid = st.integers(1, 19).map(lambda n: n / 20)


@settings(max_examples=30, deadline=None)
@given(
    confidences=st.lists(st.lists(_grid, min_size=3, max_size=3), min_size=1, max_size=8),
    min_confidence=st.integers(0, 19).map(lambda n: n / 20 + 0.025),
)
async def test_every_run_is_decided_by_one_tier_or_escalated_past_the_last(
    confidences: list[list[float]], min_confidence: float
) -> None:
    """Law: each run is decided by the first tier sure enough (the oracle), else not
    scorable; decided runs plus escalations account for every run that reached each tier."""
    outputs = [f"o{i}" for i in range(len(confidences))]
    calls: list[list[str]] = [[], [], []]
    tiers = [sure(f"t{t}", {o: row[t] for o, row in zip(outputs, confidences, strict=True)},
                  calls[t]) for t in range(3)]
    scorer = cascade(*tiers, min_confidence=min_confidence)
    decided = [0, 0, 0]
    undecided = 0
    for output, row in zip(outputs, confidences, strict=True):
        result = (await scorer.run(input="q", output=output)).unwrap()
        details = result.details_as(CascadeResult)
        assert details is not None
        oracle = next((t for t, c in enumerate(row) if c >= min_confidence), None)
        assert details.tier == oracle
        if details.tier is None:
            undecided += 1
            assert result.not_scorable is not None
            assert result.not_scorable.kind == "low_confidence"
        else:
            decided[details.tier] += 1
    reached = [len(c) for c in calls]
    assert reached[0] == len(outputs)
    for t in range(3):
        escalated = reached[t + 1] if t < 2 else undecided
        assert decided[t] + escalated == reached[t]


async def test_the_details_round_trip_through_mastra_json(anyio_backend: str) -> None:
    """Mastra's JSON keeps the cascade's details under "cascade" and reads them back."""
    result = (await cascade(sure("cheap", {"a": 0.6}), fixed("plain", 0.4)).run(
        input="q", output="a")).unwrap()
    data = to_mastra_json(result)
    assert data["cascade"]["tier"] == 1
    assert from_mastra_json(data).details == result.details


async def test_each_tier_keeps_its_own_judge_cost_and_old_details_still_read(
    anyio_backend: str,
) -> None:
    """``costs`` has one entry per tier that ran (priced: see the batch tests of
    ``report.cascades``); details written before ``costs`` existed read back with none."""
    result = (await cascade(sure("cheap", {"a": 0.6}), sure("strong", {"a": 0.9})).run(
        input="q", output="a")).unwrap()
    details = result.details_as(CascadeResult)
    assert details is not None
    # Unpriced here (no pricing): each tier ran, and each counts 0.
    assert details.costs == (0.0, 0.0)
    old = {k: v for k, v in details.to_json().items() if k != "costs"}
    assert CascadeResult.from_json(old).costs == ()


@pytest.mark.parametrize(("tiers", "kwargs", "field"), [
    ((), {}, "tiers"),
    (("not a scorer",), {}, "tiers"),
    ((fixed("a", 1.0), fixed("a", 0.0)), {}, "members"),
    ((fixed("a", 1.0),), {"min_confidence": 1.5}, "min_confidence"),
    ((fixed("a", 1.0),), {"min_confidence": True}, "min_confidence"),
])
def test_a_wrong_cascade_is_refused_naming_the_field(
    tiers: tuple[Any, ...], kwargs: dict[str, Any], field: str
) -> None:
    """Misuse raises when the cascade is built, naming the field."""
    with pytest.raises(ScorerDefinitionError) as raised:
        cascade(*tiers, **kwargs)
    assert raised.value.field == field
