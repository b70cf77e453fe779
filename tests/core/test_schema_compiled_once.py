"""A prompt step's output schema is compiled when the step is added, never during a run."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

import scorecore._structured
from scorecore import JudgeConfig, PromptStep, ScorePromptStep, create_scorer
from scorecore_adapters.testing import ScriptedJudge

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def test_runs_build_no_validator(anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding the steps compiles their schemas; six runs (one with the fallback) compile none."""
    built: list[Any] = []
    real = Draft202012Validator

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(scorecore._structured, "Draft202012Validator", counting)
    replies: list[Any] = [{"n": 2}, {"score": 0.5}] * 5 + ["not json", {"n": 1}, {"score": 1}]
    judge = ScriptedJudge(replies)
    scorer = (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions="Be strict."))
        .analyze(PromptStep(description="count", create_prompt=lambda ctx: "Count",
                            output_schema=SCHEMA))
        .generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate"))
    )
    at_build = len(built)
    assert at_build >= 1
    for _ in range(5):
        assert (await scorer.run(input="q", output="a")).unwrap().score == 0.5
    assert (await scorer.run(input="q", output="a")).unwrap().analyze_step_result == {"n": 1}
    assert len(built) == at_build
    assert not hasattr(scorecore._structured, "_COMPILED")
