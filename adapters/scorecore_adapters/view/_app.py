"""The workbench's web application: Starlette routes over the score store and its labels.

Pages are Jinja2 templates with autoescaping on (every stored string is data, never markup);
the one script, ``static/view.js``, is served from here (no CDN, no build step) and does the
keyboard labelling. A batch page is one page of SQL (see ``_sql``): the database filters,
sorts and pages, so a batch still running shows its new rows on reload and a big batch is
never read whole; what the pages derive from a whole batch (its facets, the queue, a
comparison, the trust evidence) is cached while the batch's stamp is unchanged.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import parse_qsl, urlencode

import anyio
from anyio.abc import TaskGroup
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from scorecore.evals import (
    ScoreRow,
    StoreError,
    cascade_summaries,
    compare,
    pairwise_summaries,
    panel_agreements,
)
from scorecore.evals.store import BatchSummary
from scorecore.scorers import CascadeResult
from scorecore_adapters.storage import StoreUrl, open_store
from scorecore_adapters.storage._labels import Label, LabelStore
from scorecore_adapters.view._queue import (
    LedgerLine,
    QueueEntry,
    agreement_ledger,
    review_queue,
)
from scorecore_adapters.view._runs import SORTS, RunFilter, cause_kind, row_cost
from scorecore_adapters.view._scale import Scale
from scorecore_adapters.view._security import CSRF_HEADER, Guard
from scorecore_adapters.view._sql import BatchFacets, BatchReader

__all__ = ["create_app"]

_HERE: Final = Path(__file__).parent
_MAX_FORM: Final = 64 * 1024
_MOST_REGRESSED: Final = 10_000  # every regressed item: the queue and the page list them all
_CACHED_BATCHES: Final = 8
_QUEUE_PAGE: Final = 100  # a queue of a big batch is long: a page of it at a time


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


def _digits(scale: Scale | None) -> str:
    """A scale's digit keys and the label each gives, as the page's script reads them."""
    given = {"1": True, "0": False} if scale is None else scale.digits()
    return json.dumps(given)


@final
class _Batch:
    """What the pages derive from one batch while its rows are unchanged (its stamp): the
    facets, and what the queue, the comparison and the trust evidence read, each read once."""

    __slots__ = ("cost", "facets", "outcomes", "queues", "stamp", "summing", "trust")

    def __init__(self, stamp: Hashable, facets: BatchFacets) -> None:
        self.stamp = stamp
        self.facets = facets
        self.cost: float | None = None  # summed in the background (it reads every judge call)
        self.summing = False
        self.outcomes: list[ScoreRow] | None = None
        self.trust: tuple[Any, Any, Any] | None = None
        self.queues: dict[tuple[Hashable, int], list[QueueEntry]] = {}


@final
class _Workbench:
    """The state of one ``scorecore view``: the store, its labels, the cache, the guard."""

    def __init__(self, url: StoreUrl, *, read_only: bool, guard: Guard) -> None:
        self.url = url
        self.read_only = read_only
        self.guard = guard
        self.labels = LabelStore(url, read_only=read_only)
        self.reader = BatchReader(self.labels)
        # A second connection for what is summed off the pages' path: a page never waits
        # behind it (the first one runs one statement at a time).
        self.side = BatchReader(LabelStore(url, read_only=True))
        self.tasks: TaskGroup | None = None
        self.cache: dict[str, _Batch] = {}
        self.env = Environment(loader=FileSystemLoader(_HERE / "templates"),
                               autoescape=select_autoescape(default=True,
                                                            default_for_string=True),
                               trim_blocks=True, lstrip_blocks=True)
        self.env.filters["json"] = _json
        self.env.filters["number"] = _number
        self.env.filters["digits"] = _digits
        self.env.globals["link"] = _link

    async def batches(self) -> list[BatchSummary]:
        async with open_store(self.url, read_only=True) as store:
            return await store.list_batches()

    async def batch(self, batch_id: str) -> _Batch | None:
        """The batch's cached facets, read again whenever its stamp changed; ``None`` when the
        store holds no row of it."""
        stamp = await self.reader.stamp(batch_id)
        if stamp is None:
            return None
        held = self.cache.get(batch_id)
        if held is None or held.stamp != stamp:
            held = _Batch(stamp, await self.reader.facets(batch_id))
            self.cache.pop(batch_id, None)
            self.cache[batch_id] = held
            while len(self.cache) > _CACHED_BATCHES:  # the least recently read goes
                del self.cache[next(iter(self.cache))]
        return held

    async def sum_cost(self, batch_id: str, held: _Batch) -> None:
        """Sum the batch's judge cost in the background, once per stamp: it reads every row's
        judge calls, so it runs on the second connection, after the page that asked."""
        if held.cost is None and not held.summing and self.tasks is not None:
            held.summing = True
            self.tasks.start_soon(self._sum_cost, batch_id, held)

    async def _sum_cost(self, batch_id: str, held: _Batch) -> None:
        with contextlib.suppress(StoreError):  # the page then shows no cost, nothing else
            held.cost = await self.side.cost(batch_id)

    async def outcomes(self, batch_id: str, held: _Batch) -> list[ScoreRow]:
        if held.outcomes is None:
            held.outcomes = await self.reader.outcome_rows(batch_id)
        return held.outcomes

    async def ledger(self, batch_id: str, held: _Batch, current: Sequence[Label]
                     ) -> list[LedgerLine]:
        # only the labelled items' rows are read: the ledger calibrates on them alone
        rows = await self.reader.item_rows(batch_id, {lb.item_id for lb in current})
        return await anyio.to_thread.run_sync(lambda: agreement_ledger(
            rows, current, scorer_ids=held.facets.scorers))

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


async def _held(request: Request, name: str) -> tuple[str, _Batch]:
    """The batch the query parameter ``name`` names, or a 404."""
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get(name, "")
    held = await work.batch(batch_id)
    if held is None:
        raise _MissingError(f"batch {batch_id!r}")
    return batch_id, held


async def _index(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batches = await work.batches()
    costs = {batch_id: held.cost for batch_id, held in work.cache.items()
             if held.cost is not None}
    return work.page(request, "index.html", batches=batches, costs=costs)


async def _batch_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id, held = await _held(request, "id")
    chosen = RunFilter.from_query(request.query_params)
    page = await work.reader.page(batch_id, chosen)
    current = await work.labels.current(batch_id=batch_id)
    labels = {(lb.item_id, lb.scorer_id): lb for lb in current}
    response = work.page(
        request, "batch.html", batch_id=batch_id, page=page, chosen=chosen, sorts=SORTS,
        scorers=held.facets.scorers, causes=held.facets.causes, scales=held.facets.scales,
        statuses=("scored", "not_scorable", "failed"), labels=labels, cost=held.cost,
        ledger=await work.ledger(batch_id, held, current))
    response.background = BackgroundTask(work.sum_cost, batch_id, held)  # once it is sent
    return response


async def _trust_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id, held = await _held(request, "id")
    if held.trust is None:
        rows = await work.reader.trust_rows(batch_id)

        def fold() -> tuple[Any, Any, Any]:
            cascades = [c for sid in sorted({r.scorer_id for r in rows})
                        for c in cascade_summaries([r for r in rows if r.scorer_id == sid])]
            return (panel_agreements(rows, resamples=200),
                    pairwise_summaries(rows, resamples=200), cascades)

        held.trust = await anyio.to_thread.run_sync(fold)
    panels, pairwise, cascades = held.trust
    current = await work.labels.current(batch_id=batch_id)
    return work.page(request, "trust.html", batch_id=batch_id, panels=panels,
                     pairwise=pairwise, cascades=cascades,
                     ledger=await work.ledger(batch_id, held, current))


def _tiers(row: ScoreRow) -> CascadeResult | None:
    """The cascade tiers a row's details carry (``None`` for a row of no cascade)."""
    found = (row.metadata or {}).get("cascade")
    if not isinstance(found, Mapping):
        return None
    try:
        return CascadeResult.from_json(found)
    except (KeyError, TypeError, ValueError):  # another writer's shape: shown as JSON only
        return None


