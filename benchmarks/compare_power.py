"""How often ``scorecore compare``'s gate fires: false alarms on null pairs, power on regressions.

    .venv/bin/python benchmarks/compare_power.py [--runs 1000] [--items 200] [--resamples 1000]

Simulated batches (tests/evals/compare/simulation.py): per item a latent quality q ~ U(0, 1), each
batch scores q - shift + N(0, 0.15), clipped to [0, 1]. A null comparison has shift 0 in both
batches; a planted regression shifts the new batch's scores down.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.compare.simulation import gate_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
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
