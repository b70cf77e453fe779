"""What both stores share besides the table: the clock, store URLs without passwords, errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeAlias
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from scorecore.evals import StoreError

__all__ = ["redact_url"]

Now: TypeAlias = Callable[[], datetime]

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# libpq's keyword/value form: ``password = 's3 cr\'et'`` (quoted, backslash escapes) or bare.
_KEYWORD_PASSWORD = re.compile(
    r"""(\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*(?:'|$)|[^\s]*)""", re.IGNORECASE | re.DOTALL
)


def utc_now() -> datetime:
    """The wall clock stores stamp rows with by default."""
    return datetime.now(UTC)


def redact_url(url: str) -> str:
    """The store URL with any password replaced by ``***`` (for messages and logs).

    Every place libpq reads a password from is masked: the userinfo, a ``password`` query
    parameter (its name percent-decoded first), and ``password=…`` in a key=value DSN.

    >>> redact_url("postgresql://me:s3cret@db:5432/scores")
    'postgresql://me:***@db:5432/scores'
    >>> redact_url("postgresql://db/scores?sslmode=require&password=s3cret")
    'postgresql://db/scores?sslmode=require&password=***'
    >>> redact_url("host=db password='s3 cret' user=me")
    'host=db password=*** user=me'
    """
    if not _URL_SCHEME.match(url):
        # A libpq key=value DSN (``host=db password=s3cret``), or a path: mask every password.
        return _KEYWORD_PASSWORD.sub(r"\g<1>***", url)
    parts = urlsplit(url)
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}:***@{netloc}")
    if parts.query:
        pairs = [
            f"{name}=***" if unquote_plus(name).strip().lower() == "password" else piece
            for piece in parts.query.split("&")
            for name in [piece.split("=", 1)[0]]
        ]
        parts = parts._replace(query="&".join(pairs))
    return urlunsplit(parts)


def describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def import_psycopg(store: str) -> Any:
    """The psycopg module, or a :class:`StoreError` naming the extra that installs it."""
    try:
        import psycopg  # noqa: PLC0415 - optional dependency, only needed for PostgreSQL
    except ImportError as exc:
        raise StoreError(
            f"store {store} needs the PostgreSQL driver psycopg, which cannot be imported "
            f"({describe(exc)}): pip install 'scorecore[postgres]'",
            store=store, operation="open",
        ) from exc
    return psycopg
