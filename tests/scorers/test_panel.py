"""A panel of judges with scripted judges: failing members, replacements, the floor, ties,
misuse refused at build time, concurrency, fingerprints, cache and budget per member."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from returns.result import Failure, Success

from scorecore import (
    BudgetExhausted,
    JudgeConfig,
    JudgeModel,
    PartialResult,
    Runtime,
    ScorePromptStep,
    Scorer,
    ScorerDefinitionError,
    create_scorer,
    not_scorable,
)
from scorecore.evals import run_evals
from scorecore.judge import JudgeRequest
from scorecore.judge.economics import Budget, JudgeMeter, Pricing
from scorecore.scorers import PanelFailed, PanelResult, panel
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import FunctionJudge, InMemoryScoreStore, judge_error

pytestmark = pytest.mark.anyio

def panel_of(result: PartialResult) -> PanelResult:
    """The result's panel details, which a panel always sets."""
    details = result.details_as(PanelResult)
    assert details is not None
    return details



def steady(score: float, model_id: str = "steady") -> FunctionJudge:
    """A judge that always gives ``score``."""
    return FunctionJudge(lambda _req: {"score": score}, model_id=model_id)


def broken(model_id: str = "broken") -> FunctionJudge:
    """A judge whose provider always fails with a server error."""
    return FunctionJudge(lambda _req: judge_error(503, message="overloaded"), model_id=model_id)


def judged(scorer_id: str, judge: JudgeModel) -> Scorer[Any, Any]:
    """A one-call LLM scorer: the judge's ``score`` is the score."""
    return create_scorer(
        id=scorer_id, description="Grades the answer",
        judge=JudgeConfig(model=judge, instructions="You grade answers."),
    ).generate_score(ScorePromptStep(description="grade",
                                     create_prompt=lambda ctx: f"Grade: {ctx.run.output}"))


def jury(third: JudgeModel | None = None) -> list[Scorer[Any, Any]]:
    """Three judges; the third one always fails unless given."""
    return [judged("a", steady(0.8)), judged("b", steady(0.6)),
            judged("c", third or broken())]


async def test_a_failing_member_below_the_floor_fails_the_run_naming_it() -> None:
    """min_successful=3 with one member failing and no replacement: a failed run, never a
    silent aggregate of the two survivors; the cause names the member and its judge error."""
    result = await panel(jury(), min_successful=3).run(input="q", output="a")
    assert isinstance(result, Failure)
    error = result.failure()
    assert isinstance(error.cause, PanelFailed)
    assert error.failed_step == "panel"
    assert (error.cause.scored, error.cause.min_successful) == (2, 3)
    assert [f.scorer_id for f in error.cause.failures] == ["c"]
    assert "HTTP 503: overloaded" in error.cause.failures[0].cause.describe()
    assert "c failed at generate_score: judge call failed" in str(error)
    # every member's verdict is kept on the failure
    members = panel_of(error.partial).members
    assert [(m.scorer_id, m.status, m.score) for m in members] == [
        ("a", "scored", 0.8), ("b", "scored", 0.6), ("c", "failed", None)]
    assert len(error.partial.judge["generate_score"]) == 3  # every judge call is accounted


async def test_the_default_floor_is_every_member() -> None:
    """Without min_successful every member must score (fail-closed)."""
    result = await panel(jury()).run(input="q", output="a")
    assert isinstance(result, Failure)
    assert isinstance(result.failure().cause, PanelFailed)


async def test_a_failing_member_above_the_floor_is_left_out_and_kept_on_record() -> None:
    """min_successful=2: the two scores are aggregated; the failed member stays in the result."""
    result = (await panel(jury(), min_successful=2, aggregate="mean").run(
        input="q", output="a")).unwrap()
    assert result.score == pytest.approx(0.7)
    members = panel_of(result).members
    assert [m.status for m in members] == ["scored", "scored", "failed"]
    assert members[2].cause is not None
    assert members[2].failed_step == "generate_score"
    assert [m.scorer_id for m in panel_of(result).counted] == ["a", "b"]
    assert (panel_of(result).min, panel_of(result).max) == (0.6, 0.8)
    assert panel_of(result).std_dev == pytest.approx(0.1)
    assert "c failed" in (result.reason or "")


@pytest.mark.parametrize("floor", [2, 3])
async def test_a_replacement_takes_the_failed_members_seat(floor: int) -> None:
    """With a replacement the panel has three scores again, at either floor."""
    spare = judged("d", steady(0.1))
    result = (await panel(jury(), replacements=[spare], min_successful=floor).run(
        input="q", output="a")).unwrap()
    assert result.score == 0.6  # the median of 0.8, 0.6, 0.1
    members = panel_of(result).members
    assert [(m.scorer_id, m.status, m.replaced, m.replaces) for m in members] == [
        ("a", "scored", False, None), ("b", "scored", False, None),
        ("c", "failed", True, None), ("d", "scored", False, "c")]
    assert [m.scorer_id for m in panel_of(result).counted] == ["a", "b", "d"]


