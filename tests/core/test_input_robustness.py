"""Whatever input and output a typed scorer is given, run() answers with a value."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from scorecore import (
    InputMismatch,
    InvalidScore,
    JudgeConfig,
    PromptStep,
    ScorerDefinitionError,
    create_scorer,
)
from scorecore_adapters.testing import ScriptedJudge

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@dataclasses.dataclass
class Ticket:
    subject: str
    priority: int


TYPED = create_scorer(id="typed", description="d", input_type=Ticket).generate_score(lambda c: 1.0)
AGENT = create_scorer(id="agent", description="d", type="agent").generate_score(lambda c: 1.0)


@given(value=json_values, output=json_values)
def test_typed_scorers_never_raise_for_any_json_input(value: Any, output: Any) -> None:
    """Any JSON value as input/output is either structured or a Failure(InputMismatch)."""
    for scorer in (TYPED, AGENT):
        result = anyio.run(lambda s=scorer: s.run(input=value, output=output))
        if isinstance(result, Failure):
            assert isinstance(result.failure().cause, InputMismatch)
            assert result.failure().cause.errors
        else:
            assert isinstance(result, Success)


def test_non_mapping_input_names_the_value_and_type() -> None:
    """A number where a class is declared is reported with its value and type."""
    error = anyio.run(lambda: TYPED.run(input=42, output="x")).failure()
    assert isinstance(error.cause, InputMismatch)
    assert error.cause.errors == (
        "expected a mapping or an instance of Ticket, got 42 of type int @ input",
    )


def test_string_output_for_an_agent_scorer_is_not_split_into_messages() -> None:
    """A plain string output is a mismatch, not five one-letter messages."""
    error = anyio.run(lambda: AGENT.run(input={}, output="hello")).failure()
    assert isinstance(error.cause, InputMismatch)
    assert any("expected a list, got 'hello'" in e for e in error.cause.errors)


def test_prompt_step_for_generate_score_is_rejected_at_build_time() -> None:
    """generate_score needs a ScorePromptStep; a PromptStep would always fail after a paid call."""
    judge = JudgeConfig(model=ScriptedJudge([]), instructions="Judge.")
    builder = create_scorer(id="s", description="d", judge=judge)
    with pytest.raises(ScorerDefinitionError, match="ScorePromptStep"):
        builder.generate_score(PromptStep(description="d", create_prompt=lambda c: "rate"))  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("value", "mentions_bool"), [(True, True), (float("nan"), False), ("0.5", False)]
)
def test_invalid_score_message_mentions_bool_only_for_bools(
    value: Any, mentions_bool: bool
) -> None:
    """The InvalidScore message explains bools only when a bool was returned."""
    scorer = create_scorer(id="s", description="d").generate_score(lambda c: value)
    error = anyio.run(lambda: scorer.run(input="q", output="a")).failure()
    assert isinstance(error.cause, InvalidScore)
    assert ("bool is not a score" in str(error)) is mentions_bool
    assert repr(value)[:10] in str(error)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: JudgeConfig(model="gpt-4o", instructions="x"), "JudgeConfig.model"),  # type: ignore[arg-type]
        (lambda: PromptStep(description="d", create_prompt=5), "PromptStep.create_prompt"),  # type: ignore[arg-type]
        (
            lambda: PromptStep(description="d", create_prompt=str, output_schema={"type": "nope"}),
            "PromptStep.output_schema",
        ),
        (
            lambda: JudgeConfig(
                model=ScriptedJudge([]), instructions="x", max_processor_retries=-1
            ),
            "JudgeConfig.max_processor_retries",
        ),
    ],
)
def test_misconfigured_values_raise_definition_errors_naming_the_field(
    build: Any, field: str
) -> None:
    """Misuse of the configuration values is a ScorerDefinitionError naming field and value."""
    with pytest.raises(ScorerDefinitionError) as info:
        build()
    assert info.value.field == field
    assert field in str(info.value)


@attrs.frozen
class Labelled:
    title: str
    labels: dict[str, str]


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


LABELLED = create_scorer(id="labelled", description="d", input_type=Labelled) \
    .generate_score(lambda c: 1.0)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({1: "x"}, "input"),
        ({"title": "t", "labels": {}, 1: "x", None: "y"}, "input"),
        ({"title": "t", "labels": {}, ("t",): "x"}, "input"),
        ({"title": _nested(100_000), "labels": {}}, "input.title"),
        ({"title": _nested(900), "labels": {}}, "input.title"),
        ({"title": 10**5000, "labels": {}}, "input.title"),
        ({"title": "t", "labels": {1: "x"}}, "input.labels"),
        ({"title": "t", "labels": {"k": _nested(100_000)}}, "input.labels"),
    ],
    ids=["int-key-only", "int-and-none-keys", "tuple-key", "deep-100k", "deep-900", "huge-int",
         "int-key-in-dict-field", "deep-in-dict-field"],
)
@pytest.mark.anyio
async def test_odd_keys_and_deep_values_are_input_mismatches_naming_the_field(
    anyio_backend: str, value: Any, path: str
) -> None:
    """Non-str keys, deep values and huge ints in typed input are an InputMismatch, never raised."""
    error = (await LABELLED.run(input=value, output="x")).failure()
    assert error.failed_step == "input"
    assert isinstance(error.cause, InputMismatch)
    assert any(f"@ {path}" in e for e in error.cause.errors), error.cause.errors
    assert all(len(e) < 600 for e in error.cause.errors)
