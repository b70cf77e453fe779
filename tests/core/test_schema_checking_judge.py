"""A judge model that can check a schema (``SchemaChecker``) is asked when the scorer is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import pytest
from returns.result import Result, Success

from scorecore import (
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    StepJudge,
    create_scorer,
)
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, SchemaChecker
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime

pytestmark = pytest.mark.anyio


class PickyJudge:
    """A judge refusing every schema that has a ``not`` keyword anywhere; records what it saw."""

    model_id = "picky-1"
    provider = "picky"
    supports_structured_output = True

    def __init__(self) -> None:
        self.checked: list[Mapping[str, Any]] = []

    def check_output_schema(self, schema: Mapping[str, Any], /) -> str | None:
        self.checked.append(schema)
        return "it cannot answer 'not' schemas" if "not" in repr(schema) else None

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        return Success(JudgeResponse(text='{"score": 1}'))


@attrs.frozen
class Verdict:
    ok: bool


def test_a_judge_with_the_capability_satisfies_the_protocol() -> None:
    assert isinstance(PickyJudge(), SchemaChecker)
    assert not isinstance(ScriptedJudge([]), SchemaChecker)


def test_a_schema_the_judge_cannot_answer_is_refused_at_build_naming_it() -> None:
    judge = PickyJudge()
    bad = {"type": "object", "not": {"required": ["x"]}}
    builder = create_scorer(id="s", description="d",
                            judge=JudgeConfig(model=judge, instructions="be strict"))
    with pytest.raises(ScorerDefinitionError) as caught:
        builder.analyze(PromptStep(description="a", output_schema=bad,
                                   create_prompt=lambda ctx: "p"))
    error = caught.value
    assert error.scorer_id == "s"
    assert error.step == "analyze"
    assert error.field == "output_schema"
    assert "picky-1" in str(error)
    assert "it cannot answer 'not' schemas" in str(error)


def test_the_judge_sees_the_generated_schema_and_the_default_score_schema() -> None:
    judge = PickyJudge()
    (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions="be strict"))
        .analyze(PromptStep(description="a", output_type=Verdict, create_prompt=lambda ctx: "p"))
        .generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "rate"))
        .generate_reason(PromptStep(description="why", create_prompt=lambda ctx: "why"))
    )
    # analyze: the schema generated from Verdict; generate_score: the default score schema;
    # generate_reason asks for plain text, so there is nothing to check.
    assert [s["required"] for s in judge.checked] == [["ok"], ["score"]]


def test_a_step_judge_is_checked_too() -> None:
    picky = PickyJudge()
    builder = create_scorer(id="s", description="d",
                            judge=JudgeConfig(model=ScriptedJudge([]), instructions="i"))
    with pytest.raises(ScorerDefinitionError, match="picky-1"):
        builder.analyze(PromptStep(description="a", output_schema={"not": {"type": "null"}},
                                   judge=StepJudge(model=picky), create_prompt=lambda ctx: "p"))


async def test_an_accepted_schema_runs_as_usual(anyio_backend: str) -> None:
    judge = PickyJudge()
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions="i"),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "rate"))
    runtime, _ = virtual_runtime()
    result = await scorer.run(input="q", output="a", runtime=runtime)
    assert result.unwrap().score == 1