async def test_replacements_run_out_and_every_failure_is_named() -> None:
    """A replacement that fails too gives its seat to the next; with none left the run fails
    naming every failed member."""
    spares = [judged("d", broken("broken-d")), judged("e", broken("broken-e"))]
    result = await panel(jury(), replacements=spares, min_successful=3).run(input="q",
                                                                            output="a")
    assert isinstance(result, Failure)
    cause = result.failure().cause
    assert isinstance(cause, PanelFailed)
    assert [f.scorer_id for f in cause.failures] == ["c", "d", "e"]
    members = panel_of(result.failure().partial).members
    assert [(m.scorer_id, m.replaces) for m in members][2:] == [("c", None), ("d", "c"),
                                                                ("e", "d")]


async def test_unused_replacements_are_not_asked() -> None:
    """Replacements only run for failed seats."""
    spare_judge = steady(0.5)
    result = await panel(jury(steady(0.7)), replacements=[judged("d", spare_judge)]).run(
        input="q", output="a")
    assert result.unwrap().score == 0.7
    assert spare_judge.calls == 0


def voters(*scores: float) -> list[Scorer[Any, Any]]:
    return [judged(f"j{i}", steady(s)) for i, s in enumerate(scores)]


@pytest.mark.parametrize(("on_tie", "score"), [("fail", 0.0), ("pass", 1.0)])
async def test_a_tied_majority_follows_on_tie_and_says_it_was_a_tie(
    on_tie: Any, score: float
) -> None:
    """One pass, one fail: 0.0 fail-closed by default, 1.0 with on_tie='pass'."""
    kwargs = {} if on_tie == "fail" else {"on_tie": on_tie}
    result = (await panel(voters(0.9, 0.1), aggregate="majority", threshold=0.5,
                          **kwargs).run(input="q", output="a")).unwrap()
    assert result.score == score
    assert panel_of(result).tie is True
    assert (panel_of(result).passes, panel_of(result).fails) == (1, 1)
    assert panel_of(result).agreed is False
    assert "tie" in (result.reason or "")


