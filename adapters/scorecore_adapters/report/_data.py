"""The report's data: per-scorer summaries, and the items with their drill-down, size-bounded.

Every value from the rows passes through :func:`bounded`: text is cut to a limit (at most
:data:`MAX_TEXT` characters, less when a batch would not fit the size budget), containers are
bounded too, so a 50 MB output or a deep value cannot blow up the page. The page's JSON is
packed (lone surrogates replaced, compressed, base64) by ``packed_json``.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from scorecore.evals import EvalReport, ItemResult, ScoreRow, Threshold
from scorecore.evals.engine import ReportFold
from scorecore.evals.results import ScorerOutcome
from scorecore.evals.store import row_item_id
from scorecore_adapters.report._causes import FailureCause, FailureTally, cause_of_row
from scorecore_adapters.report._text import packed_json

DEFAULT_BUDGET: Final = 4_500_000
"""Bytes the packed items' data may take: with the page around it the file stays under 5 MB."""

_STATUS: Final = {"scored": 0, "not_scorable": 1, "failed": 2}
MAX_TEXT: Final = 20_000
"""The most characters of one value the page shows (the store keeps it whole)."""
_MAX_DEPTH: Final = 32
_MAX_ITEMS: Final = 50


class Cutter:
    """Cuts text to ``limit`` characters (noting how many were cut) and records every length.

    The lengths let :func:`payload` compute, from one full build, the limit that fits the
    budget.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.lengths: list[int] = []

    def __call__(self, text: str) -> str:
        """``text``, cut when longer than the limit."""
        size = len(text)
        self.lengths.append(size)
        if self.limit is None or size <= self.limit:
            return text
        return f"{text[: self.limit]}…(+{size - self.limit:,})"


_NOTE: Final = 10
"""About how many characters the cut note (``…(+1,234)``) adds."""


def bounded(value: Any, cut: Cutter, depth: int = 0) -> Any:
    """``value`` as plain JSON with strings cut and containers bounded (never raises)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        # Beyond 2**53 a browser's JSON.parse loses digits: show the digits as text.
        return value if abs(value) <= 2**53 else cut(str(value))
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return cut(value)
    if depth >= _MAX_DEPTH:
        return f"<{type(value).__name__} nested deeper than {_MAX_DEPTH} levels, not shown>"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index == _MAX_ITEMS:
                out["…"] = f"{len(value) - _MAX_ITEMS} more keys"
                break
            out[cut(str(key))] = bounded(item, cut, depth + 1)
        return out
    if isinstance(value, list | tuple):
        items = [bounded(item, cut, depth + 1) for item in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"… {len(value) - _MAX_ITEMS} more")
        return items
    return cut(_text(value))


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception as exc:  # noqa: BLE001 - a user's __str__ is a boundary
        return f"<str() raised {type(exc).__name__}>"


def _usage(value: object) -> list[Any] | None:
    if not isinstance(value, Mapping):
        return None
    return [value.get(k) if isinstance(value.get(k), int) else None
            for k in ("inputTokens", "outputTokens", "totalTokens")]


def _executions(row: ScoreRow, cut: Cutter) -> list[list[Any]]:
    """``[step, status, model, calls, prompt, reply, [in, out, total tokens], error]`` each."""
    judge = (row.metadata or {}).get("judge")
    found = []
    if isinstance(judge, Mapping):
        for step, record in judge.items():
            executions = record.get("executions") if isinstance(record, Mapping) else None
            for e in executions if isinstance(executions, list) else []:
                if not isinstance(e, Mapping):
                    continue
                reply = e.get("rawOutput", e.get("output"))
                found.append([
                    cut(str(step)), bounded(e.get("status"), cut),
                    bounded(e.get("judgeModelId"), cut), bounded(e.get("modelCallCount"), cut),
                    bounded(e.get("prompt"), cut), bounded(reply, cut), _usage(e.get("usage")),
                    bounded(e.get("error"), cut),
                ])
    return found


def _members(row: ScoreRow, cut: Cutter) -> list[list[Any]]:
    """A panel's members: ``[member, status, score, vote, reason or cause, replaces]`` each."""
    panel = (row.metadata or {}).get("panel")
    members = panel.get("members") if isinstance(panel, Mapping) else None
    found = []
    for m in members if isinstance(members, list) else []:
        if not isinstance(m, Mapping):
            continue
        error = m.get("error")
        why = error.get("message") if isinstance(error, Mapping) else m.get("reason")
        status = m.get("status")
        if m.get("replaced"):
            status = f"{status}, replaced"
        found.append([bounded(m.get("scorerId"), cut), bounded(status, cut),
                      bounded(m.get("score"), cut), bounded(m.get("vote"), cut),
                      bounded(why, cut), bounded(m.get("replaces"), cut)])
    return found


