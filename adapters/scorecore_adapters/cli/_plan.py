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
import statistics
from typing import Any, Final, TextIO

from scorecore.evals import compare, items_needed
from scorecore_adapters._resample import mean_resampler
from scorecore_adapters.cli._common import (
    DEFAULT_STORE,
    EXIT_PASSED,
    UsageError,
    print_json,
    print_table,
    read_batch,
)
from scorecore_adapters.cli._experiments import read_ledger
from scorecore_adapters.report._text import number
from scorecore_adapters.storage import Experiment

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
    _, rows = read_batch(args.store, baseline.batch_id)
    spreads: dict[str, float | None]
    if partner is not None:
        _, before = read_batch(args.store, partner.batch_id)
        spreads = {s.scorer_id: s.spread
                   for s in compare(before, rows, resampler=mean_resampler()).scorers}
        source = f"paired differences of {partner.batch_id} -> {baseline.batch_id}"
    else:
        scores: dict[str, list[float]] = {}
        for row in rows:
            if row.status == "scored" and row.score is not None:
                scores.setdefault(row.scorer_id, []).append(row.score)
        # pstdev: the spread over n, as compare's figures take it (the bootstrap's plug-in)
        spreads = {sid: math.sqrt(2) * statistics.pstdev(v) if len(v) >= 2 else None
                   for sid, v in sorted(scores.items())}
        source = ASSUMPTION
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
