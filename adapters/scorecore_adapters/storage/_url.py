"""Store and cache URLs, parsed once: which backend a URL names, and where it points."""

from __future__ import annotations

from typing import Literal, TypeAlias, final

import attrs

from scorecore_adapters.storage._common import redact_url

__all__ = ["StoreUrl"]

UrlKind: TypeAlias = Literal["sqlite", "postgres", "memory"]
_POSTGRES = ("postgresql://", "postgres://")


@final
@attrs.frozen(kw_only=True)
class StoreUrl:
    """A score store's or judge cache's URL, parsed once: its backend and where it points.

    :func:`~scorecore_adapters.storage.open_store`, :func:`~scorecore_adapters.cache.open_cache`
    and Ray's checks dispatch on :attr:`kind` instead of re-reading the text. A URL that names
    no backend is one ``ValueError`` naming it, its password masked (:func:`redact_url`); the
    repr masks it too.

    Attributes:
        kind: ``"sqlite"`` (a file, or ``:memory:``), ``"postgres"`` (``postgresql://…`` or
            ``postgres://…``) or ``"memory"`` (a judge cache in memory: ``memory:``).
        url: the URL as given (a PostgreSQL one is what the driver connects with).
        path: a SQLite database's path (``sqlite:///abs`` gives ``/abs``), else ``None``.

    >>> StoreUrl.for_store("postgresql://me:s3cret@db/scores")
    StoreUrl(kind='postgres', url='postgresql://me:***@db/scores')
    >>> StoreUrl.for_store("sqlite:///tmp/scores.db").path
    '/tmp/scores.db'
    >>> StoreUrl.for_cache(".scorecore/cache.db").kind
    'sqlite'
    >>> StoreUrl.for_store("mysql://me:s3cret@db/scores")
    Traceback (most recent call last):
    ...
    ValueError: unknown store URL 'mysql://me:***@db/scores'; use sqlite:PATH or postgresql://USER@HOST/DB
    """

    kind: UrlKind
    url: str = attrs.field(repr=lambda url: repr(redact_url(url)))
    path: str | None = attrs.field(default=None, repr=False)

    @property
    def shown(self) -> str:
        """The URL with any password masked, for messages and logs."""
        return redact_url(self.url)

    @property
    def shared(self) -> bool:
        """Whether several machines can use it at once (only a PostgreSQL database can)."""
        return self.kind == "postgres"

    @classmethod
    def for_store(cls, url: object) -> StoreUrl:
        """A score store's URL: ``sqlite:PATH`` (``sqlite:///abs/path``, ``sqlite::memory:``)
        or ``postgresql://…``.

        Raises:
            ValueError: ``url`` is not a str, or names no known store or no file.
        """
        text = _text(url, "store")
        if text.startswith(_POSTGRES):
            return cls(kind="postgres", url=text)
        if text.startswith("sqlite:"):
            path = text.removeprefix("sqlite:")
            if path.startswith("//"):
                # sqlite:///abs/path (SQLAlchemy style) → /abs/path; sqlite://rel → rel
                path = path[2:]
            if not path:
                raise ValueError(f"store URL {text!r} names no file; use sqlite:PATH")
            return cls(kind="sqlite", url=text, path=path)
        raise ValueError(
            f"unknown store URL {redact_url(text)!r}; use sqlite:PATH or postgresql://USER@HOST/DB"
        )

    @classmethod
    def for_cache(cls, url: object) -> StoreUrl:
        """A judge cache's URL: ``sqlite:PATH`` or a bare path, ``postgresql://…``, ``memory:``.

        Raises:
            ValueError: ``url`` is not a str, is empty, names no known cache, or is a libpq
                key=value connection string.
        """
        text = _text(url, "cache")
        if text.startswith(_POSTGRES):
            return cls(kind="postgres", url=text)
        if text in ("memory:", "memory"):
            return cls(kind="memory", url=text)
        if "=" in text and not text.startswith("sqlite:"):
            # A libpq key=value DSN (``host=db password=…``) is not a file name.
            raise ValueError(
                f"cache URL {redact_url(text)!r} looks like a key=value connection string; use "
                f"postgresql://USER@HOST/DB (or sqlite:PATH for a file whose name has '=')"
            )
        path = text.removeprefix("sqlite:")
        if text.startswith("sqlite:") and path.startswith("//"):
            path = path[2:]  # sqlite:///abs/path → /abs/path
        if not path or "://" in path:
            raise ValueError(
                f"unknown cache URL {redact_url(text)!r}; use sqlite:PATH, "
                f"postgresql://USER@HOST/DB or memory:"
            )
        return cls(kind="sqlite", url=text, path=path)


def _text(url: object, what: str) -> str:
    if not isinstance(url, str):
        raise ValueError(  # noqa: TRY004 - a bad URL is one error, whatever its type
            f"{what} URL must be a str (sqlite:PATH or postgresql://USER@HOST/DB), got "
            f"{type(url).__name__}")
    return url
