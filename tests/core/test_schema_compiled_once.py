"""A prompt step's output schema is compiled when the step is added, never during a run."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest

import scorecore._core._output_schema
from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
from scorecore._core._output_schema import compile_schema
from scorecore_adapters.testing import ScriptedJudge

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@contextmanager
def counting_compiles() -> Iterator[list[int]]:
    """Count calls of ``compile_schema`` (a profile hook: nothing is patched)."""
    calls: list[int] = []
    code = compile_schema.__code__

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code is code:
            calls.append(1)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


async def test_runs_compile_no_schema(anyio_backend: str) -> None:
    """Adding the steps compiles their schemas; six runs (one with the fallback) compile none."""
    replies: list[Any] = [{"n": 2}, {"score": 0.5}] * 5 + ["not json", {"n": 1}, {"score": 1}]
    judge = ScriptedJudge(replies)
    with counting_compiles() as at_build:
        scorer = (
            create_scorer(id="s", description="d",
                          judge=JudgeConfig(model=judge, instructions="Be strict."))
            .analyze(PromptStep(description="count", create_prompt=lambda ctx: "Count",
                                output_schema=SCHEMA))
            .generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate"))
        )
    assert at_build
    with counting_compiles() as during_runs:
        for _ in range(5):
            assert (await scorer.run(input="q", output="a")).unwrap().score == 0.5
        assert (await scorer.run(input="q", output="a")).unwrap().analyze_step_result == {"n": 1}
    assert during_runs == []
    assert not hasattr(scorecore._core._output_schema, "_COMPILED")


def _count_prompt(ctx: Any) -> str:
    return f"Count the words of {ctx.run.output}"


def _rate_prompt(ctx: Any) -> str:
    return "Rate"


async def test_a_pickled_scorer_compiles_its_schemas_again(anyio_backend: str) -> None:
    """A scorer sent to another process (pickled) carries its schemas, compiled again there."""
    judge = ScriptedJudge([{"n": 2}, {"score": 0.5}, {"n": 2}, {"score": 0.5}])
    scorer = (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions="Be strict."))
        .analyze(PromptStep(description="count", create_prompt=_count_prompt,
                            output_schema=SCHEMA))
        .generate_score(ScorePromptStep(description="rate", create_prompt=_rate_prompt))
    )
    copy = pickle.loads(pickle.dumps(scorer))  # noqa: S301 - our own bytes
    with counting_compiles() as during_runs:
        first = (await scorer.run(input="q", output="a", run_id="r")).unwrap()
        again = (await copy.run(input="q", output="a", run_id="r")).unwrap()
    assert during_runs == []
    assert (again.score, again.analyze_step_result) == (first.score, first.analyze_step_result)
    assert again.analyze_prompt == first.analyze_prompt
