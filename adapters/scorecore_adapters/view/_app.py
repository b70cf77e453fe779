"""The workbench's web application: Starlette routes over the score store and its labels.

Pages are Jinja2 templates with autoescaping on (every stored string is data, never markup);
the one script, ``static/view.js``, is served from here (no CDN, no build step) and does the
keyboard labelling. Reads open the store per request, so a batch still running shows its new
rows on reload; a batch's decoded rows are cached while its last write time is unchanged.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import parse_qsl, urlencode

import anyio
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from scorecore.evals import ScoreRow, compare, pairwise_summaries, panel_agreements
from scorecore.evals.store import BatchSummary, row_item_id
from scorecore_adapters.storage import StoreUrl, open_store
from scorecore_adapters.storage._labels import Label, LabelStore
from scorecore_adapters.view._queue import agreement_ledger, review_queue
from scorecore_adapters.view._runs import (
    SORTS,
    RunEntry,
    RunFilter,
    SortKey,
    cause_kind,
    entries_of,
    page_of,
    row_cost,
    sorted_entries,
)
from scorecore_adapters.view._security import CSRF_HEADER, Guard

__all__ = ["create_app"]

_HERE: Final = Path(__file__).parent
_MAX_FORM: Final = 64 * 1024
_MOST_REGRESSED: Final = 10_000  # every regressed item: the queue and the page list them all


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _link(path: str, params: Mapping[str, str] | None = None, **changes: object) -> str:
    """``path`` with ``params`` (the page's own query) changed by ``changes`` (``None`` drops
    one), percent-encoded: a stored id never breaks out of its parameter."""
    merged: dict[str, str] = dict(params or {})
    for name, value in changes.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = str(value)
    return path + ("?" + urlencode(merged) if merged else "")


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@final
class _Batch:
    """A batch's decoded rows and what the pages derive from them, kept while unchanged."""

    __slots__ = ("_orders", "_trust", "causes", "cost", "entries", "rows", "scorers", "stamp",
                 "version")

    def __init__(self, rows: Sequence[ScoreRow], stamp: datetime | None) -> None:
        self.rows = rows
        self.stamp = stamp
        self.version: int | None = None
        self.entries: list[RunEntry] = entries_of(rows)
        self.scorers = sorted({e.scorer_id for e in self.entries})
        self.causes = sorted({e.cause_kind for e in self.entries if e.cause_kind})
        self.cost = sum(e.cost for e in self.entries)
        self._trust: tuple[Any, Any] | None = None
        self._orders: dict[SortKey, list[RunEntry]] = {}

    def ordered(self, sort: SortKey) -> list[RunEntry]:
        """The entries in ``sort``'s order, sorted once per batch read."""
        if sort not in self._orders:
            self._orders[sort] = sorted_entries(self.entries, sort)
        return self._orders[sort]

    def trust(self) -> tuple[Any, Any]:
        if self._trust is None:
            self._trust = (panel_agreements(self.rows, resamples=200),
                           pairwise_summaries(self.rows, resamples=200))
        return self._trust


