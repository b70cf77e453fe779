"""How often ``scorecore compare``'s gate fires: false alarms on null pairs, power on regressions,
and power at the number of items ``scorecore plan`` predicts.

    .venv/bin/python benchmarks/compare_power.py [--runs 1000] [--items 200] [--resamples 1000]
        [--plan-runs 500] [--skip-fixed]

Simulated batches (tests/evals/compare/simulation.py): per item a latent quality q ~ U(0, 1), each
batch scores q - shift + N(0, 0.15), clipped to [0, 1]. A null comparison has shift 0 in both
batches; a planted regression shifts the new batch's scores down.

The planned section checks the minimum detectable effect by simulation, not only by formula: a
pilot null comparison (2,000 items) gives the paired differences' spread, ``items_needed``
turns it into the items needed to catch a drop of ``effect`` beyond the tolerance with 80 %
power, and comparisons of that many items with that drop planted should fire about 80 % of the
time for the mean test the MDE describes (the gate, which also fires on the pass-rate test,
somewhat more). Scores are left unclipped there, so the planted drop is exactly ``effect``
(clipping at 0 and 1 shrinks the drop of the items near the ends).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorecore.evals import items_needed, minimum_detectable_effect
from tests.evals.compare.simulation import gate_rate, gate_rates, pilot_spread


def planned(args: argparse.Namespace) -> None:
    """Power at the planned number of items, per effect (tolerance 0.02, alpha 0.05)."""
    tolerance = 0.02
    sd = pilot_spread(items=2000, seed=1, clip=False)
    print(f"planned n: pilot spread of the paired differences {sd:.4f} (2,000 items); "
          f"{args.plan_runs} simulated comparisons per effect, tolerance {tolerance:g}")
    print(f"{'effect':>7} {'planned n':>10} {'tol + MDE at n':>15} {'mean test fired':>16} "
          f"{'gate fired':>11}")
    for effect in (0.04, 0.06, 0.08):
        started = time.perf_counter()
        n = items_needed(sd, effect, tolerance=tolerance)
        mde = minimum_detectable_effect([sd, -sd] * (n // 2) + [0.0] * (n % 2))
        gate, mean = gate_rates(runs=args.plan_runs, items=n, shift=effect, seed=2027,
                                tolerance=tolerance, resamples=args.resamples, clip=False)
        print(f"{effect:>7g} {n:>10} {tolerance + (mde or 0):>15.4f} {100 * mean:>14.1f} % "
              f"{100 * gate:>9.1f} % ({time.perf_counter() - started:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--plan-runs", type=int, default=500)
    parser.add_argument("--skip-fixed", action="store_true",
                        help="only the planned-n section")
    args = parser.parse_args()
    planned(args)
    if args.skip_fixed:
        return
    cases = [
        ("null, tolerance 0.02", 0.0, 0.02),
        ("null, tolerance 0", 0.0, 0.0),
        ("regression 0.03, tolerance 0.02", 0.03, 0.02),
        ("regression 0.05, tolerance 0.02", 0.05, 0.02),
        ("regression 0.08, tolerance 0.02", 0.08, 0.02),
    ]
    print(f"{args.runs} simulated comparisons per case, {args.items} items, "
          f"{args.resamples} bootstrap resamples, noise sd 0.15")
    for name, shift, tolerance in cases:
        started = time.perf_counter()
        rate = gate_rate(runs=args.runs, items=args.items, shift=shift, seed=2026,
                         tolerance=tolerance, resamples=args.resamples)
        print(f"{name:<34} gate fired in {100 * rate:5.1f} % "
              f"({time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
