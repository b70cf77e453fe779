"""The workbench's reads of the scores table, done by the database: a batch page's runs
filtered, sorted and paged in SQL (only the page's rows leave the database), its counts and
facets by aggregate queries, and the indexes that make them fast on a big store.

The SQL mirrors :func:`~scorecore_adapters.view.page_of`, the same filter and sort over rows in
memory (the tests check one against the other): the dataset order is the store's own
``list_run`` order; any other sort breaks ties by run id, then scorer id; the text search is
case-insensitive (for ASCII letters only in SQLite, whose ``LIKE`` folds no other case) and
looks in the item id, run id, input, output (as stored JSON) and reason.

The indexes are the workbench's own (``CREATE INDEX IF NOT EXISTS``, named ``…_view_…``),
made when it starts unless the store is opened read-only; without them every page is still
right, only slower on a big batch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any, Final, final

import attrs

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.store import decode_row, row_item_id
from scorecore_adapters.storage._labels import LabelStore
from scorecore_adapters.storage._schema import (
    BATCH_ID,
    DEFAULT_TABLE,
    METADATA,
    REASON,
    RUN_ID,
    SCORE,
    SCORER_ID,
    STATUS,
    WRITTEN,
    check_table,
    q,
    row_from,
)
from scorecore_adapters.view._queue import Candidate
from scorecore_adapters.view._runs import PAGE_SIZE, RunFilter, RunPage, SortKey, entry_of
from scorecore_adapters.view._scale import MAX_VERDICTS, Scale, scale_for

__all__ = ["BatchFacets", "BatchReader"]

_M: Final = q(METADATA)
_B: Final = q(BATCH_ID)
_RUN: Final = q(RUN_ID)
_SCORER: Final = q(SCORER_ID)
_STATUS: Final = q(STATUS)
_SCORE: Final = q(SCORE)
_ITEM: Final = q("datasetItemId")
_UPDATED: Final = q("updatedAt")
_SEARCHED: Final = ("datasetItemId", RUN_ID, "input", "output", REASON)
_TRUST_KEYS: Final = ("panel", "pairwise", "cascade")
_CHUNK: Final = 200  # item ids bound per statement (SQLite allows 999 marks at least)


def _sqlite_text(path: str) -> str:
    # A string at ``path`` of the metadata, else NULL; json_valid first: another writer's
    # text that is not JSON must not fail the whole query (the CASEs are evaluated lazily).
    return (f"CASE WHEN json_valid({_M}) THEN CASE WHEN json_type({_M}, '{path}') = 'text' "
            f"THEN json_extract({_M}, '{path}') END END")


def _postgres_text(path: str) -> str:
    keys = "{" + ",".join(path.removeprefix("$.").split(".")) + "}"
    return f"CASE WHEN jsonb_typeof({_M} #> '{keys}') = 'string' THEN {_M} #>> '{keys}' END"


def _cause(text: Callable[[str], str]) -> str:
    # cause_kind's rule: a failed row's stored cause kind ("error" without one), a
    # not-scorable row's kind ("not scorable" without one), NULL for a scored row.
    return (f"CASE {_STATUS} WHEN 'failed' THEN COALESCE(NULLIF({text('$.cause.kind')}, ''), "
            f"'error') WHEN 'not_scorable' THEN COALESCE({text('$.notScorable.kind')}, "
            f"'not scorable') END")


@final
@attrs.frozen(kw_only=True)
class _Dialect:
    """What the two backends spell differently."""

    mark: str
    json_text: bool  # JSON columns come back as text (SQLite) or decoded (psycopg)
    item_index: str  # the row's metadata.itemIndex, as the store's list_run reads it
    item_order: str  # list_run's ORDER BY
    collate: str  # string comparison as Python's (code points)
    like: str
    cause: str
    text_of: Callable[[str], str]  # a searched column as text
    scanned: Callable[[str], str]  # a column whose index the text search should not use
    panel_split: str  # metadata.panel.agreed is false
    pairwise: str  # metadata.pairwise.outcome
    not_scorable: str  # metadata.notScorable.kind
    cost: str  # the batch's judge cost (binds the batch)
    trusted: str  # the metadata may hold a panel, pairwise verdict or cascade


def _sqlite() -> _Dialect:
    index = f"CASE WHEN json_valid({_M}) THEN json_extract({_M}, '$.itemIndex') END"

    def holding(key: str, then: str) -> str:
        # instr first: a plain text scan, so only rows naming the key are parsed as JSON
        return f"CASE WHEN instr({_M}, '\"{key}\"') > 0 AND json_valid({_M}) THEN {then} END"

    executions = r"$.judge.%.executions[%]"
    return _Dialect(
        mark="?", json_text=True, item_index=index,
        item_order=f"{index}, {_RUN}, {_SCORER}", collate="", like="LIKE",
        cause=_cause(_sqlite_text), text_of=q, scanned=lambda c: f"+{c}",
        panel_split=holding("panel", f"json_type({_M}, '$.panel.agreed') = 'false'"),
        pairwise=holding("pairwise", _sqlite_text("$.pairwise.outcome")),
        not_scorable=_sqlite_text("$.notScorable.kind"),
        cost=(f"SELECT COALESCE(SUM(j.value), 0) FROM {{table}} AS s, json_tree(CASE WHEN "  # noqa: S608 - fixed names only
              f"instr(s.{_M}, '\"costUsd\"') > 0 AND json_valid(s.{_M}) THEN s.{_M} "
              f"ELSE '{{{{}}}}' END, '$.judge') AS j WHERE s.{_B} = ? AND j.key = 'costUsd' "
              f"AND j.type IN ('integer', 'real') AND j.path LIKE '{executions}'"),
        # a text scan: a row merely naming a key is read too, and the folds skip it
        trusted=" OR ".join(f"instr({_M}, '\"{k}\"') > 0" for k in _TRUST_KEYS),
    )


def _postgres() -> _Dialect:
    number = f"jsonb_typeof({_M} -> 'itemIndex') = 'number'"
    index = f"CASE WHEN {number} THEN ({_M} ->> 'itemIndex')::numeric END"
    return _Dialect(
        mark="%s", json_text=False, item_index=index,
        item_order=f"{index} NULLS LAST, {_RUN}, {_SCORER}", collate=' COLLATE "C"',
        like="ILIKE", cause=_cause(_postgres_text), text_of=lambda c: f"{q(c)}::text",
        scanned=lambda c: c,
        panel_split=f"COALESCE({_M} #> '{{panel,agreed}}' = 'false'::jsonb, false)",
        pairwise=_postgres_text("$.pairwise.outcome"),
        not_scorable=_postgres_text("$.notScorable.kind"),
        cost=(f"SELECT COALESCE(SUM(v::text::float8), 0) FROM {{table}}, jsonb_path_query("  # noqa: S608 - fixed names only
              f"{_M}, 'strict $.judge.*.executions[*].costUsd', '{{{{}}}}', true) AS v "
              f"WHERE {_B} = %s AND jsonb_typeof(v) = 'number'"),
        trusted=f"{_M} ?| array[{', '.join(repr(k) for k in _TRUST_KEYS)}]",
    )


_DIALECTS: Final = {"sqlite": _sqlite(), "postgres": _postgres()}


def _escaped(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere (its own % and _ taken literally)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@final
@attrs.frozen(kw_only=True)
class BatchFacets:
    """What a batch page's form offers and its keys label, read by aggregate queries.

    Attributes:
        scorers: the batch's scorer ids, sorted.
        scales: each scorer's scale, read from its scores (what its digit keys label).
        causes: the cause kinds of its failed and not-scorable runs, sorted.
    """

    scorers: tuple[str, ...]
    scales: Mapping[str, Scale]
    causes: tuple[str, ...]


@final
class BatchReader:
    """The workbench's SQL over one store's scores table, run on the label store's connection.

    Args:
        labels: the open label store of the same database (its connection runs the SQL).
        table: the scores table.
    """

    __slots__ = ("_d", "_labels", "_table")

    def __init__(self, labels: LabelStore, *, table: str = DEFAULT_TABLE) -> None:
        self._labels = labels
        self._d = _DIALECTS[labels.dialect]
        self._table = check_table(table)

    def indexes(self) -> list[str]:
        """The indexes the pages use: the dataset order within a batch (the first page is an
        index walk), an item's rows (the run page), each scorer's scores (its scale, a
        scorer's or score range's page) and the statuses (the cause kinds, read from the
        failed and not-scorable rows only)."""
        t = q(self._table)
        columns = {"order": f"{_B}, ({self._d.item_index}), {_RUN}, {_SCORER}",
                   "item": f"{_B}, {_ITEM}", "score": f"{_B}, {_SCORER}, {_SCORE}",
                   "status": f"{_B}, {_STATUS}"}
        return [f"CREATE INDEX IF NOT EXISTS {q(f'{self._table}_view_{name}')} ON {t} ({on})"
                for name, on in columns.items()]

    @property
    def labels(self) -> LabelStore:
        """The label store whose connection runs the SQL (open it before reading)."""
        return self._labels

    async def prepare(self) -> bool:
        """Make the indexes unless the store is read-only; whether they exist now (a database
        that refuses them leaves the pages right but slower)."""
        try:
            return await self._labels.define(self.indexes())
        except StoreError:
            return False

    async def _query(self, operation: str, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self._labels.query(f"view.{operation}", sql, params)

    def _where(self, batch_id: str, chosen: RunFilter) -> tuple[str, list[Any]]:
        d = self._d
        # The text search reads each candidate row anyway: SQLite then reads the batch in
        # its table order (unary + keeps it off the scorer and status indexes), which is
        # faster than fetching rows one by one through them.
        column = d.scanned if chosen.text else str
        where: list[str] = [f"{_B} = {d.mark}"]
        params: list[Any] = [batch_id]
        for name, value in ((_SCORER, chosen.scorer), (_STATUS, chosen.status),
                            (f"({d.cause})", chosen.cause)):
            if value:
                where.append(f"{column(name)} = {d.mark}")
                params.append(value)
        if chosen.cause:  # what the status index finds first: scored rows have no cause
            where.append(f"{column(_STATUS)} IN ('failed', 'not_scorable')")
        for op, bound in ((">=", chosen.min_score), ("<=", chosen.max_score)):
            if bound is not None:
                where.append(f"{column(_SCORE)} {op} {d.mark}")
                params.append(bound)
        if chosen.text:
            found = [f"{d.text_of(c)} {d.like} {d.mark} ESCAPE '\\'" for c in _SEARCHED]
            where.append(f"({' OR '.join(found)})")
            params += [_escaped(chosen.text)] * len(_SEARCHED)
        return " AND ".join(where), params

    def _order(self, sort: SortKey) -> str:
        c = self._d.collate
        ties = f"{_RUN}{c}, {_SCORER}{c}"
        return {
            "item": self._d.item_order,
            "score": f"{_SCORE} NULLS LAST, {ties}",
            "-score": f"{_SCORE} DESC NULLS LAST, {ties}",
            "scorer": f"{_SCORER}{c}, {_RUN}{c}",
            "status": f"{_STATUS}{c}, {ties}",
        }[sort]

    def _rows(self, records: Sequence[Sequence[Any]], operation: str) -> list[ScoreRow]:
        store = self._labels.url
        return [row_from(r, json_text=self._d.json_text, store=store, operation=operation)
                for r in records]

    async def stamp(self, batch_id: str) -> Hashable | None:
        """What changes whenever the batch's rows may have: ``None`` when it has none. SQLite
        counts commits by any other connection (one PRAGMA); PostgreSQL has no such counter,
        so the batch's row count and last write time say it."""
        t, m = q(self._table), self._d.mark
        if self._labels.dialect == "sqlite":
            found = await self._query("stamp", f"SELECT 1 FROM {t} WHERE {_B} = {m} LIMIT 1",  # noqa: S608 - checked identifiers only
                                      [batch_id])
            return None if not found else ("sqlite", await self._labels.store_version())
        ((count, updated),) = await self._query(
            "stamp", f"SELECT COUNT(*), MAX({_UPDATED}) FROM {t} WHERE {_B} = {m}", [batch_id])  # noqa: S608
        return None if not count else ("postgres", int(count), str(updated))

    async def facets(self, batch_id: str) -> BatchFacets:
        """The batch's scorers, cause kinds and judge cost."""
        t, m = q(self._table), self._d.mark
        # Per scorer, each answered from the (batch, scorer, score) index: its range and
        # count, and its first few distinct scores (read in order, stopping past the most a
        # verdict scale has) - no sort of the whole batch.
        scorers = await self._query(
            "facets", f"SELECT DISTINCT {_SCORER} FROM {t} WHERE {_B} = {m}", [batch_id])  # noqa: S608
        scales = {}
        for (scorer,) in scorers:
            ((n, low, high),) = await self._query(
                "facets", f"SELECT COUNT({_SCORE}), MIN({_SCORE}), MAX({_SCORE}) FROM {t} "  # noqa: S608
                          f"WHERE {_B} = {m} AND {_SCORER} = {m}", [batch_id, scorer])
            first = await self._query(
                "facets", f"SELECT DISTINCT {_SCORE} FROM {t} WHERE {_B} = {m} AND "  # noqa: S608
                          f"{_SCORER} = {m} AND {_SCORE} IS NOT NULL ORDER BY {_SCORE} "
                          f"LIMIT {MAX_VERDICTS + 1}", [batch_id, scorer])
            distinct = [float(v) for (v,) in first]
            scales[str(scorer)] = scale_for(
                count=int(n), distinct=distinct if len(distinct) <= MAX_VERDICTS else [],
                low=None if low is None else float(low),
                high=None if high is None else float(high))
        causes = await self._query(
            "facets", f"SELECT DISTINCT {self._d.cause} FROM {t} WHERE {_B} = {m} "  # noqa: S608
                      f"AND {_STATUS} IN ('failed', 'not_scorable')", [batch_id])
        return BatchFacets(scorers=tuple(sorted(scales)), scales=scales,
                           causes=tuple(sorted(str(c) for (c,) in causes if c is not None)))

    async def cost(self, batch_id: str) -> float:
        """What the batch's judge calls cost, USD (unpriced calls count 0): every row's judge
        calls are read, so the workbench sums them off the page's path."""
        ((cost,),) = await self._query("cost", self._d.cost.format(table=q(self._table)),
                                       [batch_id])
        return float(cost or 0.0)

    async def _count(self, where: str, params: Sequence[Any]) -> int:
        ((total,),) = await self._query(
            "page", f"SELECT COUNT(*) FROM {q(self._table)} WHERE {where}", params)  # noqa: S608
        return int(total)

    async def _slice(self, columns: str, where: str, order: str, params: Sequence[Any], *,
                     page: int, size: int) -> list[Any]:
        m = self._d.mark
        return await self._query(
            "page", f"SELECT {columns} FROM {q(self._table)} WHERE {where} ORDER BY {order} "  # noqa: S608
                    f"LIMIT {m} OFFSET {m}", [*params, size, (page - 1) * size])

    async def page(self, batch_id: str, chosen: RunFilter, *, size: int = PAGE_SIZE
                   ) -> RunPage:
        """The page ``chosen`` asks for: its count, then the page's rows only."""
        t, m = q(self._table), self._d.mark
        where, params = self._where(batch_id, chosen)
        order = self._order(chosen.sort)
        names = ", ".join(q(c) for c in WRITTEN)
        page = chosen.page
        if chosen.text:
            # The text search reads every candidate row: once, counting as it pages (the
            # page's ids with the total), then the page's rows by id.
            found = await self._slice(f"{q('id')}, COUNT(*) OVER ()", where, order, params,
                                      page=page, size=size)
            total = int(found[0][1]) if found else 0
            if not found and page > 1:  # past the last page: the last one
                total = await self._count(where, params)
                page = min(page, max(1, -(-total // size)))
                found = await self._slice(q("id"), where, order, params, page=page, size=size)
            ids = [str(r[0]) for r in found]
            records = [] if not ids else await self._query(
                "page", f"SELECT {names} FROM {t} WHERE {q('id')} IN "  # noqa: S608
                        f"({', '.join([m] * len(ids))})", ids)
            at = {row_id: n for n, row_id in enumerate(ids)}
            rows = sorted(self._rows(records, "view.page"), key=lambda r: at[r.id])
        else:
            total = await self._count(where, params)
            page = min(page, max(1, -(-total // size)))
            rows = self._rows(await self._slice(names, where, order, params, page=page,
                                                size=size), "view.page")
        start = (page - 1) * size
        entries = tuple(entry_of(row, start + n) for n, row in enumerate(rows))
        return RunPage(entries=entries, total=total, page=page,
                       pages=max(1, -(-total // size)))

    async def item_rows(self, batch_id: str, item_ids: Collection[str]) -> list[ScoreRow]:
        """Every row of the batch scoring one of ``item_ids``, by run id, then scorer id."""
        t, m = q(self._table), self._d.mark
        names = ", ".join(q(c) for c in WRITTEN)
        wanted = sorted(set(item_ids))
        if not wanted:
            return []
        # No ORDER BY: it would walk the whole batch in the dataset-order index instead of
        # finding the item's few rows by the item index; they are ordered here.
        found: list[ScoreRow] = []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            records = await self._query(
                "item", f"SELECT {names} FROM {t} WHERE {_B} = {m} AND {_ITEM} IN "  # noqa: S608
                        f"({', '.join([m] * len(chunk))})", [batch_id, *chunk])
            found += self._rows(records, "view.item")
        # an id-less row's item comes from its run id: those rows are read and checked here
        records = await self._query(
            "item", f"SELECT {names} FROM {t} WHERE {_B} = {m} AND {_ITEM} IS NULL",  # noqa: S608
            [batch_id])
        kept = set(wanted)
        found += [r for r in self._rows(records, "view.item") if row_item_id(r) in kept]
        return sorted(found, key=lambda r: (r.run_id, r.scorer_id))

    async def candidates(self, batch_id: str) -> list[Candidate]:
        """The batch's final runs as the queue weighs them, in the store's order."""
        t, m, d = q(self._table), self._d.mark, self._d
        records = await self._query(
            "queue", f"SELECT {_RUN}, {_SCORER}, {_ITEM}, {_STATUS}, {_SCORE}, "  # noqa: S608
                     f"{d.panel_split}, {d.pairwise}, CASE WHEN {_STATUS} = 'not_scorable' "
                     f"THEN {d.not_scorable} END FROM {t} WHERE {_B} = {m} AND {_STATUS} IN "
                     f"('scored', 'not_scorable') ORDER BY {d.item_order}", [batch_id])
        made = []
        for run_id, scorer_id, item_id, status, score, split, pairwise, kind in records:
            item = item_id if item_id is not None else row_item_id(ScoreRow(
                id="-", scorer_id=scorer_id, run_id=run_id, batch_id=batch_id, status=status))
            made.append(Candidate(item_id=item, scorer_id=scorer_id, run_id=run_id,
                                  status=status, score=None if score is None else float(score),
                                  panel_split=bool(split),
                                  position_bias=pairwise == "position_bias",
                                  not_scorable_kind=kind))
        return made

    async def outcome_rows(self, batch_id: str) -> list[ScoreRow]:
        """The batch's rows with their outcome columns only (ids, status, score, the scorer's
        definition): what a comparison reads, without the inputs, outputs and judge calls."""
        t, m = q(self._table), self._d.mark
        kept = ("id", SCORER_ID, RUN_ID, BATCH_ID, STATUS, SCORE, "scorer", "datasetItemId")
        records = await self._query(
            "outcomes", f"SELECT {', '.join(q(c) for c in kept)} FROM {t} "  # noqa: S608
                        f"WHERE {_B} = {m} ORDER BY {self._d.item_order}", [batch_id])
        store = self._labels.url
        # a partial record: the columns left out take the row's defaults
        return [decode_row(dict(zip(kept, r, strict=True)), json_text=self._d.json_text,
                           store=store, operation="view.outcomes") for r in records]

    async def trust_rows(self, batch_id: str) -> list[ScoreRow]:
        """The rows of the batch's scorers that ran a panel, pairwise judge or cascade (what
        the trust evidence is computed from)."""
        t, m, d = q(self._table), self._d.mark, self._d
        marked = await self._query(
            "trust", f"SELECT DISTINCT {_SCORER} FROM {t} WHERE {_B} = {m} AND "  # noqa: S608
                     f"({d.trusted})",
            [batch_id])
        scorers = sorted(str(s) for (s,) in marked)
        if not scorers:
            return []
        names = ", ".join(q(c) for c in WRITTEN)
        records = await self._query(
            "trust", f"SELECT {names} FROM {t} WHERE {_B} = {m} AND {_SCORER} IN "  # noqa: S608
                     f"({', '.join([m] * len(scorers))}) ORDER BY {d.item_order}",
            [batch_id, *scorers])
        return self._rows(records, "view.trust")

