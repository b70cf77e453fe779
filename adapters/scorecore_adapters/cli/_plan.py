"""``scorecore plan``: how many items a comparison needs to catch a drop of ``--effect``.

The spread of the paired differences decides it. It is measured where it can be: the
baseline batch compared with the batch before it on the same dataset version and scorers
(two runs of the same thing: their differences are the noise a comparison will see). With no
such pair, it is estimated from the baseline's own scores under a stated assumption: the two
runs of an item score independently, so the differences' spread is √2 times the scores'. Runs
of the same item usually agree more than that, so the estimate errs towards more items.
"""

from __future__ import annotations

import argparse
import math
from contextlib import aclosing
from fractions import Fraction
from typing import Any, Final, TextIO

from scorecore.evals import items_needed
from scorecore.evals.store import PairedComparison
from scorecore_adapters._resample import mean_resampler
from scorecore_adapters.cli._calibrate import in_store
from scorecore_adapters.cli._common import (
    DEFAULT_STORE,
    EXIT_PASSED,
    UsageError,
    print_json,
    print_table,
)
from scorecore_adapters.cli._experiments import read_ledger
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Experiment, Store

ASSUMPTION: Final = ("one batch only: the two runs of an item assumed to score independently "
                     "(differences' spread = √2 × the scores'), which errs towards more items")


