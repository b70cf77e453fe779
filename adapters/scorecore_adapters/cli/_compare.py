"""``scorecore compare BASE NEW``: per-scorer deltas with significance; exit 1 on a regression."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from typing import Any, Final, TextIO

import anyio

from scorecore.evals import Comparison, ScoreRow, StoreError, Threshold, items_needed
from scorecore.evals import compare as compare_rows
from scorecore.evals.results import ScorerComparison
from scorecore.evals.store import PairedComparison
from scorecore_adapters._resample import mean_resampler
from scorecore_adapters.cli._common import (
    EXIT_FAILED,
    EXIT_NO_VERDICT,
    EXIT_PASSED,
    UsageError,
    clip,
    open_url,
    print_json,
    print_table,
)
from scorecore_adapters.cli._eval import parse_threshold
from scorecore_adapters.cli._experiments import auto_baseline, ledger_dataset, ledger_items
from scorecore_adapters.report._text import number, percent
from scorecore_adapters.storage import Store

_HEADERS = ("scorer", "pairs", "base", "new", "delta", "interval", "MDE", "pass rate",
            "McNemar p", "+/-/=", "verdict")
_LISTED = 10


_VERDICT_WORDS: Final = {"regressed": "REGRESSED", "improved": "improved",
                         "unchanged": "unchanged", "not_enough_pairs": "too few pairs"}


def _row(s: ScorerComparison) -> tuple[str, ...]:
    interval = ("-" if s.ci_low is None
                else f"[{number(s.ci_low, sign=True)}, {number(s.ci_high, sign=True)}]")
    name = f"{s.scorer_id} (definition changed)" if s.definition_changed else s.scorer_id
    return (name, str(s.paired), number(s.base_mean), number(s.new_mean),
            number(s.mean_delta, sign=True), interval, number(s.mde),
            f"{percent(s.base_pass_rate)} -> {percent(s.new_pass_rate)}", f"{s.mcnemar_p:.3g}",
            f"{s.improved}/{s.regressed}/{s.unchanged}", _VERDICT_WORDS[s.verdict])


def verdict_line(result: Comparison) -> str:
    """The comparison's last line: ``verdict: regressed``, ``verdict: no significant
    regression`` or, without a verdict, why (``not enough paired items: n=1 for s …``)."""
    if result.verdict == "regressed":
        return "verdict: regressed"
    if result.verdict == "no_regression":
        return "verdict: no significant regression"
    reason = result.verdict_reason or ""
    if result.scorers:  # too few pairs: say how to lower the minimum, inside the parenthesis
        reason = reason.removesuffix(")") + "; --min-paired N)"
    return f"verdict: {reason}"


EXIT_CODES: Final = {"regressed": EXIT_FAILED, "no_regression": EXIT_PASSED,
                     "not_enough_pairs": EXIT_NO_VERDICT}
"""The command's exit code per :attr:`Comparison.verdict`."""


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(clip(i, 60) for i in ids[:_LISTED])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _LISTED else "")


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
        print("MDE: the smallest mean change each scorer's comparison detects with 80 % power "
              "(the gate catches a drop of the tolerance plus the MDE)", file=out)
    if result.items is not None and result.items.differ:
        print(f"datasets differ: {result.items.describe()} (only items with the same "
              f"content are compared)", file=out)
        if result.items.changed:  # added and removed items are listed below, unpaired
            print(f"  changed, not compared: {_ids(result.items.changed)}", file=out)
    if result.scorers_differ:
        print(f"scorers differ: {result.scorer_differences()}", file=out)
    if result.only_in_base:
        print(f"items only in {result.base_batch}: {_ids(result.only_in_base)}", file=out)
    if result.only_in_new:
        print(f"items only in {result.new_batch}: {_ids(result.only_in_new)}", file=out)
    for s in result.scorers:
        if s.uninformative:
            print(f"{s.scorer_id}: no significant change, but uninformative: {_blind(s, result)}",
                  file=out)
        if s.status_changes:
            changes = ", ".join(f"{n} {k}" for k, n in s.status_changes.items())
            print(f"{s.scorer_id}: status changes: {changes}", file=out)
        if s.most_regressed and s.verdict == "regressed":
            print(f"{s.scorer_id}: most regressed items:", file=out)
            for item in s.most_regressed[:5]:
                print(f"  {clip(item.item_id, 60)}: {number(item.base_score)} ({item.base_status})"
                      f" -> {number(item.new_score)} ({item.new_status})", file=out)


def _blind(s: ScorerComparison, result: Comparison) -> str:
    """Why a scorer's "no change" says little, and how many items would say more."""
    shown = number(s.mde) if s.mde is not None else "unknown"
    text = f"its MDE {shown} is above the effect {result.effect:g}"
    if s.spread is not None and result.effect > 0:
        try:
            needed = items_needed(s.spread, result.effect, alpha=1 - s.confidence)
        except ValueError:  # a spread so large that the count is past any float
            return text + " (no finite number of paired items would detect it)"
        text += f" (about {needed} paired items would detect it)"
    return text