def _detail(row: ScoreRow, cut: Cutter) -> dict[str, Any]:
    executions = _executions(row, cut)
    judged = {str(e[0]) for e in executions}
    # A prompt step's prompt is also its judge execution's prompt: shown once, with the call.
    prompts = {
        name: cut(text)
        for name, text in (("preprocess", row.preprocess_prompt), ("analyze", row.analyze_prompt),
                           ("generate_score", row.generate_score_prompt),
                           ("generate_reason", row.generate_reason_prompt))
        if text and name not in judged
    }
    metadata = row.metadata or {}
    detail: dict[str, Any] = {}
    if row.preprocess_step_result is not None:
        detail["pre"] = bounded(row.preprocess_step_result, cut)
    if row.analyze_step_result is not None:
        detail["an"] = bounded(row.analyze_step_result, cut)
    if prompts:
        detail["pr"] = prompts
    if executions:
        detail["j"] = executions
    members = _members(row, cut)
    if members:
        detail["pn"] = members
    if "notScorable" in metadata:
        detail["ns"] = bounded(metadata["notScorable"], cut)
    if "sanitized" in metadata:
        detail["sa"] = bounded(metadata["sanitized"], cut)
    return detail


@attrs.frozen(kw_only=True)
class ScorerStats:
    """One scorer's numbers for the summary table and its charts."""

    scorer_id: str
    scores: tuple[float, ...]
    scored: int
    not_scorable: int
    failed: int
    threshold: Threshold | None

    @property
    def mean(self) -> float | None:
        """The mean of the scores (``None`` when none was scored)."""
        # statistics.mean is exact: scores near the largest float do not overflow their sum.
        return float(statistics.mean(self.scores)) if self.scores else None

    @property
    def passed(self) -> bool | None:
        """Whether the mean meets the threshold (``None`` without one)."""
        return None if self.threshold is None else self.threshold.check(self.mean)


def scorer_stats(
    rows: Sequence[ScoreRow], thresholds: Mapping[str, Threshold]
) -> list[ScorerStats]:
    """Per scorer (by id): its scores and status counts."""
    scores: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for row in rows:
        scores.setdefault(row.scorer_id, [])
        tally = counts.setdefault(row.scorer_id, [0, 0, 0])
        tally[_STATUS.get(row.status, 2)] += 1
        if row.status == "scored" and row.score is not None:
            scores[row.scorer_id].append(row.score)
    return [
        ScorerStats(scorer_id=sid, scores=tuple(scores[sid]), scored=counts[sid][0],
                    not_scorable=counts[sid][1], failed=counts[sid][2],
                    threshold=thresholds.get(sid))
        for sid in sorted(scores)
    ]


def batch_verdict(
    rows: Sequence[ScoreRow],
    thresholds: Mapping[str, Threshold],
    *,
    max_failures: int | None = 0,
    max_failure_rate: float | None = None,
) -> EvalReport:
    """The report ``run_evals``'s fold gives for a stored batch's rows: its verdict and
    ``verdict_reason`` under ``thresholds`` and the failure budget (a store keeps rows, not
    the options a batch ran with). Each run id is an item, as ``run_evals`` counts them."""
    scorer_ids = sorted({row.scorer_id for row in rows})
    fold = ReportFold(scorer_ids, thresholds=thresholds, max_failures=max_failures,
                      max_failure_rate=max_failure_rate)
    runs: dict[str, list[ScorerOutcome]] = {}
    for row in rows:
        scored = row.status == "scored"
        runs.setdefault(row.run_id, []).append(ScorerOutcome(
            scorer_id=row.scorer_id,
            status=row.status if row.status in _STATUS else "failed",
            score=row.score if scored else None,
            not_scorable_kind=row.not_scorable_kind(),
        ))
    for index, (run_id, outcomes) in enumerate(runs.items()):
        fold.add(ItemResult(index=index, item_id=None, run_id=run_id, item=None,
                            outcomes=tuple(outcomes)))
    batch_id = rows[0].batch_id if rows else ""
    return fold.report(batch_id=batch_id, duration=0.0)


