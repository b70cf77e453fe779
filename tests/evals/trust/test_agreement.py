"""Krippendorff's alpha against the ``krippendorff`` package and a textbook example; the batch's
agreement and pairwise summaries from run_evals and from stored rows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import JudgeConfig, ScorePromptStep, Scorer, create_scorer
from scorecore.evals import pairwise_summaries, panel_agreements, run_evals
from scorecore.evals._stats._alpha import krippendorff_alpha
from scorecore.evals._stats._bootstrap import bootstrap_interval
from scorecore.judge import JudgeRequest
from scorecore.scorers import TEXT, pairwise, panel
from scorecore_adapters.testing import FunctionJudge, InMemoryScoreStore

krippendorff = pytest.importorskip("krippendorff", reason="a dev dependency, the reference")
np = pytest.importorskip("numpy", reason="what krippendorff computes with")


def reference(data: list[list[Any]], level: str) -> float | None:
    """The krippendorff package's alpha of coders by units data (None: missing)."""
    matrix = np.array([[np.nan if v is None else float(v) for v in coder] for coder in data])
    try:
        # 0/0 when the pairable values all agree: nan, which is alpha undefined (our None).
        with np.errstate(invalid="ignore", divide="ignore"):
            value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    except ValueError:  # it refuses data with one value only
        return None
    return None if math.isnan(value) else float(value)


def units_of(data: list[list[Any]]) -> list[list[Any]]:
    """Coders by units → per unit, its values."""
    return [list(unit) for unit in zip(*data, strict=True)]


def assert_alpha_is_the_reference(
    data: list[list[Any]], level: Literal["interval", "nominal"]
) -> None:
    """Our alpha is the package's to 1e-9; where ours is undefined, the package's is too, or no
    unit has two values."""
    ours = krippendorff_alpha(units_of(data), level=level)
    theirs = reference(data, level)
    if ours is None:
        assert theirs is None or not any(len([v for v in u if v is not None]) >= 2
                                         for u in units_of(data))
    else:
        assert theirs is not None
        assert ours == pytest.approx(theirs, abs=1e-9)


@st.composite
def reliability_data(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> list[list[Any]]:
    coders = draw(st.integers(2, 5))
    units = draw(st.integers(1, 25))
    cell = st.one_of(st.none(), values)
    return [[draw(cell) for _ in range(units)] for _ in range(coders)]


@given(reliability_data(st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 3))))
def test_interval_alpha_equals_the_reference(data: list[list[Any]]) -> None:
    """Scores with gaps: the same alpha as the krippendorff package, to 1e-9."""
    assert_alpha_is_the_reference(data, "interval")


@given(reliability_data(st.integers(0, 3)))
def test_nominal_alpha_equals_the_reference(data: list[list[Any]]) -> None:
    """Categories with gaps: the same alpha as the krippendorff package, to 1e-9."""
    assert_alpha_is_the_reference(data, "nominal")


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers by 12 units
# example: alpha 0.743 (nominal), 0.849 (interval).
TEXTBOOK = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize("value", [0.812, 0.1, 1 / 3, -7.25])
def test_interval_alpha_of_one_repeated_value_is_undefined(value: float) -> None:
    """Every value the same is 0/0 whatever its float rounding (not 0.0)."""
    assert krippendorff_alpha([[None, None], [value, value, value]], level="interval") is None
    assert krippendorff_alpha([[value, value], [value, value]], level="interval") is None


def test_the_textbook_example() -> None:
    assert round(krippendorff_alpha(units_of(TEXTBOOK), level="nominal") or 0, 3) == 0.743
    assert round(krippendorff_alpha(units_of(TEXTBOOK), level="interval") or 0, 3) == 0.849


def test_alpha_is_undefined_without_pairs_or_variation() -> None:
    assert krippendorff_alpha([[1, None], [None, 2]]) is None
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], level="ordinal")  # type: ignore[arg-type]


def test_the_bootstrap_is_seeded() -> None:
    units = units_of(TEXTBOOK)

    def alpha(idx: Sequence[int]) -> float | None:
        return krippendorff_alpha([units[i] for i in idx])

    first = bootstrap_interval(alpha, len(units), resamples=300, seed=4)
    assert first == bootstrap_interval(alpha, len(units), resamples=300, seed=4)
    assert first != bootstrap_interval(alpha, len(units), resamples=300, seed=5)
    low, high = first.low, first.high
    assert low is not None
    assert high is not None
    assert low < (krippendorff_alpha(units) or 0) < high


