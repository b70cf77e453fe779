"""What :func:`score_dataset` checks before any item is scored: arguments, store, cache, batch."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scorecore import Scorer
from scorecore.evals import EvalConfigError, EvalItem, EvalReport, Threshold, run_evals
from scorecore_adapters.cache import MemoryJudgeCache, open_cache
from scorecore_adapters.storage import StoreUrl, open_store, redact_url

__all__: list[str] = []


def positive(name: str, value: object) -> int:
    """``value``, an int >= 1, else an :class:`EvalConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EvalConfigError(f"score_dataset: {name} must be an int >= 1, got {value!r}",
                              field=name, value=value)
    return value


def check_store(store_url: object, concurrency: int) -> str:
    """The store URL the actors open (a SQLite path made absolute), once it is one they can."""
    try:
        parsed = StoreUrl.for_store(store_url)
    except ValueError:
        shown = redact_url(store_url) if isinstance(store_url, str) else store_url
        raise EvalConfigError(
            f"score_dataset: store_url must be postgresql://… (or sqlite:PATH for one local "
            f"worker), got {shown!r}", field="store_url", value=shown) from None
    if parsed.shared or parsed.path is None:
        return parsed.url
    several = several_workers(concurrency)
    if several is not None:
        raise EvalConfigError(
            f"score_dataset: a SQLite store ({parsed.url}) takes one local worker only "
            f"(concurrency=1 on a one-node cluster started from this machine); got "
            f"{several}. Use a PostgreSQL store_url (postgresql://…) that every worker "
            f"can reach", field="store_url", value=parsed.shown)
    if parsed.path == ":memory:":
        raise EvalConfigError(
            "score_dataset: sqlite::memory: would keep the rows inside the actor, which "
            "Ray ends with the batch; give a file (sqlite:PATH) or postgresql://…",
            field="store_url", value=parsed.url)
    return _absolute(parsed.path)


def _absolute(path: str) -> str:
    """A SQLite URL naming ``path`` absolutely: an actor's working directory need not be ours."""
    return f"sqlite:{Path(path).resolve()}"


def several_workers(concurrency: int) -> str | None:
    """Why ``concurrency`` actors on the connected Ray cluster are not one local worker (what a
    SQLite store or cache needs), or ``None`` when they are."""
    import ray  # noqa: PLC0415 - the ray extra is optional

    # Ray leaves these two unannotated.
    nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
    client = ray.util.client.ray.is_connected()  # type: ignore[no-untyped-call]
    if concurrency == 1 and len(nodes) == 1 and not client:
        return None
    return (f"concurrency={concurrency} on {len(nodes)} node(s)"
            f"{' through ray://' if client else ''}")


async def check_cache(cache_url: object, concurrency: int) -> str:
    """The cache URL the actors open (a SQLite path made absolute), once it opened here.

    Opening it here refuses a bad URL before any item is scored, and creates the cache's table
    once rather than from every actor at the same time.
    """
    shown = redact_url(cache_url) if isinstance(cache_url, str) else cache_url
    if not isinstance(cache_url, str):
        raise EvalConfigError(f"score_dataset: cache_url must be a str (postgresql://…, or "
                              f"sqlite:PATH for one local worker), got {shown!r}",
                              field="cache_url", value=shown)
    try:
        parsed = StoreUrl.for_cache(cache_url)
    except ValueError as exc:
        raise EvalConfigError(f"score_dataset: cache_url: {exc}", field="cache_url",
                              value=shown) from None
    if not parsed.shared:
        several = several_workers(concurrency)
        if several is not None:
            kind = "SQLite" if parsed.kind == "sqlite" else "memory"
            raise EvalConfigError(
                f"score_dataset: a {kind} judge cache (cache_url={shown!r}) takes one local "
                f"worker only; got {several}. Use a PostgreSQL cache_url (postgresql://…) "
                f"that every worker shares, or no cache", field="cache_url", value=shown)
        if parsed.path is not None:
            cache_url = _absolute(parsed.path)
    opened = open_cache(cache_url)
    if isinstance(opened, MemoryJudgeCache):
        return cache_url
    try:
        async with opened:
            pass
    except Exception as exc:  # noqa: BLE001 - whatever the driver raises, it is unusable
        raise EvalConfigError(
            f"score_dataset: cache_url={shown!r} cannot be opened ({type(exc).__name__}); "
            f"every worker must reach it", field="cache_url", value=shown) from None
    return cache_url


async def check_batch(
    scorers: Sequence[Scorer[Any, Any]],
    *,
    store_url: str,
    table: str,
    batch_id: str,
    resume: bool,
    thresholds: Mapping[str, float | Threshold] | None,
    gates: Iterable[str] | None,
    max_failures: int | None,
    max_failure_rate: float | None,
    target: Callable[[EvalItem], Any] | None,
) -> EvalReport:
    """Check the arguments and the batch as ``run_evals`` does: it runs on no items here.

    The empty report gives the normalized thresholds and gates the fold needs; nothing is
    written to the store.
    """
    try:
        async with open_store(store_url, table=table) as store:
            return await run_evals((), scorers, thresholds=thresholds, gates=gates, store=store,
                                   batch_id=batch_id, resume=resume, max_failures=max_failures,
                                   max_failure_rate=max_failure_rate, target=target)
    except EvalConfigError as exc:
        message = str(exc).replace("run_evals", "score_dataset", 1)
        raise EvalConfigError(message, field=exc.field, value=exc.value) from None
