"""Trajectories: the ordering modes, efficiency, retries, blacklists, nesting, both scorers,
``type="trajectory"`` and trajectories from traces."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    AgentInput,
    InputMismatch,
    ScorerDefinitionError,
    create_scorer,
    to_mastra_json,
)
from scorecore.agent import (
    ExpectedStep,
    ToolInvocation,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    extract_trajectory,
)
from scorecore.scorers import TrajectoryWeights, trajectory, trajectory_accuracy
from scorecore.scorers._expectations import expectation_from, laid_over
from scorecore.scorers._steps import (
    MissingMeasure,
    check_efficiency,
    compare_trajectories,
    js_json,
    step_matches,
    tool_failures,
)
from scorecore.traces import extract_trajectory_from_trace, score_trace
from tests.scorers.helpers import called, missing_of, score_of

pytestmark = pytest.mark.anyio


def steps(*names: str) -> list[TrajectoryStep]:
    return [TrajectoryStep(name=n) for n in names]


def expect(*names: str) -> list[ExpectedStep]:
    return [ExpectedStep(name=n) for n in names]


def taken(*names: str, **kwargs: Any) -> Trajectory:
    return Trajectory(steps=steps(*names), **kwargs)


@pytest.mark.parametrize(("actual", "expected", "ordering", "score"), [
    ("abc", "ab", "strict", 0.75),  # one extra step costs 0.5 / 2
    ("xabc", "abc", "strict", 0.0),  # shifted: nothing matches position by position
    ("ab", "abc", "strict", 0.67),  # 2/3, rounded the JavaScript way
    ("axbyc", "abc", "relaxed", 1.0),  # steps in between are free
    ("cba", "abc", "relaxed", 0.33),  # only "a" is found after nothing
    ("cba", "abc", "unordered", 1.0),
    ("aab", "ab", "unordered", 1.0),
    ("", "", "strict", 1.0),  # nothing expected, nothing done
    ("a", "", "relaxed", 0.0),  # nothing expected, something done
    ("", "ab", "unordered", 0.0),
])
def test_ordering_modes(actual: str, expected: str, ordering: Any, score: float) -> None:
    """Each ordering mode gives Mastra's score on the reference's examples."""
    result = compare_trajectories(steps(*actual), expect(*expected), ordering=ordering)
    assert result.score == score


def test_repeats_missing_extra() -> None:
    """Repeated names cost 0.1 each when repeats are not allowed; missing and extra names are
    listed."""
    result = compare_trajectories(steps("a", "a", "b", "b", "z"), expect("a", "b", "c"),
                                  ordering="relaxed", allow_repeated_steps=False)
    assert result.score == pytest.approx(0.47)  # 2/3 - 0.2
    assert result.repeated_steps == ("a", "b")
    assert result.missing_steps == ("c",)
    assert result.extra_steps == ("z",)


def test_step_matching_uses_type_and_fields() -> None:
    """An expected step with a type compares the type and each given field as JSON (key order
    matters, 1.0 equals 1); without a type only the name counts."""
    step = TrajectoryStep(name="search", tool_args={"q": "x", "n": 1.0})
    assert step_matches(step, ExpectedStep(name="search"))
    assert step_matches(step, ExpectedStep(name="search", step_type="tool_call",
                                           fields={"tool_args": {"q": "x", "n": 1}}))
    assert not step_matches(step, ExpectedStep(name="search", step_type="tool_call",
                                               fields={"tool_args": {"n": 1, "q": "x"}}))
    assert not step_matches(step, ExpectedStep(name="search", step_type="mcp_tool_call"))
    assert not step_matches(step, ExpectedStep(name="search", step_type="tool_call",
                                               fields={"tool_result": {"a": 1}}))
    assert js_json({"k": [1.5, float("nan"), "é"]}) == '{"k":[1.5,null,"é"]}'


def test_expected_step_fields_are_checked() -> None:
    """Fields need a step type and must be fields of that type."""
    with pytest.raises(ValueError, match="needs a step_type"):
        ExpectedStep(name="a", fields={"tool_args": {}})
    with pytest.raises(ValueError, match="model_id"):
        ExpectedStep(name="a", step_type="tool_call", fields={"model_id": "x"})
    with pytest.raises(ValueError, match="max_steps"):
        TrajectoryExpectation(max_steps=-1)
    with pytest.raises(ValueError, match="max_total_duration"):
        TrajectoryExpectation(max_total_duration=float("inf"))


names = st.lists(st.sampled_from("abcd"), max_size=7)


@given(names, names, st.booleans())
def test_strict_implies_relaxed_implies_unordered(actual: list[str], expected: list[str],
                                                  repeats: bool) -> None:
    """A trajectory that fully passes strict also passes relaxed, and relaxed passes
    unordered; every score is in [0, 1]."""
    scores = {mode: compare_trajectories(steps(*actual), expect(*expected), ordering=mode,
                                         allow_repeated_steps=repeats).score
              for mode in ("strict", "relaxed", "unordered")}
    assert all(0.0 <= s <= 1.0 for s in scores.values())
    if scores["strict"] == 1.0:
        assert scores["relaxed"] == 1.0
    if scores["relaxed"] == 1.0:
        assert scores["unordered"] == 1.0


def test_efficiency_budgets() -> None:
    """Each budget scores 1 - overrun/limit; redundancy costs 0.2 per repeated call; the
    result is their mean."""
    twice = TrajectoryStep(name="fetch", tool_args={"u": 1})
    trajectory_ = Trajectory(steps=[twice, twice, *steps("a", "b")], total_duration=3.0)
    result = check_efficiency(trajectory_, TrajectoryExpectation(
        max_steps=2, max_total_duration=2.0, no_redundant_calls=True)).unwrap()
    # steps 4 vs 2 → 0; duration 3 vs 2 → 0.5; one redundant call → 0.8; mean 0.433
    assert result.score == 0.43
    assert result.redundant_calls == 1


def test_tokens_count_at_every_depth() -> None:
    """Tokens are summed over model generations at any depth."""
    model = TrajectoryStep(name="gpt", step_type="model_generation", prompt_tokens=60,
                           completion_tokens=40)
    nested = TrajectoryStep(name="agent", step_type="agent_run", children=[model])
    result = check_efficiency(Trajectory(steps=[model, nested]),
                              TrajectoryExpectation(max_total_tokens=100,
                                                    no_redundant_calls=False)).unwrap()
    assert (result.total_tokens, result.score) == (200, 0.0)


def test_a_budget_without_its_measure_is_a_value_naming_the_budget() -> None:
    """A token or duration budget the trajectory does not record is a ``MissingMeasure``
    value (not an exception), naming the budget."""
    bare = taken("a", "b")
    tokens = check_efficiency(bare, TrajectoryExpectation(max_total_tokens=10)).failure()
    assert tokens == MissingMeasure(budget="max_total_tokens")
    assert tokens.describe().startswith("max_total_tokens is set but the trajectory has no")
    duration = check_efficiency(bare, TrajectoryExpectation(max_total_duration=1.0)).failure()
    assert duration == MissingMeasure(budget="max_total_duration")


def test_tool_failures() -> None:
    """Three failures then a success with one retry allowed: two retries too many → 0.6."""
    fail = TrajectoryStep(name="fetch", success=False)
    ok = TrajectoryStep(name="fetch", success=True)
    assert tool_failures([fail, fail, fail, ok], 1).score == 0.6
    assert tool_failures([fail, ok, fail, ok], 0).score == 1.0 - 0.2 * 2
    assert tool_failures([ok, ok], 0).retries == {}


async def test_trajectory_accuracy_scorer() -> None:
    """The factory's steps are used; the run's ordering wins over the factory's."""
    scorer = trajectory_accuracy(["a", "b"], ordering="unordered")
    assert score_of(await scorer.run(input={}, output=taken("b", "a"))) == 1.0
    outcome = await scorer.run(input={}, output=taken("b", "a"),
                               expected_trajectory={"ordering": "strict"})
    assert score_of(outcome) == 0.0
    assert "0 of 2" in (outcome.unwrap().reason or "")