async def test_a_tied_majority_can_be_not_scorable() -> None:
    """on_tie='not_scorable': no score, the tie recorded."""
    result = (await panel(voters(0.9, 0.1), aggregate="majority", threshold=0.5,
                          on_tie="not_scorable").run(input="q", output="a")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert "tie" in (result.not_scorable.reason or "")
    assert panel_of(result) is not None
    assert panel_of(result).tie is True


async def test_a_failed_member_can_leave_a_tie() -> None:
    """Three voters, one failing, min_successful=2: the two left split, and the tie fails."""
    members = [judged("a", steady(0.9)), judged("b", steady(0.2)), judged("c", broken())]
    result = (await panel(members, aggregate="majority", threshold=0.5, min_successful=2).run(
        input="q", output="a")).unwrap()
    assert (result.score, panel_of(result).tie) == (0.0, True)


async def test_a_clear_majority_is_not_a_tie() -> None:
    """Two of three pass: 1.0, no tie, members disagreed."""
    result = (await panel(voters(0.9, 0.6, 0.1), aggregate="majority", threshold=0.5).run(
        input="q", output="a")).unwrap()
    assert (result.score, panel_of(result).tie, panel_of(result).agreed) == (1.0, False, False)
    assert [m.vote for m in panel_of(result).members] == [True, True, False]


@pytest.mark.parametrize(("aggregate", "expected"),
                         [("median", 0.6), ("mean", 0.5), ("min", 0.1), ("max", 0.8)])
async def test_aggregates(aggregate: Any, expected: float) -> None:
    result = (await panel(voters(0.8, 0.6, 0.1), aggregate=aggregate).run(
        input="q", output="a")).unwrap()
    assert result.score == pytest.approx(expected)


async def test_a_function_aggregate_gets_the_counted_scores_in_seat_order() -> None:
    seen: list[Sequence[float]] = []

    def second(scores: Sequence[float]) -> float:
        seen.append(scores)
        return scores[1]

    result = (await panel(voters(0.8, 0.6, 0.1), aggregate=second).run(
        input="q", output="a")).unwrap()
    assert (result.score, list(seen[0])) == (0.6, [0.8, 0.6, 0.1])
    assert panel_of(result).aggregate.endswith("second")


async def test_a_raising_or_invalid_function_aggregate_fails_the_run() -> None:
    def boom(scores: Sequence[float]) -> float:
        raise ValueError("no")

    raised = await panel(voters(0.8), aggregate=boom).run(input="q", output="a")
    assert isinstance(raised, Failure)
    assert raised.failure().failed_step == "aggregate"
    assert "aggregate raised ValueError: no" in str(raised.failure())
    invalid = await panel(voters(0.8), aggregate=lambda s: float("nan")).run(
        input="q", output="a")
    assert isinstance(invalid, Failure)
    assert "finite real number" in str(invalid.failure())


async def test_agreement_without_a_threshold_means_equal_scores() -> None:
    same = (await panel(voters(0.5, 0.5)).run(input="q", output="a")).unwrap()
    one = (await panel(voters(0.5)).run(input="q", output="a")).unwrap()
    assert (panel_of(same).agreed, panel_of(same).std_dev) == (True, 0.0)
    assert panel_of(one).agreed is None


async def test_members_not_scorable_leave_the_run_not_scorable() -> None:
    """Nobody failed but too few could score: not scorable, naming each member's reason."""
    nope = create_scorer(id="nope", description="d").generate_score(
        lambda ctx: not_scorable("no reference"))
    result = (await panel([nope, *voters(0.5)]).run(input="q", output="a")).unwrap()
    assert result.score is None
    assert result.not_scorable is not None
    assert "nope: no reference" in (result.not_scorable.reason or "")


async def test_members_run_concurrently() -> None:
    """Every member's judge call is in flight before any answers (a barrier of three)."""
    started = 0
    all_in = anyio.Event()

    async def wait_for_all(_req: JudgeRequest) -> dict[str, float]:
        nonlocal started
        started += 1
        if started == 3:
            all_in.set()
        await all_in.wait()
        return {"score": 0.5}

    members = [judged(f"j{i}", FunctionJudge(wait_for_all)) for i in range(3)]
    with anyio.fail_after(5):  # a serial fan-out would wait here forever
        result = await panel(members).run(input="q", output="a")
    assert result.unwrap().score == 0.5


async def test_every_member_shares_the_run_id_and_runtime() -> None:
    """The members see the panel's run (one run id); a fresh id comes from the runtime."""
    ids: list[str | None] = []

    def seen(scorer_id: str) -> Scorer[Any, Any]:
        return create_scorer(id=scorer_id, description="d").generate_score(
            lambda ctx: ids.append(ctx.run.run_id) or 1.0)

    result = await panel([seen("a"), seen("b")]).run(
        input="q", output="a", runtime=Runtime(new_id=lambda: "run-7"))
    assert ids == ["run-7", "run-7"]
    assert result.unwrap().run_id == "run-7"


async def test_the_cache_answers_each_members_calls_again() -> None:
    """A member's judge call is a judge call: a second run through the same cache asks no judge."""
    judges = [steady(0.8, "m-a"), steady(0.6, "m-b"), steady(0.4, "m-c")]
    jury_ = panel([judged(n, j) for n, j in zip("abc", judges, strict=True)])
    meter = JudgeMeter(cache=MemoryJudgeCache())
    for _ in range(2):
        result = await jury_.run(input="q", output="a", runtime=Runtime(meter=meter))
    assert result.unwrap().score == 0.6
    assert [j.calls for j in judges] == [1, 1, 1]
    assert meter.ledger.cache_hits == 3


async def test_a_spent_budget_stops_the_panel_as_a_budget_stop() -> None:
    """Members stopped by a hard budget make the panel's run a BudgetExhausted failure."""
    price = Pricing.from_mapping({"steady": {"input": 1e6, "output": 1e6},
                                  "broken": {"input": 1e6, "output": 1e6}})
    meter = JudgeMeter(pricing=price, budget=Budget(max_cost_usd=1e-9))
    result = await panel(jury()).run(input="q", output="a", runtime=Runtime(meter=meter))
    assert isinstance(result, Failure)
    assert isinstance(result.failure().cause, BudgetExhausted)


async def test_run_evals_stores_members_and_counts_their_cost() -> None:
    """In a batch the panel's row keeps every member; the economics count every member's call."""
    store = InMemoryScoreStore()
    price = Pricing.from_mapping({"steady": {"input": 1.0, "output": 1.0},
                                  "broken": {"input": 1.0, "output": 1.0}})
    jury_ = panel(jury(), min_successful=2, id="jury")
    report = await run_evals([{"input": "q", "output": "a", "id": "i1"}], [jury_],
                             store=store, pricing=price, batch_id="b")
    assert report.summary("jury").mean == pytest.approx(0.7)
    (row,) = await store.list_run("b")
    members = row.metadata["panel"]["members"]  # type: ignore[index]
    assert [(m["scorerId"], m["status"]) for m in members] == [
        ("a", "scored"), ("b", "scored"), ("c", "failed")]
    assert members[2]["error"]["name"] == "JudgeFailed"
    assert report.economics is not None
    (cost,) = report.economics.scorers
    assert cost.model_calls == 3


def test_the_fingerprint_covers_members_and_policy() -> None:
    base = panel(voters(0.8, 0.6), aggregate="majority", threshold=0.5)
    assert base.fingerprint == panel(voters(0.8, 0.6), aggregate="majority",
                                     threshold=0.5).fingerprint
    others = [
        panel([voters(0.8)[0], judged("j1", steady(0.6, "other-model"))],  # a member's judge
              aggregate="majority", threshold=0.5),
        panel(voters(0.8, 0.6), aggregate="majority", threshold=0.6),
        panel(voters(0.8, 0.6), aggregate="majority", threshold=0.5, on_tie="pass"),
        panel(voters(0.8, 0.6), aggregate="majority", threshold=0.5, min_successful=1),
        panel(voters(0.8, 0.6), aggregate="majority", threshold=0.5,
              replacements=voters(0.8, 0.6, 0.1)[2:]),
        panel(voters(0.8, 0.6)),
    ]
    assert len({base.fingerprint, *(p.fingerprint for p in others)}) == len(others) + 1


def test_a_panel_asks_its_members_judges() -> None:
    """Its steps are its members' (so a batch finds every judge to price)."""
    jury_ = panel(jury())
    assert jury_.has_judge
    assert {s.judge.model.model_id for s in jury_.steps if s.judge} == {"steady", "broken"}


def one(scorer_id: str = "x") -> Scorer[Any, Any]:
    return create_scorer(id=scorer_id, description="d").generate_score(lambda ctx: 1.0)


@pytest.mark.parametrize(("kwargs", "field", "words"), [
    ({"members": []}, "members", "at least one"),
    ({"members": "abc"}, "members", "list of scorers"),
    ({"members": [one(), "judge"]}, "members", "[1] must be a Scorer"),
    ({"members": [one("a"), one("a")]}, "members", "repeat the scorer id 'a'"),
    ({"members": [one("a")], "replacements": [one("a")]}, "members", "repeat"),
    ({"aggregate": "mode"}, "aggregate", "'mode'"),
    ({"aggregate": "majority"}, "threshold", "required"),
    ({"threshold": float("nan")}, "threshold", "finite"),
    ({"threshold": True}, "threshold", "finite"),
    ({"min_successful": 0}, "min_successful", "from 1 to 2"),
    ({"min_successful": 3}, "min_successful", "got 3"),
    ({"min_successful": True}, "min_successful", "got True"),
    ({"on_tie": "maybe", "aggregate": "majority", "threshold": 0.5}, "on_tie", "'maybe'"),
    ({"on_tie": "pass"}, "on_tie", "majority"),
    ({"id": ""}, "id", "non-empty"),
])
def test_misuse_is_refused_when_built(kwargs: dict[str, Any], field: str, words: str) -> None:
    """Each misuse raises ScorerDefinitionError naming the field and the value."""
    options: dict[str, Any] = {"members": [one("a"), one("b")], **kwargs}
    with pytest.raises(ScorerDefinitionError) as raised:
        panel(**options)
    assert raised.value.field == field
    assert words in str(raised.value)


def test_members_of_different_shapes_are_refused() -> None:
    agent = create_scorer(id="agent", description="d", type="agent").generate_score(
        lambda ctx: 1.0)
    with pytest.raises(ScorerDefinitionError, match="one shape") as raised:
        panel([one("plain"), agent])
    assert raised.value.value == "agent"


def test_a_panel_takes_no_reason_step() -> None:
    with pytest.raises(ScorerDefinitionError, match="generate_reason"):
        panel(voters(0.5)).generate_reason(lambda ctx: "why")


def test_the_default_id_names_the_members() -> None:
    assert panel([one("a"), one("b")]).id == "panel(a, b)"
    assert panel([one("a")], id="jury").id == "jury"


async def test_a_panel_is_a_member_like_any_scorer() -> None:
    """Panels nest: a panel of panels aggregates their aggregates."""
    inner = panel(voters(0.2, 0.4), id="inner", aggregate="mean")
    outer = panel([inner, judged("solo", steady(0.9))], aggregate="max")
    result = (await outer.run(input="q", output="a")).unwrap()
    assert result.score == 0.9
    assert isinstance(await inner.run(input="q", output="a"), Success)
