"""The report's data: per-scorer summaries, and the items with their drill-down, size-bounded.

Every value from the rows passes through :func:`bounded`: text is cut to a limit (at most
:data:`MAX_TEXT` characters, less when a batch would not fit the size budget), containers are
bounded too, so a 50 MB output or a deep value cannot blow up the page. :func:`row_data` and
:func:`item_data` shape one row and one item for the page's data (``_scan`` builds it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import attrs

from scorecore.evals import ScoreRow, Threshold

DEFAULT_BUDGET: Final = 4_500_000
"""Bytes the packed items' data may take: with the page around it the file stays under 5 MB."""

STATUS: Final = {"scored": 0, "not_scorable": 1, "failed": 2}
MAX_TEXT: Final = 20_000
"""The most characters of one value the page shows (the store keeps it whole)."""
_MAX_DEPTH: Final = 32
_MAX_ITEMS: Final = 50


class Cutter:
    """Cuts text to ``limit`` characters (noting how many were cut) and counts every length.

    The lengths (how many texts of each length, lengths past :data:`MAX_TEXT` counted as one
    past it: a limit is never above it) let :func:`fitting_limit` compute, from one full build,
    the limit that fits the budget, in memory flat in the number of texts.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.lengths: dict[int, int] = {}
        self.total = 0
        self.longest = 0

    def __call__(self, text: str) -> str:
        """``text``, cut when longer than the limit."""
        size = len(text)
        key = min(size, MAX_TEXT + 1)
        self.lengths[key] = self.lengths.get(key, 0) + 1
        self.total += size
        self.longest = max(self.longest, size)
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
    mean: float | None
    """The exact mean of the scores, rounded once (``None`` when none was scored)."""
    histogram: tuple[float, float, tuple[int, ...]]
    """The range shown and the scores' count in each of its equal bins."""
    scored: int
    not_scorable: int
    failed: int
    threshold: Threshold | None

    @property
    def passed(self) -> bool | None:
        """Whether the mean meets the threshold (``None`` without one)."""
        return None if self.threshold is None else self.threshold.check(self.mean)


def fitting_limit(lengths: Mapping[int, int], overhead: int, budget: int) -> int:
    """The largest text limit for which texts of ``lengths`` (length → count) cut to it, plus
    ``overhead``, fit ``budget``."""
    ordered = sorted(lengths.items())
    low, high = 16, min(MAX_TEXT, max(lengths, default=16))
    while low < high:
        middle = (low + high + 1) // 2
        total = overhead + sum(n * (min(size, middle) + (_NOTE if size > middle else 0))
                               for size, n in ordered)
        if total <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def item_data(key: str, row: ScoreRow, cut: Cutter) -> list[Any]:
    """An item's entry in the page's data, ``[id, input, output]``, from its first row: the
    input as the item gave it, not as the scorer saw it (an agent run's converted messages),
    when the row kept both."""
    given = (row.metadata or {}).get("itemInput", row.input)
    return [key, bounded(given, cut), bounded(row.output, cut)]


def row_data(
    row: ScoreRow, cut: Cutter, *, position: int, scorer: int, cause: int,
    base: float | str | None,
) -> list[Any]:
    """A row's entry in the page's data: ``[item, scorer, status, score, reason, cause,
    baseline score, detail]`` (positions in the data's lists; ``-1``: no cause; ``""``: no
    baseline row)."""
    return [position, scorer, STATUS.get(row.status, 2), row.score, cut(row.reason or ""),
            cause, base, _detail(row, cut)]
