"""What both stores share besides the table: the clock, store URLs without passwords, errors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from scorecore.evals import StoreError

__all__ = ["redact_url"]

Now: TypeAlias = Callable[[], datetime]


def utc_now() -> datetime:
    """The wall clock stores stamp rows with by default."""
    return datetime.now(UTC)


def redact_url(url: str) -> str:
    """The store URL with any password replaced by ``***`` (for messages and logs).

    Both places libpq reads a password from are masked: the userinfo and a ``password``
    query parameter.

    >>> redact_url("postgresql://me:s3cret@db:5432/scores")
    'postgresql://me:***@db:5432/scores'
    >>> redact_url("postgresql://db/scores?sslmode=require&password=s3cret")
    'postgresql://db/scores?sslmode=require&password=***'
    """
    parts = urlsplit(url)
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}:***@{netloc}")
    if parts.query:
        pairs = [
            f"{name}=***" if name.strip().lower() == "password" else piece
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