async def _run_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id = request.query_params.get("batch", "")
    item_id = request.query_params.get("item", "")
    held = await work.batch(batch_id)
    rows = [] if held is None else await work.reader.item_rows(batch_id, [item_id])
    if held is None or not rows:
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
             "cost": row_cost(r), "tiers": _tiers(r)} for r in rows]
    return work.page(request, "run.html", batch_id=batch_id, item_id=item_id, runs=runs,
                     first=rows[0], labels=labels, history=history,
                     scales=held.facets.scales, queued=request.query_params.get("queued", ""))


async def _compare_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    (base_id, base), (new_id, new) = await _held(request, "base"), await _held(request, "new")
    base_rows = await work.outcomes(base_id, base)
    new_rows = await work.outcomes(new_id, new)
    comparison = await anyio.to_thread.run_sync(
        lambda: compare(base_rows, new_rows, most_regressed=_MOST_REGRESSED))
    deltas = sorted(
        ((s.scorer_id, d) for s in comparison.scorers for d in s.most_regressed),
        key=lambda pair: (pair[1].delta is not None, pair[1].delta or 0.0))
    return work.page(request, "compare.html", comparison=comparison, deltas=deltas[:200],
                     base_id=base_id, new_id=new_id)


async def _queue_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id, held = await _held(request, "id")
    baseline_id = request.query_params.get("baseline") or None
    sample_text = request.query_params.get("sample", "20")
    sample = int(sample_text) if sample_text.isdigit() and len(sample_text) < 7 else 20
    baseline = None if baseline_id is None else (await _held(request, "baseline"))[1]
    key = (None if baseline is None else (baseline_id, baseline.stamp), sample)
    queue = held.queues.get(key)
    if queue is None:
        comparison = None
        if baseline is not None and baseline_id is not None:
            base_rows = await work.outcomes(baseline_id, baseline)
            new_rows = await work.outcomes(batch_id, held)
            comparison = await anyio.to_thread.run_sync(
                lambda: compare(base_rows, new_rows, most_regressed=_MOST_REGRESSED))
        candidates = await work.reader.candidates(batch_id)
        queue = held.queues[key] = await anyio.to_thread.run_sync(
            lambda: review_queue(candidates, comparison=comparison, sample=sample))
    number = RunFilter.from_query(request.query_params).page
    pages = max(1, -(-len(queue) // _QUEUE_PAGE))
    number = min(number, pages)
    shown = queue[(number - 1) * _QUEUE_PAGE: number * _QUEUE_PAGE]
    current = await work.labels.current(batch_id=batch_id)
    labels = {(lb.item_id, lb.scorer_id): lb for lb in current}
    return work.page(request, "queue.html", batch_id=batch_id, queue=shown, labels=labels,
                     total=len(queue), number=number, pages=pages,
                     baseline_id=baseline_id, scales=held.facets.scales,
                     ledger=await work.ledger(batch_id, held, current))


async def _ledger_page(request: Request) -> Response:
    work: _Workbench = request.app.state.work
    batch_id, held = await _held(request, "id")
    current = await work.labels.current(batch_id=batch_id)
    return work.page(request, "ledger.html", batch_id=batch_id,
                     ledger=await work.ledger(batch_id, held, current))


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
    if await work.reader.stamp(batch_id) is None:
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
    ['/', '/batch', '/compare', '/labels', '/ledger', '/queue', '/run', '/trust']
    """
    parsed = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
    work = _Workbench(parsed, read_only=read_only, guard=guard or Guard())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with work.labels:
            await work.reader.prepare()
            for name in work.env.list_templates():  # compiled now, not on a first page
                work.env.get_template(name)
            async with contextlib.AsyncExitStack() as stack:
                try:
                    await stack.enter_async_context(work.side.labels)
                except StoreError:  # no second connection: the cost is summed on the first
                    work.side = work.reader
                tasks = await stack.enter_async_context(anyio.create_task_group())
                work.tasks = tasks
                yield
                work.tasks = None
                tasks.cancel_scope.cancel()

    app = Starlette(
        routes=[
            Route("/", _index), Route("/batch", _batch_page), Route("/run", _run_page),
            Route("/compare", _compare_page), Route("/queue", _queue_page),
            Route("/trust", _trust_page),
            Route("/ledger", _ledger_page), Route("/labels", _add_label, methods=["POST"]),
            Mount("/static", app=StaticFiles(directory=_HERE / "static"), name="static"),
        ],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=work.guard)],
        exception_handlers={_MissingError: _missing},
        lifespan=lifespan,
    )
    app.state.work = work
    return app
