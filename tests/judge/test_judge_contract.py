"""A judge model that breaks its contract still leaves the run a value."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scorecore import JudgeConfig, JudgeFailed, ScorePromptStep, create_scorer
from scorecore.judge import JudgeRequest, JudgeResponse
from scorecore_adapters.testing import FunctionJudge


def _scorer(model: Any) -> Any:
    return create_scorer(
        id="s", description="d", judge=JudgeConfig(model=model, instructions="Judge.")
    ).generate_score(ScorePromptStep(description="score", create_prompt=lambda ctx: "rate"))


@pytest.mark.anyio
async def test_raising_judge_model_is_a_failure(anyio_backend: str) -> None:
    """An exception from JudgeModel.generate becomes a non-retryable unknown JudgeError."""

    def explode(request: JudgeRequest) -> Any:
        raise RuntimeError("boom")

    result = await _scorer(FunctionJudge(explode)).run(input="q", output="a")
    error = result.failure()
    assert isinstance(error.cause, JudgeFailed)
    assert error.cause.error.kind == "unknown"
    assert error.cause.error.exception_type == "RuntimeError"
    assert "boom" in error.cause.error.message
    assert error.partial.judge["generate_score"][0].status == "failed"


class _WrongShape:
    model_id = "wrong"
    provider = "test"
    supports_structured_output = False

    async def generate(self, request: JudgeRequest, /) -> Any:
        return {"score": 1}


@pytest.mark.anyio
async def test_judge_model_returning_a_non_result_is_a_failure(anyio_backend: str) -> None:
    """A model returning something other than a Result is reported, not crashed on."""
    result = await _scorer(_WrongShape()).run(input="q", output="a")
    error = result.failure()
    assert isinstance(error.cause, JudgeFailed)
    assert "must return Success(JudgeResponse)" in error.cause.error.message


@pytest.mark.parametrize(("fields", "error", "says"), [
    ({"text": 1}, TypeError, "'text' must be <class 'str'>"),
    ({"text": None}, TypeError, "'text' must be <class 'str'>"),
    ({"text": "x", "structured_output": "bogus"}, ValueError, "'structured_output' must be in"),
    ({"text": "x", "structured_output": ["native"]}, ValueError, "'structured_output' must be in"),
])
def test_a_reply_of_the_wrong_type_or_mode_is_refused_naming_the_field(
    fields: dict[str, Any], error: type[Exception], says: str
) -> None:
    """A reply's text must be a str and its mode one the core knows; a known mode, a str
    subclass and no mode at all are taken."""
    with pytest.raises(error, match=re.escape(says)):
        JudgeResponse(**fields)
    assert JudgeResponse(text=_Text("t"), structured_output="json_object").text == "t"
    assert JudgeResponse(text="t", structured_output=None).structured_output is None


class _Text(str):
    __slots__ = ()