async def test_trajectory_accuracy_reads_the_run() -> None:
    """Without factory steps, the run's Mastra-shaped expectation is read; without either the
    run is not scorable; ``[]`` from the factory expects no step."""
    scorer = trajectory_accuracy()
    outcome = await scorer.run(input={}, output=taken("a"),
                               expected_trajectory={"steps": [{"name": "a",
                                                               "stepType": "tool_call"}]})
    assert score_of(outcome) == 1.0
    assert "no expected trajectory" in missing_of(await scorer.run(input={}, output=taken("a")))
    assert score_of(await trajectory_accuracy([]).run(input={}, output=taken())) == 1.0
    assert score_of(await trajectory_accuracy([]).run(input={}, output=taken("a"))) == 0.0


async def test_trajectory_scorer_from_agent_messages() -> None:
    """``type="trajectory"``: agent messages given as output become a Trajectory."""
    scorer = trajectory_accuracy(["search", "answer"], ordering="strict")
    outcome = await scorer.run(input=AgentInput(), output=called("search", "answer"))
    assert score_of(outcome) == 1.0
    assert isinstance(outcome.unwrap().run.output, Trajectory)
    assert outcome.unwrap().run.output.raw_output is not None


async def test_type_trajectory_rejects_other_output() -> None:
    """An output that is neither a Trajectory nor agent messages is an input mismatch."""
    scorer = create_scorer(id="t", description="d", type="trajectory").generate_score(
        lambda ctx: float(len(ctx.run.output.steps)))
    outcome = await scorer.run(input={}, output=42)  # type: ignore[arg-type]
    cause = outcome.failure().cause
    assert isinstance(cause, InputMismatch)
    assert cause.expected_type == "Trajectory or AgentOutput"
    assert score_of(await scorer.run(input={}, output=taken("a", "b"))) == 2.0


