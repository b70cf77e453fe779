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

    >>> redact_url("postgresql://me:s3cret@db:5432/scores")
    'postgresql://me:***@db:5432/scores'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


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
