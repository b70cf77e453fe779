"""A judge cache file that opens but is damaged is said once; --strict-cache makes it an error."""

from __future__ import annotations

import io
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from scorecore.judge import JudgeResponse
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.cli._common import UsageError
from scorecore_adapters.cli._economics import closing_cache
from tests.adapters.cli.test_cli_budget import SCORERS
from tests.cli_runs import eval_folder
from tests.cli_runs import run_eval as run

ITEMS = 6


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAP_LOG", str(tmp_path / "caps.log"))
    return eval_folder(tmp_path, SCORERS, (f"a{i}" for i in range(ITEMS)))


def calls(work: Path) -> int:
    log = work / "caps.log"
    return len(log.read_text().split()) if log.exists() else 0


def _wrong_columns(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE scorecore_judge_cache (k TEXT)")


def _corrupt_pages(path: Path) -> None:
    assert run("--cache", f"sqlite:{path}", "--batch-id", "fill")[0] == 0
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    with path.open("r+b") as file:
        file.seek(4096)
        file.write(b"\xff" * (size - 4096))


def _garbage_entries(path: Path) -> None:
    assert run("--cache", f"sqlite:{path}", "--batch-id", "fill")[0] == 0
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE scorecore_judge_cache SET response = 'not a reply'")


DAMAGES = [
    pytest.param(_wrong_columns, "response", id="wrong-columns"),
    pytest.param(_corrupt_pages, "malformed", id="corrupt-pages"),
    pytest.param(_garbage_entries, "cannot be read back", id="garbage-entries"),
]


@pytest.mark.parametrize(("damage", "what"), DAMAGES)
def test_a_damaged_cache_is_said_once_and_the_batch_goes_on(
    work: Path, damage: Callable[[Path], None], what: str,
) -> None:
    """Exit 0, every call asked again, and one warning naming the file and what happened."""
    damage(work / "cache.db")
    asked = calls(work)
    code, out, err = run("--cache", "sqlite:cache.db")
    assert code == 0, out + err
    assert calls(work) - asked == ITEMS
    warnings = [line for line in (out + err).splitlines() if "warning" in line]
    assert len(warnings) == 1, out + err
    assert "judge cache sqlite:cache.db" in warnings[0]
    assert what in warnings[0]


@pytest.mark.parametrize(("damage", "what"), DAMAGES)
def test_strict_cache_refuses_a_damaged_cache_before_anything_runs(
    work: Path, damage: Callable[[Path], None], what: str,
) -> None:
    """--strict-cache: exit 2 naming the file and the damage; no judge call."""
    damage(work / "cache.db")
    asked = calls(work)
    code, out, err = run("--cache", "sqlite:cache.db", "--strict-cache")
    assert code == 2, out + err
    assert calls(work) == asked
    assert "judge cache sqlite:cache.db" in err
    assert what in err


def test_a_healthy_cache_says_nothing(work: Path) -> None:
    """No warning for a cache that works, strict or not."""
    for argv in ((), ("--strict-cache",)):
        code, out, err = run("--cache", "sqlite:cache.db", *argv)
        assert code == 0
        assert "warning" not in out + err


@pytest.mark.anyio
async def test_an_entry_that_cannot_be_read_back_is_counted(tmp_path: Path) -> None:
    """A damaged entry is a miss and an error (with the file named), not a silent miss."""
    path = tmp_path / "c.db"
    async with SqliteJudgeCache(path) as cache:
        await cache.put("k", JudgeResponse(text="yes"))
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE scorecore_judge_cache SET response = '{'")
    async with SqliteJudgeCache(path) as cache:
        assert await cache.get("k") is None
        assert cache.errors == 1
        assert cache.last_error is not None
        assert str(path) in cache.last_error
        assert "cannot be read back" in cache.last_error


class _FailingCache:
    """Opens and checks fine, then fails during the batch (a full disk, a lost connection)."""

    name = "sqlite:fake.db"

    def __init__(self) -> None:
        self.errors = 0
        self.last_error: str | None = None
        self.closed = False

    async def open(self) -> None:
        return None

    async def check(self, *, thorough: bool = False) -> str | None:
        return None

    async def aclose(self) -> None:
        self.closed = True

    def fail(self) -> None:
        self.errors += 2
        self.last_error = "sqlite:fake.db: database or disk is full"


@pytest.mark.anyio
async def test_cache_errors_during_the_batch_are_said_once_or_fail_when_strict() -> None:
    """One warning after the batch; with --strict-cache a usage error (exit 2)."""
    cache = _FailingCache()
    out = io.StringIO()
    async with closing_cache({"cache": cache}, out=out):
        cache.fail()
    assert out.getvalue() == (
        "warning: judge cache sqlite:fake.db: database or disk is full (2 error(s) during the "
        "batch: those replies were asked again, or not stored)\n"
    )
    assert cache.closed
    strict = _FailingCache()
    with pytest.raises(UsageError, match=r"disk is full .*--strict-cache makes this an error"):
        async with closing_cache({"cache": strict}, strict=True, out=io.StringIO()):
            strict.fail()
    assert strict.closed