def test_factory_misuse() -> None:
    """Bad factory arguments raise when the scorer is built."""
    with pytest.raises(ScorerDefinitionError, match="ordering"):
        trajectory_accuracy(["a"], ordering="sorted")  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match="expected_trajectory"):
        trajectory_accuracy(42)  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match=r"weights\.accuracy"):
        trajectory(weights=TrajectoryWeights(accuracy=float("nan")))


async def test_unified_weights_and_dimensions() -> None:
    """Accuracy 0.5 (weight 0.4) and efficiency 1 (weight 0.3): (0.2 + 0.3) / 0.7 → 0.71."""
    scorer = trajectory(TrajectoryExpectation(steps=["a", "b"], max_steps=5))
    outcome = await scorer.run(input={}, output=taken("a", "c"))
    assert score_of(outcome) == 0.71
    reason = outcome.unwrap().reason or ""
    assert reason.startswith("Score: 0.71")
    assert "efficiency: 1.0" in reason


async def test_unified_blacklist_and_item_override() -> None:
    """A blacklisted tool or sequence gives 0; the run's fields win over the defaults."""
    scorer = trajectory(TrajectoryExpectation(steps=["a"], blacklisted_sequences=[["a", "b"]]))
    assert score_of(await scorer.run(input={}, output=taken("a", "b"))) == 0.0
    assert score_of(await scorer.run(input={}, output=taken("a", "c"))) == 1.0
    outcome = await scorer.run(input={}, output=taken("a", "c"),
                               expected_trajectory={"blacklistedTools": ["c"]})
    assert score_of(outcome) == 0.0


