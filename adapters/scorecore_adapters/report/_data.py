"""The report's data: per-scorer summaries, and the items with their drill-down, size-bounded.

Every value from the rows passes through :func:`bounded`: text is cleaned (no NUL, no lone
surrogate) and cut to the current limit, containers are cut too, so a 50 MB output or a deep
value cannot blow up the page. The limit shrinks until the items fit the size budget.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from scorecore.evals import ScoreRow, Threshold
from scorecore_adapters.report._causes import FailureCause, FailureTally, cause_of_row
from scorecore_adapters.report._text import clean

DEFAULT_BUDGET: Final = 4_500_000
"""Bytes the items' data may take: with the page around it the file stays under 5 MB."""

_STATUS: Final = {"scored": 0, "not_scorable": 1, "failed": 2}
_MAX_DEPTH: Final = 8
_MAX_ITEMS: Final = 50


def _cut(text: str, limit: int) -> str:
    text = clean(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters; the store keeps it all]"


def bounded(value: Any, limit: int, depth: int = 0) -> Any:
    """``value`` as plain JSON with strings cut to ``limit`` characters and containers bounded."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        # Beyond 2**53 a browser's JSON.parse loses digits: show the digits as text.
        return value if abs(value) <= 2**53 else _cut(str(value), limit)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _cut(value, limit)
    if depth >= _MAX_DEPTH:
        return _cut(json.dumps(value, default=str, ensure_ascii=False)[: limit + 1], limit)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index == _MAX_ITEMS:
                out["…"] = f"{len(value) - _MAX_ITEMS} more keys"
                break
            out[_cut(str(key), 200)] = bounded(item, limit, depth + 1)
        return out
    if isinstance(value, list | tuple):
        items = [bounded(item, limit, depth + 1) for item in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"… {len(value) - _MAX_ITEMS} more")
        return items
    return _cut(str(value), limit)


def _executions(row: ScoreRow, limit: int) -> list[dict[str, Any]]:
    judge = (row.metadata or {}).get("judge")
    found = []
    if isinstance(judge, Mapping):
        for step, record in judge.items():
            executions = record.get("executions") if isinstance(record, Mapping) else None
            for execution in executions if isinstance(executions, list) else []:
                if not isinstance(execution, Mapping):
                    continue
                found.append({
                    "step": _cut(str(step), 100),
                    "status": bounded(execution.get("status"), 100),
                    "model": bounded(execution.get("judgeModelId"), 200),
                    "calls": bounded(execution.get("modelCallCount"), 100),
                    "prompt": bounded(execution.get("prompt"), limit),
                    "reply": bounded(execution.get("rawOutput", execution.get("output")), limit),
                    "usage": bounded(execution.get("usage"), 200),
                    "error": bounded(execution.get("error"), limit),
                })
    return found


def _detail(row: ScoreRow, limit: int) -> dict[str, Any]:
    prompts = {
        name: _cut(text, limit)
        for name, text in (("preprocess", row.preprocess_prompt), ("analyze", row.analyze_prompt),
                           ("generate_score", row.generate_score_prompt),
                           ("generate_reason", row.generate_reason_prompt))
        if text
    }
    metadata = row.metadata or {}
    detail: dict[str, Any] = {}
    if row.preprocess_step_result is not None:
        detail["preprocess"] = bounded(row.preprocess_step_result, limit)
    if row.analyze_step_result is not None:
        detail["analyze"] = bounded(row.analyze_step_result, limit)
    if prompts:
        detail["prompts"] = prompts
    executions = _executions(row, limit)
    if executions:
        detail["judge"] = executions
    if "notScorable" in metadata:
        detail["notScorable"] = bounded(metadata["notScorable"], limit)
    if "sanitized" in metadata:
        detail["sanitized"] = bounded(metadata["sanitized"], limit)
    return detail


def item_key(row: ScoreRow) -> str:
    """The item a row scored: its dataset item id, else the run id without the batch prefix."""
    if row.dataset_item_id is not None:
        return row.dataset_item_id
    return row.run_id.removeprefix(f"{row.batch_id}:")


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
        return sum(self.scores) / len(self.scores) if self.scores else None

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
            tally.add(row.scorer_id, item_key(row), cause)
    return tally


def payload(
    rows: Sequence[ScoreRow],
    *,
    baseline: Mapping[tuple[str, str], float | None] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> tuple[dict[str, Any], int]:
    """The items' data for the page's script, and the text limit it needed to fit ``budget``.

    Shape (short keys keep 10,000 items small): ``scorers`` (ids), ``causes`` (kind, step,
    message), ``items`` (id, input, output), ``rows`` ``[item, scorer, status, score, reason,
    cause, base score, detail]``.
    """
    limit = 4_000
    while True:
        data = _build(rows, limit, baseline or {})
        size = len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
                   .encode("utf-8", "replace"))
        if size <= budget or limit <= 40:
            return data, limit
        limit = max(40, int(limit * min(0.5, budget / size)))


def _build(
    rows: Sequence[ScoreRow], limit: int, baseline: Mapping[tuple[str, str], float | None]
) -> dict[str, Any]:
    scorer_ids = sorted({row.scorer_id for row in rows})
    scorer_index = {sid: i for i, sid in enumerate(scorer_ids)}
    items: list[list[Any]] = []
    item_index: dict[str, int] = {}
    causes: list[list[Any]] = []
    cause_index: dict[FailureCause, int] = {}
    out_rows: list[list[Any]] = []
    for row in rows:
        key = item_key(row)
        position = item_index.get(key)
        if position is None:
            position = item_index[key] = len(items)
            items.append([_cut(key, 500), bounded(row.input, limit), bounded(row.output, limit)])
        cause = cause_of_row(row)
        cause_at = -1
        if cause is not None:
            cause_at = cause_index.get(cause, -1)
            if cause_at < 0:
                cause_at = cause_index[cause] = len(causes)
                # The cause is never cut (the core bounds it to ~1,000 characters).
                causes.append([clean(cause.kind), clean(cause.step or ""), clean(cause.message)])
        base = baseline.get((row.scorer_id, key), "")
        out_rows.append([
            position, scorer_index[row.scorer_id], _STATUS.get(row.status, 2), row.score,
            _cut(row.reason or "", limit), cause_at, base, _detail(row, limit),
        ])
    return {"scorers": scorer_ids, "causes": causes, "items": items, "rows": out_rows}
