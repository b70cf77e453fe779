"""``scorecore eval --engine ray``: the same batch on a Ray Data actor pool.

Ray is imported only here (the ``ray`` extra is optional). With ``RAY_ADDRESS`` set the command
joins that cluster; otherwise it starts a local one on this machine (no dashboard, no usage
statistics). ``--cache`` and ``--pricing`` work as on the local engine: every actor opens the
cache; a SQLite cache (the default) is used only by one local worker, a PostgreSQL one by all.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from scorecore import Scorer
from scorecore.evals import EvalReport, ItemLike, ItemResult, Threshold
from scorecore.judge.economics import Pricing
from scorecore_adapters._loading import absolute_reference, load_scorers, load_target
from scorecore_adapters.cache import open_cache
from scorecore_adapters.cli._common import UsageError
from scorecore_adapters.storage import StoreUrl


def _check_store(args: argparse.Namespace) -> None:
    """What ``score_dataset`` would refuse about ``--store``, said in the command's flags and
    before Ray starts (it takes seconds)."""
    store: str = args.store
    try:
        parsed = StoreUrl.for_store(store)
    except ValueError as exc:
        raise UsageError(f"--store: {exc}") from None
    if parsed.kind != "sqlite":
        return
    if parsed.path == ":memory:":
        raise UsageError(f"--store {store} would keep the rows inside a Ray actor, which ends "
                         f"with the batch; give a file (--store sqlite:PATH) or "
                         f"--store postgresql://… with --engine ray")
    if args.workers > 1:
        raise UsageError(f"--store {store} is a SQLite file, which one local worker only can "
                         f"write: give --workers 1, or --store postgresql://… (which every "
                         f"worker can reach) with --workers {args.workers}")


def _quiet_ray(ray: Any) -> None:
    """Ray's own INFO lines (cluster start, dataset plans, progress) stay out of the command's
    output; they are in Ray's session logs. Errors still show."""
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False


def start_ray(args: argparse.Namespace, out: TextIO) -> str | None:
    """Check the flags Ray supports, then join ``RAY_ADDRESS`` or start a local Ray with a CPU
    per worker (main thread only). Returns the judge cache URL the actors use, if any."""
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    _check_store(args)
    unsupported = [flag for flag, given in (
        ("--budget-usd", args.budget_usd is not None),
        ("--budget-tokens", args.budget_tokens is not None), ("--trials", args.trials != 1),
    ) if given]
    if unsupported:
        raise UsageError(
            f"{', '.join(unsupported)}: not supported with --engine ray yet (a budget must "
            f"count every worker's spend in one shared ledger, which Ray runs do not have; "
            f"trials are not run on Ray either); use --engine local for these")
    if args.max_output_tokens is not None:
        raise UsageError(
            "--max-output-tokens: not supported with --engine ray yet (the actors send each "
            "step's own cap, else 1,024); use --engine local, or set "
            "ModelSettings(max_output_tokens=...) in the scorers")
    if args.strict_cache:
        raise UsageError("--strict-cache: not supported with --engine ray yet (each actor "
                         "opens its own cache); use --engine local")
    if not args.no_cache:
        try:
            open_cache(args.cache)
        except ValueError as exc:
            raise UsageError(f"--cache: {exc}") from None
    try:
        import ray  # noqa: PLC0415 - the ray extra is optional
        import ray.data  # noqa: PLC0415
    except ImportError:
        raise UsageError("--engine ray needs Ray: pip install 'scorecore[ray]'") from None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if os.environ.get("RAY_ADDRESS"):
            ray.init(log_to_driver=False, logging_level=logging.ERROR)
        else:
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR)
    _quiet_ray(ray)
    _check_cluster(args)
    return _ray_cache(args, out)


def _check_cluster(args: argparse.Namespace) -> None:
    """A SQLite ``--store`` on a cluster that is not this one machine (``RAY_ADDRESS``)."""
    from scorecore_adapters.ray._checks import several_workers  # noqa: PLC0415 - the ray extra

    if StoreUrl.for_store(args.store).kind != "sqlite":  # checked by _check_store
        return
    if several_workers(args.workers) is not None:
        raise UsageError(f"--store {args.store} is a SQLite file, which one local worker only "
                         f"can write, but the Ray cluster (RAY_ADDRESS) is not this one "
                         f"machine: give --store postgresql://… that every worker can reach")


def _ray_cache(args: argparse.Namespace, out: TextIO) -> str | None:
    """``--cache``, unless it is a SQLite (or memory) cache and the run has more than one local
    worker: then no cache, with a note saying why."""
    from scorecore_adapters.ray._checks import several_workers  # noqa: PLC0415 - the ray extra

    url: str = args.cache
    if args.no_cache:
        return None
    if StoreUrl.for_cache(url).shared:  # checked by start_ray
        return url
    several = several_workers(args.workers)
    if several is None:
        return url
    print(f"note: --engine ray runs without the judge cache: {url} cannot be shared by "
          f"the workers ({several}); give --cache postgresql://… to share one", file=out)
    return None


def _scorers(spec: str) -> tuple[Scorer[Any, Any], ...]:
    return load_scorers(spec).scorers


class _Target:
    """The command's ``--target``, loaded on each actor as the command loads it.

    It carries the loaded function's module and name, so stored rows name the target exactly
    as the in-process command names it.
    """

    def __init__(self, spec: str, loaded: Any) -> None:
        self._spec = absolute_reference(spec)
        self._fn: Any = None
        self.__module__ = getattr(loaded, "__module__", None)  # type: ignore[assignment]
        self.__qualname__ = getattr(loaded, "__qualname__", type(loaded).__qualname__)

    def __call__(self, item: Any) -> Any:
        if self._fn is None:
            self._fn = load_target(self._spec)
        return self._fn(item)


def run_on_ray(
    items: Iterable[ItemLike],
    *,
    scorers: str,
    target: str | None,
    loaded_target: Any,
    store_url: str,
    batch_id: str,
    resume: bool,
    workers: int,
    concurrency: int,
    thresholds: dict[str, Threshold],
    gates: list[str],
    max_failures: int | None,
    on_item_complete: Callable[[ItemResult], Any],
    max_failure_rate: float | None = None,
    cache_url: str | None = None,
    pricing: Pricing | None = None,
) -> EvalReport:
    """Score ``items`` with ``workers`` actors, ``concurrency`` items in flight in each."""
    from scorecore_adapters.ray import items_dataset, score_dataset  # noqa: PLC0415 - optional

    result = score_dataset(
        items_dataset(items), functools.partial(_scorers, absolute_reference(scorers)),
        store_url=store_url, batch_id=batch_id, resume=resume, concurrency=workers,
        judge_concurrency=concurrency, thresholds=thresholds, gates=gates,
        max_failures=max_failures, max_failure_rate=max_failure_rate,
        target=_Target(target, loaded_target) if target else None,
        cache_url=cache_url, pricing=pricing,
    )
    for item in result.item_results():
        on_item_complete(item)
    return result.report