async def test_unified_nested_children() -> None:
    """Children are scored like a trajectory and mixed 70/30; a violation deep down gives 0;
    an expected parent that is absent scores 0 for its part."""
    inner = TrajectoryStep(name="sub", step_type="agent_run", children=steps("x", "y"))
    run = Trajectory(steps=[inner])
    child = TrajectoryExpectation(steps=["x", "z"])
    expectation = TrajectoryExpectation(steps=[ExpectedStep(name="sub", children=child)])
    assert score_of(await trajectory(expectation).run(input={}, output=run)) == 0.85
    banned = TrajectoryExpectation(steps=["x"], blacklisted_tools=["y"])
    deep = TrajectoryExpectation(steps=[ExpectedStep(name="sub", children=banned)])
    assert score_of(await trajectory(deep).run(input={}, output=run)) == 0.0
    absent = TrajectoryExpectation(steps=[ExpectedStep(name="other", children=child)])
    assert score_of(await trajectory(absent).run(input={}, output=run)) == 0.0  # 0.7·0 + 0.3·0


async def test_unified_not_scorable() -> None:
    """No expectation at all, or a budget the trajectory cannot measure, is not scorable."""
    assert "no expectation" in missing_of(await trajectory().run(input={}, output=taken("a")))
    tokens = trajectory(TrajectoryExpectation(max_total_tokens=10))
    assert "max_total_tokens" in missing_of(await tokens.run(input={}, output=taken("a")))
    duration = trajectory(TrajectoryExpectation(max_total_duration=1.0))
    assert "max_total_duration" in missing_of(await duration.run(input={}, output=taken("a")))


@pytest.mark.parametrize("vacuous", [
    TrajectoryExpectation(ordering="strict"), {"maxRetriesPerTool": 1},
    {"allowRepeatedSteps": False}, {"ordering": "unordered", "blacklistedTools": []}])
async def test_unified_expectation_that_checks_nothing_is_not_scorable(vacuous: Any) -> None:
    """An expectation setting only ordering, allow_repeated_steps or max_retries_per_tool
    checks nothing: not scorable rather than a free 1.0."""
    outcome = await trajectory().run(input={}, output=taken("x"), expected_trajectory=vacuous)
    assert missing_of(outcome) == "the expectation sets no steps, budgets or blacklists"
    checked = await trajectory().run(input={}, output=taken("x"),
                                     expected_trajectory={"ordering": "strict", "steps": []})
    assert score_of(checked) == 0.0


def test_expectation_from_mastra_json() -> None:
    """Mastra's camelCase expectation is read, milliseconds become seconds, unknown keys are
    refused; a Trajectory becomes expected steps with its fields."""
    read = expectation_from({"steps": ["a", {"name": "b", "stepType": "tool_call",
                                             "toolArgs": {"q": 1}}],
                             "maxTotalDurationMs": 1500, "blacklistedSequences": [["a", "b"]]})
    assert read.max_total_duration == 1.5
    assert read.steps is not None
    assert read.steps[1].fields == {"tool_args": {"q": 1}}
    assert read.blacklisted_sequences == (("a", "b"),)
    with pytest.raises(ValueError, match="unknown keys"):
        expectation_from({"stepz": []})
    from_run = expectation_from(Trajectory(steps=[TrajectoryStep(name="s", success=True)]))
    assert from_run.steps == (ExpectedStep(name="s", step_type="tool_call",
                                           fields={"success": True}),)
    merged = laid_over(TrajectoryExpectation(steps=["a"], max_steps=3),
                       TrajectoryExpectation(max_steps=1))
    assert (merged.max_steps, merged.steps) == (1, (ExpectedStep(name="a"),))


MASTRA_TRAJECTORY = {
    "steps": [
        {"name": "search", "stepType": "tool_call", "toolArgs": {"q": "paris"}, "success": True,
         "durationMs": 1200},
        {"name": "nap", "stepType": "workflow_sleep", "sleepDurationMs": 500, "durationMs": 600,
         "children": [{"name": "inner", "stepType": "tool_call", "durationMs": 50}]},
    ],
    "totalDurationMs": 2500,
}


