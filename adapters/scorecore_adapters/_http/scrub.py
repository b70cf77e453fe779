"""Credentials kept out of what comes back: the secrets a judge holds (its key, the userinfo
of its ``base_url``, credential headers, credentials in ``ModelSettings.extra``) and their
removal from replies, errors and response headers."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import unquote, urlsplit, urlunsplit

import attrs
import httpx

from scorecore import redact_secrets
from scorecore.judge import JudgeResponse

__all__ = [
    "MIN_CONFIGURED_SECRET",
    "basic_credential",
    "extra_secrets",
    "header_secrets",
    "is_credential",
    "redact",
    "response_headers",
    "scrub_response",
    "split_userinfo",
]

_REDACTED: Final = "[REDACTED]"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-empty secret replaced by ``[REDACTED]``; no secret is left in
    the result, even one that overlaps the marker or re-forms once another is replaced.

    >>> redact("key=sk-123 again sk-123", ["sk-123"])
    'key=[REDACTED] again [REDACTED]'
    """
    keep = [secret for secret in secrets if secret]
    for secret in keep:
        text = text.replace(secret, _REDACTED)
    # Only a secret that is part of the marker (or spans a replacement) gets here; deleting
    # shortens the text on every pass, so this ends.
    while any(secret in text for secret in keep):
        for secret in keep:
            text = text.replace(secret, "")
    return text


def scrub_response(response: JudgeResponse, secrets: Iterable[str]) -> JudgeResponse:
    """``response`` with every secret removed from the text the provider sent back.

    A server may echo anything into a successful reply (a proxy that repeats the request, a
    model asked to print its headers); the reply text ends up in results, telemetry and
    stores, so it is scrubbed like an error body.
    """
    keep = tuple(secrets)
    if not keep:
        return response
    return attrs.evolve(
        response,
        text=redact(response.text, keep),
        finish_reason=None if response.finish_reason is None
        else redact(response.finish_reason, keep),
        model_id=None if response.model_id is None else redact(response.model_id, keep),
    )


def response_headers(response: httpx.Response, secrets: Iterable[str]) -> dict[str, str]:
    # Response headers only (request headers carry the key); duplicates are comma-joined.
    keep = tuple(secrets)
    return {k.lower(): redact(v, keep) for k, v in response.headers.items()}



def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its ``user:password@`` part, and the (percent-decoded) pair if any.

    >>> split_userinfo("https://u:p%40ss@host:8080/v1")
    ('https://host:8080/v1', ('u', 'p@ss'))
    >>> split_userinfo("http://localhost:11434/v1")
    ('http://localhost:11434/v1', None)
    """
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def basic_credential(user: str, password: str) -> str:
    # What httpx.BasicAuth puts after "Basic " (it encodes both parts as UTF-8).
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def is_credential(name: str, value: str, secrets: Iterable[str] = ()) -> bool:
    """Whether a header carries a credential: its name or value looks like one (the rules of
    :func:`scorecore.redact_secrets`: ``Authorization``, ``api-key``, ``X-…-Token``,
    ``Bearer …`` …), or it holds one of the model's own secrets."""
    if redact_secrets({name: value}) != {name: value}:
        return True
    return any(secret and secret in value for secret in secrets)


# A configured value shorter than this is no credential (``X-Auth-Enabled: 1``): scrubbing it
# from every reply would break the replies ("1" in every score), so it is left alone.
MIN_CONFIGURED_SECRET = 8
_AUTH_SCHEME = ("bearer ", "basic ", "token ")
_PUNCTUATION = ",.;:!?'\"()[]{}<>"


def _credential_forms(value: str) -> list[str]:
    """A credential value, and its token without an ``Authorization`` scheme."""
    forms = [value.strip()]
    lowered = forms[0].lower()
    for scheme in _AUTH_SCHEME:
        if lowered.startswith(scheme):
            forms.append(forms[0][len(scheme):].strip())
    return [form for form in forms if len(form) >= MIN_CONFIGURED_SECRET]


def header_secrets(headers: Mapping[str, object]) -> list[str]:
    """The values of the headers that carry credentials (``api-key``, ``X-…-Auth`` …)."""
    return [
        form for name, value in headers.items()
        if isinstance(value, str) and is_credential(name, value)
        for form in _credential_forms(value)
    ]


def extra_secrets(extra: Mapping[str, Any]) -> list[str]:
    """Credential values anywhere in ``ModelSettings.extra``: text under a key that names one
    (``api_key``, ``session_token`` …, at any depth), or text shaped like one (``sk-…``,
    ``Bearer …``), by the rules of :func:`scorecore.redact_secrets`."""
    found: list[str] = []
    stack: list[tuple[object, bool]] = [(extra, False)]
    while stack and len(found) < 1_000:
        value, secret_key = stack.pop()
        if isinstance(value, str):
            if secret_key or redact_secrets(value) == _REDACTED:
                found.extend(_credential_forms(value))
            elif redact_secrets(value) != value:
                # A credential inside a longer text ("use sk-… for billing"): its word.
                found.extend(
                    form for word in value.split()
                    if redact_secrets(word) != word
                    for form in _credential_forms(word.strip(_PUNCTUATION))
                )
        elif isinstance(value, Mapping):
            for key, item in value.items():
                named = isinstance(key, str) and redact_secrets({key: None}) != {key: None}
                stack.append((item, named))
        elif isinstance(value, list | tuple):
            stack.extend((item, secret_key) for item in value)
    return found
