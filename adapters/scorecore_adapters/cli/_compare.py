"""``scorecore compare BASE NEW``: per-scorer deltas with significance; exit 1 on a regression."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TextIO

from scorecore.evals import Comparison, ScorerComparison, Threshold
from scorecore.evals import compare as compare_rows
from scorecore_adapters.cli._common import (
    EXIT_FAILED,
    EXIT_PASSED,
    UsageError,
    clip,
    print_json,
    print_table,
    read_batch,
)
from scorecore_adapters.cli._eval import parse_threshold
from scorecore_adapters.report._text import number, percent

_HEADERS = ("scorer", "pairs", "base", "new", "delta", "interval", "pass rate", "McNemar p",
            "+/-/=", "verdict")
_LISTED = 10


def _row(s: ScorerComparison) -> tuple[str, ...]:
    interval = ("-" if s.ci_low is None
                else f"[{number(s.ci_low, sign=True)}, {number(s.ci_high, sign=True)}]")
    return (s.scorer_id, str(s.paired), number(s.base_mean), number(s.new_mean),
            number(s.mean_delta, sign=True), interval,
            f"{percent(s.base_pass_rate)} -> {percent(s.new_pass_rate)}", f"{s.mcnemar_p:.3g}",
            f"{s.improved}/{s.regressed}/{s.unchanged}",
            s.verdict.upper() if s.verdict == "regressed" else s.verdict)


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(clip(i, 60) for i in ids[:_LISTED])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _LISTED else "")


def scorers_differ_message(result: Comparison) -> str:
    """Why two batches' scorers are not the same, in one line."""
    parts = []
    if result.scorers_only_in_base:
        parts.append(f"only in {result.base_batch}: {', '.join(result.scorers_only_in_base)}")
    if result.scorers_only_in_new:
        parts.append(f"only in {result.new_batch}: {', '.join(result.scorers_only_in_new)}")
    if result.changed_scorers:
        parts.append(f"changed definition: {', '.join(result.changed_scorers)}")
    return "; ".join(parts)


def print_comparison(result: Comparison, out: TextIO) -> None:
    """The comparison as a table, then the unpaired and most regressed items."""
    print(f"compare {result.base_batch} -> {result.new_batch} (tolerance {result.tolerance:g}, "
          f"bootstrap {result.resamples} resamples, seed {result.seed})", file=out)
    if result.scorers:
        print_table(_HEADERS, [_row(s) for s in result.scorers], rich_output=out.isatty(),
                    out=out)
        levels = sorted({f"{100 * s.confidence:.3g}%" for s in result.scorers})
        print(f"interval: {', '.join(levels)} bootstrap interval of the mean delta; pass rate: "
              f"items passing ({', '.join(sorted({s.pass_rule for s in result.scorers}))})",
              file=out)
    if result.scorers_differ:
        print(f"scorers differ: {scorers_differ_message(result)}", file=out)
    if result.only_in_base:
        print(f"items only in {result.base_batch}: {_ids(result.only_in_base)}", file=out)
    if result.only_in_new:
        print(f"items only in {result.new_batch}: {_ids(result.only_in_new)}", file=out)
    for s in result.scorers:
        if s.status_changes:
            changes = ", ".join(f"{n} {k}" for k, n in s.status_changes.items())
            print(f"{s.scorer_id}: status changes: {changes}", file=out)
        if s.most_regressed and s.verdict == "regressed":
            print(f"{s.scorer_id}: most regressed items:", file=out)
            for item in s.most_regressed[:5]:
                print(f"  {clip(item.item_id, 60)}: {number(item.base_score)} ({item.base_status})"
                      f" -> {number(item.new_score)} ({item.new_status})", file=out)


def thresholds_of(texts: Sequence[str]) -> dict[str, Threshold]:
    """``--threshold ID=MIN[:MAX]`` options as a mapping."""
    return dict(parse_threshold(t) for t in texts)


def compare(args: argparse.Namespace, out: TextIO) -> int:
    """Compare two stored batches; exit 1 when a regression beyond the tolerance is significant."""
    thresholds = thresholds_of(args.threshold)
    _, base_rows = read_batch(args.store, args.base)
    _, new_rows = read_batch(args.store, args.new)
    try:
        result = compare_rows(base_rows, new_rows, tolerance=args.tolerance,
                              thresholds=thresholds, seed=args.seed)
    except ValueError as exc:  # a change no float holds (scores near ±1e308), naming the rows
        raise UsageError(str(exc)) from None
    unknown = sorted(set(thresholds) - {s.scorer_id for s in result.scorers})
    if unknown:
        raise UsageError(f"--threshold for scorer(s) not in both batches: {', '.join(unknown)}")
    if result.scorers_differ and not args.allow_changed_scorers:
        raise UsageError(
            f"the batches ran different scorers ({scorers_differ_message(result)}); "
            f"compare the common ones with --allow-changed-scorers"
        )
    code = EXIT_FAILED if result.regressed else EXIT_PASSED
    if args.json:
        print_json({**result.to_json(), "exitCode": code}, out)
        return code
    print_comparison(result, out)
    print(f"verdict: {'regressed' if result.regressed else 'no significant regression'}",
          file=out)
    return code