async def test_a_trajectory_in_mastras_json_is_read_in_seconds() -> None:
    """Mastra's own trajectory JSON scores: ``durationMs``, ``totalDurationMs`` and
    ``sleepDurationMs`` are milliseconds, read as seconds at every depth."""
    seen: list[Trajectory] = []

    def total(ctx: Any) -> float:
        seen.append(ctx.run.output)
        return 1.0

    scorer = create_scorer(id="t", description="d", type="trajectory").generate_score(total)
    assert score_of(await scorer.run(input={}, output=MASTRA_TRAJECTORY)) == 1.0
    taken = seen[0]
    assert taken.total_duration == 2.5
    assert [s.duration for s in taken.steps] == [1.2, 0.6]
    assert taken.steps[1].sleep_duration == 0.5
    assert taken.steps[1].children[0].duration == 0.05
    # a duration budget reads them: 2.5 s against 2 s is an overrun of a quarter
    budget = await trajectory(TrajectoryExpectation(
        max_total_duration=2.0, no_redundant_calls=False)).run(input={}, output=MASTRA_TRAJECTORY)
    assert score_of(budget) == 0.75


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"name": "a", "durationMs": "slow"},
         "expected durationMs to be a finite number of milliseconds ≥ 0, got 'slow' @ "
         "output.steps[0]"),
        ({"name": "a", "durationMs": -5}, "got -5 @ output.steps[0]"),
        ({"name": "a", "durationMs": 5, "duration": 0.005},
         "expected durationMs (milliseconds) or duration (seconds), not both @ output.steps[0]"),
    ],
)
async def test_a_bad_millisecond_value_is_a_mismatch_naming_it(
        step: dict[str, Any], message: str) -> None:
    """A millisecond key that is not a finite number ≥ 0, or given next to the seconds key, is
    an input mismatch naming the key, the value and where it is."""
    scorer = create_scorer(id="t", description="d", type="trajectory").generate_score(
        lambda ctx: 1.0)
    failure = (await scorer.run(input={}, output={"steps": [step]})).failure()
    assert isinstance(failure.cause, InputMismatch)
    assert any(message in error for error in failure.cause.errors), failure.cause.errors


def test_an_expected_sleep_in_seconds_stays_in_seconds() -> None:
    """Only Mastra's ``sleepDurationMs`` is divided by 1000; ``sleep_duration`` is seconds."""
    steps = expectation_from({"steps": [
        {"name": "a", "stepType": "workflow_sleep", "sleep_duration": 2},
        {"name": "b", "stepType": "workflow_sleep", "sleepDurationMs": 2000},
    ]}).steps
    assert steps is not None
    assert [s.fields for s in steps] == [{"sleep_duration": 2}, {"sleep_duration": 2.0}]


def span(span_id: str, kind: str, second: int, parent: str | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"spanId": span_id, "spanType": kind, "parentSpanId": parent,
            "startedAt": f"2025-01-01T00:00:{second:02d}Z", **extra}


TRACE = {"traceId": "t", "spans": [
    span("root", "agent_run", 0, name="agent", entityId="weather-agent",
         endedAt="2025-01-01T00:00:09Z", input="Weather?", output={"text": "Sunny"}),
    span("t2", "tool_call", 5, "root", name="tool", entityName="forecast", input="Paris",
         attributes={"success": False}),
    span("g", "generic", 2, "root", name="wrapper"),
    span("t1", "tool_call", 3, "g", name="tool", entityId="geocode", input={"city": "Paris"},
         output=[1, 2], endedAt="2025-01-01T00:00:04Z"),
    span("m", "model_generation", 1, "root", name="llm",
         attributes={"model": "gpt", "usage": {"inputTokens": 5, "outputTokens": 7}},
         input={"messages": []}),
]}