def _number(flag: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{flag}: expected a number, got {text!r}") from None


def plan_arguments(command: argparse.ArgumentParser) -> None:
    """``plan``'s flags."""
    command.add_argument("--dataset", required=True, metavar="NAME",
                         help="the dataset (its name, or the --data file as given to eval)")
    # Checked by the handler: the command table's check runs every required flag with "x".
    command.add_argument("--effect", required=True, metavar="E",
                         help="the mean drop the comparison must catch, in score units")
    command.add_argument("--baseline", metavar="BATCH",
                         help="the batch to plan from (default: the dataset's latest passing "
                              "batch)")
    # Ranges are checked where the figure is computed (items_needed names the value).
    command.add_argument("--alpha", type=float, default=0.05,
                         help="the false-alarm rate shared by the scorers (default 0.05)")
    command.add_argument("--power", type=float, default=0.8,  # the MDE's power in compare
                         help="the chance of catching the drop (default 0.8)")
    command.add_argument("--tolerance", type=float, default=0.02,
                         help="the comparison's tolerance (default 0.02, as compare's)")
    command.add_argument("--store", default=DEFAULT_STORE,
                         help=f"sqlite:PATH or postgresql://... (default {DEFAULT_STORE})")
    command.add_argument("--json", action="store_true", help="print JSON for machines")


def _baseline(args: argparse.Namespace, batches: list[Experiment]) -> Experiment:
    if args.baseline is not None:
        for e in batches:
            if e.batch_id == args.baseline:
                return e
        raise UsageError(f"--baseline {args.baseline!r} is not a recorded batch of dataset "
                         f"{args.dataset!r}; its batches: "
                         f"{', '.join(e.batch_id for e in batches[-5:])}")
    passing = [e for e in batches if e.verdict == "passed"]
    return (passing or batches)[-1]


def _partner(baseline: Experiment, batches: list[Experiment]) -> Experiment | None:
    """The batch before the baseline on the same data with the same scorers."""
    earlier = batches[:batches.index(baseline)]
    same = [e for e in earlier if e.cases_version == baseline.cases_version
            and e.fingerprints == baseline.fingerprints]
    return same[-1] if same else None


class Spread:
    """The population standard deviation of numbers given one at a time, exactly as
    :func:`statistics.pstdev` computes it of all of them: in one pass, from exact sums (a
    float's numerator summed per power-of-two denominator), in memory that does not grow.

    >>> spread = Spread()
    >>> for x in (1.5, 2.5, 2.5, 2.75, 3.25, 4.75):
    ...     spread.add(x)
    >>> spread.n, spread.value()
    (6, 0.986893273527251)
    """

    __slots__ = ("_sx", "_sxx", "n")

    def __init__(self) -> None:
        self.n = 0
        self._sx: dict[int, int] = {}
        self._sxx: dict[int, int] = {}

    def add(self, x: float) -> None:
        """Count ``x`` (a finite float)."""
        numerator, denominator = x.as_integer_ratio()
        self.n += 1
        self._sx[denominator] = self._sx.get(denominator, 0) + numerator
        self._sxx[denominator] = self._sxx.get(denominator, 0) + numerator * numerator

    def value(self) -> float:
        """The spread over ``n``, correctly rounded (``0.0`` of nothing)."""
        n = self.n
        sx = sum((Fraction(v, d) for d, v in self._sx.items()), Fraction(0))
        sxx = sum((Fraction(v, d * d) for d, v in self._sxx.items()), Fraction(0))
        return 0.0 if n == 0 else _sqrt((n * sxx - sx * sx) / (n * n))


def _sqrt(value: Fraction) -> float:
    """The square root of ``value`` rounded to the nearest float: the integer root of it
    scaled to at least 55 bits, rounded to odd (so that the one rounding to a float, an exact
    integer division, is correct)."""
    top, bottom = value.numerator, value.denominator
    if top == 0:
        return 0.0
    shift = max(0, 60 - (top.bit_length() - bottom.bit_length()) // 2)
    whole, rest = divmod(top << (2 * shift), bottom)
    root = math.isqrt(whole)
    if rest or root * root != whole:
        root |= 1
    return root / (1 << shift)


async def _paired_spreads(store: Store, base: str, new: str) -> dict[str, float | None]:
    """Each common scorer's paired differences' spread, as ``compare`` of the two batches
    gives it: the store pairs them, a page at a time (one resample: only the spread is
    read, and it does not depend on the bootstrap)."""
    scorers = {batch: await store.batch_scorers(batch) for batch in (base, new)}
    building = PairedComparison(base_batch=base, new_batch=new, base_scorers=scorers[base],
                                new_scorers=scorers[new], only_in_base=(), only_in_new=(),
                                resamples=1, resampler=mean_resampler())
    async with aclosing(store.paired_scores(base, new)) as pages:
        async for pairs in pages:
            building.add(pairs)
    return {s.scorer_id: s.spread for s in building.result().scorers}


async def _score_spreads(store: Store, batch_id: str) -> dict[str, Spread]:
    """Each scorer's spread of its scored rows' scores, the batch read a page at a time."""
    spreads: dict[str, Spread] = {}
    async with aclosing(store.pages(batch_id)) as pages:
        async for page in pages:
            for row in page:
                if row.status == "scored" and row.score is not None:
                    if not math.isfinite(row.score):
                        raise UsageError(f"plan: row {row.id!r} of batch {batch_id!r} has the "
                                         f"score {row.score!r}: no spread to measure")
                    spreads.setdefault(row.scorer_id, Spread()).add(row.score)
    if not spreads and not await store.batch_scorers(batch_id):
        raise UsageError(f"no rows for batch {batch_id!r} in {store.url}")
    return spreads


def _spreads(args: argparse.Namespace, baseline: Experiment,
             partner: Experiment | None) -> dict[str, float | None]:
    found: dict[str, float | None] = {}

    async def paired(store: Store) -> None:
        assert partner is not None  # noqa: S101 - called with one only
        for batch in (baseline.batch_id, partner.batch_id):
            if not await store.batch_scorers(batch):
                raise UsageError(f"no rows for batch {batch!r} in {store.url}")
        found.update(await _paired_spreads(store, partner.batch_id, baseline.batch_id))

    async def single(store: Store) -> None:
        scores = await _score_spreads(store, baseline.batch_id)
        # the spread over n, as compare's figures take it (the bootstrap's plug-in)
        found.update({sid: math.sqrt(2) * v.value() if v.n >= 2 else None
                      for sid, v in sorted(scores.items())})

    try:
        in_store(args.store, single if partner is None else paired)
    except ValueError as exc:  # a difference no float holds (scores near ±1e308)
        raise UsageError(f"plan: {exc}") from None
    return found


def plan_command(args: argparse.Namespace, out: TextIO) -> int:
    """Print, per scorer of the baseline, the items a comparison needs."""
    if not args.tolerance >= 0 or not math.isfinite(args.tolerance):
        raise UsageError(f"--tolerance must be a finite number >= 0, got {args.tolerance}")
    args.effect = _number("--effect", args.effect)
    if not args.effect > args.tolerance:
        raise UsageError(f"--effect {args.effect:g} must be above --tolerance "
                         f"{args.tolerance:g}: drops up to the tolerance are ignored")
    batches = read_ledger(args.store, dataset=args.dataset)
    if not batches:
        raise UsageError(f"no recorded batch of dataset {args.dataset!r} in the ledger of "
                         f"{args.store}; run `scorecore eval --store` on it first")
    baseline = _baseline(args, batches)
    partner = _partner(baseline, batches)
    # Read a page (or a page of pairs) at a time: memory flat in the batches' size.
    spreads = _spreads(args, baseline, partner)
    source = (ASSUMPTION if partner is None
              else f"paired differences of {partner.batch_id} -> {baseline.batch_id}")
    level = args.alpha / max(1, len(spreads))  # compare's Bonferroni share per scorer
    have = baseline.dataset.get("items")
    plans: list[dict[str, Any]] = []
    for sid, sd in spreads.items():
        try:
            needed = None if sd is None else items_needed(
                sd, args.effect, alpha=level, power=args.power, tolerance=args.tolerance)
        except ValueError as exc:  # an alpha or power outside (0, 1), an infinite effect
            raise UsageError(f"plan: {exc}") from None
        plans.append({"scorer": sid, "spread": sd, "itemsNeeded": needed})
    if args.json:
        print_json({"dataset": args.dataset, "baseline": baseline.batch_id,
                    "partner": partner.batch_id if partner else None, "source": source,
                    "effect": args.effect, "tolerance": args.tolerance, "alpha": args.alpha,
                    "alphaPerScorer": level, "power": args.power, "datasetItems": have,
                    "scorers": plans}, out)
        return EXIT_PASSED
    print(f"plan for dataset {args.dataset} from batch {baseline.batch_id}: catch a mean drop "
          f"of {args.effect:g} (tolerance {args.tolerance:g}) with power {args.power:g} at "
          f"alpha {args.alpha:g} ({level:.3g} per scorer)", file=out)
    print_table(("scorer", "spread", "items needed"),
                [(p["scorer"], number(p["spread"]),
                  "-" if p["itemsNeeded"] is None else str(p["itemsNeeded"])) for p in plans],
                rich_output=out.isatty(), out=out)
    print(f"spread: {source}", file=out)
    if isinstance(have, int):
        most = max((p["itemsNeeded"] or 0) for p in plans) if plans else 0
        enough = "enough" if have >= most else f"{most - have} too few"
        print(f"the baseline ran on {have} items: {enough}", file=out)
    return EXIT_PASSED
