"""StoreUrl: a store or cache URL parsed once; open_store, open_cache and Ray's checks use it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from scorecore.evals import EvalConfigError
from scorecore_adapters.cache import (
    MemoryJudgeCache,
    PostgresJudgeCache,
    SqliteJudgeCache,
    open_cache,
)
from scorecore_adapters.cli._common import UsageError
from scorecore_adapters.storage import PostgresScoreStore, SqliteScoreStore, StoreUrl, open_store

SECRET = "s3cret-pw"


@pytest.mark.parametrize(("url", "kind", "path"), [
    ("sqlite:scores.db", "sqlite", "scores.db"),
    ("sqlite:///abs/scores.db", "sqlite", "/abs/scores.db"),
    ("sqlite::memory:", "sqlite", ":memory:"),
    (f"postgresql://me:{SECRET}@db/scores", "postgres", None),
    ("postgres://db/scores", "postgres", None),
])
def test_a_store_url_names_its_backend_and_path(url: str, kind: str, path: str | None) -> None:
    """Each scheme a store takes is parsed to its kind, and a SQLite URL to its file."""
    parsed = StoreUrl.for_store(url)
    assert (parsed.kind, parsed.path, parsed.url) == (kind, path, url)
    assert parsed.shared is (kind == "postgres")


@pytest.mark.parametrize(("url", "kind", "path"), [
    ("sqlite:.scorecore/cache.db", "sqlite", ".scorecore/cache.db"),
    ("cache.db", "sqlite", "cache.db"),
    ("memory:", "memory", None),
    (f"postgresql://me:{SECRET}@db/cache", "postgres", None),
])
def test_a_cache_url_names_its_backend_and_path(url: str, kind: str, path: str | None) -> None:
    """A cache also takes a bare path and ``memory:``."""
    parsed = StoreUrl.for_cache(url)
    assert (parsed.kind, parsed.path) == (kind, path)


@pytest.mark.parametrize(("parse", "url", "message"), [
    (StoreUrl.for_store, f"mysql://me:{SECRET}@db/scores", "unknown store URL 'mysql://me:***@db"),
    (StoreUrl.for_store, "sqlite:", "store URL 'sqlite:' names no file"),
    (StoreUrl.for_store, "cache.db", "unknown store URL 'cache.db'"),
    (StoreUrl.for_cache, f"redis://me:{SECRET}@db", "unknown cache URL 'redis://me:***@db'"),
    (StoreUrl.for_cache, f"host=db password={SECRET}",
     "cache URL 'host=db password=***' looks like a key=value"),
    (StoreUrl.for_store, 42, "store URL must be a str"),
    (StoreUrl.for_cache, None, "cache URL must be a str"),
])
def test_a_bad_url_is_one_error_naming_it_without_its_password(
    parse: object, url: object, message: str
) -> None:
    """One ValueError names the value (or its type); a password never appears in it."""
    assert callable(parse)
    with pytest.raises(ValueError, match="^" + message.replace("*", r"\*")) as caught:
        parse(url)
    assert SECRET not in str(caught.value)


def test_the_repr_masks_the_password() -> None:
    """A StoreUrl in a log or a traceback shows no password."""
    parsed = StoreUrl.for_store(f"postgresql://me:{SECRET}@db/scores")
    assert SECRET not in repr(parsed)
    assert "me:***@db" in repr(parsed)
    assert SECRET not in parsed.shown


def test_open_store_and_open_cache_take_a_parsed_url() -> None:
    """The openers dispatch on the parsed kind; a URL string is parsed the same way."""
    assert isinstance(open_store(StoreUrl.for_store("sqlite::memory:")), SqliteScoreStore)
    pg = open_store(StoreUrl.for_store(f"postgresql://me:{SECRET}@db/scores"))
    assert isinstance(pg, PostgresScoreStore)
    assert isinstance(open_cache(StoreUrl.for_cache("memory:")), MemoryJudgeCache)
    assert isinstance(open_cache(StoreUrl.for_cache("c.db")), SqliteJudgeCache)
    assert isinstance(open_cache(StoreUrl.for_cache("postgres://db/c")), PostgresJudgeCache)
    with pytest.raises(ValueError, match="judge cache URL, not a store's"):
        open_store(StoreUrl.for_cache("memory:"))


def test_ray_refuses_a_store_url_with_no_file_as_a_config_error() -> None:
    """score_dataset's store check reports every unparsable URL as an EvalConfigError on
    ``store_url`` (``sqlite:`` used to escape as open_store's bare ValueError)."""
    from scorecore_adapters.ray._checks import check_store  # noqa: PLC0415 - the ray extra

    for url in ("sqlite:", f"mysql://me:{SECRET}@db/x", 42):
        with pytest.raises(EvalConfigError, match="store_url must be postgresql") as caught:
            check_store(url, 1)
        assert caught.value.field == "store_url"
        assert SECRET not in str(caught.value)
        assert SECRET not in repr(caught.value.value)


def test_ray_makes_a_sqlite_store_path_absolute(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative SQLite store is named absolutely for the actors (one local worker)."""
    import scorecore_adapters.ray._checks as checks  # noqa: PLC0415 - the ray extra

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(checks, "several_workers", lambda concurrency: None)
    assert checks.check_store("sqlite:rows.db", 1) == f"sqlite:{tmp_path.resolve()}/rows.db"
    assert checks.check_store("sqlite:///abs/rows.db", 1) == "sqlite:/abs/rows.db"
    with pytest.raises(EvalConfigError, match="sqlite::memory: would keep the rows"):
        checks.check_store("sqlite::memory:", 1)


def test_the_ray_command_refuses_a_bad_store_before_ray_starts() -> None:
    """``scorecore eval --engine ray --store mysql://…`` is a usage error naming the URL,
    password masked, said before Ray is started."""
    from scorecore_adapters.cli._ray import _check_store  # noqa: PLC0415 - the ray command

    args = argparse.Namespace(store=f"mysql://me:{SECRET}@db/x", workers=1)
    with pytest.raises(UsageError, match=r"--store: unknown store URL 'mysql://me:\*\*\*@db/x'"):
        _check_store(args)