def test_extract_trajectory_from_trace() -> None:
    """The root agent run is unwrapped; a generic span is skipped and its child moves up;
    children are ordered by start; tools are named after their entity."""
    trajectory_ = extract_trajectory_from_trace(TRACE).unwrap()
    assert trajectory_.tool_names == ("llm", "geocode", "forecast")
    llm, geocode, forecast = trajectory_.steps
    assert (llm.model_id, llm.prompt_tokens, llm.completion_tokens) == ("gpt", 5, 7)
    assert (geocode.tool_args, geocode.tool_result) == ({"city": "Paris"}, {"value": [1, 2]})
    assert (geocode.duration, geocode.success) == (1.0, None)
    assert (forecast.tool_args, forecast.success) == ({"value": "Paris"}, False)
    assert (trajectory_.total_duration, trajectory_.raw_output) == (9.0, None)


def test_extract_trajectory_from_a_span_and_bad_traces() -> None:
    """``root_span_id`` starts at that span (kept as a step unless it is a run); an invalid
    trace is a TraceError."""
    from_generic = extract_trajectory_from_trace(TRACE, "g").unwrap()
    assert from_generic.tool_names == ("geocode",)
    from_tool = extract_trajectory_from_trace(TRACE, "t1").unwrap()
    assert (from_tool.tool_names, from_tool.total_duration) == (("geocode",), 1.0)
    assert extract_trajectory_from_trace(TRACE, "missing").unwrap().tool_names == \
        ("llm", "geocode", "forecast")
    assert extract_trajectory_from_trace({"spans": "x"}).failure().kind == "no_spans_array"
    cyclic = {"spans": [span("a", "tool_call", 0, "b", entityId="a"),
                        span("b", "tool_call", 1, "a", entityId="b")]}
    assert extract_trajectory_from_trace(cyclic, "a").unwrap().tool_names == ("a",)


async def test_score_trace_gives_trajectory_scorers_a_trajectory() -> None:
    """score_trace hands a trajectory scorer the trace's trajectory and the agent's input."""
    scorer = trajectory_accuracy(["geocode", "forecast"])
    outcome = await score_trace(scorer, TRACE)
    result = outcome.unwrap()
    assert result.score == 1.0
    assert result.run.input.input_messages[0].text() == "Weather?"


def test_tool_invocation_args_wrapped_in_extract() -> None:
    """extract_trajectory wraps non-object arguments and results, and merges legacy calls."""
    messages = called(ToolInvocation(tool_call_id="c", tool_name="x", args="raw", result=3))
    step = extract_trajectory(messages).steps[0]
    assert (step.tool_args, step.tool_result, step.success) == ({"value": "raw"},
                                                                {"value": 3}, True)


def test_run_sync_free_event_loop() -> None:
    """The doctest path: a trajectory scorer runs under anyio.run."""
    scorer = trajectory_accuracy(["a"])
    assert anyio.run(lambda: scorer.run(input={}, output=taken("a"))).unwrap().score == 1.0


async def test_score_trace_without_an_agent_run() -> None:
    """A workflow trace has no agent input: the trajectory scorer still gets the steps."""
    workflow = {"traceId": "w", "spans": [
        span("run", "workflow_run", 0, name="flow", entityId="flow-1"),
        span("s1", "workflow_step", 1, "run", name="fetch", output={"ok": True}),
        span("s2", "workflow_step", 2, "run", name="store"),
    ]}
    outcome = await score_trace(trajectory_accuracy(["fetch", "store"], ordering="strict"),
                                workflow)
    result = outcome.unwrap()
    assert result.score == 1.0
    assert result.run.input == AgentInput()
    assert result.run.output.steps[0].output == {"ok": True}


step_names = st.sampled_from("abc")
trajectory_steps = st.builds(
    TrajectoryStep, name=step_names,
    step_type=st.sampled_from(["tool_call", "model_generation", "agent_run"]),
    success=st.none() | st.booleans(), duration=st.none() | st.integers(0, 3),
    tool_args=st.none() | st.fixed_dictionaries({"q": st.integers(0, 1)}),
    prompt_tokens=st.none() | st.integers(0, 9), completion_tokens=st.none() | st.integers(0, 9),
    children=st.lists(st.builds(TrajectoryStep, name=step_names), max_size=2),
)
expectations = st.builds(
    TrajectoryExpectation,
    steps=st.none() | st.lists(st.builds(ExpectedStep, name=step_names), max_size=3),
    ordering=st.none() | st.sampled_from(["strict", "relaxed", "unordered"]),
    allow_repeated_steps=st.none() | st.booleans(),
    max_steps=st.none() | st.integers(0, 4), max_total_tokens=st.none() | st.integers(0, 20),
    max_total_duration=st.none() | st.integers(0, 5),
    no_redundant_calls=st.none() | st.booleans(),
    blacklisted_tools=st.lists(step_names, max_size=1),
    max_retries_per_tool=st.none() | st.integers(0, 2),
)