def versions_line(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str:
    """``dataset versions differ: …`` when the ledger knows both batches' data and it differs
    (``""`` otherwise)."""
    if base is None or new is None or base.get("version") == new.get("version"):
        return ""
    shown = [f"{d.get('name') or d.get('file') or '?'}@{str(d.get('version') or '?')[:12]}"
             for d in (base, new)]
    same_cases = base.get("cases") is not None and base.get("cases") == new.get("cases")
    what = "; the same cases, other recorded outputs" if same_cases else ""
    return f"dataset versions differ: {shown[0]} -> {shown[1]}{what}"


def thresholds_of(texts: Sequence[str]) -> dict[str, Threshold]:
    """``--threshold ID=MIN[:MAX]`` options as a mapping."""
    return dict(parse_threshold(t) for t in texts)


def compare_batches(
    base: Sequence[ScoreRow], new: Sequence[ScoreRow], args: argparse.Namespace,
    thresholds: dict[str, Threshold], *, seed: int = 0,
) -> Comparison:
    """``compare`` and ``report --baseline``: the comparison their options ask for, refused
    (a usage error) when ``--require-same-scorers`` is given and the scorers differ."""
    options: dict[str, Any] = {} if args.min_paired is None else {"min_paired": args.min_paired}
    # Pair only the items whose content is the same, when the ledger knows both batches' data.
    if base and new:
        base_items = ledger_items(args.store, base[0].batch_id)
        new_items = ledger_items(args.store, new[0].batch_id)
        if base_items and new_items:
            options |= {"base_items": base_items, "new_items": new_items}
    try:
        result = compare_rows(base, new, tolerance=args.tolerance, thresholds=thresholds,
                              seed=seed, resampler=mean_resampler(), **options)
    except ValueError as exc:  # a change no float holds (scores near ±1e308), naming the rows
        raise UsageError(str(exc)) from None
    return _judged(result, args)


async def _paired(
    store: Store, args: argparse.Namespace, thresholds: dict[str, Threshold], options: Any
) -> Comparison:
    # The store pairs the batches and streams the pairs: a page of them is held at a time,
    # so two batches of millions of rows compare in the memory of their deltas.
    async with store:
        scorers = {}
        for batch in (args.base, args.new):
            scorers[batch] = await store.batch_scorers(batch)
            if not scorers[batch]:
                raise UsageError(f"no rows for batch {batch!r} in {store.url}")
        building = PairedComparison(
            base_batch=args.base, new_batch=args.new, base_scorers=scorers[args.base],
            new_scorers=scorers[args.new],
            only_in_base=await store.items_only_in(args.base, args.new),
            only_in_new=await store.items_only_in(args.new, args.base),
            tolerance=args.tolerance, thresholds=thresholds, seed=args.seed,
            resampler=mean_resampler(), **options)
        async with aclosing(store.paired_scores(args.base, args.new)) as pages:
            async for pairs in pages:
                building.add(pairs)
        return building.result()


def compare_stored(args: argparse.Namespace, thresholds: dict[str, Threshold]) -> Comparison:
    """``compare``: the stored batches ``args.base`` and ``args.new`` compared in the store
    (the same comparison as :func:`compare_batches` of their rows), refused as it refuses."""
    store = open_url(args.store, must_exist=True, read_only=True)
    options: dict[str, Any] = {} if args.min_paired is None else {"min_paired": args.min_paired}
    # Pair only the items whose content is the same, when the ledger knows both batches' data.
    base_items = ledger_items(args.store, args.base)
    new_items = ledger_items(args.store, args.new)
    if base_items and new_items:
        options |= {"base_items": base_items, "new_items": new_items}
    try:
        result = anyio.run(_paired, store, args, thresholds, options)
    except (StoreError, ValueError) as exc:  # unreadable rows; a change no float holds
        raise UsageError(str(exc)) from None
    return _judged(result, args)


def _judged(result: Comparison, args: argparse.Namespace) -> Comparison:
    """``result`` against ``--effect``, refused under ``--require-same-scorers`` when the
    scorers differ."""
    effect = getattr(args, "effect", None)  # report has no --effect: the tolerance then
    if effect is not None:
        result = result.with_effect(effect)
    if args.require_same_scorers and result.scorers_differ:
        raise UsageError(
            f"the batches ran different scorers ({result.scorer_differences()}) and "
            f"--require-same-scorers was given; without it they are compared, changed "
            f"definitions marked"
        )
    return result


def baseline_of(base: str | None, baseline: str | None, store: str, new: str) -> str:
    """The baseline batch: BASE or ``--baseline`` (not both); ``auto`` asks the ledger."""
    if base is not None and baseline is not None:
        raise UsageError(f"give the baseline once: BASE {base!r} or --baseline {baseline!r}")
    chosen = base if base is not None else baseline
    if chosen is None:
        raise UsageError("name the baseline: scorecore compare BASE NEW, or --baseline "
                         "BATCH|auto")
    return auto_baseline(store, new) if chosen == "auto" else chosen


def compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compare two stored batches; exit 1 when a regression beyond the tolerance is significant,
    3 without a verdict (too few paired items)."""
    thresholds = thresholds_of(args.threshold)
    args.base = baseline_of(args.base, args.baseline, args.store, args.new)
    result = compare_stored(args, thresholds)
    common = [s.scorer_id for s in result.scorers]
    unknown = sorted(set(thresholds) - set(common))
    if unknown:
        raise UsageError(f"--threshold for scorer(s) not in both batches: {', '.join(unknown)}; "
                         f"scorers in both: {', '.join(common) or 'none'}")
    code = EXIT_CODES[result.verdict]
    datasets = [ledger_dataset(args.store, b) for b in (args.base, args.new)]
    if args.json:
        print_json({**result.to_json(), "baseDataset": datasets[0], "newDataset": datasets[1],
                    "exitCode": code}, out)
        return code
    print_comparison(result, out)
    line = versions_line(*datasets)
    if line:
        print(line, file=out)
    print(verdict_line(result), file=out)
    return code
