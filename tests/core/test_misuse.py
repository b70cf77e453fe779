"""Misuse is one family: a wrong option raises ``ScorerDefinitionError`` naming field and value."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    ModelSettings,
    Runtime,
    ScorePromptStep,
    ScorerDefinitionError,
    StepJudge,
    create_scorer,
)
from scorecore.judge import Retry
from scorecore.judge.economics import Budget, JudgeMeter
from scorecore.live import RatioSampling
from scorecore.validators import is_int
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.delays import ConstantDelay, ExponentialBackoff
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.retry import RetryPolicy, StreamErrorRetryProcessor
from scorecore_adapters.testing import ScriptedJudge

HUGE = "x" * 100_000

CASES: list[tuple[str, Any, Callable[[Any], object]]] = [
    ("Retry.after", -1.0, lambda v: Retry(after=v)),
    ("Retry.after", math.nan, lambda v: Retry(after=v)),
    ("Retry.after", HUGE, lambda v: Retry(after=v)),
    ("Retry.after", 10**400, lambda v: Retry(after=v)),
    ("ModelSettings.temperature", math.inf, lambda v: ModelSettings(temperature=v)),
    ("RetryPolicy.max_retries", True, lambda v: RetryPolicy(match=bool, max_retries=v)),
    ("RetryPolicy.match", HUGE, lambda v: RetryPolicy(match=v)),
    ("StreamErrorRetryProcessor.max_retries", -1, lambda v: StreamErrorRetryProcessor(
        max_retries=v)),
    ("StreamErrorRetryProcessor.delay", HUGE, lambda v: StreamErrorRetryProcessor(delay=v)),
    ("StreamErrorRetryProcessor.matchers[0]", 3, lambda v: StreamErrorRetryProcessor(
        matchers=[v])),
    ("StreamErrorRetryProcessor.max_retry_after", "30", lambda v: StreamErrorRetryProcessor(
        max_retry_after=v)),
    ("ConstantDelay.seconds", -0.5, lambda v: ConstantDelay(seconds=v)),
    ("ExponentialBackoff.random", HUGE, lambda v: ExponentialBackoff(random=v)),
    ("AnthropicModel.max_tokens", 0, lambda v: AnthropicModel(model="m", api_key="k",
                                                               max_tokens=v)),
    ("OpenAIChatModel.model", "", lambda v: OpenAIChatModel(v, api_key="k")),
    ("RetryPolicy.on_retry", 3, lambda v: RetryPolicy(match=bool, on_retry=v)),
    ("StreamErrorRetryProcessor.now", HUGE, lambda v: StreamErrorRetryProcessor(now=v)),
    ("ScorePromptStep.calculate_score", 3, lambda v: ScorePromptStep(
        description="d", create_prompt=lambda ctx: "p", calculate_score=v)),
    ("ModelSettings.max_retries", True, lambda v: ModelSettings(max_retries=v)),
    ("RatioSampling.rate", 1.5, lambda v: RatioSampling(rate=v)),
    ("RatioSampling.rate", HUGE, lambda v: RatioSampling(rate=v)),
    ("ModelSettings.max_output_tokens", "100", lambda v: ModelSettings(max_output_tokens=v)),
    ("ModelSettings.max_output_tokens", 1.5, lambda v: ModelSettings(max_output_tokens=v)),
    ("ModelSettings.max_output_tokens", 0, lambda v: ModelSettings(max_output_tokens=v)),
    ("ModelSettings.max_output_tokens", True, lambda v: ModelSettings(max_output_tokens=v)),
    ("ModelSettings.seed", 1.0, lambda v: ModelSettings(seed=v)),
    ("ModelSettings.seed", False, lambda v: ModelSettings(seed=v)),
    ("Budget.max_tokens", -1, lambda v: Budget(max_tokens=v)),
    ("Budget.max_tokens", 1.5, lambda v: Budget(max_tokens=v)),
    ("Budget.max_cost_usd", math.nan, lambda v: Budget(max_cost_usd=v)),
    ("Budget.max_cost_usd", 10**400, lambda v: Budget(max_cost_usd=v)),
    ("Budget.worst_case_output_tokens", 0, lambda v: Budget(worst_case_output_tokens=v)),
    ("Budget.mode", "medium", lambda v: Budget(mode=v)),
    ("error_processors", StreamErrorRetryProcessor(max_retries=2), lambda v: JudgeConfig(
        model=ScriptedJudge([]), instructions="i", error_processors=v)),
    ("input_processors", "abc", lambda v: StepJudge(input_processors=v)),
    ("StepJudge.instructions", 123, lambda v: StepJudge(instructions=v)),
    ("StepJudge.model_settings", {"temperature": 0}, lambda v: StepJudge(model_settings=v)),
    ("JudgeConfig.model_settings", "x", lambda v: JudgeConfig(
        model=ScriptedJudge([]), instructions="i", model_settings=v)),
]


@pytest.mark.parametrize(("field", "value", "build"), CASES, ids=[c[0] for c in CASES])
def test_wrong_options_raise_one_error_family(
    field: str, value: Any, build: Callable[[Any], object]
) -> None:
    """The error is a ScorerDefinitionError with ``field`` and ``value``; its message is short."""
    with pytest.raises(ScorerDefinitionError) as caught:
        build(value)
    error = caught.value
    assert error.field == field
    assert error.value is value
    message = str(error)
    assert message.startswith(field)
    assert len(message) < 400


@given(st.one_of(st.booleans(), st.floats(), st.text(), st.none(), st.integers(max_value=-1)))
def test_any_unusable_retry_wait_is_refused(value: Any) -> None:
    """``Retry(after=...)`` accepts finite numbers >= 0 only (never a bool), as the error says."""
    usable = (
        not isinstance(value, bool) and isinstance(value, int | float)
        and math.isfinite(value) and value >= 0
    )
    if usable:
        assert Retry(after=value).after == value
    else:
        with pytest.raises(ScorerDefinitionError, match=r"^Retry\.after must be"):
            Retry(after=value)


_ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.builds(ModelSettings, temperature=st.none() | st.floats(0, 1)),
)
_JUDGE_FIELDS: list[tuple[str, Callable[[Any], tuple[JudgeConfig, StepJudge | None]]]] = [
    ("StepJudge.instructions", lambda v: (
        JudgeConfig(model=ScriptedJudge([{"score": 1.0}]), instructions="i"),
        StepJudge(instructions=v))),
    ("StepJudge.model_settings", lambda v: (
        JudgeConfig(model=ScriptedJudge([{"score": 1.0}]), instructions="i"),
        StepJudge(model_settings=v))),
    ("ModelSettings.max_output_tokens", lambda v: (
        JudgeConfig(model=ScriptedJudge([{"score": 1.0}]), instructions="i",
                    model_settings=ModelSettings(max_output_tokens=v)),
        None)),
    ("ModelSettings.seed", lambda v: (
        JudgeConfig(model=ScriptedJudge([{"score": 1.0}]), instructions="i",
                    model_settings=ModelSettings(seed=v)),
        None)),
    ("JudgeConfig.model_settings", lambda v: (
        JudgeConfig(model=ScriptedJudge([{"score": 1.0}]), instructions="i", model_settings=v),
        None)),
]


@pytest.mark.parametrize(("field", "build"), _JUDGE_FIELDS, ids=[f for f, _ in _JUDGE_FIELDS])
@given(value=_ANYTHING)
def test_a_judge_setting_is_refused_at_construction_or_the_run_returns(
    field: str, build: Callable[[Any], tuple[JudgeConfig, StepJudge | None]], value: Any
) -> None:
    """Whatever value a judge setting gets, the scorer is refused when built (naming the field)
    or its run returns a Result; the run never raises (the reviewer's TypeError and
    AttributeError at run time)."""
    try:
        judge, step_judge = build(value)
    except ScorerDefinitionError as error:
        refused: ScorerDefinitionError | None = error
    else:
        refused = None
    if refused is not None:
        assert refused.field == field
        assert refused.value is value
        return
    try:
        scorer = create_scorer(id="x", description="d", judge=judge).generate_score(
            ScorePromptStep(description="s", create_prompt=lambda ctx: "p", judge=step_judge))
    except ScorerDefinitionError:
        return  # refused when the scorer is built (e.g. empty instructions): never at run time
    budget = Runtime(meter=JudgeMeter(budget=Budget(max_tokens=10**9)))
    scorer.run_sync(input="a", output="b", runtime=budget)  # a Result; must never raise


@given(st.one_of(st.booleans(), st.floats(), st.text(max_size=5), st.none(), st.integers()))
def test_any_unusable_token_budget_is_refused(value: Any) -> None:
    """``Budget(max_tokens=...)`` accepts ints >= 0 (never a bool or a float) or None."""
    if value is None or (is_int(value) and value >= 0):
        assert Budget(max_tokens=value).max_tokens == value
    else:
        with pytest.raises(ScorerDefinitionError, match=r"^Budget\.max_tokens must be an int"):
            Budget(max_tokens=value)