@given(st.lists(trajectory_steps, max_size=5), expectations)
def test_unified_score_in_unit_interval(taken_steps: list[TrajectoryStep],
                                        expectation: TrajectoryExpectation) -> None:
    """The unified score is in [0, 1], or the run is not scorable (no expectation, or a
    budget the trajectory cannot measure)."""
    scorer = trajectory(expectation)
    result = anyio.run(lambda: scorer.run(input={}, output=Trajectory(steps=taken_steps)))
    value = result.unwrap()
    assert value.not_scorable is not None or (value.score is not None
                                              and 0.0 <= value.score <= 1.0)


async def test_trajectory_json_round_trips() -> None:
    """A stored result's trajectory JSON is a valid output again; a bad step type in it is
    an input mismatch naming the field."""
    scorer = trajectory_accuracy(["a", "b"], ordering="strict")
    first = (await scorer.run(input={}, output=taken("a", "b"))).unwrap()
    stored = to_mastra_json(first)["output"]
    assert score_of(await scorer.run(input={}, output=stored)) == 1.0
    bad = await scorer.run(input={}, output={"steps": [{"name": "a", "stepType": "bogus"}]})
    cause = bad.failure().cause
    assert isinstance(cause, InputMismatch)
    assert "stepType" in cause.errors[0]


async def test_unified_nested_steps_with_the_same_name_are_each_kept() -> None:
    """Two expected steps of one name keep one nested entry each: a blacklisted tool in the
    first nested run still gives 0, and the nested mean covers both (an absent second → 0)."""
    bad = TrajectoryStep(name="sub", step_type="agent_run", children=steps("rm"))
    good = TrajectoryStep(name="sub", step_type="agent_run", children=steps("ls"))
    expectation = TrajectoryExpectation(steps=[
        ExpectedStep(name="sub", children=TrajectoryExpectation(blacklisted_tools=["rm"])),
        ExpectedStep(name="sub", children=TrajectoryExpectation(steps=["ls"]))])
    outcome = await trajectory(expectation).run(input={}, output=Trajectory(steps=[bad, good]))
    assert score_of(outcome) == 0.0
    both = TrajectoryExpectation(steps=[
        ExpectedStep(name="sub", children=TrajectoryExpectation(steps=["ls"])),
        ExpectedStep(name="sub", children=TrajectoryExpectation(steps=["ls"]))])
    outcome = await trajectory(both).run(input={}, output=Trajectory(steps=[good]))
    # accuracy 0.5 (one "sub" missing) · 0.7 + mean(1.0, absent 0) · 0.3 = 0.5
    assert score_of(outcome) == 0.5
    assert outcome.unwrap().reason.count("nested sub") == 2


async def test_unified_item_empty_blacklist_keeps_the_defaults() -> None:
    """A documented difference from Mastra's spread: an empty blacklist in the run's
    expectation means "not set", so the factory's blacklist still applies."""
    scorer = trajectory(TrajectoryExpectation(steps=["rm"], blacklisted_tools=["rm"]))
    outcome = await scorer.run(input={}, output=taken("rm"),
                               expected_trajectory={"blacklistedTools": []})
    assert score_of(outcome) == 0.0
    free = await trajectory(TrajectoryExpectation(steps=["rm"])).run(
        input={}, output=taken("rm"), expected_trajectory={"blacklistedTools": []})
    assert score_of(free) == 1.0