def not_scorable_reasons(rows: Sequence[ScoreRow]) -> list[tuple[str, str, int]]:
    """``(scorer id, reason, count)`` of the not-scorable rows, most frequent first."""
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.status == "not_scorable":
            key = (row.scorer_id, row.reason or "(no reason given)")
            counts[key] = counts.get(key, 0) + 1
    return sorted(((s, r, n) for (s, r), n in counts.items()), key=lambda t: (-t[2], t[0], t[1]))


def failure_groups(rows: Sequence[ScoreRow]) -> FailureTally:
    """The failed rows' causes, grouped."""
    tally = FailureTally()
    for row in rows:
        cause = cause_of_row(row)
        if cause is not None:
            tally.add(row.scorer_id, row_item_id(row), cause)
    return tally




def _fitting_limit(lengths: list[int], overhead: int, budget: int) -> int:
    """The largest text limit for which the cut texts plus ``overhead`` fit ``budget``."""
    ordered = sorted(lengths)
    low, high = 16, min(MAX_TEXT, max(ordered, default=16))
    while low < high:
        middle = (low + high + 1) // 2
        total = overhead + sum(min(n, middle) + (_NOTE if n > middle else 0) for n in ordered)
        if total <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def payload(
    rows: Sequence[ScoreRow],
    *,
    baseline: Mapping[tuple[str, str], float | None] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> tuple[str, int | None]:
    """The items' data packed for the page (:func:`packed_json`), and the text limit it needed
    (``None``: none).

    Shape (short keys keep 10,000 items small): ``scorers`` (ids), ``causes`` ``[kind, step,
    message]``, ``items`` ``[id, input, output]``, ``rows`` ``[item, scorer, status, score,
    reason, cause, baseline score, detail]``. One full build measures every text; when its
    packed size is over ``budget`` the texts are cut to the largest limit that fits at the
    same compression ratio (cut further if the estimate was short), except those of items with
    a failed or not-scorable run.
    """
    causes = [cause_of_row(row) for row in rows]
    full = Cutter(MAX_TEXT)
    data = _build(rows, causes, full, baseline or {})
    packed = packed_json(data)
    if len(packed) <= budget:
        return packed, None if max(full.lengths, default=0) <= MAX_TEXT else MAX_TEXT
    plain = len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str))
    ratio = plain / len(packed)
    limit = _fitting_limit(full.lengths, plain - sum(full.lengths), int(budget * ratio * 0.9))
    while True:
        packed = packed_json(_build(rows, causes, Cutter(limit), baseline or {}))
        if limit <= 16 or len(packed) <= budget:
            return packed, limit
        limit = max(16, int(limit * 0.7))


def _build(
    rows: Sequence[ScoreRow],
    row_causes: Sequence[FailureCause | None],
    cut: Cutter,
    baseline: Mapping[tuple[str, str], float | None],
) -> dict[str, Any]:
    scorer_ids = sorted({row.scorer_id for row in rows})
    scorer_index = {sid: i for i, sid in enumerate(scorer_ids)}
    items: list[list[Any]] = []
    item_index: dict[str, int] = {}
    causes: list[list[Any]] = []
    cause_index: dict[FailureCause, int] = {}
    out_rows: list[list[Any]] = []
    # What people drill into: the items with a failed or not-scorable run keep their values
    # whole (up to MAX_TEXT); the limit fitted to the budget cuts the others.
    whole = Cutter(MAX_TEXT)
    troubled = {row_item_id(row) for row in rows if row.status != "scored"}
    for row, cause in zip(rows, row_causes, strict=True):
        key = row_item_id(row)
        item_cut = whole if key in troubled else cut
        position = item_index.get(key)
        if position is None:
            position = item_index[key] = len(items)
            # The input as the item gave it, not as the scorer saw it (an agent run's
            # converted messages), when the row kept both.
            metadata = row.metadata or {}
            given = metadata.get("itemInput", row.input)
            items.append([key, bounded(given, item_cut), bounded(row.output, item_cut)])
        cause_at = -1
        if cause is not None:
            cause_at = cause_index.get(cause, -1)
            if cause_at < 0:
                cause_at = cause_index[cause] = len(causes)
                # The cause is never cut (the core bounds it to ~1,000 characters).
                causes.append([cause.kind, cause.step or "", cause.message])
        base = baseline.get((row.scorer_id, key), "")
        out_rows.append([
            position, scorer_index[row.scorer_id], _STATUS.get(row.status, 2), row.score,
            item_cut(row.reason or ""), cause_at, base, _detail(row, item_cut),
        ])
    return {"scorers": scorer_ids, "causes": causes, "items": items, "rows": out_rows}
