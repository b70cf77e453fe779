"""A batch's runs as the workbench lists them: one entry per stored row, filtered, sorted and
paged on the server (a page holds what the browser shows, never the whole batch)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, final

import attrs

from scorecore.evals import ScoreRow
from scorecore.evals.store import row_item_id
from scorecore_adapters.report import cause_of_row

__all__ = ["RunEntry", "RunFilter", "RunPage", "entries_of", "entry_of", "page_of", "row_cost"]

SortKey: TypeAlias = Literal["item", "score", "-score", "scorer", "status"]
SORTS: Final[tuple[SortKey, ...]] = ("item", "score", "-score", "scorer", "status")
PAGE_SIZE: Final = 50


def _stored(value: Any) -> str:
    """A JSON column's value as the store keeps it (JSON text; ``""`` for none)."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def row_cost(row: ScoreRow) -> float:
    """What the row's judge calls cost (USD; unpriced calls count 0)."""
    judge = (row.metadata or {}).get("judge")
    total = 0.0
    if isinstance(judge, Mapping):
        for step in judge.values():
            executions = step.get("executions") if isinstance(step, Mapping) else None
            for execution in executions if isinstance(executions, list) else []:
                cost = execution.get("costUsd") if isinstance(execution, Mapping) else None
                if isinstance(cost, int | float) and math.isfinite(cost):
                    total += cost
    return total


def cause_kind(row: ScoreRow) -> str | None:
    """A failed row's cause kind, a not-scorable row's kind, else ``None``."""
    if row.status == "failed":
        cause = cause_of_row(row)
        return None if cause is None else cause.kind
    if row.status == "not_scorable":
        found = (row.metadata or {}).get("notScorable")
        kind = found.get("kind") if isinstance(found, Mapping) else None
        return kind if isinstance(kind, str) else "not scorable"
    return None


@final
@attrs.frozen(kw_only=True)
class RunEntry:
    """One stored row, as the batch page lists it.

    Attributes:
        position: the row's place in the listing it came from (:func:`entries_of`: the
            batch's dataset order; a page read by SQL: its place in the filtered, sorted runs).
        item_id: its dataset item.
        run_id: its run.
        scorer_id: its scorer.
        status: ``scored``, ``not_scorable`` or ``failed``.
        score: the score, when scored.
        reason: the scorer's reason.
        cause_kind: why it failed or was not scorable.
        cost: its judge calls' cost, USD.
    """

    position: int
    item_id: str
    run_id: str
    scorer_id: str
    status: str
    score: float | None
    reason: str | None
    cause_kind: str | None
    cost: float
    haystack: str = attrs.field(repr=False)


def _searched(row: ScoreRow) -> str:
    # What the text search looks in, as the SQL does: the item id, run id, input and output
    # as stored (JSON text), reason; NUL-separated (no stored text holds one: the stores
    # replace it), so no match spans two of them.
    fields = (row.dataset_item_id or "", row.run_id, _stored(row.input), _stored(row.output),
              row.reason or "")
    return "\x00".join(fields).casefold()


def entry_of(row: ScoreRow, position: int) -> RunEntry:
    """``row`` as the batch page lists it, at ``position`` in its listing."""
    return RunEntry(position=position, item_id=row_item_id(row), run_id=row.run_id,
                    scorer_id=row.scorer_id, status=row.status, score=row.score,
                    reason=row.reason, cause_kind=cause_kind(row), cost=row_cost(row),
                    haystack=_searched(row))


def entries_of(rows: Iterable[ScoreRow]) -> list[RunEntry]:
    """The rows as entries, in the store's order."""
    return [entry_of(row, n) for n, row in enumerate(rows)]


@final
@attrs.frozen(kw_only=True)
class RunFilter:
    """What the batch page's form asks for; every field optional.

    >>> chosen = RunFilter.from_query({"scorer": "judge", "min": "0.5", "sort": "bogus"})
    >>> chosen.scorer, chosen.min_score, chosen.sort
    ('judge', 0.5, 'item')
    """

    scorer: str | None = None
    status: str | None = None
    cause: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    text: str | None = None
    sort: SortKey = "item"
    page: int = 1

    def matches(self, entry: RunEntry) -> bool:
        """Whether ``entry`` passes every filter given."""
        if self.scorer and entry.scorer_id != self.scorer:
            return False
        if self.status and entry.status != self.status:
            return False
        if self.cause and entry.cause_kind != self.cause:
            return False
        if self.min_score is not None and (entry.score is None or entry.score < self.min_score):
            return False
        if self.max_score is not None and (entry.score is None or entry.score > self.max_score):
            return False
        return not self.text or any(self.text.casefold() in field
                                    for field in entry.haystack.split("\x00"))

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> RunFilter:
        """The filter a page's query string asks for; a bad number or sort is ignored (the
        form shows what was applied)."""

        def number(name: str) -> float | None:
            try:
                value = float(query.get(name, ""))
            except ValueError:
                return None
            return value if math.isfinite(value) else None

        sort = query.get("sort", "item")
        page = query.get("page", "1")
        return cls(scorer=query.get("scorer") or None, status=query.get("status") or None,
                   cause=query.get("cause") or None, min_score=number("min"),
                   max_score=number("max"), text=query.get("q") or None,
                   sort=next((s for s in SORTS if s == sort), "item"),
                   page=int(page) if page.isdigit() and 0 < int(page) < 10**6 else 1)


@final
@attrs.frozen(kw_only=True)
class RunPage:
    """One page of a batch's filtered, sorted entries.

    Attributes:
        entries: this page's entries.
        total: how many entries pass the filter.
        page: this page's number (1-based).
        pages: how many pages there are.
    """

    entries: tuple[RunEntry, ...]
    total: int
    page: int
    pages: int


def _sort_key(sort: SortKey) -> Any:
    # The dataset order is the batch's; any other sort breaks ties by run id, then scorer id
    # (as the SQL that pages a stored batch does).
    if sort == "score":
        return lambda e: (e.score is None, e.score or 0.0, e.run_id, e.scorer_id)
    if sort == "-score":
        return lambda e: (e.score is None, -(e.score or 0.0), e.run_id, e.scorer_id)
    if sort == "scorer":
        return lambda e: (e.scorer_id, e.run_id)
    if sort == "status":
        return lambda e: (e.status, e.run_id, e.scorer_id)
    return lambda e: e.position


def page_of(entries: Sequence[RunEntry], chosen: RunFilter, *,
            size: int = PAGE_SIZE) -> RunPage:
    """The page ``chosen`` asks for, over entries in memory (the workbench pages a stored batch
    in SQL, in the same order).

    >>> from scorecore.evals import ScoreRow
    >>> rows = [ScoreRow(id=str(i), scorer_id="s", run_id=f"b:{i}", batch_id="b",
    ...                  status="scored", score=i / 10) for i in range(10)]
    >>> page = page_of(entries_of(rows), RunFilter(min_score=0.5, sort="-score"), size=3)
    >>> [e.item_id for e in page.entries], page.total, page.pages
    (['9', '8', '7'], 5, 2)
    """
    found = [e for e in entries if chosen.matches(e)]
    if chosen.sort != "item":
        found.sort(key=_sort_key(chosen.sort))
    pages = max(1, -(-len(found) // size))
    page = min(chosen.page, pages)
    return RunPage(entries=tuple(found[(page - 1) * size: page * size]), total=len(found),
                   page=page, pages=pages)
