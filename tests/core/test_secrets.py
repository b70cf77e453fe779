"""Credentials given with a run never show up in reprs of runs, results or errors."""

from __future__ import annotations

import anyio

from scorecore import JudgeConfig, ModelSettings, create_scorer
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters.testing import ScriptedJudge

TOKEN = "sk-proj-abc123def456ghi789jkl0"


def test_request_context_and_extra_are_redacted_in_result_and_error_reprs() -> None:
    """repr() of a result, and of a failure's partial result, hides secret keys and token shapes."""
    ok = create_scorer(id="ok", description="d").generate_score(lambda ctx: 1.0)
    bad = create_scorer(id="bad", description="d").generate_score(lambda ctx: 1 / 0)
    kwargs = {
        "input": "q",
        "output": "a",
        "request_context": {"headers": {"Authorization": f"Bearer {TOKEN}"}, "user": "u1"},
        "extra": {"api_key": TOKEN, "note": f"key is {TOKEN}"},
    }
    result = anyio.run(lambda: ok.run(**kwargs)).unwrap()
    error = anyio.run(lambda: bad.run(**kwargs)).failure()
    for text in (repr(result), repr(result.run), repr(error.partial), str(error), repr(error)):
        assert TOKEN not in text
    assert "u1" in repr(result.run)  # ordinary values stay readable
    assert result.run.extra["api_key"] == TOKEN  # the values themselves are untouched


def test_model_settings_extra_is_redacted_in_reprs() -> None:
    """A credential in ModelSettings.extra never shows in the repr of the settings, of a
    JudgeConfig or of a JudgeRequest; the values sent to the provider are untouched."""
    settings = ModelSettings(extra={"api_key": TOKEN, "body": {"note": f"key {TOKEN}"},
                                    "user": "u1"})
    config = JudgeConfig(model=ScriptedJudge([]), instructions="i", model_settings=settings)
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="p")], settings=settings)
    for text in (repr(settings), repr(config), repr(request)):
        assert TOKEN not in text
        assert "u1" in text  # ordinary values stay readable
    assert settings.extra["api_key"] == TOKEN