@final
class _Workbench:
    """The state of one ``scorecore view``: the store, its labels, the cache, the guard."""

    def __init__(self, url: StoreUrl, *, read_only: bool, guard: Guard) -> None:
        self.url = url
        self.read_only = read_only
        self.guard = guard
        self.labels = LabelStore(url, read_only=read_only)
        self.cache: dict[str, _Batch] = {}
        self.env = Environment(loader=FileSystemLoader(_HERE / "templates"),
                               autoescape=select_autoescape(default=True,
                                                            default_for_string=True),
                               trim_blocks=True, lstrip_blocks=True)
        self.env.filters["json"] = _json
        self.env.filters["number"] = _number
        self.env.globals["link"] = _link

    async def batches(self) -> list[BatchSummary]:
        async with open_store(self.url, read_only=True) as store:
            return await store.list_batches()

    async def batch(self, batch_id: str) -> _Batch | None:
        # SQLite says in one cheap PRAGMA whether anyone wrote since the batch was read;
        # otherwise the batch's last write time (a scan of the store's batch list) decides.
        version = await self.labels.store_version()
        held = self.cache.get(batch_id)
        if held is not None and version is not None and held.version == version:
            return held
        summary = next((b for b in await self.batches() if b.batch_id == batch_id), None)
        if summary is None:
            return None
        if held is not None and held.stamp == summary.updated_at:
            held.version = version
            return held
        async with open_store(self.url, read_only=True) as store:
            rows = await store.list_run(batch_id)
        held = self.cache[batch_id] = await anyio.to_thread.run_sync(
            _Batch, rows, summary.updated_at)
        held.version = version
        return held

    def page(self, request: Request, template: str, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(
            csrf=self.guard.csrf, read_only=self.read_only, store=self.url.shown,
            path=request.url.path, here=_link(request.url.path, request.query_params),
            params=dict(request.query_params), **context)
        return HTMLResponse(html)


class _MissingError(Exception):
    """What a page asked for is not in the store: a 404 page naming it."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


async def _missing(request: Request, exc: Exception) -> Response:
    work: _Workbench = request.app.state.work
    response = work.page(request, "missing.html", what=str(exc))
    response.status_code = 404
    return response


async def _held(request: Request, name: str) -> _Batch:
    """The batch the query parameter ``name`` names, or a 404."""
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get(name, "")
    held = await work.batch(batch_id)
    if held is None:
        raise _MissingError(f"batch {batch_id!r}")
    return held


async def _index(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batches = await work.batches()
    costs: dict[str, float] = {}
    for summary in batches:
        held = work.cache.get(summary.batch_id)
        if held is not None and held.stamp == summary.updated_at:
            costs[summary.batch_id] = held.cost
    return work.page(request, "index.html", batches=batches, costs=costs)


async def _batch_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get("id", "")
    held = await _held(request, "id")
    chosen = RunFilter.from_query(request.query_params)
    page = page_of(held.ordered(chosen.sort), chosen, ordered=True)
    labels = {(lb.item_id, lb.scorer_id): lb
              for lb in await work.labels.current(batch_id=batch_id)}
    panels, pairwise = held.trust()
    return work.page(
        request, "batch.html", batch_id=batch_id, page=page, chosen=chosen, sorts=SORTS,
        scorers=held.scorers, causes=held.causes,
        statuses=("scored", "not_scorable", "failed"), labels=labels,
        cost=held.cost, panels=panels, pairwise=pairwise,
        ledger=agreement_ledger(held.rows, list(labels.values())))


async def _run_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get("batch", "")
    item_id = request.query_params.get("item", "")
    held = await work.batch(batch_id)
    rows = [] if held is None else [r for r in held.rows if row_item_id(r) == item_id]
    if not rows:
        raise _MissingError(f"item {item_id!r} of batch {batch_id!r}")
    labels = {lb.scorer_id: lb for lb in await work.labels.current(batch_id=batch_id)
              if lb.item_id == item_id}
    history = await work.labels.history(batch_id, item_id)

    def executions(row: ScoreRow) -> list[tuple[str, Mapping[str, Any]]]:
        judge = (row.metadata or {}).get("judge")
        found: list[tuple[str, Mapping[str, Any]]] = []
        if isinstance(judge, Mapping):
            for step, calls in judge.items():
                listed = calls.get("executions") if isinstance(calls, Mapping) else None
                found += [(str(step), e) for e in listed or [] if isinstance(e, Mapping)]
        return found

    runs = [{"row": r, "executions": executions(r), "cause": cause_kind(r),
             "cost": row_cost(r)} for r in rows]
    return work.page(request, "run.html", batch_id=batch_id, item_id=item_id, runs=runs,
                     first=rows[0], labels=labels, history=history,
                     queued=request.query_params.get("queued", ""))


async def _compare_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    base_id = request.query_params.get("base", "")
    new_id = request.query_params.get("new", "")
    base, new = await _held(request, "base"), await _held(request, "new")
    comparison = await anyio.to_thread.run_sync(
        lambda: compare(base.rows, new.rows, most_regressed=_MOST_REGRESSED))
    deltas = sorted(
        ((s.scorer_id, d) for s in comparison.scorers for d in s.most_regressed),
        key=lambda pair: (pair[1].delta is not None, pair[1].delta or 0.0))
    return work.page(request, "compare.html", comparison=comparison, deltas=deltas[:200],
                     base_id=base_id, new_id=new_id)


async def _queue_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get("id", "")
    held = await _held(request, "id")
    baseline_id = request.query_params.get("baseline") or None
    comparison = None
    if baseline_id is not None:
        baseline = await _held(request, "baseline")
        comparison = await anyio.to_thread.run_sync(
            lambda: compare(baseline.rows, held.rows, most_regressed=_MOST_REGRESSED))
    sample = request.query_params.get("sample", "20")
    queue = review_queue(held.rows, comparison=comparison,
                         sample=int(sample) if sample.isdigit() else 20)
    current = await work.labels.current(batch_id=batch_id)
    labels = {(lb.item_id, lb.scorer_id): lb for lb in current}
    return work.page(request, "queue.html", batch_id=batch_id, queue=queue, labels=labels,
                     baseline_id=baseline_id, ledger=agreement_ledger(held.rows, current))


async def _ledger_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get("id", "")
    held = await _held(request, "id")
    current = await work.labels.current(batch_id=batch_id)
    return work.page(request, "ledger.html", batch_id=batch_id,
                     ledger=agreement_ledger(held.rows, current))


def _label_value(text: str) -> bool | float | str:
    lowered = text.strip().lower()
    if lowered in ("true", "pass"):
        return True
    if lowered in ("false", "fail"):
        return False
    try:
        return float(text)
    except ValueError:
        return text


def _safe_next(target: str | None) -> str:
    # Only a path on this site: an open redirect would carry the reviewer anywhere.
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


async def _add_label(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    body = await request.body()
    if len(body) > _MAX_FORM:
        return JSONResponse({"error": "label too large"}, status_code=413)
    # A urlencoded form read here (no multipart parser needed): the last value of a field.
    fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    wants_json = "application/json" in request.headers.get("accept", "")
    if not work.guard.csrf_ok(request, request.headers.get(CSRF_HEADER) or fields.get("csrf")):
        return JSONResponse({"error": "CSRF check failed"}, status_code=403)
    if work.read_only:
        return JSONResponse({"error": "read-only: labels cannot be added"}, status_code=403)
    batch_id = fields.get("batch", "")
    if await work.batch(batch_id) is None:
        return JSONResponse({"error": f"no batch {batch_id!r}"}, status_code=404)
    try:
        label = Label(batch_id=batch_id, item_id=fields.get("item", ""),
                      scorer_id=fields.get("scorer") or None,
                      value=_label_value(fields.get("value", "")),
                      note=fields.get("note") or None, reviewer=fields.get("reviewer") or None,
                      queued=tuple(r for r in fields.get("queued", "").split(",") if r))
    except ValueError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    (stored,) = await work.labels.add([label])
    if wants_json:
        return JSONResponse({"label": {**stored.to_json(), "queued": list(stored.queued)}})
    return RedirectResponse(_safe_next(fields.get("next")), status_code=303)


def create_app(url: str | StoreUrl, *, read_only: bool = False,
               guard: Guard | None = None) -> Starlette:
    """The workbench over the store ``url`` names (an ASGI application: serve it with
    :func:`~scorecore_adapters.view.serve`, or any ASGI server bound to 127.0.0.1).

    Args:
        url: the score store (``sqlite:PATH`` or ``postgresql://…``).
        read_only: browse only: labelling is refused and its controls hidden.
        guard: the token and CSRF check (a fresh token by default).

    >>> app = create_app("sqlite:scores.db", read_only=True)
    >>> sorted(r.path for r in app.routes if r.path != "/static")
    ['/', '/batch', '/compare', '/labels', '/ledger', '/queue', '/run']
    """
    parsed = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
    work = _Workbench(parsed, read_only=read_only, guard=guard or Guard())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with work.labels:
            yield

    app = Starlette(
        routes=[
            Route("/", _index), Route("/batch", _batch_page), Route("/run", _run_page),
            Route("/compare", _compare_page), Route("/queue", _queue_page),
            Route("/ledger", _ledger_page), Route("/labels", _add_label, methods=["POST"]),
            Mount("/static", app=StaticFiles(directory=_HERE / "static"), name="static"),
        ],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=work.guard)],
        exception_handlers={_MissingError: _missing},
        lifespan=lifespan,
    )
    app.state.work = work
    return app
