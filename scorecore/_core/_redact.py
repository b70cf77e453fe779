"""Redacting secrets (API keys, auth tokens) from values before they are shown or stored."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["redact_secrets"]

REDACTED = "[REDACTED]"

# A key is secret when its joined lowercase name (separators dropped) ends in or contains one
# of these, or when one of its words (split on separators and camelCase) is one of _SECRET_WORDS.
_SECRET_SUFFIXES = ("key", "keys", "token", "auth")
_SECRET_PARTS = (
    "secret", "password", "passwd", "passphrase", "credential", "cookie", "authoriz",
    "apikey", "privatekey", "accesskey",
)
_SECRET_WORDS = frozenset({
    "token", "auth", "oauth", "pwd", "pat", "sk", "jwt", "bearer", "session", "sessionid",
    "signature", "private",
})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A whole string that starts like an HTTP credential ("Bearer …", "Basic …", "Token …").
_AUTH_VALUE = re.compile(r"^\s*(bearer|basic|token)\s+\S", re.IGNORECASE)
# Well-known credential shapes, found anywhere in a string (each replaced by REDACTED).
_SECRET_VALUE = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"  # OpenAI sk-…, sk-proj-…, Anthropic sk-ant-…
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret / restricted keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{20,}"  # GitHub fine-grained personal access tokens
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"  # AWS access key ids
    r"|AIza[A-Za-z0-9_-]{35}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"  # JSON web tokens
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*"  # a bearer token inside a longer text
    r")"
)


def _is_secret_key(key: str) -> bool:
    joined = re.sub(r"[^a-z0-9]", "", key.lower())
    if joined.endswith(_SECRET_SUFFIXES) or any(part in joined for part in _SECRET_PARTS):
        return True
    return any(w.lower() in _SECRET_WORDS for w in _WORDS.findall(key))



def redact_secrets(value: Any) -> Any:
    """A copy of ``value`` (nested mappings and lists) with secrets replaced by ``"[REDACTED]"``.

    Two rules, applied at any depth:

    - **Keys.** A value is replaced whole when its key names a credential. The key is read
      case-insensitively, with ``_``, ``-``, ``.`` and camelCase separating words: it is secret
      when the joined name ends in ``key``/``keys``/``token``/``auth`` (``apiKey``,
      ``openai_key``, ``x-api-key``, ``accessToken``, ``oauth``), contains ``secret``,
      ``password``, ``passwd``, ``passphrase``, ``credential``, ``cookie``, ``authoriz``
      (``client_secret``, ``set-cookie``, ``Authorization``), or has a word ``token``,
      ``auth``, ``session``, ``pat``, ``sk``, ``pwd``, ``jwt``, ``bearer``, ``signature``,
      ``private`` (``githubPat``, ``stripe_sk``, ``session_id``). Look-alikes are kept:
      ``max_tokens``, ``prompt_tokens``, ``tokenizer``, ``author``, ``path``.
    - **Values.** A string that starts like an HTTP credential (``"Bearer …"``, ``"Basic …"``,
      ``"Token …"``) is replaced whole; anywhere in any string, well-known credential shapes
      are replaced: ``sk-…`` (OpenAI, ``sk-proj-…``, Anthropic ``sk-ant-…``), Stripe
      ``sk_live_…``, GitHub ``ghp_…``/``gho_…``/``github_pat_…``, Slack ``xoxb-…``, AWS
      ``AKIA…``, Google ``AIza…``, JSON web tokens and ``Bearer <token>``.

    Everything else is returned as it was (tuples become lists). It is a safety net, not a
    guarantee: choose what is stored (``input_from=`` in live scoring) to keep secrets out.

    >>> redact_secrets({"userId": "u1", "headers": {"Authorization": "Bearer x", "X-Api-Key": "k"},
    ...                 "max_tokens": 10})
    {'userId': 'u1', 'headers': {'Authorization': '[REDACTED]', 'X-Api-Key': '[REDACTED]'}, \
'max_tokens': 10}
    >>> redact_secrets(["use sk-proj-abc123def456ghi789jkl0 now", {"githubPat": "p"}])
    ['use [REDACTED] now', {'githubPat': '[REDACTED]'}]
    """
    if isinstance(value, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and _is_secret_key(k) else redact_secrets(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_secrets(v) for v in value]
    if isinstance(value, str):
        if _AUTH_VALUE.match(value):
            return REDACTED
        return _SECRET_VALUE.sub(REDACTED, value)
    return value


def redacted_repr(value: Any) -> str:
    """``repr`` of ``value`` with its secrets redacted (for attrs ``repr=``)."""
    return repr(redact_secrets(value))
