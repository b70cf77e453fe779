"""``scorecore eval``'s judge economics: the cache, prices, a budget and trials (flags, output).

By default judge replies are cached in ``.scorecore/cache.db`` (``--cache URL`` elsewhere,
``--no-cache`` off), so a re-run after editing one step re-asks only that step's judge.
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, TextIO

from scorecore.evals import EvalReport, ScoreRow
from scorecore.judge.economics import Budget, format_usd
from scorecore_adapters.cache import DEFAULT_CACHE_PATH, open_cache
from scorecore_adapters.cli._common import UsageError
from scorecore_adapters.pricing import load_pricing

__all__ = [
    "add_economics_flags",
    "closing_cache",
    "economics_options",
    "fingerprints",
    "positive_int",
    "print_economics",
]


def positive_int(text: str) -> int:
    """An argument type: a whole number >= 1 (``--trials 3``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _limit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def add_economics_flags(command: argparse.ArgumentParser) -> None:
    """Add --cache, --no-cache, --strict-cache, --pricing, --budget-usd, --budget-tokens,
    --budget-mode, --max-output-tokens, --trials to ``scorecore eval``."""
    command.add_argument(
        "--cache", default=f"sqlite:{DEFAULT_CACHE_PATH}", metavar="URL",
        help=f"judge cache: sqlite:PATH, postgresql://…, memory: "
             f"(default sqlite:{DEFAULT_CACHE_PATH})",
    )
    command.add_argument("--no-cache", action="store_true", help="ask the judge every time")
    command.add_argument("--strict-cache", action="store_true",
                         help="a damaged judge cache is an error (checked before the batch "
                              "runs), not a warning")
    command.add_argument("--pricing", metavar="FILE",
                         help="judge prices per model (TOML or JSON; USD per million tokens)")
    command.add_argument("--budget-usd", type=_limit, metavar="USD",
                         help="stop starting judge calls past this cost (needs --pricing)")
    command.add_argument("--budget-tokens", type=positive_int, metavar="N",
                         help="stop starting judge calls past this many tokens")
    command.add_argument("--budget-mode", choices=("hard", "soft"), default="hard",
                         help="hard: stopped runs fail (resume later); soft: warn once, go on")
    command.add_argument("--max-output-tokens", type=positive_int, metavar="N",
                         help="output cap of judge replies whose step sets none (default: the "
                              "judge's own, else 1,024); sent to the provider, reserved by "
                              "the budget")
    command.add_argument("--trials", type=positive_int, default=1, metavar="N",
                         help="score every item N times and report the spread (default 1)")


def economics_options(args: argparse.Namespace) -> dict[str, Any]:
    """``run_evals`` keyword arguments from the flags; a bad flag is a UsageError."""
    options: dict[str, Any] = {"trials": args.trials}
    if args.max_output_tokens is not None:
        options["max_output_tokens"] = args.max_output_tokens
    if not args.no_cache:
        try:
            options["cache"] = open_cache(args.cache)
        except ValueError as exc:
            raise UsageError(f"--cache: {exc}") from None
    if args.pricing:
        try:
            options["pricing"] = load_pricing(args.pricing)
        except ValueError as exc:
            raise UsageError(f"--pricing: {exc}") from None
    if args.budget_usd is not None or args.budget_tokens is not None:
        if args.budget_usd is not None and not args.pricing:
            raise UsageError("--budget-usd needs --pricing FILE (the price of each judge model)")
        options["budget"] = Budget(max_cost_usd=args.budget_usd, max_tokens=args.budget_tokens,
                                   mode=args.budget_mode)
    return options


def _usd(value: float | None, *, priced: bool = True) -> str:
    """``$0.1234`` (:func:`format_usd`), or ``unpriced`` when the value (or the cost it goes
    with) is unknown."""
    return "unpriced" if value is None or not priced else format_usd(value)


def print_economics(report: EvalReport, *, out: TextIO) -> None:
    """The judge cost per scorer and in total, cache use, the budget line, the trials spread."""
    economics = report.economics
    if economics is not None:
        for cost in economics.scorers:
            if cost.model_calls or cost.cache_hits or cost.budget_stopped:
                stopped = f", {cost.budget_stopped} stopped by the budget" \
                    if cost.budget_stopped else ""
                print(f"judge {cost.scorer_id}: {_usd(cost.cost_usd)} over {cost.model_calls} "
                      f"call(s), {cost.cache_hits} cache hit(s) saving "
                      f"{_usd(cost.saved_usd, priced=cost.cost_usd is not None)}{stopped}",
                      file=out)
        line = economics.budget_line()
        asked = sum(cost.model_calls for cost in economics.scorers)
        if asked or economics.cache_hits or economics.cache_misses or line is not None:
            # Nothing to say for a batch without judge calls (code scorers only).
            print(f"judge cost: {_usd(economics.cost_usd)}; cache {economics.cache_hits} hit(s), "
                  f"{economics.cache_misses} miss(es), saved "
                  f"{_usd(economics.saved_usd, priced=economics.cost_usd is not None)}",
                  file=out)
        if line is not None:
            print(f"budget: {line}", file=out)
        if economics.usage_errors:
            print(f"judge usage: {economics.usage_errors} reply(ies) reported token counts that "
                  f"cannot be right (negative, fractional or absurd); each was charged at its "
                  f"worst case", file=out)
    trials = report.trials
    if trials is not None:
        for spread in trials.scorers:
            dev = "-" if spread.mean_std_dev is None else f"{spread.mean_std_dev:.3f}"
            mean = "-" if spread.mean is None else f"{spread.mean:.3f}"
            print(f"trials {spread.scorer_id}: mean {mean} over {trials.trials} trials, "
                  f"per-item std dev {dev}, {spread.changed_items} item(s) changed verdict",
                  file=out)


def _fingerprint(row: ScoreRow) -> str | None:
    found = row.scorer.get("fingerprint") if row.scorer else None
    if found is None and row.metadata:
        found = row.metadata.get("fingerprint")
    return found if isinstance(found, str) else None


def fingerprints(rows: Iterable[ScoreRow]) -> dict[str, dict[str, int]]:
    """Per scorer, each fingerprint its rows recorded and how many rows did (``"-"``: none)."""
    seen: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = seen.setdefault(row.scorer_id, {})
        key = _fingerprint(row) or "-"
        counts[key] = counts.get(key, 0) + 1
    return seen


def print_fingerprint_line(scorer_id: str, counts: Mapping[str, int], *, out: TextIO) -> None:
    """One scorer's fingerprints (first 12 hex digits) with their row counts, flagged when
    mixed."""
    shown = ", ".join(f"{fp[:12]} ({n} rows)" for fp, n in counts.items())
    mixed = "  MIXED: rows of different scorer definitions" if len(counts) > 1 else ""
    print(f"fingerprint {scorer_id}: {shown}{mixed}", file=out)


@contextlib.asynccontextmanager
async def closing_cache(
    options: dict[str, Any], *, strict: bool = False, out: TextIO | None = None,
) -> AsyncIterator[None]:
    """Open the run's judge cache before anything runs, close it when the command is done.

    A cache that cannot be opened (a directory that does not exist or cannot be written, an
    unreachable database) is a usage error naming it, rather than a batch that silently runs
    without its cache. A cache that opens but is damaged (another table, unreadable pages or
    entries) is said once on ``out`` — when it is opened, or after the batch for damage found
    on the way — and the batch goes on asking the judge; with ``strict`` it is a usage error
    instead: checked thoroughly (every entry read back) before anything runs, and any cache
    error during the batch fails the command after it.
    """
    cache = options.get("cache")
    opener = getattr(cache, "open", None)
    if opener is not None:
        try:
            await opener()
        except Exception as exc:  # noqa: BLE001 - OSError, sqlite3.Error, psycopg.Error: open()'s
            text = " ".join(str(exc).split()) or type(exc).__name__
            raise UsageError(
                f"cannot open the judge cache {cache!r}: {text} (pass --cache URL or --no-cache)"
            ) from None
    name = getattr(cache, "name", repr(cache))
    checker = getattr(cache, "check", None)
    try:
        # Inside the try: a check interrupted (Ctrl-C, a cancelled task) still closes the
        # connection open() made.
        problem = None if checker is None else await checker(thorough=strict)
        if problem is not None:
            if strict:
                raise UsageError(f"judge cache {name}: {problem} (--strict-cache: fix or delete "
                                 f"it, or pass another --cache, or --no-cache)")
            _warn(out, f"judge cache {name}: {problem}; the batch goes on, asking the judge")
        yield
        errors = getattr(cache, "errors", 0)
        if errors and problem is None:
            last = getattr(cache, "last_error", None) or name
            line = (f"judge cache {last} ({errors} error(s) during the batch: those replies "
                    f"were asked again, or not stored)")
            if strict:
                raise UsageError(f"{line}; --strict-cache makes this an error (the batch's "
                                 f"rows are stored)")
            _warn(out, line)
    finally:
        close = getattr(options.get("cache"), "aclose", None)
        if close is not None:
            await close()


def _warn(out: TextIO | None, line: str) -> None:
    if out is not None:
        print(f"warning: {line}", file=out, flush=True)
