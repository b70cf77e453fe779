"""The allow-requests switch: HTTP judges refuse to run inside tests unless allowed."""

from __future__ import annotations

import httpx
import pytest
from returns.result import Failure

from scorecore import JudgeModel
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters import _guard
from scorecore_adapters._guard import (
    ALLOW_MODEL_REQUESTS_ENV,
    allow_model_requests,
    model_requests_allowed,
    set_allow_model_requests,
)
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel

REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),))


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_MODEL_REQUESTS_ENV, raising=False)
    monkeypatch.setattr(_guard, "_override", None)


def models(client: httpx.AsyncClient) -> list[JudgeModel]:
    return [
        OpenAIChatModel("gpt-4o", api_key="sk-x", client=client),
        AnthropicModel("claude-x", api_key="sk-y", client=client),
    ]


def test_refused_inside_pytest_by_default() -> None:
    """PYTEST_CURRENT_TEST is set while a test runs, so requests are refused."""
    assert model_requests_allowed() is False


def test_allowed_outside_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a test run (no PYTEST_CURRENT_TEST) requests are allowed."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert model_requests_allowed() is True
    with allow_model_requests(False):
        assert model_requests_allowed() is False


def test_context_manager_nests_and_restores() -> None:
    """allow_model_requests restores the previous setting, even on error."""
    seen: list[bool] = []

    def inner() -> None:
        with allow_model_requests(False):
            seen.append(model_requests_allowed())
            raise RuntimeError

    with allow_model_requests():
        assert model_requests_allowed()
        with pytest.raises(RuntimeError):
            inner()
        assert model_requests_allowed()
    assert not model_requests_allowed()
    assert seen == [False]


def test_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment variable allows or refuses; an explicit override still wins."""
    monkeypatch.setenv(ALLOW_MODEL_REQUESTS_ENV, "1")
    assert model_requests_allowed()
    monkeypatch.setenv(ALLOW_MODEL_REQUESTS_ENV, "false")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert not model_requests_allowed()
    with allow_model_requests():
        assert model_requests_allowed()


def test_set_and_reset() -> None:
    """set_allow_model_requests(None) returns to the environment's default."""
    set_allow_model_requests(True)
    assert model_requests_allowed()
    set_allow_model_requests(None)
    assert not model_requests_allowed()


@pytest.mark.anyio
async def test_judges_refuse_without_network(anyio_backend: str) -> None:
    """A refused judge returns a non-retryable failure explaining how to allow requests."""
    calls: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        for model in models(client):
            result = await model.generate(REQUEST)
            assert isinstance(result, Failure)
            error = result.failure()
            assert error.code == "model_requests_disabled"
            assert error.kind == "unknown"
            assert not error.is_retryable
            assert "allow_model_requests" in error.message
            assert ALLOW_MODEL_REQUESTS_ENV in error.message
            assert "sk-" not in error.message
        with allow_model_requests():
            for model in models(client):
                assert (await model.generate(REQUEST)).failure().status == 500
    assert len(calls) == 2


@pytest.mark.anyio
async def test_refused_model_creates_no_client(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused call with no injected client allocates nothing (nothing to close)."""
    created: list[object] = []
    monkeypatch.setattr(httpx, "AsyncClient", lambda *a, **k: created.append(a))
    model = OpenAIChatModel("gpt-4o", api_key="k")
    assert isinstance(await model.generate(REQUEST), Failure)
    assert created == []
