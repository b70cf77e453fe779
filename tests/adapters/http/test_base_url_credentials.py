"""Credentials written into ``base_url`` never leak into reprs, errors or scorer results."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from returns.result import Failure

from scorecore import JudgeConfig, JudgeFailed, JudgeModel, ScorePromptStep, create_scorer
from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest
from scorecore_adapters._http.scrub import split_userinfo
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel

pytestmark = pytest.mark.usefixtures("allow_requests")

PASSWORD = "sk-SECRET-pass-0123456789"
USER = "alice"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
ENCODED_PASSWORD = "sk%2DSECRET%2Dpass%2D0123456789"  # the same password, percent-encoded
REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="Score this."),))
PROVIDERS = ["openai", "anthropic"]
SECRETS = (PASSWORD, BASIC, ENCODED_PASSWORD, f"{USER}:{PASSWORD}")


def make_model(
    provider: str, client: httpx.AsyncClient | None = None, *, password: str = PASSWORD
) -> JudgeModel:
    if provider == "openai":
        return OpenAIChatModel(
            "gpt-4o", base_url=f"https://{USER}:{password}@judge.test/v1/", client=client
        )
    return AnthropicModel("claude-test", base_url=f"https://{USER}:{password}@judge.test",
                          api_key="ak-test", client=client)


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {text!r}"


def test_split_userinfo() -> None:
    """userinfo is removed from the URL and percent-decoded; other URLs are unchanged."""
    assert split_userinfo("https://u:p%40ss@h:1/v1") == ("https://h:1/v1", ("u", "p@ss"))
    assert split_userinfo("https://token@h/v1") == ("https://h/v1", ("token", ""))
    assert split_userinfo("https://h/v1@x") == ("https://h/v1@x", None)
    assert split_userinfo("http://[::1]:8080/v1") == ("http://[::1]:8080/v1", None)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("password", [PASSWORD, ENCODED_PASSWORD])
def test_repr_and_base_url_hide_userinfo(provider: str, password: str) -> None:
    """repr and base_url show the URL without user:password."""
    model = make_model(provider, password=password)
    assert isinstance(model, OpenAIChatModel | AnthropicModel)
    expected = "https://judge.test/v1" if provider == "openai" else "https://judge.test"
    assert model.base_url == expected
    assert f"base_url={expected!r}" in repr(model)
    assert_clean(repr(model))
    assert USER not in repr(model)


def echo(request: httpx.Request) -> httpx.Response:
    """A server that echoes the request's Authorization header everywhere it can."""
    auth = request.headers.get("authorization", "")
    return httpx.Response(
        400,
        headers={"x-echo-authorization": auth, "www-authenticate": f'Basic realm="{auth}"'},
        json={"error": {
            "message": f"bad credentials {auth} for {request.url} ({USER}:{PASSWORD})",
            "type": "invalid_request_error",
            "code": auth,
        }},
    )


def assert_error_clean(error: JudgeError) -> None:
    for node in error.chain():
        assert_clean(repr(node))
        assert_clean(node.message)
        assert_clean(json.dumps(dict(node.headers)))


@pytest.mark.anyio
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("password", [PASSWORD, ENCODED_PASSWORD])
async def test_echoed_basic_credential_is_redacted(
    anyio_backend: str, provider: str, password: str
) -> None:
    """The userinfo goes out as Basic auth (URL without it); an echo of it is scrubbed."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return echo(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        result = await make_model(provider, client, password=password).generate(REQUEST)
    assert isinstance(result, Failure)
    (request,) = seen
    assert request.headers["authorization"] == f"Basic {BASIC}"
    assert request.url.userinfo == b""
    assert request.url.host == "judge.test"
    if provider == "anthropic":
        assert request.headers["x-api-key"] == "ak-test"
    error: JudgeError = result.failure()
    assert error.status == 400
    assert "[REDACTED]" in error.message
    assert error.headers["x-echo-authorization"] == "Basic [REDACTED]"
    assert error.code == "Basic [REDACTED]"
    assert_error_clean(error)


@pytest.mark.anyio
async def test_basic_auth_wins_over_the_api_key(anyio_backend: str) -> None:
    """As httpx does for userinfo, the Basic credential replaces the Bearer key header."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return echo(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        model = OpenAIChatModel("gpt-4o", base_url=f"https://{USER}:{PASSWORD}@judge.test/v1",
                                api_key="sk-bearer-key", client=client)
        result = await model.generate(REQUEST)
    assert seen[0].headers["authorization"] == f"Basic {BASIC}"
    assert_error_clean(result.failure())
    assert "sk-bearer-key" not in repr(model)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_failed_scorer_result_is_clean(anyio_backend: str, provider: str) -> None:
    """A scorer whose judge call fails with an echoed credential shows no secret anywhere."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(echo)) as client:
        model = make_model(provider, client)
        scorer = create_scorer(
            id="quality",
            description="score",
            judge=JudgeConfig(model=model, instructions="Be strict."),
        ).generate_score(ScorePromptStep(description="score", create_prompt=lambda _c: "rate"))
        result = await scorer.run(input="q", output="a")
    failure = result.failure()
    assert isinstance(failure.cause, JudgeFailed)
    assert failure.cause.error.status == 400
    assert_error_clean(failure.cause.error)
    for text in (repr(result), str(failure), repr(failure), repr(failure.partial)):
        assert_clean(text)