def judged(scorer_id: str, scores: dict[str, float]) -> Scorer[Any, Any]:
    """An LLM scorer whose judge gives the score listed for the answer."""
    judge = FunctionJudge(lambda req: {"score": scores[req.messages[-1].content.split()[1]]})
    return create_scorer(id=scorer_id, description="d",
                         judge=JudgeConfig(model=judge, instructions="Grade.")).generate_score(
        ScorePromptStep(description="grade", create_prompt=lambda ctx: f"Answer: {ctx.run.output}"))


ITEMS = [{"input": "q", "output": answer, "id": answer} for answer in "abcdef"]
SCORES = {  # member → answer → score; the members disagree most on "f", then "c"
    "m1": {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.9, "f": 0.0},
    "m2": {"a": 0.2, "b": 0.3, "c": 0.9, "d": 0.7, "e": 0.8, "f": 1.0},
    "m3": {"a": 0.1, "b": 0.4, "c": 0.6, "d": 0.6, "e": 0.9, "f": 0.5},
}


@pytest.mark.anyio
async def test_a_batch_reports_its_panels_agreement_and_where_they_disagree() -> None:
    """run_evals folds alpha (scores and votes) with intervals; the stored rows give the same."""
    jury = panel([judged(m, s) for m, s in SCORES.items()], threshold=0.5, id="jury")
    store = InMemoryScoreStore()
    report = await run_evals(ITEMS, [jury], store=store, batch_id="b")
    (agreement,) = report.panels
    units = [[SCORES[m][item] for m in SCORES] for item in "abcdef"]
    assert agreement.alpha_interval == pytest.approx(krippendorff_alpha(units))
    votes = [[s >= 0.5 for s in unit] for unit in units]
    assert agreement.alpha_nominal == pytest.approx(krippendorff_alpha(votes, level="nominal"))
    assert agreement.alpha_interval_ci is not None
    assert agreement.alpha_interval_ci[0] <= agreement.alpha_interval_ci[1]
    assert (agreement.runs, agreement.units, agreement.members) == (6, 6, ("m1", "m2", "m3"))
    assert [d.item_id for d in agreement.most_disagreed][:2] == ["f", "c"]
    assert agreement.most_disagreed[0].scores == {"m1": 0.0, "m2": 1.0, "m3": 0.5}
    assert report.to_json()["panels"][0]["alphaInterval"] == agreement.alpha_interval
    assert panel_agreements(await store.list_run("b")) == report.panels


def first_is_better(_request: JudgeRequest) -> dict[str, str]:
    return {"reason": "A reads better", "winner": "A"}


@pytest.mark.anyio
async def test_a_first_position_judge_gives_a_win_rate_of_a_half_with_a_wide_interval() -> None:
    """Every item position-biased: win rate 0.5, and an interval that says nothing is known."""
    data = [{"input": "q", "output": f"new {i}", "baseline_output": f"old {i}", "id": str(i)}
            for i in range(20)]
    scorer = pairwise(FunctionJudge(first_is_better), criteria="helpfulness", shape=TEXT)
    store = InMemoryScoreStore()
    report = await run_evals(data, [scorer], store=store, batch_id="b")
    (summary,) = report.pairwise
    assert (summary.items, summary.position_bias, summary.position_bias_rate) == (20, 20, 1.0)
    assert summary.win_rate == 0.5
    assert (summary.ci_low, summary.ci_high) == (0.0, 1.0)
    assert pairwise_summaries(await store.list_run("b")) == report.pairwise


@pytest.mark.anyio
async def test_a_consistent_judge_gives_a_tight_win_rate() -> None:
    """No position bias: the interval is the win rate's own bootstrap interval."""
    def longer(request: JudgeRequest) -> dict[str, str]:
        text = request.messages[-1].content
        a = text.split("<<<UNTRUSTED_RESPONSE_A>>>\n")[1].split("\n")[0]
        b = text.split("<<<UNTRUSTED_RESPONSE_B>>>\n")[1].split("\n")[0]
        return {"reason": "longer", "winner": "A" if len(a) > len(b) else "B"}

    data = [{"input": "q", "output": "a longer answer" if i % 4 else "s",
             "baseline_output": "mid", "id": str(i)} for i in range(40)]
    scorer = pairwise(FunctionJudge(longer), criteria="detail", shape=TEXT)
    report = await run_evals(data, [scorer])
    (summary,) = report.pairwise
    assert (summary.wins, summary.losses, summary.position_bias) == (30, 10, 0)
    assert summary.win_rate == 0.75
    assert summary.ci_low is not None
    assert summary.ci_high is not None
    assert 0.55 < summary.ci_low < 0.75 < summary.ci_high < 0.95
