"""Checked by ``mypy --strict``, never executed: typed judge output and step result types."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal, TypedDict, assert_type

import attrs

from scorecore import (
    JudgeConfig,
    NotScorable,
    PromptStep,
    ScorePromptStep,
    Scorer,
    ScorerBuilder,
    StepContext,
    create_scorer,
    not_scorable,
)
from scorecore_adapters.testing import ScriptedJudge


@attrs.frozen
class Claims:
    claims: list[str]
    """Claims not supported by the context."""


@dataclasses.dataclass
class Verdict:
    supported: bool
    confidence: float


class Labels(TypedDict):
    labels: list[str]


class Tone(enum.Enum):
    CALM = "calm"
    ANGRY = "angry"


@attrs.frozen
class Question:
    text: str


judge = JudgeConfig(model=ScriptedJudge([]), instructions="Be strict.")

# --- PromptStep / ScorePromptStep are generic in the output type --------------------------------

assert_type(
    PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims),
    PromptStep[Any, Claims],
)
assert_type(
    PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=list[Verdict]),
    PromptStep[Any, list[Verdict]],
)
assert_type(
    PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Literal["a", "b"]),
    PromptStep[Any, Literal["a", "b"]],
)
assert_type(
    PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims | None),
    PromptStep[Any, Claims | None],
)
assert_type(
    PromptStep(description="d", create_prompt=lambda ctx: "p", output_schema={"type": "object"}),
    PromptStep[Any, Any],
)

# --- later steps see the typed result; a field typo is an error ---------------------------------

typed = (
    create_scorer(id="t", description="d", judge=judge, input_type=Question, output_type=str)
    .preprocess(PromptStep(
        description="Label", output_type=Labels,
        create_prompt=lambda ctx: f"Label: {ctx.run.input.text}",
    ))
    .analyze(PromptStep(
        description="Find unsupported claims", output_type=Claims,
        create_prompt=lambda ctx: f"{ctx.results.preprocess_step_result['labels']}",
    ))
)
assert_type(typed, ScorerBuilder[Question, str, Labels, Claims])
typed.generate_score(lambda ctx: 1.0 - min(1.0, len(ctx.results.analyze_step_result.claims) / 5))
typed.generate_score(
    lambda ctx: len(ctx.results.analyze_step_result.claim)  # type: ignore[attr-defined]
)
typed.generate_score(
    lambda ctx: len(ctx.results.preprocess_step_result["label"])  # type: ignore[typeddict-item]
)

# on an untyped scorer too: no Any reaches the steps through the judge
untyped_typed = create_scorer(id="u", description="d", judge=judge).analyze(PromptStep(
    description="Judge", output_type=Verdict, create_prompt=lambda ctx: str(ctx.run.output),
))
assert_type(untyped_typed, ScorerBuilder[Any, Any, None, Verdict])
untyped_typed.generate_score(
    lambda ctx: ctx.results.analyze_step_result.confidence if ctx.results.analyze_step_result
    .supported else 0.0
)
untyped_typed.generate_score(
    lambda ctx: ctx.results.analyze_step_result.confidance  # type: ignore[attr-defined]
)

# a Literal / Enum answer
tone = create_scorer(id="tone", description="d", judge=judge).analyze(PromptStep(
    description="Tone", output_type=Tone, create_prompt=lambda ctx: "tone?",
))
assert_type(tone, ScorerBuilder[Any, Any, None, Tone])

# --- ScorePromptStep: ctx.judge_output is the output type -----------------------------------------

scored = typed.generate_score(ScorePromptStep(
    description="Rate", output_type=Verdict,
    create_prompt=lambda ctx: f"{len(ctx.results.analyze_step_result.claims)} claims",
    calculate_score=lambda ctx: ctx.judge_output.confidence if ctx.judge_output.supported else 0.0,
))
assert_type(scored, Scorer[Question, str, Labels, Claims])
typed.generate_score(ScorePromptStep(
    description="Rate", output_type=Verdict, create_prompt=lambda ctx: "rate",
    calculate_score=lambda ctx: ctx.judge_output.confident,  # type: ignore[attr-defined]
))
typed.generate_score(ScorePromptStep(
    description="Rate", output_type=Verdict, create_prompt=lambda ctx: "rate",
    calculate_score=lambda ctx: str(  # type: ignore[arg-type, return-value]
        ctx.judge_output.confidence
    ),
))
# without output_type the judge output is JSON (Any), as before
typed.generate_score(ScorePromptStep(
    description="Rate", create_prompt=lambda ctx: "rate",
    calculate_score=lambda ctx: float(ctx.judge_output["score"]),
))

# --- async steps keep their result type, typed or untyped scorer -------------------------------


async def fetch(ctx: Any) -> list[str]:
    return []


untyped = create_scorer(id="u", description="d")
fetched = untyped.preprocess(fetch)
assert_type(fetched, ScorerBuilder[Any, Any, list[str], None])
fetched.generate_score(
    lambda ctx: len(ctx.results.preprocess_step_result.nonexistent)  # type: ignore[attr-defined]
)


async def fetch_typed(ctx: StepContext[Question, str, None, None]) -> tuple[int, str]:
    return (1, ctx.run.input.text)


assert_type(
    create_scorer(id="t", description="d", input_type=Question, output_type=str)
    .preprocess(fetch_typed),
    ScorerBuilder[Question, str, tuple[int, str], None],
)

# --- a named step that may answer not_scorable ---------------------------------------------------


@attrs.frozen
class Prepared:
    words: int


def prepare(ctx: StepContext[Any, Any, None, None]) -> Prepared | NotScorable:
    text = str(ctx.run.output)
    return not_scorable("empty output") if not text else Prepared(words=len(text.split()))


prepared = untyped.preprocess(prepare)
assert_type(prepared, ScorerBuilder[Any, Any, Prepared, None])
prepared.generate_score(lambda ctx: min(1.0, ctx.results.preprocess_step_result.words / 10))

# --- rejections ----------------------------------------------------------------------------------

PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=3)  # type: ignore[arg-type]
typed.generate_score(lambda ctx: "high")  # type: ignore[arg-type, return-value]
