"""One HTTP exchange of a batch API, every failure as a JudgeError (the same mapping as the
synchronous judges: :mod:`scorecore_adapters._http.judge`), and the JSONL the result files hold."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError
from scorecore_adapters._http.judge import (
    HttpJudgeBase,
    error_from_exception,
    error_from_response,
    malformed,
)

__all__ = ["json_body", "jsonl_lines", "send"]


async def send(
    model: HttpJudgeBase, method: str, url: str, *, json_body: Mapping[str, Any] | None = None,
    files: Mapping[str, Any] | None = None, data: Mapping[str, str] | None = None,
) -> Result[httpx.Response, JudgeError]:
    """Send one request with ``model``'s client, headers and credentials; a 2xx reply is
    ``Success``, anything else the ``JudgeError`` the synchronous judge would report."""
    provider = model.provider
    secrets = model._secrets()
    headers = dict(model._headers())
    kwargs: dict[str, Any] = {}
    if json_body is not None:
        kwargs["content"] = json.dumps(json_body, ensure_ascii=False).encode()
        headers["content-type"] = "application/json"
    if files is not None:
        kwargs["files"] = files
        kwargs["data"] = data or {}
    try:
        client = await model._client_for_call()
        response = await client.request(
            method, url, headers=headers, timeout=model._timeout,
            auth=httpx.USE_CLIENT_DEFAULT if model._basic_auth is None
            else model._basic_auth,
            **kwargs,
        )
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        return Failure(error_from_exception(exc, provider=provider, secrets=secrets))
    if not response.is_success:
        return Failure(error_from_response(response, provider=provider, secrets=secrets))
    return Success(response)


def json_body(model: HttpJudgeBase, response: httpx.Response) -> Result[dict[str, Any], JudgeError]:
    """The reply's JSON object, or the malformed-reply error."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return Failure(malformed("expected a JSON object", provider=model.provider,
                                 response=response, secrets=model._secrets()))
    return Success(body)


def jsonl_lines(text: str) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each non-blank line of a JSONL file: the raw line and its object (``None`` when the
    line is not a JSON object)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        yield line, value if isinstance(value, dict) else None
